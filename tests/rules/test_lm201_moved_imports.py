"""LM201: moved imports are rewritten in every form a file reaches them, keeping the root."""

import subprocess
import sys
import textwrap

from lightmigrate.rules.lm201_moved_imports import MovedImportsRule

from .conftest import check_rewrite, run_rule

RULE = MovedImportsRule()


def test_from_import_moves_module_and_keeps_alias():
    check_rewrite(RULE, '''\
from pytorch_lightning.profiler import SimpleProfiler, AdvancedProfiler as AP

p = SimpleProfiler()
q = AP()
''', '''\
from pytorch_lightning.profilers import SimpleProfiler, AdvancedProfiler as AP

p = SimpleProfiler()
q = AP()
''')


def test_split_statement_when_names_move_to_different_modules():
    check_rewrite(RULE, '''\
from pytorch_lightning.utilities.distributed import rank_zero_only, sync_ddp


@rank_zero_only
def f(x):
    return sync_ddp(x)
''', '''\
from pytorch_lightning.utilities.distributed import sync_ddp
from pytorch_lightning.utilities.rank_zero import rank_zero_only


@rank_zero_only
def f(x):
    return sync_ddp(x)
''')


def test_renamed_class_renames_every_use():
    check_rewrite(RULE, '''\
from pytorch_lightning.loggers.base import LightningLoggerBase


class MyLogger(LightningLoggerBase):
    pass


def is_logger(x):
    return isinstance(x, LightningLoggerBase)
''', '''\
from pytorch_lightning.loggers.logger import Logger


class MyLogger(Logger):
    pass


def is_logger(x):
    return isinstance(x, Logger)
''')


def test_renamed_class_keeps_old_local_name_when_new_name_is_taken():
    check_rewrite(RULE, '''\
from logging import Logger
from pytorch_lightning.loggers import LightningLoggerBase

x: LightningLoggerBase = None
''', '''\
from logging import Logger
from pytorch_lightning.loggers import Logger as LightningLoggerBase

x: LightningLoggerBase = None
''')


def test_dotted_use_through_root_alias_keeps_lightning_pytorch_root():
    check_rewrite(RULE, '''\
import lightning.pytorch as pl

prof = pl.profiler.PyTorchProfiler()
pl.utilities.distributed.rank_zero_info("hi")
''', '''\
import lightning.pytorch as pl

prof = pl.profilers.PyTorchProfiler()
pl.utilities.rank_zero.rank_zero_info("hi")
''')


def test_module_alias_import_and_module_from_import():
    check_rewrite(RULE, '''\
import pytorch_lightning.utilities.distributed as dist
from pytorch_lightning.utilities import distributed

dist.rank_zero_only(print)
distributed.rank_zero_info("x")
''', '''\
from pytorch_lightning.utilities.rank_zero import rank_zero_only, rank_zero_info

rank_zero_only(print)
rank_zero_info("x")
''')


def test_fabric_targets_follow_the_root():
    check_rewrite(RULE, '''\
from pytorch_lightning.utilities.apply_func import move_data_to_device, apply_to_collection
from lightning.pytorch.utilities.cloud_io import get_filesystem
''', '''\
from lightning_fabric.utilities.apply_func import move_data_to_device
from lightning_utilities.core.apply_func import apply_to_collection
from lightning.fabric.utilities.cloud_io import get_filesystem
''')


def test_no_duplicate_import_when_new_name_already_imported():
    check_rewrite(RULE, '''\
from pytorch_lightning.strategies import DDPSpawnStrategy, DDPStrategy

a = DDPSpawnStrategy(find_unused_parameters=True)
b = DDPStrategy()
''', '''\
from pytorch_lightning.strategies import DDPStrategy

a = DDPStrategy(find_unused_parameters=True, start_method="spawn")
b = DDPStrategy()
''')


