"""LM101: Trainer constructor arguments."""

import libcst as cst
import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.cst.helpers import ensure_import, lightning_root
from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, Site, SourceFile
from lightmigrate.rules.lm101_trainer_constructor import TrainerConstructorRule

from .conftest import check_rewrite, run_rule

RULE = TrainerConstructorRule()
PL = "import pytorch_lightning as pl\n\n"


def rw(before, after=None, **kw):
    return check_rewrite(RULE, before, after, **kw)


@pytest.mark.parametrize("before,after", [
    ("pl.Trainer(gpus=2)", 'pl.Trainer(accelerator="gpu", devices=2)'),
    ("pl.Trainer(gpus=-1)", 'pl.Trainer(accelerator="gpu", devices=-1)'),
    ('pl.Trainer(gpus="0,1")', 'pl.Trainer(accelerator="gpu", devices="0,1")'),
    ("pl.Trainer(gpus=[1])", 'pl.Trainer(accelerator="gpu", devices=[1])'),
    ("pl.Trainer(gpus=0, max_epochs=1)", "pl.Trainer(max_epochs=1)"),
    ("pl.Trainer(gpus=None, max_epochs=1)", "pl.Trainer(max_epochs=1)"),
    ('pl.Trainer(gpus="0", max_epochs=1)', "pl.Trainer(max_epochs=1)"),
    ('pl.Trainer(accelerator="gpu", gpus=2)', 'pl.Trainer(accelerator="gpu", devices=2)'),
    ("pl.Trainer(gpus=2, devices=4)", 'pl.Trainer(accelerator="gpu", devices=2)'),
    ("pl.Trainer(num_processes=2)", 'pl.Trainer(accelerator="cpu", devices=2)'),
    ("pl.Trainer(tpu_cores=8)", 'pl.Trainer(accelerator="tpu", devices=8)'),
    ("pl.Trainer(tpu_cores=[1])", 'pl.Trainer(accelerator="tpu", devices=[0])'),
    ("pl.Trainer(gpus=2, auto_select_gpus=True)",
     'pl.Trainer(accelerator="gpu", devices=find_usable_cuda_devices(2))'),
    ("pl.Trainer(precision=16)", 'pl.Trainer(precision="16-mixed")'),
    ('pl.Trainer(precision="16")', 'pl.Trainer(precision="16-mixed")'),
    # 2.x takes 32, 64, "32" and "64" as they are, without a warning (issue 23): no churn
    ("pl.Trainer(precision=32, accelerator='cpu')", None),
    ("pl.Trainer(precision=64, accelerator='cpu')", None),
    ("pl.Trainer(precision='32', accelerator='cpu')", None),
    ("pl.Trainer(precision='bf16')", "pl.Trainer(precision='bf16-mixed')"),
    ('pl.Trainer(strategy="ddp")', 'pl.Trainer(strategy="ddp_find_unused_parameters_true")'),
    ('pl.Trainer(strategy="ddp_spawn")', 'pl.Trainer(strategy="ddp_spawn_find_unused_parameters_true")'),
    ('pl.Trainer(strategy="ddp_find_unused_parameters_false")', None),
    ('pl.Trainer(strategy="fsdp_native")', 'pl.Trainer(strategy="fsdp")'),
    ('pl.Trainer(strategy="fsdp_native_full_shard_offload")', 'pl.Trainer(strategy="fsdp_cpu_offload")'),
    ('pl.Trainer(strategy="tpu_spawn")', 'pl.Trainer(strategy="xla")'),
    ("pl.Trainer(strategy=None, accelerator=None, devices=None, accumulate_grad_batches=None)", "pl.Trainer()"),
    ('pl.Trainer(amp_backend="native", precision=16)', 'pl.Trainer(precision="16-mixed")'),
    ("pl.Trainer(replace_sampler_ddp=False)", "pl.Trainer(use_distributed_sampler=False)"),
    ('pl.Trainer(multiple_trainloader_mode="max_size_cycle", move_metrics_to_cpu=False)', "pl.Trainer()"),
    ("pl.Trainer(auto_lr_find=True, auto_scale_batch_size='power')", "pl.Trainer()"),
    ("pl.Trainer(None, False, max_epochs=2)", "pl.Trainer(logger=None, enable_checkpointing=False, max_epochs=2)"),
    ("pl.Trainer(checkpoint_callback=False, max_steps=None)", "pl.Trainer(enable_checkpointing=False, max_steps=-1)"),
    ('pl.Trainer(distributed_backend="ddp", gpus=2)',
     'pl.Trainer(strategy="ddp_find_unused_parameters_true", accelerator="gpu", devices=2)'),
    # a renamed run-time value keeps None's meaning in the first run (a second run wrapped it)
    ("pl.Trainer(distributed_backend='ddp' if args.gpus > 1 else None, accelerator=\"cpu\")",
     "pl.Trainer(strategy=('ddp' if args.gpus > 1 else None) or \"auto\", accelerator=\"cpu\")"),
    ('pl.Trainer(accelerator="ddp", gpus=2)',
     'pl.Trainer(strategy="ddp_find_unused_parameters_true", accelerator="gpu", devices=2)'),
    ("pl.Trainer(weights_summary=None, progress_bar_refresh_rate=0)",
     "pl.Trainer(enable_model_summary=False, enable_progress_bar=False)"),
    ("pl.Trainer(strategy=DDPStrategy())", "pl.Trainer(strategy=DDPStrategy(find_unused_parameters=True))"),
    ("pl.Trainer(strategy=DDPStrategy(find_unused_parameters=False))", None),
    ('pl.Trainer(accelerator="cpu", max_epochs=1)', None),
    # issue 25: values known only at run time whose None 1.9 read as the default and 2.x rejects
    ('pl.Trainer(devices=cfg.devices, accelerator=cfg.accelerator, strategy=args.strategy)',
     'pl.Trainer(\n    devices=cfg.devices or "auto",\n    accelerator=cfg.accelerator or "cpu",\n'
     '    strategy=args.strategy or "auto",\n)'),
    ('pl.Trainer(devices=n if n > 0 else None, accelerator="cpu")',
     'pl.Trainer(devices=(n if n > 0 else None) or "auto", accelerator="cpu")'),
    ('pl.Trainer(devices=get_devices(), accelerator="cpu")', 'pl.Trainer(devices=get_devices() or "auto", accelerator="cpu")'),
    ('pl.Trainer(devices=cfg.devices or "auto", accelerator="cpu")', None),
    ('pl.Trainer(precision="16-mixed", devices=1)', None),
])
def test_argument_mapping(before, after):
    rw(PL + "t = " + before + "\n", None if after is None else PL + "t = " + after + "\n" if "find_usable" not in after
       else "import pytorch_lightning as pl\nfrom pytorch_lightning.accelerators import find_usable_cuda_devices\n\n"
       "t = " + after + "\n")


