"""LM202: removed 1.x APIs are marked (never rewritten), once, with what to do."""

import textwrap

from lightmigrate.output.findings import Kind
from lightmigrate.rules.lm202_removed_imports import RemovedApisRule

from .conftest import check_rewrite, run_rule

RULE = RemovedApisRule()


def markers(out):
    return [line.strip() for line in out.splitlines() if "TODO(lightmigrate): LM202" in line]


def test_import_of_removed_name_is_marked_once_and_uses_are_not():
    src = textwrap.dedent('''\
    import torch
    from pytorch_lightning.utilities.distributed import sync_ddp


    def f(x):
        return sync_ddp(x) + sync_ddp(x)
    ''')
    out, findings = run_rule(RULE, src)
    (marker,) = markers(out)
    assert "`utilities.distributed.sync_ddp` was removed (R14)" in marker
    assert "self.all_gather" in marker
    assert out.replace(marker + "\n", "") == src
    assert [(f.code, f.kind, f.line) for f in findings] == [("LM202", Kind.MARKER, 2)]
    check_rewrite(RULE, out, None)  # idempotent


def test_dotted_use_marks_its_statement_even_in_an_if_header():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    import lightning.pytorch as pl


    def size(loader):
        if pl.utilities.data.get_len(loader) > 3:
            return pl.lite.LightningLite
    '''))
    lines = out.splitlines()
    i = lines.index("    if pl.utilities.data.get_len(loader) > 3:")
    assert "LM202 `utilities.data.get_len` was removed (R9)" in lines[i - 1]
    j = lines.index("        return pl.lite.LightningLite")
    assert "(R2)" in lines[j - 1]


def test_removed_strategies_and_fairscale_are_marked():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    from pytorch_lightning.strategies import DDPShardedStrategy, HorovodStrategy, DDPStrategy
    '''))
    (marker_a, marker_b) = markers(out)
    assert "(R34)" in marker_a and "(R38)" in marker_b


def test_custom_accelerator_and_precision_plugin_methods_are_marked():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    from pytorch_lightning.accelerators import Accelerator
    import pytorch_lightning as pl


    class MyAccelerator(Accelerator):
        def setup_environment(self, root_device):
            pass


    class MyPrecision(pl.plugins.PrecisionPlugin):
        def optimizer_step(self, optimizer, model, optimizer_idx, closure, **kwargs):
            pass

        def dispatch(self, trainer):
            pass


    class NotAPlugin:
        def setup_environment(self):
            pass
    '''))
    found = markers(out)
    assert len(found) == 3
    assert "(R44)" in found[0] and "setup_device" in found[0]
    assert "(R45)" in found[1] and "optimizer_idx" in found[1]
    assert "(R45)" in found[2]


def test_methods_are_marked_only_in_the_classes_that_lost_them():
    # 1.9's Strategy.setup_environment(self) is still called by 2.x (only the accelerator's
    # setup_environment(self, root_device) became setup_device); accelerators had no dispatch
    # and were never passed optimizer_idx.
    check_rewrite(RULE, '''\
    from pytorch_lightning.strategies import DDPStrategy
    from pytorch_lightning.accelerators import CPUAccelerator
    from pytorch_lightning.plugins import PrecisionPlugin


    class MyStrategy(DDPStrategy):
        def setup_environment(self):
            super().setup_environment()


    class MyPrecision(PrecisionPlugin):
        def setup_environment(self):
            pass


    class MyAccelerator(CPUAccelerator):
        def dispatch(self, trainer):
            pass

        def optimizer_step(self, optimizer, model, optimizer_idx, closure):
            pass
    ''', None)


def test_a_class_with_an_accelerator_and_a_strategy_base_is_marked_for_each():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    from pytorch_lightning.strategies import Strategy
    from pytorch_lightning.accelerators import Accelerator


    class Both(Accelerator, Strategy):
        def setup_environment(self, root_device):
            pass

        def dispatch(self, trainer):
            pass
    '''))
    found = markers(out)
    assert len(found) == 2
    assert "(R44)" in found[0] and "(R45)" in found[1]


def test_kept_names_and_other_packages_are_left_alone():
    check_rewrite(RULE, '''\
    from pytorch_lightning.utilities.seed import isolate_rng
    from pytorch_lightning.utilities.rank_zero import rank_zero_only
    from mypkg.utilities.distributed import sync_ddp
    ''', None)


def test_names_2x_still_has_under_the_loop_modules_are_left_alone():
    # 1.9 helpers that 2.x kept, and the protected classes 2.x code imports
    check_rewrite(RULE, '''\
    from lightning.pytorch.loops.utilities import _parse_loop_limits, _block_parallel_sync_behavior
    from lightning.pytorch.loops.loop import _Loop
    from pytorch_lightning.loops.optimization.closure import OutputResult
    from lightning.pytorch.loops.optimization import _AutomaticOptimization
    ''', None)