def test_spawn_keeps_explicit_start_method_and_marks_long_positional_calls():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    import pytorch_lightning as pl

    a = pl.strategies.DDPSpawnStrategy(start_method="fork")
    b = pl.strategies.DDPSpawnStrategy(None, None, None, None, None, None, None, None, "gloo")
    '''))
    assert 'a = pl.strategies.DDPStrategy(start_method="fork")' in out
    assert "TODO(lightmigrate): LM201 `DDPSpawnStrategy` took `process_group_backend`" in out


def test_parenthesized_import_keeps_comments_and_trailing_comma():
    check_rewrite(RULE, '''\
from pytorch_lightning.plugins import (
    NativeMixedPrecisionPlugin,  # amp
    CheckpointIO,
)

plugin = NativeMixedPrecisionPlugin(precision=16, device="cuda")
''', '''\
from pytorch_lightning.plugins import (
    MixedPrecision,  # amp
    CheckpointIO,
)

plugin = MixedPrecision(precision="16-mixed", device="cuda")
''')


def test_combined_loader_keyword_and_caveat_marker():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    from pytorch_lightning.trainer.supporters import CombinedLoader

    loader = CombinedLoader(loaders={"a": [1, 2]}, mode="max_size_cycle")
    '''))
    assert "from pytorch_lightning.utilities.combined_loader import CombinedLoader" in out
    assert 'CombinedLoader(iterables={"a": [1, 2]}, mode="max_size_cycle")' in out
    assert "TODO(lightmigrate): LM201" in out and "`.iterables` instead of `.loaders`" in out


def test_metrics_become_torchmetrics_with_a_marker():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    from pytorch_lightning import metrics

    acc = metrics.Accuracy()
    '''))
    assert "import torchmetrics\n" in out and "acc = torchmetrics.Accuracy()" in out
    assert "TODO(lightmigrate): LM201" in out and "task=" in out


def test_unrelated_and_2x_code_is_left_alone():
    for src in ('from pytorch_lightning.profilers import SimpleProfiler\n',
                'from myproj.profiler import SimpleProfiler\nimport profiler\nprofiler.base.BaseProfiler()\n',
                'import pytorch_lightning as pl\n\ntrainer = pl.Trainer(max_epochs=1)\n'):
        check_rewrite(RULE, src, None)


def test_rewritten_spawn_strategy_and_precision_construct_on_2x(tmp_path):
    """The rewritten code runs on Lightning 2.x and means what the 1.9 code meant."""
    src = textwrap.dedent('''\
    import pytorch_lightning as pl
    from pytorch_lightning.plugins.precision.native_amp import NativeMixedPrecisionPlugin
    from pytorch_lightning.utilities.seed import seed_everything

    strategy = pl.strategies.DDPSpawnStrategy(find_unused_parameters=True)
    plugin = NativeMixedPrecisionPlugin("bf16", "cpu")
    seed = seed_everything(7)
    print(type(strategy).__name__, strategy._start_method, strategy._ddp_kwargs, plugin.precision, seed)
    ''')
    out, _ = run_rule(RULE, src)
    path = tmp_path / "snippet.py"
    path.write_text(out)
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["DDPStrategy", "spawn", "{'find_unused_parameters':", "True}", "bf16-mixed", "7"]


def test_non_call_use_of_spawn_strategy_is_marked():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    from pytorch_lightning.strategies import DDPSpawnStrategy


    def is_spawn(trainer):
        return isinstance(trainer.strategy, DDPSpawnStrategy)
    '''))
    assert "from pytorch_lightning.strategies import DDPStrategy\n" in out
    assert "return isinstance(trainer.strategy, DDPStrategy)" in out
    assert "TODO(lightmigrate): LM201 `DDPSpawnStrategy` is `DDPStrategy` in 2.x" in out