def test_multiline_call_keeps_layout():
    rw(PL + "trainer = pl.Trainer(\n    gpus=2,  # two cards\n    max_epochs=3,\n)\n",
       PL + 'trainer = pl.Trainer(\n    accelerator="gpu",\n    devices=2,  # two cards\n    max_epochs=3,\n)\n')


def test_callbacks_added_for_schedule_and_legacy_arguments():
    rw(PL + "t = pl.Trainer(accumulate_grad_batches={0: 1, 2: 4}, callbacks=[cb], weights_summary='full')\n",
       "import pytorch_lightning as pl\nfrom pytorch_lightning.callbacks import ModelSummary, GradientAccumulationScheduler\n\n"
       "t = pl.Trainer(\n    callbacks=[cb, ModelSummary(max_depth=-1), GradientAccumulationScheduler(scheduling={0: 1, 2: 4})],\n)\n")


def test_callbacks_created_when_absent_and_import_root_kept():
    rw("import lightning.pytorch as pl\n\nt = pl.Trainer(progress_bar_refresh_rate=5, max_epochs=1)\n",
       "import lightning.pytorch as pl\nfrom lightning.pytorch.callbacks import TQDMProgressBar\n\n"
       "t = pl.Trainer(max_epochs=1, callbacks=[TQDMProgressBar(refresh_rate=5)])\n")


def test_callbacks_not_a_list_is_marked():
    out, findings = run_rule(RULE, PL + "t = pl.Trainer(accumulate_grad_batches={0: 2}, callbacks=my_callbacks)\n")
    assert "callbacks=my_callbacks" in out
    assert "TODO(lightmigrate): LM101 A.8/T11: add GradientAccumulationScheduler(scheduling={0: 2})" in out


def test_kwarg_dict_spread_into_trainer():
    rw(PL + 'kw = {"gpus": 1, "precision": 16}\nt = pl.Trainer(**kw)\n',
       PL + 'kw = {"accelerator": "gpu", "devices": 1, "precision": "16-mixed"}\nt = pl.Trainer(**kw)\n')
    rw(PL + "t = pl.Trainer(**{'replace_sampler_ddp': False})\n",
       PL + "t = pl.Trainer(**{'use_distributed_sampler': False})\n")


def test_unrelated_dicts_are_left_alone():
    rw(PL + 'hparams = {"precision": 16}\nmodel_cfg = {"model": {"precision": 16, "gpus": 2}}\n', None)


def test_trainer_section_of_a_config_dict():
    rw(PL + 'cfg = {"trainer": {"precision": 16, "max_epochs": 1}}\n',
       PL + 'cfg = {"trainer": {"precision": "16-mixed", "max_epochs": 1}}\n')


def test_resume_moves_to_every_fit_of_that_trainer_only():
    rw(PL + "def main(path):\n    trainer = pl.Trainer(resume_from_checkpoint=path)\n"
       "    trainer.fit(model, dm)\n    trainer.fit(model, ckpt_path='other.ckpt')\n    trainer.validate(model)\n",
       PL + "def main(path):\n    trainer = pl.Trainer()\n"
       "    trainer.fit(model, dm, ckpt_path=path)\n    trainer.fit(model, ckpt_path='other.ckpt')\n    trainer.validate(model)\n")


