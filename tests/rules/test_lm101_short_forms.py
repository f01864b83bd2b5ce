"""LM101 (issue 23): what a careful human writes. The short ``gpus`` forms for values whose type
the file gives, ``gpus=trainer.gpus`` without the removed attribute, no churn for values 2.x
takes as they are, no empty ``**{}``, and rewritten calls wrapped to the project's line length."""

import pytest

from lightmigrate.config import DEFAULT_LINE_LENGTH, line_length
from lightmigrate.engine import transform_text
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.lm101_trainer_constructor import TrainerConstructorRule

from .conftest import check_rewrite, run_rule

RULE = TrainerConstructorRule()
PL = "import argparse\n\nimport pytorch_lightning as pl\n\n"


def rw(before, after=None, **kw):
    return check_rewrite(RULE, before, after, **kw)


def _option(declaration: str, extra: str = "") -> str:
    return (PL + "parser = argparse.ArgumentParser()\n" + declaration + "\nargs = parser.parse_args()\n" + extra
            + "t = pl.Trainer(gpus=args.gpus)\n")


INT_FORM = 't = pl.Trainer(accelerator="gpu" if args.gpus else "cpu", devices=args.gpus or "auto")\n'
GENERAL_LOCAL = 'use_gpus = args.gpus not in (None, 0, "0", [])  # 1.9 read gpus=None, 0, "0" and [] as no GPU\n'


@pytest.mark.parametrize("declaration", [
    "parser.add_argument('--gpus', type=int, default=None)",
    "parser.add_argument('--gpus', type=int)",
    "parser.add_argument('-g', '--gpus', type=int, default=1, help='cards')",
    "parser.add_argument('--n-gpus', dest='gpus', type=int, choices=[0, 1, 2])",
])
def test_an_int_option_gets_the_short_form(declaration):
    rw(_option(declaration), _option(declaration).replace("t = pl.Trainer(gpus=args.gpus)\n", INT_FORM))


def test_a_str_option_gets_the_test_of_a_str():
    src = _option("parser.add_argument('--gpus', type=str, default=None)")
    rw(src, src.replace("t = pl.Trainer(gpus=args.gpus)\n",
                        'use_gpus = args.gpus not in (None, "", "0")  # 1.9 read gpus=None, "" and "0" as no GPU\n'
                        't = pl.Trainer(\n    accelerator="gpu" if use_gpus else "cpu",\n'
                        '    devices=args.gpus if use_gpus else "auto",\n)\n'))


@pytest.mark.parametrize("declaration, extra", [
    ("parser.add_argument('--gpus', type=float)", ""),  # not an int
    ("parser.add_argument('--gpus', type=int, nargs='+')", ""),  # a list
    ("parser.add_argument('--gpus', type=int, default='0')", ""),  # a default of another type
    ("parser.add_argument('--gpus', type=int, default=None)", "parser.set_defaults(gpus='0,1')\n"),
    ("parser.add_argument('--gpus', type=int, default=None)", "args.gpus = str(args.gpus)\n"),
    ("parser.add_argument('--gpus', type=int)\nparser.add_argument('--gpus', type=str)", ""),
    ("parser.add_argument('--gpus', action='store_true')", ""),
])
def test_an_option_of_another_or_unsure_type_keeps_the_general_form(declaration, extra):
    out, _ = run_rule(RULE, _option(declaration, extra))
    assert GENERAL_LOCAL in out
    assert 'devices=args.gpus if use_gpus else "auto"' in out


def test_only_a_parsed_namespace_takes_the_options_type():
    src = _option("parser.add_argument('--gpus', type=int)").replace("gpus=args.gpus", "gpus=cfg.gpus")
    out, _ = run_rule(RULE, src)
    assert 'use_gpus = cfg.gpus not in (None, 0, "0", [])' in out


@pytest.mark.parametrize("annotation", ["Optional[int]", "int", "int | None", "Union[int, None]", "'Optional[int]'"])
def test_an_annotated_parameter_gets_the_short_form(annotation):
    src = PL + f"def build(gpus: {annotation} = None):\n    return pl.Trainer(gpus=gpus)\n"
    rw(src, src.replace("pl.Trainer(gpus=gpus)", 'pl.Trainer(accelerator="gpu" if gpus else "cpu", devices=gpus or "auto")'))


def test_a_rebound_or_unannotated_parameter_keeps_the_general_form():
    for body in ("    gpus = str(gpus)\n    return pl.Trainer(gpus=gpus)\n", "    return pl.Trainer(gpus=gpus)\n"):
        head = "def build(gpus: int):\n" if "str(" in body else "def build(gpus):\n"
        out, _ = run_rule(RULE, PL + head + body)
        assert 'use_gpus = gpus not in (None, 0, "0", [])' in out


def test_devices_next_to_an_int_gpus_stays_what_1_9_made_of_it():
    src = PL + "def build(gpus: Optional[int], n: int):\n    return pl.Trainer(gpus=gpus, devices=n)\n"
    out, _ = run_rule(RULE, src)
    assert 'pl.Trainer(accelerator="gpu" if gpus else "cpu", devices=gpus or n or "auto")' in out
    src = PL + "def build(gpus: Optional[int]):\n    return pl.Trainer(gpus=gpus, devices=2)\n"
    out, _ = run_rule(RULE, src)
    assert 'pl.Trainer(accelerator="gpu" if gpus else "cpu", devices=gpus or 2)' in out