def test_version_conditional_imports_stay_valid_in_each_branch():
    """A name imported in one branch of an ``if`` is not visible in the other: each branch
    gets its own import of the new name."""
    check_rewrite(RULE, '''\
    if NEW:
        from pytorch_lightning.strategies import DDPSpawnStrategy, DDPStrategy
    else:
        from pytorch_lightning.plugins import DDPPlugin, DDPSpawnPlugin

        DDPStrategy = DDPPlugin
    ''', '''\
    if NEW:
        from pytorch_lightning.strategies import DDPStrategy
    else:
        from pytorch_lightning.strategies import DDPStrategy

        DDPStrategy = DDPStrategy
    ''')


def test_dotted_use_of_a_lazy_module_gets_an_import():
    """``pl.cli`` is not an attribute of the package until imported: the use gets its own
    import; ``pl`` served only that use, so its import goes."""
    check_rewrite(RULE, '''\
    import pytorch_lightning as pl

    cli = pl.utilities.cli.LightningCLI(run=False)
    ''', '''\
    from pytorch_lightning.cli import LightningCLI

    cli = LightningCLI(run=False)
    ''')


def test_unified_package_alias_and_fabric_root_for_lightning_pytorch():
    check_rewrite(RULE, '''\
    import lightning as L

    prof = L.pytorch.profiler.SimpleProfiler()
    batch = L.pytorch.utilities.apply_func.move_data_to_device(batch, "cpu")
    ''', '''\
    import lightning as L

    prof = L.pytorch.profilers.SimpleProfiler()
    batch = L.fabric.utilities.apply_func.move_data_to_device(batch, "cpu")
    ''')


def test_module_imported_under_an_alias_keeps_the_alias():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    import pytorch_lightning.profiler as prof
    from pytorch_lightning import metrics as M

    p = prof.SimpleProfiler()
    '''))
    lines = [line for line in out.splitlines() if not line.startswith("# TODO(lightmigrate): LM201 `metrics` moved")]
    assert lines == ["import pytorch_lightning.profilers as prof", "import torchmetrics as M", "",
                     "p = prof.SimpleProfiler()"]
    check_rewrite(RULE, out, None)


# --- find --------------------------------------------------------------------------------------

import pytest  # noqa: E402

from .find_imports import check_find, sites_of  # noqa: E402


@pytest.mark.parametrize("source,effect", [
    ("from pytorch_lightning.profiler import SimpleProfiler\n", True),
    ("import lightning.pytorch as L\n\nprof = L.profiler.SimpleProfiler()\n", True),
    ("from lightning import pytorch as PL\n\n\nclass Log(PL.loggers.base.LightningLoggerBase):\n    pass\n", True),
    ("from pytorch_lightning.strategies import DDPSpawnStrategy as Spawn\n\ns = Spawn()\n", True),
    # the argument fixes follow any import of the callee's name, Lightning or not
    ("from mylib import DDPSpawnStrategy\n\ns = DDPSpawnStrategy()\n", True),
    ("from mylib import CombinedLoader\n\nc = CombinedLoader(loaders=[1])\n", True),
    ("from pytorch_lightning.utilities.combined_loader import CombinedLoader\n\nc = CombinedLoader(iterables=[1])\n", False),
    ("from pytorch_lightning.profilers import SimpleProfiler\nfrom pytorch_lightning import Trainer\n", False),
    ("import pytorch_lightning as pl\n\n# pl.profiler and pl.core.lightning were renamed\n"
     "NAME = 'pytorch_lightning.profiler.SimpleProfiler'\n", False),
    ("from mylib.profiler import SimpleProfiler\n\nprofiler = SimpleProfiler()\n", False),
    ("from lightning.pytorch.core.module import LightningModule\nimport lightning.pytorch as pl\n\n"
     "def f(model):\n    return model.layer, pl.core\n", False),
    # the table's words are all there, but no name the file reaches starts with a moved one
    ("import lightning.pytorch as pl\n\n\ndef f(model):\n    return model.profiler, pl.Trainer\n", False),
    ("import pytorch_lightning.utilities.apply_func as af\n\nx = af.move_data_to_device\n", True),
    # the module-level binding of ``pl`` counts, also inside a function that rebinds it
    ("import pytorch_lightning as pl\n\n\ndef f():\n    import mylib as pl\n    return pl.profiler.X\n", True),
    # calls that are already 2.x, or only marked where the marker is there already
    ("from mylib import DDPSpawnStrategy\n\ns = DDPSpawnStrategy(start_method='spawn')\n", False),
    ("from mylib import NativeMixedPrecisionPlugin as P\n\np = P('16-mixed', 'cuda')\n", False),
    ("from mylib import NativeMixedPrecisionPlugin as P\n\np = P(precision=32)\n", True),
    ("from mylib import DDPSpawnStrategy\n\ns = DDPSpawnStrategy(**kw)\n", True),
    ("from mylib import DDPSpawnStrategy\n\n"
     "# TODO(lightmigrate): LM201 `DDPSpawnStrategy` defaulted to `start_method=\"spawn\"`; `DDPStrategy` defaults "
     "to \"popen\": make sure the `**` arguments hold `start_method=\"spawn\"`; "
     "see https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html\ns = DDPSpawnStrategy(**kw)\n", False),
])
def test_find_is_exact(source, effect):
    check_find(RULE, source, effect)


def test_find_names_the_old_paths_it_rewrites():
    sites = sites_of(RULE, "import pytorch_lightning as pl\nfrom pytorch_lightning.profiler import SimpleProfiler\n\n"
                           "s = pl.strategies.DDPSpawnStrategy()\n")
    assert {(s.line, s.target, s.action) for s in sites} == {
        (2, "pytorch_lightning.profiler.SimpleProfiler", "rewrite"),
        (4, "pytorch_lightning.strategies.DDPSpawnStrategy", "rewrite")}


def test_find_finds_nothing_on_its_own_output():
    for example in RULE.examples:
        if example.after is not None:
            assert sites_of(RULE, example.after) == [], example.title


# --- black-style parenthesized imports (issue 21 kind 4): every shape stays valid and keeps its layout


def test_parenthesized_import_moving_whole_to_another_module():
    check_rewrite(RULE, '''\