def test_resume_without_visible_fit_is_marked():
    out, findings = run_rule(RULE, PL + "def make(path):\n    return pl.Trainer(resume_from_checkpoint=path)\n")
    assert "resume_from_checkpoint=path" in out
    markers = [f for f in findings if f.kind is Kind.MARKER]
    assert len(markers) == 1 and "T6" in markers[0].message and markers[0].line == 4


def test_resume_with_fit_in_another_function_is_marked():
    src = PL + "def make(p):\n    t = pl.Trainer(resume_from_checkpoint=p)\n    return t\n\ndef run(t):\n    t.fit(m)\n"
    out, _ = run_rule(RULE, src)
    assert "# TODO(lightmigrate): LM101 T6" in out and out.endswith("    t.fit(m)\n")


@pytest.mark.parametrize("arg,row", [
    ('amp_backend="apex"', "T8"), ('amp_level="O2"', "T8"), ("move_metrics_to_cpu=True", "T16"),
    ('multiple_trainloader_mode="min_size"', "T17"), ('strategy="dp"', "T18"), ('strategy="ddp_sharded"', "T19"),
('strategy="horovod"', "T25"), ('strategy="bagua"', "T26"),
    ('accelerator="hpu"', "T27"), ("ipus=8", "T3"), ("stochastic_weight_avg=True", "A.8"),
    ("terminate_on_nan=True", "A.8"), ("weights_save_path='w'", "A.8"), ("gpus=2, num_processes=2", "T1-T4"),
    ("tpu_cores=cores", "T1-T4"),
])
def test_marked_arguments(arg, row):
    src = PL + f"t = pl.Trainer({arg})\n"
    out, findings = run_rule(RULE, src)
    markers = [f for f in findings if f.kind is Kind.MARKER]
    assert markers and all(m.code == "LM101" for m in markers)
    assert any(m.message.startswith(row) for m in markers), [m.message for m in markers]
    assert "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html" in markers[0].message
    again, _ = run_rule(RULE, out)
    assert again == out


def test_tuner_flags_are_marked_when_tune_is_called():
    out, findings = run_rule(RULE, PL + "t = pl.Trainer(auto_lr_find=True)\nt.tune(model)\n")
    assert "auto_lr_find=True" in out
    assert any(f.kind is Kind.MARKER and "T14" in f.message for f in findings)


def test_tuner_flags_of_a_trainer_whose_tune_became_tuner_calls_are_dropped():
    # LM102 turned this Trainer's tune() into Tuner calls (which run lr_find / scale_batch_size
    # exactly when 1.9's tune did); a tune() left in another function of the file must not keep
    # the flags on this Trainer, where 2.x raises a TypeError (issue 21, kind 6.8)
    before = PL + """\
def tune_and_fit(model, dm):
    trainer = pl.Trainer(max_epochs=3, auto_lr_find=True, auto_scale_batch_size="binsearch")
    with isolate_rng():
        tuner = Tuner(trainer)
        tuner.scale_batch_size(model, datamodule=dm, mode="binsearch")
        tuner.lr_find(model, datamodule=dm, update_attr=True)


def tune_elsewhere(trainer, model):
    other = pl.Trainer(auto_lr_find=True)
    trainer.tune(model)
"""
    out, findings = run_rule(RULE, before)
    assert "    trainer = pl.Trainer(max_epochs=3)\n" in out
    assert "    other = pl.Trainer(auto_lr_find=True)\n" in out  # still marked: tune() is called in the file
    assert [f.line for f in findings if f.kind is Kind.MARKER] == [12]
    assert run_rule(RULE, out)[0] == out


def test_tune_rewritten_by_lm102_and_flags_dropped_by_lm101_together():
    from lightmigrate.rules import ALL_RULES
    before = PL + """\
def tune_and_fit(model, dm):
    trainer = pl.Trainer(max_epochs=3, auto_lr_find=True)
    trainer.tune(model, datamodule=dm)
    trainer.fit(model, datamodule=dm)


def tune_elsewhere(trainer, model):
    trainer.tune(model)
"""
    out = transform_text(before, ALL_RULES, path="m.py").text
    assert "trainer = pl.Trainer(max_epochs=3" in out and "auto_lr_find" not in out.split("def tune_elsewhere")[0]
    assert "tuner.lr_find(model, datamodule=dm, update_attr=True)" in out
    assert transform_text(out, ALL_RULES, path="m.py").text == out


def test_from_argparse_args_is_marked():
    out, findings = run_rule(RULE, PL + "t = pl.Trainer.from_argparse_args(args)\n")
    assert "# TODO(lightmigrate): LM101 T-meth3" in out


def test_star_args_is_marked():
    out, _ = run_rule(RULE, PL + "t = pl.Trainer(*opts)\n")
    assert "# TODO(lightmigrate): LM101 T0" in out and "pl.Trainer(*opts)" in out


def test_removed_environment_variable_is_marked():
    out, _ = run_rule(RULE, PL + 'os.environ["PL_FAULT_TOLERANT_TRAINING"] = "1"\n')
    assert "LM101 T31" in out


