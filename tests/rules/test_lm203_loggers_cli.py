"""LM203: CometLogger / LightningCLI arguments and the 1.5 ProgressBar."""

import inspect
import textwrap

import pytest

from lightmigrate.output.findings import Kind
from lightmigrate.rules.lm203_loggers_cli import LoggersCliRule

from .conftest import check_rewrite, run_rule

RULE = LoggersCliRule()


def test_comet_positional_arguments_become_2x_keywords():
    check_rewrite(RULE, '''\
    import pytorch_lightning as pl

    logger = pl.loggers.CometLogger("KEY", "logs", "proj", experiment_name="run", offline=flag)
    ''', '''\
    import pytorch_lightning as pl

    logger = pl.loggers.CometLogger(api_key="KEY", offline_directory="logs", project="proj", name="run", online=not flag)
    ''')


def test_comet_offline_false_becomes_online_true_and_rest_api_key_is_marked():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    from lightning.pytorch.loggers.comet import CometLogger

    logger = CometLogger(api_key=k, rest_api_key=r, offline=False)
    '''))
    assert "CometLogger(api_key=k, rest_api_key=r, online=True)" in out
    assert "TODO(lightmigrate): LM203 `CometLogger(rest_api_key=)` was removed" in out


def test_comet_mapping_matches_the_2x_signature_and_1x_meaning():
    """The keywords the rewrite produces are accepted by 2.6.6's CometLogger, and ``online``
    is the negation of 1.9's ``offline`` (evaluated, not just read)."""
    from lightning.pytorch.loggers import CometLogger

    seen = {}

    class Recorder:
        def __init__(self, **kw):
            seen.update(kw)

    for offline in (True, False):
        out, _ = run_rule(RULE, textwrap.dedent(f'''\
        from pytorch_lightning.loggers import CometLogger

        logger = CometLogger(api_key="k", save_dir="d", project_name="p", experiment_name="n", offline={offline},
                             prefix="x", experiment_key="e")
        '''))
        body = out.split("\n", 2)[2]
        exec(compile(body, "<rewritten>", "exec"), {"CometLogger": Recorder})
        inspect.signature(CometLogger.__init__).bind(None, **seen)  # raises on an unknown keyword
        assert seen["online"] is (not offline)
        assert "offline" not in seen and seen["offline_directory"] == "d" and seen["project"] == "p"
        assert seen["name"] == "n" and seen["experiment_key"] == "e"


def test_lightning_cli_arguments_are_regrouped_and_merged():
    check_rewrite(RULE, '''\
    from pytorch_lightning.cli import LightningCLI

    cli = LightningCLI(
        Model,
        save_config_filename="c.yaml",
        save_config_multifile=True,
        description="tool",
        env_parse=True,
        parser_kwargs={"default_config_files": ["a.yaml"]},
    )
    ''', '''\
    from pytorch_lightning.cli import LightningCLI

    cli = LightningCLI(
        Model,
        parser_kwargs={"default_config_files": ["a.yaml"], "description": "tool", "default_env": True},
        save_config_kwargs={"config_filename": "c.yaml", "multifile": True},
    )
    ''')


def test_lightning_cli_regrouped_arguments_bind_on_2x():
    from lightning.pytorch.cli import LightningCLI

    out, _ = run_rule(RULE, "from lightning.pytorch.cli import LightningCLI\n\n"
                            "cli = LightningCLI(save_config_overwrite=True, env_prefix='APP', run=False)\n")
    call = out.split("cli = ", 1)[1]
    kwargs = eval("dict" + call[len("LightningCLI"):])
    bound = inspect.signature(LightningCLI.__init__).bind(None, **kwargs)
    assert bound.arguments["save_config_kwargs"] == {"overwrite": True}
    assert bound.arguments["parser_kwargs"] == {"env_prefix": "APP"}


def test_instances_in_trainer_defaults_get_a_note():
    _, findings = run_rule(RULE, textwrap.dedent('''\
    from pytorch_lightning.cli import LightningCLI
    from pytorch_lightning.callbacks import EarlyStopping

    LightningCLI(trainer_defaults={"callbacks": EarlyStopping("loss")})
    '''))
    assert [(f.code, f.kind) for f in findings] == [("LM203", Kind.NOTE)]
    assert "lazy_instance" in findings[0].message


def test_progress_bar_call_becomes_tqdm_and_base_class_use_is_kept():
    check_rewrite(RULE, '''\
    from pytorch_lightning.callbacks import ProgressBar

    bar = ProgressBar(refresh_rate=5)
    ''', '''\
    from pytorch_lightning.callbacks import TQDMProgressBar

    bar = TQDMProgressBar(refresh_rate=5)
    ''')
    check_rewrite(RULE, '''\
    from pytorch_lightning.callbacks import ProgressBar


    class MyBar(ProgressBar):
        pass
    ''', None)


def test_lr_sch_names_is_marked():
    out, _ = run_rule(RULE, "names = lr_monitor.lr_sch_names\n")
    assert "TODO(lightmigrate): LM203 `LearningRateMonitor.lr_sch_names`" in out


@pytest.mark.parametrize("src", [
    "from mylib import CometLogger\n\nCometLogger(save_dir='x', offline=True)\n",
    "from pytorch_lightning.loggers import CometLogger\n\nCometLogger(api_key='k', online=False)\n",
    "from pytorch_lightning.cli import LightningCLI\n\nLightningCLI(Model, save_config_kwargs={'overwrite': True})\n",
])
def test_unrelated_or_already_2x_calls_are_left_alone(src):
    check_rewrite(RULE, src, None)


def test_removed_datamodule_arguments_are_marked_in_datamodules_only():
    src = textwrap.dedent('''\
    import pytorch_lightning as pl


    class DM(pl.LightningDataModule):
        def __init__(self):
            super().__init__(train_transforms=None, dims=(1, 28, 28))

        def shape(self):
            return self.size()


    class Other:
        def __init__(self):
            super().__init__(train_transforms=None)
    ''')
    out, _ = run_rule(RULE, src)
    marks = [line.strip() for line in out.splitlines() if "TODO(lightmigrate): LM203" in line]
    assert len(marks) == 2
    assert "`train_transforms`, `dims`" in marks[0] and "size()" in marks[1]
    check_rewrite(RULE, out, None)


def test_dims_triggers_only_as_a_keyword_argument():
    from lightmigrate.rules.lm203_loggers_cli import LoggersCliRule

    rule = LoggersCliRule()
    for text in ("super().__init__(dims=(1, 28, 28))", "super().__init__(dims = 3)",
                 "super(DM, self).__init__(dims  # c\n   = 3)", "super().__init__(dims \\\n = 3)",
                 "super().__init__(train_transforms=t)", "x = self.size()"):
        assert rule.may_apply(text), text
    for text in ("x.dims == 3", "n_dims = 4", "y = x.dims", "shape[dims]", "foo_transforms = 1",
                 "torch.flip(x, dims=(0,))", "Dataset(train_transforms=t)"):  # no super(): no datamodule init
        assert not rule.may_apply(text), text