from pytorch_lightning.utilities.cli import (
    LightningCLI,
    SaveConfigCallback,
)

cli = LightningCLI(save_config_callback=SaveConfigCallback)
''', '''\
from pytorch_lightning.cli import (
    LightningCLI,
    SaveConfigCallback,
)

cli = LightningCLI(save_config_callback=SaveConfigCallback)
''')


def test_parenthesized_import_split_keeps_comments_aliases_and_trailing_commas():
    check_rewrite(RULE, '''\
from pytorch_lightning.utilities.distributed import (  # distributed helpers
    rank_zero_only,
    sync_ddp_if_available,  # sync
    gather_all_tensors as gather,
)
from pytorch_lightning.utilities.distributed import (
    sync_ddp,
    rank_zero_info as info,  # log
)


@rank_zero_only
def f(x):
    info("x")
    return sync_ddp_if_available(x), gather(x), sync_ddp(x)
''', '''\
from pytorch_lightning.utilities.distributed import (  # distributed helpers
    sync_ddp_if_available,  # sync
    gather_all_tensors as gather,
)
from pytorch_lightning.utilities.rank_zero import (
    rank_zero_only,
)
from pytorch_lightning.utilities.distributed import (
    sync_ddp,
)
from pytorch_lightning.utilities.rank_zero import (
    rank_zero_info as info,  # log
)


@rank_zero_only
def f(x):
    info("x")
    return sync_ddp_if_available(x), gather(x), sync_ddp(x)
''')


def test_parenthesized_import_without_trailing_comma_and_with_comment_lines():
    check_rewrite(RULE, '''\