def test_one_note_per_trainer_call():
    _, findings = run_rule(RULE, PL + "a = pl.Trainer(max_epochs=1)\nb = pl.Trainer(gpus=2)\nc = pl.Trainer(accelerator='cpu')\n")
    notes = [f for f in findings if f.kind is Kind.NOTE]
    assert [(n.line, "B-1" in n.message, "T22" in n.message) for n in notes] == [(3, True, False), (4, False, True)]


def test_fsdp_gets_a_note_not_a_marker():
    out, findings = run_rule(RULE, PL + 'a = pl.Trainer(strategy="fsdp", accelerator="gpu")\n')
    assert "TODO" not in out
    assert [f.message[:4] for f in findings if f.kind is Kind.NOTE] == ["T20:"]


def test_no_note_when_kwargs_are_spread():
    _, findings = run_rule(RULE, PL + "a = pl.Trainer(**kw)\n")
    assert not [f for f in findings if f.kind is Kind.NOTE]


def test_lightning_root_and_ensure_import():
    m = cst.parse_module('"""doc"""\nimport lightning.pytorch as L\n\nx = 1\n')
    assert lightning_root(m) == "lightning.pytorch"
    out = ensure_import(m, "lightning.pytorch.tuner", "Tuner")
    assert out.code == '"""doc"""\nimport lightning.pytorch as L\nfrom lightning.pytorch.tuner import Tuner\n\nx = 1\n'
    assert ensure_import(out, "lightning.pytorch.tuner", "Tuner").code == out.code
    assert lightning_root(cst.parse_module("import pytorch_lightning\nimport lightning\n")) == "pytorch_lightning"
    assert lightning_root(cst.parse_module("x = 1\n")) == "pytorch_lightning"
    bare = ensure_import(cst.parse_module("x = 1\n"), "a.b", "C")
    assert bare.code == "from a.b import C\n\nx = 1\n"


def test_argparse_options_spread_into_the_trainer_are_marked():
    src = (PL + "parser = argparse.ArgumentParser()\nparser.add_argument('--gpus', type=int, default=0)\n"
           "parser.add_argument('--lr', type=float)\nargs = parser.parse_args()\ntrainer = pl.Trainer(**vars(args))\n"
           "other = pl.Trainer(gpus=args.gpus)\n")
    out, findings = run_rule(RULE, src)
    assert "# TODO(lightmigrate): LM101 T-meth3: the argparse options --gpus reach the Trainer through vars(args)" in out
    # --gpus is an int (type=int): the short form exactly right for an int
    assert 'other = pl.Trainer(\n    accelerator="gpu" if args.gpus else "cpu",\n    devices=args.gpus or "auto",\n)' in out
    assert run_rule(RULE, out)[0] == out


def test_add_argparse_args_then_spread_is_marked():
    src = PL + "parser = pl.Trainer.add_argparse_args(parser)\nargs = parser.parse_args()\nt = pl.Trainer(**vars(args))\n"
    out, _ = run_rule(RULE, src)
    assert out.count("# TODO(lightmigrate): LM101 T-meth3") == 2


def test_notebook_note_mentions_one_gpu():
    _, findings = run_rule(RULE, PL + "a = pl.Trainer(max_epochs=1)\n", path="train.ipynb")
    notes = [f for f in findings if f.kind is Kind.NOTE]
    assert len(notes) == 1 and "B-6: in a notebook" in notes[0].message


@pytest.mark.parametrize("gpus, accelerator, devices", [
    (None, "cpu", "auto"), (0, "cpu", "auto"), ("0", "cpu", "auto"), ([], "cpu", "auto"),
    (2, "gpu", 2), (-1, "gpu", -1), ("0,1", "gpu", "0,1"), ([1], "gpu", [1]),
])
def test_gpus_from_a_variable_keeps_1_9_meaning(gpus, accelerator, devices):
    """1.9's device parser: None, 0, "0" and [] meant the CPU; run the generated expressions."""
    from lightmigrate.engine import transform_text

    text = transform_text("import pytorch_lightning as pl\n\npl.Trainer(gpus=args.gpus)\n", [RULE]).text
    code = text.replace("import pytorch_lightning as pl\n", "").replace("pl.Trainer(", "kwargs = dict(")
    scope = {"args": type("A", (), {"gpus": gpus})}
    exec(code, scope)
    assert scope["kwargs"] == {"accelerator": accelerator, "devices": devices}


def test_gpus_from_a_variable_is_tested_once():
    """Issue 25 kind 3: the 1.9 reading of ``gpus`` is written once, in a local above the
    statement (comments stay above it); where no statement can take a local (a lambda, a class
    body) the test is repeated inline."""
    rw(PL + "def build(args):\n    # the trainer\n    return pl.Trainer(gpus=args.gpus, devices=args.devices)\n",
       PL + "def build(args):\n    # the trainer\n"
       '    use_gpus = args.gpus not in (None, 0, "0", [])  # 1.9 read gpus=None, 0, "0" and [] as no GPU\n'
       '    return pl.Trainer(\n        accelerator="gpu" if use_gpus else "cpu",\n'
       '        devices=args.gpus if use_gpus else (args.devices or "auto"),\n    )\n')
    rw(PL + "use_gpus = 1\nt = pl.Trainer(gpus=n)\n",
       PL + 'use_gpus = 1\nuse_gpus_1 = n not in (None, 0, "0", [])  # 1.9 read gpus=None, 0, "0" and [] as no GPU\n'
       't = pl.Trainer(\n    accelerator="gpu" if use_gpus_1 else "cpu",\n    devices=n if use_gpus_1 else "auto",\n)\n')
    rw(PL + "make = lambda: pl.Trainer(gpus=args.gpus)\n",
       PL + 'make = lambda: pl.Trainer(accelerator="gpu" if args.gpus not in (None, 0, "0", []) else "cpu", '
       'devices=args.gpus if args.gpus not in (None, 0, "0", []) else "auto")\n')