def _19_choice(gpus, devices=None):
    """1.9.5's accelerator connector for ``Trainer(gpus=gpus, devices=devices)`` (read from its
    ``_map_deprecated_devices_specific_info_to_accelerator_and_strategy``; checked by running
    1.9.5 on the CPU values): GPUs for a flag that is truthy and not "0", else the CPU with the
    devices flag (None: the default, 2.x's "auto")."""
    if gpus and gpus not in ([], 0, "0"):
        return "gpu", gpus
    return "cpu", "auto" if devices is None else devices


@pytest.mark.parametrize("value", [None, 0, 1, 2, -1])
@pytest.mark.parametrize("devices", [None, 3])
def test_the_int_form_chooses_as_1_9_did(value, devices):
    src = PL + f"def build(gpus: Optional[int]{', n' if devices else ''}):\n" \
        f"    return pl.Trainer(gpus=gpus{', devices=n' if devices else ''})\n"
    out, _ = run_rule(RULE, src)
    call = out.split("pl.Trainer(", 1)[1].rsplit(")", 1)[0]
    got = eval(f"dict({call})", {"gpus": value, "n": devices})
    assert (got["accelerator"], got["devices"]) == _19_choice(value, devices)


@pytest.mark.parametrize("value", [None, "", "0", "1", "0,1", "-1"])
def test_the_str_form_chooses_as_1_9_did(value):
    src = PL + "def build(gpus: Optional[str]):\n    return pl.Trainer(gpus=gpus)\n"
    out, _ = run_rule(RULE, src)
    local, call = out.split("use_gpus = ", 1)[1].split("\n", 1)
    scope = {"gpus": value}
    scope["use_gpus"] = eval(local.split("  #")[0], scope)
    call = call.split("pl.Trainer(", 1)[1].rsplit(")", 1)[0]
    got = eval(f"dict({call})", scope)
    assert (got["accelerator"], got["devices"]) == _19_choice(value)


def test_gpus_of_another_trainer_reads_no_removed_attribute():
    src = PL + "class Cb(pl.Callback):\n    def on_fit_end(self, trainer, pl_module):\n" \
        "        self.copy = pl.Trainer(gpus=trainer.gpus, max_epochs=1)\n"
    out = transform_text(src, ALL_RULES, path="model.py").text
    assert ('self.copy = pl.Trainer(\n            accelerator="gpu",\n            devices=trainer.device_ids,\n'
            '            max_epochs=1,\n        )\n') in out
    assert "TODO(lightmigrate)" not in out and ".gpus" not in out


def test_gpus_of_another_trainer_next_to_an_accelerator_stays_marked():
    src = PL + "def copy(trainer):\n    return pl.Trainer(gpus=trainer.gpus, accelerator='cpu')\n"
    out = transform_text(src, ALL_RULES, path="model.py").text
    assert "TODO(lightmigrate): LM102 A.8: `trainer.gpus` was removed" in out


def test_precision_2x_takes_as_it_is_stays():
    for value in ("32", "64", "'32'", "'64'"):
        rw(PL + f"t = pl.Trainer(accelerator='cpu', precision={value})\n")
    rw(PL + "t = pl.Trainer(accelerator='cpu', precision=16)\n",
       PL + "t = pl.Trainer(accelerator='cpu', precision='16-mixed')\n")


@pytest.mark.parametrize("before, after", [
    ('pl.Trainer(**{"track_grad_norm": -1})', "pl.Trainer()"),
    ('pl.Trainer(max_epochs=1, **{"track_grad_norm": -1})', "pl.Trainer(max_epochs=1)"),
    ('pl.Trainer(**{"gpus": None}, max_epochs=1)', "pl.Trainer(max_epochs=1)"),
    ("pl.Trainer(max_epochs=1, **{})", "pl.Trainer(max_epochs=1)"),
])
def test_an_empty_dict_spread_goes(before, after):
    out = transform_text(PL + "t = " + before + "\n", ALL_RULES, path="model.py").text
    assert out == PL + "t = " + after + "\n"


def test_a_dict_spread_that_keeps_entries_stays():
    out = transform_text(PL + 't = pl.Trainer(**{"gpus": None, "max_epochs": 2})\n', ALL_RULES, path="model.py").text
    assert 't = pl.Trainer(**{"max_epochs": 2})\n' in out


# --- wrapping to the project's line length ----------------------------------------------------------

LONG = "    t = pl.Trainer(gpus=2, precision=16, max_epochs=30, log_every_n_steps=5, check_val_every_n_epoch=2)\n"
LONG_AFTER = ('    t = pl.Trainer(\n        accelerator="gpu",\n        devices=2,\n        precision="16-mixed",\n'
              "        max_epochs=30,\n        log_every_n_steps=5,\n        check_val_every_n_epoch=2,\n    )\n")