from pytorch_lightning.utilities.distributed import (
    rank_zero_only as rzo,  # decorator
    sync_ddp  # no trailing comma
)
from pytorch_lightning.loggers.base import (
    # the base class
    LightningLoggerBase,
    rank_zero_experiment
)
from pytorch_lightning.utilities.distributed import (rank_zero_info,
                                                     sync_ddp_if_available)


class L(LightningLoggerBase):
    @property
    @rank_zero_experiment
    def experiment(self):
        return rank_zero_info, sync_ddp_if_available


@rzo
def f(x):
    return sync_ddp(x)
''', '''\
from pytorch_lightning.utilities.distributed import (
    sync_ddp  # no trailing comma
)
from pytorch_lightning.utilities.rank_zero import (
    rank_zero_only as rzo  # decorator
)
from pytorch_lightning.loggers.logger import (
    # the base class
    Logger,
    rank_zero_experiment
)
from pytorch_lightning.utilities.distributed import (sync_ddp_if_available)
from pytorch_lightning.utilities.rank_zero import (rank_zero_info)


class L(Logger):
    @property
    @rank_zero_experiment
    def experiment(self):
        return rank_zero_info, sync_ddp_if_available


@rzo
def f(x):
    return sync_ddp(x)
''')


def test_parenthesized_import_with_a_name_already_imported_and_one_line_parentheses():
    check_rewrite(RULE, '''\
from pytorch_lightning.utilities.cli import (LightningCLI, SaveConfigCallback,)
from pytorch_lightning.utilities.cli import (
    LightningCLI as CLI, LightningArgumentParser,
    instantiate_class,
)
from pytorch_lightning.profiler import (  # profilers
    SimpleProfiler,
    AdvancedProfiler,
)

cli = CLI(save_config_callback=SaveConfigCallback, parser_class=LightningArgumentParser)
p = SimpleProfiler(), AdvancedProfiler(), instantiate_class, LightningCLI
''', '''\
from pytorch_lightning.cli import (LightningCLI, SaveConfigCallback,)
from pytorch_lightning.cli import (
    LightningArgumentParser,
    instantiate_class,
)
from pytorch_lightning.profilers import (  # profilers
    SimpleProfiler,
    AdvancedProfiler,
)

cli = LightningCLI(save_config_callback=SaveConfigCallback, parser_class=LightningArgumentParser)
p = SimpleProfiler(), AdvancedProfiler(), instantiate_class, LightningCLI
''')


def test_parenthesized_import_moved_name_last_keeps_the_kept_statement_valid():
    check_rewrite(RULE, '''\
from pytorch_lightning.utilities.distributed import (
    sync_ddp,  # keep
    rank_zero_only,  # moves
)
from pytorch_lightning.utilities.distributed import (sync_ddp_if_available,  # keep too
                                                     rank_zero_debug)

rank_zero_only(print), rank_zero_debug, sync_ddp, sync_ddp_if_available
''', '''\
from pytorch_lightning.utilities.distributed import (
    sync_ddp,  # keep
)
from pytorch_lightning.utilities.rank_zero import (
    rank_zero_only,  # moves
)
from pytorch_lightning.utilities.distributed import (sync_ddp_if_available  # keep too
)
from pytorch_lightning.utilities.rank_zero import (rank_zero_debug)