@pytest.mark.parametrize("given, devices, accelerator, strategy", [
    ({}, "auto", "cpu", "auto"),  # all None: 1.9's defaults
    ({"devices": 2, "accelerator": "gpu", "strategy": "ddp_spawn"}, 2, "gpu", "ddp_spawn"),
])
def test_runtime_none_keeps_1_9_default(given, devices, accelerator, strategy):
    """Issue 25: `devices=config.devices` where the config holds None trained on 1.9.5 (the
    accelerator's device count; accelerator None ran on the CPU; strategy None chose one) and
    raises on 2.x: the generated expressions give 2.x's spelling of those defaults."""
    text = transform_text(PL + "pl.Trainer(devices=cfg.devices, accelerator=cfg.accelerator, strategy=cfg.strategy)\n",
                          [RULE]).text
    call = text.split("pl.Trainer(", 1)[1].rsplit(")", 1)[0]
    cfg = type("Cfg", (), {"devices": None, "accelerator": None, "strategy": None, **given})
    assert eval(f"dict({call})", {"cfg": cfg}) == {"devices": devices, "accelerator": accelerator, "strategy": strategy}


def test_runtime_value_in_a_trainer_dict():
    rw(PL + 'kw = {"devices": config.devices, "max_epochs": 3}\nt = pl.Trainer(accelerator="cpu", **kw)\n',
       PL + 'kw = {"devices": config.devices or "auto", "max_epochs": 3}\nt = pl.Trainer(accelerator="cpu", **kw)\n')


# --- find: the sites, exactly where the fix acts -------------------------------------------------

def sites(text, path="train.py", files=None):
    """``RULE.find`` for ``text`` at ``path`` in a project of ``files`` and that file."""
    index = ProjectIndex()
    for other, other_text in (files or {}).items():
        index.add_source(other_text, other)
    index.add_source(text, path)
    return RULE.find(SourceFile(path, text), RuleContext(path, index))


def fix_acts(text, found, path="train.py"):
    """Whether the fix changes ``text`` or reports something for the sites ``found``."""
    ctx = RuleContext(path, ProjectIndex())
    return RULE.fix(cst.parse_module(text), found, ctx).code != text or bool(ctx.findings)


@pytest.mark.parametrize("text,expected", [
    ("import pytorch_lightning as pl\ntrainer = pl.Trainer(max_epochs=1)\n", [(2, "Trainer", "call")]),  # B-1 note
    ("from lightning.pytorch import Trainer as PLTrainer\nt = PLTrainer(max_epochs=1)\n", [(2, "PLTrainer", "call")]),
    ("from lightning.pytorch import trainer as tr\nt = tr.Trainer(max_epochs=1)\n", [(2, "Trainer", "call")]),
    ("import pytorch_lightning as pl\nconfig = {'gpus': 2, 'max_epochs': 3}\n", [(2, "dict", "dict")]),
    ("import pytorch_lightning as pl\nparams = {'trainer': {'precision': 16}}\n", [(2, "dict", "dict")]),
    ("import pytorch_lightning as pl\nparser = pl.Trainer.add_argparse_args(parser)\n",
     [(2, "add_argparse_args", "argparse")]),
    ("import pytorch_lightning as pl\nfrom pytorch_lightning.strategies import DDPStrategy\ns = DDPStrategy()\n",
     [(3, "DDPStrategy", "ddp")]),
    ("import pytorch_lightning as pl\nimport os\nos.environ['PL_RECONCILE_PROCESS'] = '1'\n",
     [(3, "PL_RECONCILE_PROCESS", "env")]),
    ("import pytorch_lightning as pl\nt = pl.Trainer(resume_from_checkpoint='a.ckpt')\nt.fit(m)\n",
     [(2, "Trainer", "call"), (3, "fit", "ckpt")]),
    ("import pytorch_lightning as pl\nx = DDPSpawnStrategy()\n", [(2, "DDPSpawnStrategy", "strategy-class")]),
    # nothing to do: no Lightning import, a Trainer made elsewhere, nothing to map, a comment,
    # fabric's strategy, an already 2.x call, a concatenated string, too many positional arguments
    ("from transformers import Trainer\ntrainer = Trainer(model=model, gpus=2)\n", []),
    ("import pytorch_lightning as pl\ntrainer.fit(model)\n", []),
    ("import pytorch_lightning as pl\nconfig = {'max_epochs': 3, 'logger': False}\n", []),
    ("import pytorch_lightning as pl\n# pl.Trainer(gpus=2) is how 1.x did it\n", []),
    ("import pytorch_lightning as pl\nimport lightning_fabric\nDDPStrategy()\n", []),
    ("import pytorch_lightning as pl\ntrainer = pl.Trainer(accelerator='cpu', max_epochs=3)\n", []),
    ("import pytorch_lightning as pl\nos.environ['PL_RECONCILE' '_PROCESS'] = '1'\nd = {'gp' 'us': 2, 'a': 1}\n", []),
    ("import pytorch_lightning as pl\npl.Trainer(" + ", ".join(["1"] * 60) + ")\n", []),
    ("import pytorch_lightning as pl\ns = DDPStrategy(find_unused_parameters=False)\nt = DDPStrategy(**kw)\n", []),
])
def test_find(text, expected):
    found = sites(text)
    assert [(s.line, s.target, s.action) for s in found] == expected
    assert fix_acts(text, found) == bool(expected)