UNTOUCHED = "x = some_function_with_a_long_name(argument_one, argument_two, argument_three, argument_four, five)\n"


def test_a_rewritten_call_longer_than_88_gets_one_argument_per_line():
    src = PL + UNTOUCHED + "\n\ndef main():\n" + LONG
    rw(src, src.replace(LONG, LONG_AFTER))


def test_a_call_that_fits_or_was_already_split_or_is_nested_is_not_wrapped():
    rw(PL + "t = pl.Trainer(gpus=2)\n", PL + 't = pl.Trainer(accelerator="gpu", devices=2)\n')
    nested = "run(pl.Trainer(gpus=2, precision=16, max_epochs=30, log_every_n_steps=5, check_val_every_n_epoch=2))\n"
    out, _ = run_rule(RULE, PL + nested)
    assert out.count("\n") == (PL + nested).count("\n")


@pytest.mark.parametrize("config, name, wrapped", [
    ("[tool.black]\nline-length = 160\n", "pyproject.toml", False),
    ("[tool.ruff]\nline-length = 160\n", "pyproject.toml", False),
    ("line-length = 160\n", "ruff.toml", False),
    ("[tool.black]\nline-length = 160\n[tool.ruff]\nline-length = 100\n", "pyproject.toml", True),  # the smaller
    ("[project]\nname = 'x'\n", "pyproject.toml", True),
])
def test_the_projects_line_length_decides(tmp_path, config, name, wrapped):
    (tmp_path / name).write_text(config)
    (tmp_path / "pkg").mkdir()
    path = tmp_path / "pkg" / "train.py"
    src = PL + "\ndef main():\n" + LONG
    path.write_text(src)
    out, _ = run_rule(RULE, src, path=str(path))
    assert (LONG_AFTER in out) is wrapped
    assert ("    t = pl.Trainer(accelerator=" in out) is not wrapped


def test_line_length_of_text_that_is_no_file_is_the_default():
    assert line_length("<string>") == DEFAULT_LINE_LENGTH == 88


def test_a_wrapped_call_keeps_the_files_indentation():
    src = PL + "class A:\n\tdef main(self):\n\t\tt = pl.Trainer(gpus=2, precision=16, max_epochs=30, log_every_n_steps=5)\n"
    out, _ = run_rule(RULE, src)
    assert out.endswith('\t\tt = pl.Trainer(\n\t\t\taccelerator="gpu",\n\t\t\tdevices=2,\n\t\t\tprecision="16-mixed",\n'
                        '\t\t\tmax_epochs=30,\n\t\t\tlog_every_n_steps=5,\n\t\t)\n')


NAMED = "def main():\n    kwargs = {KEY}\n    return pl.Trainer(max_epochs=1, **kwargs)\n"


@pytest.mark.parametrize("entries", ['"track_grad_norm": -1', '"gpus": None, "auto_select_gpus": False', ""])
def test_a_named_dict_emptied_and_only_spread_once_goes(entries):
    src = PL + NAMED.replace("KEY", entries)
    out = transform_text(src, ALL_RULES, path="model.py").text
    assert out == PL + "def main():\n    return pl.Trainer(max_epochs=1)\n"
    assert transform_text(out, ALL_RULES, path="model.py").text == out


@pytest.mark.parametrize("variant", [
    NAMED.replace("    return", "    print(kwargs)\n    return"),  # used elsewhere
    NAMED.replace("    kwargs = {KEY}\n", "    kwargs = {KEY}  # for later\n"),  # its comment would be lost
    NAMED.replace("    kwargs = {KEY}\n", "    # for later\n    kwargs = {KEY}\n"),
    NAMED.replace("def main():\n", "def main(kwargs):\n"),  # a parameter too
    "kwargs = {KEY}\nt = pl.Trainer(max_epochs=1, **kwargs)\n",  # module level: other modules may import it
])
def test_a_named_dict_used_otherwise_stays(variant):
    out = transform_text(PL + variant.replace("KEY", '"gpus": None'), ALL_RULES, path="model.py").text
    assert "**kwargs" in out and "kwargs = {}" in out


def test_a_rewritten_dict_longer_than_88_gets_one_entry_per_line():
    src = _option("parser.add_argument('--gpus', type=int)").replace(
        "t = pl.Trainer(gpus=args.gpus)\n", 'trainer_kwargs = {"gpus": args.gpus, "max_epochs": 2, "precision": 16}\n'
        "t = pl.Trainer(**trainer_kwargs)\n")
    rw(src, src.replace('trainer_kwargs = {"gpus": args.gpus, "max_epochs": 2, "precision": 16}\n',
                        'trainer_kwargs = {\n    "accelerator": "gpu" if args.gpus else "cpu",\n'
                        '    "devices": args.gpus or "auto",\n    "max_epochs": 2,\n    "precision": "16-mixed",\n}\n'))


def test_a_configs_device_count_may_still_be_none():
    out, _ = run_rule(RULE, PL + "t = pl.Trainer(accelerator='cpu', devices=cfg.num_devices)\n")
    assert "devices=cfg.num_devices or 'auto'" in out or 'devices=cfg.num_devices or "auto"' in out