rank_zero_only(print), rank_zero_debug, sync_ddp, sync_ddp_if_available
''')


def test_parenthesized_import_whole_engine_run_is_valid_and_idempotent():
    # every rule together (LM202 marks the removed names of the same statements)
    from lightmigrate.rules import ALL_RULES
    from lightmigrate.engine import transform_text
    src = textwrap.dedent('''\
    from pytorch_lightning.utilities.cli import (
        LightningCLI,
        SaveConfigCallback,
    )
    from pytorch_lightning.utilities.distributed import (
        rank_zero_only,
        sync_ddp_if_available,
    )
    from pytorch_lightning.loggers.base import (
        LightningLoggerBase,
    )


    class L(LightningLoggerBase):
        pass


    @rank_zero_only
    def f(x):
        return sync_ddp_if_available(x)


    cli = LightningCLI(save_config_callback=SaveConfigCallback)
    ''')
    once = transform_text(src, ALL_RULES, path="m.py")
    assert not once.problems, once.problems
    assert "from pytorch_lightning.cli import (\n    LightningCLI,\n    SaveConfigCallback,\n)\n" in once.text
    assert "from pytorch_lightning.loggers.logger import (\n    Logger,\n)\n" in once.text
    assert "LM202 `utilities.distributed.sync_ddp_if_available` was removed" in once.text
    compile(once.text, "m.py", "exec")
    twice = transform_text(once.text, ALL_RULES, path="m.py")
    assert twice.text == once.text and not twice.problems


# --- a moved name that is also a keyword, an attribute, a parameter, a function or a class attribute


def test_keyword_and_attribute_of_the_same_name_are_not_renamed_or_marked():
    check_rewrite(RULE, '''\
from pytorch_lightning.loggers.base import LightningLoggerBase

registry.register(LightningLoggerBase=LightningLoggerBase)
x = registry.get().LightningLoggerBase
''', '''\
from pytorch_lightning.loggers.logger import Logger

registry.register(LightningLoggerBase=Logger)
x = registry.get().LightningLoggerBase
''')


def test_parameter_or_class_attribute_of_the_same_name_keeps_the_old_local_name():
    # renaming would change the function's keyword (``build(DDPSpawnStrategy=...)``) and the
    # class attribute ``self.DDPSpawnStrategy``: the import keeps the old name instead
    marker = ("# TODO(lightmigrate): LM201 `DDPSpawnStrategy` is `DDPStrategy` in 2.x: this check or subclass now "
              "also matches plain DDP; compare `strategy._start_method == \"spawn\"` if the difference matters; "
              "see https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html")
    check_rewrite(RULE, '''\
from pytorch_lightning.strategies import DDPSpawnStrategy


def build(DDPSpawnStrategy=None, **kwargs):
    return configure(DDPSpawnStrategy=True, kind=kwargs)


class Holder:
    DDPSpawnStrategy = DDPSpawnStrategy

    def make(self):
        return DDPSpawnStrategy(), self.DDPSpawnStrategy
''', f'''\
from pytorch_lightning.strategies import DDPStrategy as DDPSpawnStrategy


def build(DDPSpawnStrategy=None, **kwargs):
    return configure(DDPSpawnStrategy=True, kind=kwargs)


class Holder:
    {marker}
    DDPSpawnStrategy = DDPSpawnStrategy

    def make(self):
        return DDPSpawnStrategy(start_method="spawn"), self.DDPSpawnStrategy
''')
    # each marker is one find decided (find and fix agree on where they go)
    sites = sites_of(RULE, '''\
from pytorch_lightning.strategies import DDPSpawnStrategy


def build(DDPSpawnStrategy=None, **kwargs):
    return configure(DDPSpawnStrategy=True, kind=kwargs)


class Holder:
    DDPSpawnStrategy = DDPSpawnStrategy

    def make(self):
        return DDPSpawnStrategy(), self.DDPSpawnStrategy
''')
    assert sorted({s.line for s in sites if s.action == "mark"}) == [9]


def test_function_or_parameter_named_like_a_moved_name_is_not_marked():
    # (the parameter is another variable: its uses are not the import's)
    check_rewrite(RULE, '''\
from pytorch_lightning.strategies import DDPSpawnStrategy


def DDPSpawnStrategy_options(DDPSpawnStrategy):
    return {"cls": DDPSpawnStrategy}


s = DDPSpawnStrategy(find_unused_parameters=False)
''', '''\
from pytorch_lightning.strategies import DDPStrategy as DDPSpawnStrategy


def DDPSpawnStrategy_options(DDPSpawnStrategy):
    return {"cls": DDPSpawnStrategy}


s = DDPSpawnStrategy(find_unused_parameters=False, start_method="spawn")
''')