def test_find_positions_are_those_of_ast_on_a_line_with_wide_characters():
    text = 'import pytorch_lightning as pl\nx = "é"; t = pl.Trainer(gpus=2); s = "PL_RECONCILE_PROCESS"\n'
    found = sites(text)
    assert [(s.line, s.col, s.action) for s in found] == [(2, 14, "call"), (2, 38, "env")]  # UTF-8 columns
    out = transform_text(text, [RULE], "train.py").text
    assert 'pl.Trainer(accelerator="gpu", devices=2)' in out and "T31:" in out


def test_find_resume_needs_one_trainer_and_fits_that_can_take_the_path():
    text = ("import pytorch_lightning as pl\n\n\ndef a():\n    t = pl.Trainer(resume_from_checkpoint=c)\n    t.fit(m)\n"
            "    t.fit(m, ckpt_path='x')\n\n\ndef b():\n    t = pl.Trainer(resume_from_checkpoint=c)\n    t.fit(*args)\n")
    found = sites(text)
    assert [(s.line, s.action, s.data) for s in found] == [
        (5, "call", (False, True, (), False, False)), (6, "ckpt", (5, 8, "Trainer")), (11, "call", (False, False, (), False, False))]


def test_find_argparse_facts_go_with_the_trainer_call():
    text = ("import pytorch_lightning as pl\nparser.add_argument('--gpus', type=int)\nparser.add_argument('--max-epochs')\n"
            "t = pl.Trainer(**vars(args))\n")
    assert [(s.action, s.data) for s in sites(text)] == [("call", (False, False, ("gpus",), False, False))]
    tuned = text.replace("t = pl", "trainer.tune(m)\nt = pl")
    assert [(s.action, s.data) for s in sites(tuned)] == [("call", (True, False, ("gpus",), False, False))]


def test_find_sees_a_trainer_subclass_of_another_file_only_through_the_index():
    # issue 25: a project Trainer subclass (here without __init__: a plain Lightning Trainer call)
    other = {"mytrainer.py": "import pytorch_lightning as pl\n\n\nclass MyTrainer(pl.Trainer):\n    pass\n"}
    text = "import pytorch_lightning as pl\nfrom mytrainer import MyTrainer\nt = MyTrainer(gpus=2)\nu = pl.Trainer(gpus=2)\n"
    assert sites(text) == [Site(4, 4, "Trainer", "call", (False, False, (), False, False))]
    assert sites(text, "train.py", other) == [Site(3, 4, "MyTrainer", "call", (False, False, (), False, False)),
                                              Site(4, 4, "Trainer", "call", (False, False, (), False, False))]
    # a class of the same name that is not a Lightning Trainer is not one
    hf = {"mytrainer.py": "from transformers import Trainer\n\n\nclass MyTrainer(Trainer):\n    pass\n"}
    assert sites(text, "train.py", hf) == [Site(4, 4, "Trainer", "call", (False, False, (), False, False))]


def test_prefilter_needs_a_lightning_import_or_a_trainer_call_in_the_text():
    assert not RULE.may_apply("def step(trainer):\n    return trainer\n")
    # an import spelled with fullwidth letters is Python's `lightning`, but libcst reads names as
    # written: the rule leaves such files alone (it reads a file without a Lightning import only
    # for a project Trainer subclass, of which there is none here)
    text = "import pytorch_ｌｉｇｈｔｎｉｎｇ as pl\ntrainer = pl.Trainer(gpus=1)\n"
    assert sites(text) == []
    assert transform_text(text, [RULE], "train.py").text == text


def test_find_resume_receivers_are_spelled_with_their_parentheses():
    text = "import pytorch_lightning as pl\nt = pl.Trainer(resume_from_checkpoint=c)\n(t).fit(m)\n"
    assert [s.action for s in sites(text)] == ["call"]  # `(t)` is not spelled `t`: marked, not moved
    assert "T6:" in transform_text(text, [RULE], "train.py").text


