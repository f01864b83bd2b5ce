"""LM203: CometLogger / LightningCLI arguments and the 1.5 ProgressBar."""

import inspect
import textwrap

import pytest

from lightmigrate.output.findings import Kind
from lightmigrate.rules.lm203_loggers_cli import COMET_REST_KEY_WHY, LoggersCliRule

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


# --- find --------------------------------------------------------------------------------------

from .find_imports import check_find  # noqa: E402

DATAMODULE_BASE = "import lightning.pytorch as pl\n\n\nclass BaseDM(pl.LightningDataModule):\n    pass\n"
DIMS = ("# a lightning datamodule\nfrom dm import BaseDM\n\n\nclass DM(BaseDM):\n    def __init__(self):\n"
        "        super().__init__(dims=(1, 2))\n")


@pytest.mark.parametrize("source,files,effect", [
    ("from pytorch_lightning.loggers import CometLogger as Comet\n\nlog = Comet(project_name='p')\n", {}, True),
    ("import pytorch_lightning as pl\n\ncli = pl.cli.LightningCLI(M, save_config_overwrite=True)\n", {}, True),
    ("from pytorch_lightning.callbacks import ProgressBar\n\nbar = ProgressBar()\n", {}, True),
    ("def f(monitor):\n    return monitor.lr_sch_names\n", {}, True),
    # a datamodule of the project, defined in another file (the index knows it)
    (DIMS, {"dm.py": DATAMODULE_BASE}, True),
    (DIMS, {"dm.py": "class BaseDM:\n    pass\n"}, False),
    ("from pytorch_lightning.cli import LightningCLI\n\ncli = LightningCLI(M, save_config_kwargs={'overwrite': True})\n",
     {}, False),
    ("from mylib import CometLogger\n\nlogger = CometLogger(save_dir='x', offline=True)\n", {}, False),
    ("class Data:\n    def shape(self):\n        return self.size()\n", {}, False),
    # the import alone, a subclass, or the class passed along: no call to change
    ("from pytorch_lightning.loggers import CometLogger\n", {}, False),
    ("from pytorch_lightning.callbacks import ProgressBar\n\n\nclass Bar(ProgressBar):\n    pass\n", {}, False),
    ("from pytorch_lightning.loggers import CometLogger as C\nlog = make(C, save_dir='x')\n", {}, False),
    ("from pytorch_lightning import callbacks as cb\nbar = cb.ProgressBar()\n", {}, True),
    # a 2.x CometLogger call; and one already marked (the marker above its statement)
    ("from pytorch_lightning.loggers import CometLogger\nlog = CometLogger(project='p', rest_api_key='k')\n", {}, False),
    ("import os\nfrom pytorch_lightning.loggers import CometLogger\n"
     f"# TODO(lightmigrate): LM203 {COMET_REST_KEY_WHY}\nlog = CometLogger(api_key='a', rest_api_key='k')\n", {}, False),
    ("import os\nfrom pytorch_lightning.loggers import CometLogger\nlog = CometLogger(api_key='a', rest_api_key='k')\n",
     {}, True),
    # the CLI3 note is reported on every run
    ("from pytorch_lightning.cli import LightningCLI\ncli = LightningCLI(M, trainer_defaults={'logger': L()})\n", {}, True),
    ("from pytorch_lightning.cli import LightningCLI\ncli = LightningCLI(M, parser_kwargs=p, env_prefix='A')\n", {}, True),
])
def test_find_is_exact(source, files, effect):
    check_find(RULE, source, effect, files)


def test_find_follows_the_datamodule_hierarchy_across_files():
    files = {"dm.py": "import lightning.pytorch as pl\nclass DM(pl.LightningDataModule):\n    pass\n",
             "other.py": "class Data:\n    def get_batch_shape(self):\n        return self.size()\n"}
    sub = "from dm import DM\nclass Sub(DM):\n    def get_batch_shape(self):\n        return self.size()\n"
    sites = check_find(RULE, sub, True, files, path="sub.py")
    assert [(s.line, s.action) for s in sites] == [(4, "datamodule")]
    check_find(RULE, "class Sub(DM): ...\n", False, files, path="sub.py")
    check_find(RULE, files["other.py"], False, files, indexed=False, path="other.py")
    assert "TODO(lightmigrate): LM203" in run_rule(RULE, sub, "sub.py", files)[0]


def test_progress_bar_call_keeps_a_class_of_the_file_named_tqdm_progress_bar():
    # issue 23: the added import must not be shadowed by (or shadow) the file's own class
    check_rewrite(RULE, '''\
    from pytorch_lightning.callbacks import ProgressBar


    class TQDMProgressBar(ProgressBar):
        pass


    bar = ProgressBar(refresh_rate=5)
    ''', '''\
    from pytorch_lightning.callbacks import ProgressBar, TQDMProgressBar as LightningTQDMProgressBar


    class TQDMProgressBar(ProgressBar):
        pass


    bar = LightningTQDMProgressBar(refresh_rate=5)
    ''')