def test_19_names_the_loop_modules_lost_are_marked_beside_kept_ones():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    from pytorch_lightning.loops.utilities import _parse_loop_limits, _get_active_optimizers
    from pytorch_lightning.loops.loop import Loop
    '''))
    found = markers(out)
    assert len(found) == 2
    assert "`loops.utilities._get_active_optimizers` was removed (R25)" in found[0]
    assert "`loops.loop.Loop` was removed (A8-imports)" in found[1]
    assert "_parse_loop_limits" not in "".join(found)


def test_a_loop_module_that_2x_kept_is_marked_where_a_lost_name_is_used():
    out, _ = run_rule(RULE, textwrap.dedent('''\
    import pytorch_lightning as pl
    import pytorch_lightning.loops.utilities as lu
    from pytorch_lightning.loops import loop

    a = lu._parse_loop_limits
    b = lu._get_active_optimizers


    class MyLoop(loop.Loop):
        pass


    c = pl.loops.utilities._reset_progress
    '''))
    lines = out.splitlines()
    marked = [lines[i + 1] for i, line in enumerate(lines) if "TODO(lightmigrate): LM202" in line]
    assert marked == ["b = lu._get_active_optimizers", "class MyLoop(loop.Loop):"]


def test_a_base_renamed_by_lm201_is_still_seen_by_the_gate():
    # LM201 turns TPUAccelerator into XLAAccelerator before LM202 runs: LM202's gate reads the
    # bases of the text it is given, so the accelerator method is still marked.
    from lightmigrate.engine.transform import transform_text
    from lightmigrate.rules import select_rules

    text = textwrap.dedent('''\
    from pytorch_lightning.accelerators import TPUAccelerator


    class A(TPUAccelerator):
        def setup_environment(self, root_device):
            pass
    ''')
    out = transform_text(text, select_rules())
    assert "class A(XLAAccelerator):" in out.text
    assert [f.code for f in out.findings] == ["LM202"] and "(R44)" in out.findings[0].message


# --- find --------------------------------------------------------------------------------------

import pytest  # noqa: E402

from .find_imports import check_find, sites_of  # noqa: E402


@pytest.mark.parametrize("source,effect", [
    ("from pytorch_lightning.lite import LightningLite\n", True),
    # names 2.x kept under the loop modules
    ("from lightning.pytorch.loops.utilities import _parse_loop_limits\n", False),
    ("import pytorch_lightning.loops.utilities as lu\n\nx = lu._get_active_optimizers\n", True),
    # the accelerators package is imported, but the class with setup_environment is a strategy
    ("from lightning.fabric.accelerators import Accelerator\nfrom lightning.fabric.strategies import "
     "DDPStrategy\n\n\nclass S(DDPStrategy):\n    def setup_environment(self):\n        pass\n\n"
     "    def device(self, a: Accelerator):\n        pass\n", False),
    ("import lightning.pytorch as pl\n\n\nclass A(pl.accelerators.Accelerator):\n"
     "    def setup_environment(self, root_device):\n        pass\n", True),
    ("from lightning.fabric.accelerators import Accelerator as Acc\n\n\nclass A(Acc):\n"
     "    def setup_environment(self, root_device):\n        pass\n", True),
    ("import pytorch_lightning as pl\n\nx = pl.utilities.distributed.sync_ddp(1)\n", True),
    ("from pytorch_lightning.accelerators import Accelerator\n\n\nclass A(Accelerator):\n"
     "    def setup_environment(self, root_device):\n        pass\n", True),
    # a strategy's setup_environment(self) is another method, which 2.x still calls
    ("from pytorch_lightning.strategies import DDPStrategy\n\n\nclass S(DDPStrategy):\n"
     "    def setup_environment(self):\n        pass\n", False),
    ("from pytorch_lightning.accelerators import Accelerator\n\n\nclass A(Accelerator):\n"
     "    def dispatch(self, trainer):\n        pass\n", False),
    ("from lightning_fabric.plugins import Precision as P\n\n\nclass MyPrecision(P):\n"
     "    def backward(self, tensor, model, optimizer_idx):\n        pass\n", True),
    ("from pytorch_lightning.utilities.seed import isolate_rng\n", False),
    ("import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def dispatch(self):\n"
     "        pass\n", False),
    ("from mylib.utilities.distributed import sync_ddp\n", False),
    # libcst rewrites no import of a one-line suite
    ("if True: from pytorch_lightning.lite import LightningLite\n", False),
    # a method that carries an LM202 marker already
    ("from pytorch_lightning.accelerators import Accelerator\n\n\nclass A(Accelerator):\n"
     "    # TODO(lightmigrate): LM202 look\n    def setup_environment(self, root_device):\n        pass\n", False),
])
def test_find_is_exact(source, effect):
    check_find(RULE, source, effect)


def test_find_leaves_out_markers_already_there():
    # every example's output, and a marker the header holds (above the first statement)
    for example in RULE.examples:
        if example.after is not None:
            assert sites_of(RULE, example.after) == [], example.title
    marked = sites_of(RULE, "import pytorch_lightning as pl\n\nx = pl.utilities.distributed.sync_ddp(1)\n")
    assert [(s.line, s.target, s.action) for s in marked] == [(3, "pytorch_lightning.utilities.distributed.sync_ddp", "mark")]
    why = marked[0].data
    header = f"# TODO(lightmigrate): LM202 {why}\nimport pytorch_lightning as pl\n\ny = pl.utilities.distributed.sync_ddp(2)\n"
    assert sites_of(RULE, header) == []
    # a marker in the footer of the block before is not the statement's
    footer = ("import pytorch_lightning as pl\nif x:\n    pass\n"
              f"# TODO(lightmigrate): LM202 {why}\n    # the if's\ny = pl.utilities.distributed.sync_ddp(2)\n")
    check_find(RULE, footer, True)


def test_find_names_the_plugin_methods():
    sites = sites_of(RULE, "from lightning_fabric.plugins import Precision as P\n\n\nclass MyPrecision(P):\n"
                           "    def backward(self, tensor, model, optimizer_idx):\n        pass\n")
    assert [(s.target, s.action) for s in sites] == [("MyPrecision.backward", "mark-method")]