def test_find_removed_env_vars_inside_f_string_fields():
    # libcst sees the strings inside an f-string's replacement fields (not its text) as strings
    text = ("import pytorch_lightning as pl\nprint(f\"PL_RECONCILE_PROCESS={os.environ.get('PL_RECONCILE_PROCESS')}\")\n"
            "x = 'é'; y = f\"é{'PL_FAULT_TOLERANT_TRAINING'}\"\n")
    assert [(s.line, s.col, s.target) for s in sites(text)] == [
        (2, 45, "PL_RECONCILE_PROCESS"), (3, 19, "PL_FAULT_TOLERANT_TRAINING")]  # as ast places them
    assert transform_text(text, [RULE], "train.py").text.count("T31:") == 2


# ---------------------------------------------------------------------------------------------
# T17: multiple_trainloader_mode -> CombinedLoader(..., mode=...) in the file's train_dataloader
# (issue 21 kind 6.7; corpus multiple_trainloader_min_size)

T17_MODULE = '''\
import pytorch_lightning as pl
from torch.utils.data import DataLoader


class M(pl.LightningModule):
    def train_dataloader(self):
        loaders = [DataLoader(a), DataLoader(b)]
        if self.flag:
            return {"a": DataLoader(a), "b": DataLoader(b)}
        return loaders


trainer = pl.Trainer(accelerator="cpu", multiple_trainloader_mode="min_size")
'''


def test_multiple_trainloader_mode_moves_into_the_loaders_of_the_file():
    findings = check_rewrite(RULE, T17_MODULE, '''\
import pytorch_lightning as pl
from torch.utils.data import DataLoader
from pytorch_lightning.utilities.combined_loader import CombinedLoader


class M(pl.LightningModule):
    def train_dataloader(self):
        loaders = [DataLoader(a), DataLoader(b)]
        if self.flag:
            return CombinedLoader({"a": DataLoader(a), "b": DataLoader(b)}, mode="min_size")
        return CombinedLoader(loaders, mode="min_size")


trainer = pl.Trainer(accelerator="cpu")
''')
    assert [(f.line, f.kind) for f in findings] == [(9, Kind.FIXED), (10, Kind.FIXED)]


@pytest.mark.parametrize("change", [
    ("        return loaders\n", "        return self.loaders\n"),  # not visibly a collection of loaders
    ("class M(pl.LightningModule):\n    def train_dataloader(self):\n", "class M(pl.LightningModule):\n    def other(self):\n"),
    ('multiple_trainloader_mode="min_size"', "multiple_trainloader_mode=mode"),  # not a literal
    ('trainer = pl.Trainer(accelerator="cpu", multiple_trainloader_mode="min_size")\n',  # two modes
     'trainer = pl.Trainer(accelerator="cpu", multiple_trainloader_mode="min_size")\n'
     'other = pl.Trainer(accelerator="cpu", multiple_trainloader_mode="max_size_cycle")\n'),
])
def test_multiple_trainloader_mode_stays_marked_when_the_loaders_are_not_known(change):
    out, findings = run_rule(RULE, T17_MODULE.replace(*change))
    assert "CombinedLoader" not in out.replace("CombinedLoader(loaders, mode=...)", "")
    assert any(f.kind is Kind.MARKER and "T17" in f.message for f in findings)


def test_multiple_trainloader_mode_in_a_trainer_kwargs_dict():
    source = T17_MODULE.replace('trainer = pl.Trainer(accelerator="cpu", multiple_trainloader_mode="min_size")\n',
                                'config = {"trainer": {"max_epochs": 2, "multiple_trainloader_mode": "min_size"}}\n')
    out, _ = run_rule(RULE, source)
    assert 'config = {"trainer": {"max_epochs": 2}}' in out and 'CombinedLoader(loaders, mode="min_size")' in out
    assert run_rule(RULE, out)[0] == out


# T17 and T14 together with issue 25's project Trainer configuration and runtime gpus values

def test_multiple_trainloader_mode_of_a_project_trainer_subclass_call_moves_too():
    sub = T17_MODULE.replace('trainer = pl.Trainer(accelerator="cpu", multiple_trainloader_mode="min_size")\n', '''\
class Runner(pl.Trainer):
    def __init__(self, name, **kwargs):
        super().__init__(**kwargs)
        self.name = name


trainer = Runner("x", accelerator="cpu", multiple_trainloader_mode="min_size")
''')
    out, findings = run_rule(RULE, sub)
    assert 'trainer = Runner("x", accelerator="cpu")\n' in out and 'CombinedLoader(loaders, mode="min_size")' in out
    assert not any(f.kind is Kind.MARKER for f in findings)
    assert run_rule(RULE, out)[0] == out
    # the subclass's call disagrees with a Lightning Trainer call of the file: marked, not moved
    two = sub + 'other = pl.Trainer(multiple_trainloader_mode="max_size_cycle")\n'
    out, findings = run_rule(RULE, two)
    assert "CombinedLoader(loaders, mode=\"min_size\")" not in out
    assert any(f.kind is Kind.MARKER and "T17" in f.message for f in findings)


@pytest.mark.parametrize("other", [
    'extra = dict(multiple_trainloader_mode="max_size_cycle")\n',  # a dict(...) call
    'config["multiple_trainloader_mode"] = "max_size_cycle"\n',  # a keyed assignment
])
def test_multiple_trainloader_mode_named_elsewhere_in_the_file_is_not_moved(other):
    # the file sets the option where combine() does not read its value: no CombinedLoader
    out, findings = run_rule(RULE, T17_MODULE + other)
    assert "CombinedLoader(loaders, mode=\"min_size\")" not in out
    assert any(f.kind is Kind.MARKER and "T17" in f.message for f in findings)


def test_tuned_trainer_with_a_runtime_gpus_value_gets_the_local_and_drops_the_flags():
    before = PL + """\
def tune_and_fit(model, n):
    trainer = pl.Trainer(gpus=n, auto_lr_find=True)
    tuner = Tuner(trainer)
    tuner.lr_find(model, update_attr=True)
"""
    out, findings = run_rule(RULE, before)
    assert "auto_lr_find" not in out and "use_gpus = " in out
    assert not any(f.kind is Kind.MARKER for f in findings)
    assert run_rule(RULE, out)[0] == out


def test_argument_1_9_no_longer_took_is_marked():
    """``early_stop_callback`` (gone before 1.9: 1.9.5 raised TypeError too) is marked, by name,
    on a Lightning Trainer call; a second run changes nothing."""
    before = PL + "t = pl.Trainer(early_stop_callback=True, max_epochs=1)\n"
    out, _ = run_rule(RULE, before)
    assert "# TODO(lightmigrate): LM101 T-args: `early_stop_callback` is not a Trainer argument" in out
    assert "EarlyStopping" in out and "t = pl.Trainer(early_stop_callback=True, max_epochs=1)\n" in out
    assert run_rule(RULE, out)[0] == out


def test_from_argparse_args_keeps_a_marker_for_an_argument_1_9_no_longer_took():
    """pytorch-lightning-bolts' cpc_finetuner: ``Trainer.from_argparse_args(args, early_stop_callback=True)``
    becomes a ``Trainer(...)`` call; the argument it passes on is marked there, not left silent."""
    before = PL + (
        "def main(parser):\n"
        "    parser = pl.Trainer.add_argparse_args(parser)\n"
        "    parser.add_argument('--data_dir', type=str, default='.')\n"
        "    args = parser.parse_args()\n"
        "    trainer = pl.Trainer.from_argparse_args(args, early_stop_callback=True)\n"
        "    trainer.fit(None)\n")
    out, _ = run_rule(RULE, before)
    assert "from_argparse_args" not in out and "add_argparse_args" not in out
    lines = out.splitlines()
    call = lines.index("    trainer = pl.Trainer(early_stop_callback=True)")
    assert lines[call - 1].startswith("    # TODO(lightmigrate): LM101 T-args: `early_stop_callback` is not a Trainer")
    assert run_rule(RULE, out)[0] == out
    compile(out, "m.py", "exec")


ZERO = "LambdaCallback(on_validation_start=lambda trainer, pl_module: pl_module.zero_grad())"


@pytest.mark.parametrize("args, added", [
    ("accumulate_grad_batches=2, val_check_interval=0.5", True),
    ("accumulate_grad_batches=acc, val_check_interval=n", True),  # values not known: they may
    ("accumulate_grad_batches={0: 1, 1: 2}, val_check_interval=10", True),  # a schedule, every 10 batches
    ("accumulate_grad_batches=1, val_check_interval=0.5", False),  # no accumulation window
    ("accumulate_grad_batches=4, val_check_interval=1.0", False),  # validation at the epoch end only
    ("accumulate_grad_batches=4", False),
])
def test_validation_inside_an_accumulation_window_zeroes_the_gradients_ledger_l6(args, added):
    """1.9.5's EvaluationLoop.on_run_start called module.zero_grad() at every validation start,
    so a validation inside an accumulation window discarded the gradients accumulated so far;
    2.x keeps them. The Trainer gets a callback that zeroes them there."""
    out, _ = run_rule(RULE, PL + f"t = pl.Trainer({args})\n")
    assert (ZERO in out) is added
    assert ("from pytorch_lightning.callbacks import LambdaCallback" in out) is added
    assert run_rule(RULE, out)[0] == out


def test_zero_grad_callback_joins_a_callbacks_list_or_is_marked():
    rw(PL + "t = pl.Trainer(accumulate_grad_batches=2, val_check_interval=0.25, callbacks=[cb])\n",
       "import pytorch_lightning as pl\nfrom pytorch_lightning.callbacks import LambdaCallback\n\n"
       "t = pl.Trainer(\n    accumulate_grad_batches=2,\n    val_check_interval=0.25,\n"
       f"    callbacks=[cb, {ZERO}],\n)\n")
    out, _ = run_rule(RULE, PL + "t = pl.Trainer(accumulate_grad_batches=2, val_check_interval=0.25, callbacks=cbs)\n")
    assert f"# TODO(lightmigrate): LM101 ledger L6 (1.9 zeroed the gradients at every validation start): add {ZERO}" in out
    assert run_rule(RULE, out)[0] == out
