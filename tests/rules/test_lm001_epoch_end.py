"""LM001: before/after cases for each bullet of the epoch-end migration (issue 2), beyond the
rule's own examples. Runtime equivalence with real 1.9.5 is checked by tests/verify."""

import textwrap

import libcst as cst
import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, Site, SourceFile
from lightmigrate.rules.lm001_epoch_end import HOOKS, UNKNOWN_CLASS, EpochEndRule, _ClassMigration
from lightmigrate.rules.shared.class_edit import migrate_classes

from .conftest import check_rewrite, run_rule

RULE = EpochEndRule()
HEAD = "import pytorch_lightning as pl\n\n\n"


def rw(before, after, **kw):
    return check_rewrite(RULE, HEAD + before, None if after is None else HEAD + after, **kw)


def test_existing_epoch_end_hook_runs_after_old_body():
    rw(
        '''\
class M(pl.LightningModule):
    def training_epoch_end(self, outs):
        """Sum the losses."""
        self.total = sum(o["loss"] for o in outs)

    def on_train_epoch_end(self):
        """Log them."""
        self.log("total", self.total)
''',
        '''\
class M(pl.LightningModule):
    def on_train_epoch_start(self):
        self.training_step_outputs = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs:
            self.training_step_outputs.append(outputs)

    def on_train_epoch_end(self):
        """Sum the losses."""
        outs = self.training_step_outputs
        self.total = sum(o["loss"] for o in outs)
        self.log("total", self.total)
''',
    )


def test_existing_batch_end_and_epoch_start_hooks_are_merged_not_replaced():
    findings = rw(
        '''\
class M(pl.LightningModule):
    def on_validation_epoch_start(self):
        self.started = True

    def on_validation_batch_end(self, out, batch, batch_idx, dataloader_idx):
        self.last = out

    def validation_epoch_end(self, outputs):
        self.n = len(outputs)
''',
        '''\
class M(pl.LightningModule):
    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.validation_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]
        self.started = True

    def on_validation_batch_end(self, out, batch, batch_idx, dataloader_idx=0):
        if out is not None:
            self.validation_step_outputs[dataloader_idx].append(out)
        self.last = out

    def on_validation_epoch_end(self):
        outputs = self.validation_step_outputs
        if len(outputs) == 1:
            outputs = outputs[0]
        self.n = len(outputs)
''',
    )
    assert [f.kind for f in findings] == [Kind.FIXED]


def test_unused_outputs_merged_into_existing_hook_without_buffer():
    rw(
        '''\
class M(pl.LightningModule):
    def test_epoch_end(self, outputs):
        self.log("a", 1.0)

    def on_test_epoch_end(self):
        self.log("b", 2.0)
''',
        '''\
class M(pl.LightningModule):
    def on_test_epoch_end(self):
        self.log("a", 1.0)
        self.log("b", 2.0)
''',
    )


def test_early_return_with_existing_hook_keeps_old_body_as_helper():
    rw(
        '''\
class M(pl.LightningModule):
    def test_epoch_end(self, outputs):
        if not outputs:
            return
        self.first = outputs[0]

    def on_test_epoch_end(self):
        self.done = True
''',
        '''\
class M(pl.LightningModule):
    def on_test_epoch_start(self):
        loaders = self.trainer.test_dataloaders
        self.test_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]

    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.test_step_outputs[dataloader_idx].append(outputs)

    def _test_epoch_end(self, outputs):
        if not outputs:
            return
        self.first = outputs[0]

    def on_test_epoch_end(self):
        outputs = self.test_step_outputs
        if len(outputs) == 1:
            outputs = outputs[0]
        self._test_epoch_end(outputs)
        self.done = True
''',
    )


def test_name_clash_between_bodies_uses_helper():
    # The old body binds `total`, which the existing hook reads as a global: inlining would
    # change what the existing hook sees.
    out, _ = run_rule(RULE, HEAD + '''\
total = 0


class M(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        total = len(outputs)
        self.log("n", float(total))

    def on_validation_epoch_end(self):
        self.log("global_total", float(total))
''')
    assert "def _validation_epoch_end(self, outputs):" in out
    assert "self._validation_epoch_end(outputs)" in out
    compile(out, "m.py", "exec")


def test_delegation_to_another_epoch_end_keeps_a_callable_helper():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("loss", sum(outputs) / len(outputs))

    def test_epoch_end(self, outputs):
        return self.validation_epoch_end(outputs)
''')
    assert "def validation_epoch_end" not in out and "def test_epoch_end" not in out
    assert "def _validation_epoch_end(self, outputs):" in out
    assert "return self._validation_epoch_end(outputs)" in out
    assert "self.test_step_outputs[dataloader_idx].append(outputs)" in out
    assert "self.validation_step_outputs[dataloader_idx].append(outputs)" in out


def test_epoch_end_delegating_to_plain_helper_method_is_inlined():
    rw(
        '''\
class M(pl.LightningModule):
    def _summarise(self, outputs, stage):
        self.log(stage, float(len(outputs)))

    def training_epoch_end(self, outputs):
        self._summarise(outputs, "train")
''',
        '''\
class M(pl.LightningModule):
    def _summarise(self, outputs, stage):
        self.log(stage, float(len(outputs)))

    def on_train_epoch_start(self):
        self.training_step_outputs = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs:
            self.training_step_outputs.append(outputs)

    def on_train_epoch_end(self):
        outputs = self.training_step_outputs
        self._summarise(outputs, "train")
''',
    )


def test_subclass_override_and_super_call_keep_1x_dispatch():
    out, findings = run_rule(RULE, HEAD + '''\
class Base(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("base", float(len(outputs)))


class Child(Base):
    def validation_epoch_end(self, outputs):
        super().validation_epoch_end(outputs)
        self.log("child", float(len(outputs)))
''')
    base, child = out.split("class Child(Base):")
    # Only the base collects and dispatches; the child overrides the helper, like it overrode the hook.
    assert "def on_validation_epoch_end(self):" in base and "self._validation_epoch_end(outputs)" in base
    assert "on_validation_" not in child
    assert "def _validation_epoch_end(self, outputs):" in child
    assert "super()._validation_epoch_end(outputs)" in child
    assert {f.kind for f in findings} == {Kind.FIXED}


def test_super_call_to_lightning_default_is_dropped():
    rw(
        '''\
class M(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        super().validation_epoch_end(outputs)
        self.log("n", 1.0)
''',
        '''\
class M(pl.LightningModule):
    def on_validation_epoch_end(self):
        self.log("n", 1.0)
''',
    )


def test_subclass_overriding_collecting_hook_gets_collection_too():
    out, _ = run_rule(RULE, HEAD + '''\
class Base(pl.LightningModule):
    def training_epoch_end(self, outputs):
        self.n = len(outputs)


class Child(Base):
    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.seen = outputs
''')
    child = out.split("class Child(Base):")[1]
    assert "if outputs:\n            self.training_step_outputs.append(outputs)\n        self.seen = outputs" in child
    # the base must keep the body callable so the child's dispatch can reach it
    assert "def _training_epoch_end(self, outputs):" in out


def test_steps_inherited_from_base_in_another_file():
    base = "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n    def validation_step(self, b, i):\n        return b\n"
    out, findings = run_rule(RULE, '''\
from base import Base


class Child(Base):
    def validation_epoch_end(self, outputs):
        self.n = len(outputs)
''', path="child.py", project_files={"base.py": base})
    assert "def on_validation_epoch_end(self):" in out and "super()" not in out
    assert findings and findings[0].kind is Kind.FIXED


def test_unknown_base_calls_super_in_generated_hooks():
    out, _ = run_rule(RULE, '''\
from somewhere import SomeLightningBase
import pytorch_lightning as pl


class Child(SomeLightningBase):
    def validation_epoch_end(self, outputs):
        self.n = len(outputs)
''')
    # The base may define these hooks too; the generated ones must not swallow them.
    assert "super().on_validation_epoch_start()" in out
    assert "super().on_validation_batch_end(outputs, batch, batch_idx, dataloader_idx)" in out
    assert "super().on_validation_epoch_end()" in out
    compile(out, "m.py", "exec")


def test_buffer_name_avoids_existing_attributes():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.validation_step_outputs = "something else"

    def validation_epoch_end(self, outputs):
        self.n = len(outputs)
''')
    assert "self.validation_step_outputs_1[dataloader_idx].append(outputs)" in out
    assert 'self.validation_step_outputs = "something else"' in out


def test_self_parameter_with_another_name():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_epoch_end(me, outputs):
        me.n = len(outputs)
''')
    assert "def on_train_epoch_end(me):\n        outputs = me.training_step_outputs" in out


def test_multiple_optimizers_get_marker_not_guess():
    src = HEAD + '''\
class GAN(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return batch.sum()

    def training_epoch_end(self, outputs):
        self.n = len(outputs[0])
'''
    out, findings = run_rule(RULE, src)
    assert "# TODO(lightmigrate): LM001 outputs are nested per optimizer" in out
    assert "def training_epoch_end(self, outputs):" in out
    assert [f.kind for f in findings] == [Kind.MARKER]
    marker_line = out.splitlines().index(next(l for l in out.splitlines() if "TODO(lightmigrate)" in l)) + 1
    assert findings[0].line == marker_line
    again, findings_again = run_rule(RULE, out)
    assert again == out
    assert findings_again == findings  # the same single report on every run


def test_tbptt_gets_marker():
    out, findings = run_rule(RULE, HEAD + '''\
class RNN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.truncated_bptt_steps = 2

    def training_epoch_end(self, outputs):
        self.n = len(outputs)
''')
    assert "TBPTT" in out and findings[0].kind is Kind.MARKER


def test_predict_results_mutated_in_place_gets_marker():
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def on_predict_epoch_end(self, results):
        results[0] = sum(results[0])
''')
    assert "TODO(lightmigrate): LM001" in out and "def on_predict_epoch_end(self, results):" in out
    assert findings[0].kind is Kind.MARKER


def test_predict_super_call_loses_its_argument():
    out, _ = run_rule(RULE, HEAD + '''\
class Base(pl.LightningModule):
    def on_predict_epoch_end(self, results):
        self.n = len(results)


class Child(Base):
    def on_predict_epoch_end(self, results):
        super().on_predict_epoch_end(results)
''')
    assert "super().on_predict_epoch_end()" in out
    assert out.count("def on_predict_epoch_end(self):") == 2


def test_callback_hook_with_trainer_arguments_is_left_alone():
    rw(
        '''\
class Writer(pl.Callback):
    def on_predict_epoch_end(self, trainer, pl_module, outputs):
        self.n = len(outputs)
''',
        None,
    )


def test_class_that_is_not_lightning_is_left_alone():
    rw(
        '''\
class Plain:
    def validation_epoch_end(self, outputs):
        return outputs
''',
        None,
    )


def test_unrecognised_class_gets_a_marker():
    out, findings = run_rule(RULE, '''\
from framework import Trainable


class Thing(Trainable):
    def validation_epoch_end(self, outputs):
        return outputs
''')
    assert "# TODO(lightmigrate): LM001 looks like a Lightning 1.x epoch-end hook" in out
    assert findings[0].kind is Kind.MARKER


def test_unusual_signature_gets_marker():
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def validation_epoch_end(self, *args):
        self.n = len(args[0])
''')
    assert "TODO(lightmigrate): LM001 unusual signature" in out
    assert findings[0].kind is Kind.MARKER


def test_alias_of_a_method_with_the_wrong_signature_gets_marker():
    # (1.9 called it with the outputs: a TypeError there too)
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def on_validation_epoch_end(self):
        pass

    test_epoch_end = on_validation_epoch_end
''')
    assert "TODO(lightmigrate): LM001 test_epoch_end = on_validation_epoch_end: unusual signature" in out
    assert findings[0].kind is Kind.MARKER


def test_tab_indentation_is_kept_in_generated_code():
    src = HEAD + "class M(pl.LightningModule):\n\tdef training_epoch_end(self, outputs):\n\t\tself.n = len(outputs)\n"
    out, _ = run_rule(RULE, src)
    assert "\tdef on_train_batch_end(self, outputs, batch, batch_idx):\n\t\tif outputs:\n\t\t\tself.training_step_outputs.append(outputs)" in out
    assert "    " not in out


def test_comments_and_decorators_are_kept():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    # summarise the epoch
    @torch.no_grad()
    def validation_epoch_end(self, outputs):  # noqa: D102
        # mean of the losses
        self.log("m", sum(outputs))
''')
    assert "    # summarise the epoch\n    @torch.no_grad()\n    def on_validation_epoch_end(self):  # noqa: D102" in out
    assert "        # mean of the losses\n" in out


def test_one_line_body():
    out, _ = run_rule(RULE, HEAD + "class M(pl.LightningModule):\n    def test_epoch_end(self, outputs): self.n = len(outputs)\n")
    assert "def on_test_epoch_end(self):\n        outputs = self.test_step_outputs" in out
    compile(out, "m.py", "exec")


def test_mixin_combined_with_lightning_module_is_migrated():
    # Found by the corpus (corpus/mixin_epoch_end.py): the mixin is a plain class, and only a
    # LightningModule that mixes it in makes its hooks Lightning hooks.
    out, findings = run_rule(RULE, '''\
import pytorch_lightning as pl


class SummaryMixin:
    def validation_epoch_end(self, outputs):
        self.n = len(outputs)


class Model(SummaryMixin, pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return batch.sum()
''')
    mixin = out.split("class Model")[0]
    assert "def validation_epoch_end" not in out
    assert "def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):" in mixin
    assert "def on_validation_epoch_end(self):\n        outputs = self.validation_step_outputs" in mixin
    assert "super()" not in mixin
    assert [f.kind for f in findings] == [Kind.FIXED]


def test_plain_class_never_mixed_into_lightning_is_left_alone():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class Reporter:
    def validation_epoch_end(self, outputs):
        return len(outputs)


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return batch.sum()
''', None)


def test_callbacks_with_their_own_epoch_end_hook_get_a_note():
    """A callback's own on_train_epoch_end that reads nothing the body sets only gets a note."""
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_epoch_end(self, outputs):
        self.avg = sum(o["loss"] for o in outputs)


class Reader(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        print(trainer.current_epoch, pl_module.current_epoch)
''')
    notes = [f for f in findings if f.kind is Kind.NOTE]
    assert len(notes) == 1
    assert "callbacks' own on_train_epoch_end (Reader) now run before this body" in notes[0].message
    assert notes[0].line == 5
    assert "TODO(lightmigrate)" not in out  # a note, not a marker: the rewrite itself is right
    assert "_finish_train_epoch" not in out


# ---------------------------------------------------------------------------------------------
# Issue 21 kind 6: a callback's on_*_epoch_end that reads what the 1.x epoch-end just computed.
# 1.9 ran the module's body before the callbacks' hooks, 2.x runs the module's on_*_epoch_end
# after them: the body becomes a run-once method the callback calls first.


def test_callback_reading_epoch_end_results_calls_the_run_once_method_first():
    findings = rw('''\
class Logger(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        """Log what the module computed."""
        if not trainer.sanity_checking:
            pl_module.log("cb_val_mean", pl_module.val_mean)

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.log("cb_train_mean", pl_module.train_mean)


class Regressor(pl.LightningModule):
    def training_epoch_end(self, outputs):
        """Mean training loss."""
        self.train_mean = torch.stack([o["loss"] for o in outputs]).mean()

    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()
        self.log("val_mean", self.val_mean)
''', '''\
class Logger(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        """Log what the module computed."""
        pl_module._finish_validation_epoch()
        if not trainer.sanity_checking:
            pl_module.log("cb_val_mean", pl_module.val_mean)

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module._finish_train_epoch()
        pl_module.log("cb_train_mean", pl_module.train_mean)


class Regressor(pl.LightningModule):
    def on_train_epoch_start(self):
        self.training_step_outputs = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs:
            self.training_step_outputs.append(outputs)

    def on_train_epoch_end(self):
        self._finish_train_epoch()

    def _finish_train_epoch(self):
        """Mean training loss."""
        # 1.x ran training_epoch_end before the callbacks' on_train_epoch_end:
        # Logger calls this first; it runs once per epoch
        outputs = self.training_step_outputs
        if outputs is None:
            return
        self.training_step_outputs = None
        self.train_mean = torch.stack([o["loss"] for o in outputs]).mean()

    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.validation_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.validation_step_outputs[dataloader_idx].append(outputs)

    def on_validation_epoch_end(self):
        self._finish_validation_epoch()

    def _finish_validation_epoch(self):
        # 1.x ran validation_epoch_end before the callbacks' on_validation_epoch_end:
        # Logger calls this first; it runs once per epoch
        outputs = self.validation_step_outputs
        if outputs is None:
            return
        self.validation_step_outputs = None
        if len(outputs) == 1:
            outputs = outputs[0]
        self.val_mean = torch.stack(outputs).mean()
        self.log("val_mean", self.val_mean)
''')
    fixed = [f.message for f in findings if f.kind is Kind.FIXED]
    assert any(m.startswith("Logger.on_validation_epoch_end calls pl_module._finish_validation_epoch() first: "
                            "it reads val_mean (Regressor.validation_epoch_end)") for m in fixed)
    assert any(m.startswith("Regressor: training_epoch_end -> _finish_train_epoch(), run once per epoch") for m in fixed)
    assert not [f for f in findings if f.kind is Kind.NOTE]  # (handled: no note about the order)


def test_callback_changing_what_the_body_reads_calls_the_run_once_method_first():
    """Ledger B2.4: 1.9 ran training_epoch_end before the callback halved the module's noise
    scale, so the body logged the scale the epoch trained with; run after the callback, it
    would log the halved one."""
    findings = rw('''\
class Annealing(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.noise_scale = pl_module.noise_scale * 0.5


class Regressor(pl.LightningModule):
    def training_epoch_end(self, outputs):
        self.log("noise_scale", self.noise_scale)
''', '''\
class Annealing(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        pl_module._finish_train_epoch()
        pl_module.noise_scale = pl_module.noise_scale * 0.5


class Regressor(pl.LightningModule):
    def on_train_epoch_start(self):
        self.training_step_outputs = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs:
            self.training_step_outputs.append(outputs)

    def on_train_epoch_end(self):
        self._finish_train_epoch()

    def _finish_train_epoch(self):
        # 1.x ran training_epoch_end before the callbacks' on_train_epoch_end:
        # Annealing calls this first; it runs once per epoch
        if self.training_step_outputs is None:
            return
        self.training_step_outputs = None
        self.log("noise_scale", self.noise_scale)
''')
    fixed = [f.message for f in findings if f.kind is Kind.FIXED]
    assert any(m.startswith("Annealing.on_train_epoch_end calls pl_module._finish_train_epoch() first: it reads "
                            "noise_scale (which it changes) (Regressor.training_epoch_end)") for m in fixed)


@pytest.mark.parametrize("change", [
    "pl_module.history.append(trainer.current_epoch)",
    "pl_module.history[0] = 1",
    "pl_module.history += [1]",
    'setattr(pl_module, "history", [])',
    "del pl_module.history",
])
def test_each_way_a_callback_changes_what_the_body_reads_orders_it_first(change):
    text = HEAD + f'''\
class Writer(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        {change}


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("rounds", float(len(self.history)))
'''
    out, _ = run_rule(RULE, text)
    assert "        pl_module._finish_validation_epoch()\n        " + change in out
    assert run_rule(RULE, out)[0] == out


@pytest.mark.parametrize("callback, changed", [
    ("pl_module.log('score', pl_module.score())", True),  # score() reads val_mean, which the body sets
    ("print(pl_module.describe())", True),  # describe() reads it through self.score()
    ("print(pl_module.unrelated())", False),  # reads nothing the body sets
    ("pl_module.other = 1", False),  # changes what the body does not read
])
def test_callback_calling_a_module_method_that_reads_the_body_results(callback, changed):
    """Ledger B2.2: the callback reaches what validation_epoch_end stored through a method of the
    module (also one calling another)."""
    text = HEAD + f'''\
class Reporter(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        {callback}


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.val_mean = sum(outputs) / len(outputs)

    def score(self):
        return 1.0 / (1.0 + self.val_mean)

    def describe(self):
        return f"score {{self.score():.3f}}"

    def unrelated(self):
        return self.current_epoch
'''
    out, findings = run_rule(RULE, text)
    assert ("pl_module._finish_validation_epoch()" in out) is changed
    assert ("def _finish_validation_epoch(self):" in out) is changed
    notes = [f for f in findings if f.kind is Kind.NOTE]
    assert bool(notes) is not changed  # (the order note only where the order is not kept)
    assert run_rule(RULE, out)[0] == out


def test_run_once_method_with_a_subclass_override_and_an_existing_hook():
    """The family keeps the helper (a subclass overrides the hook with super()); the run-once
    method hands it the outputs, and the existing on_validation_epoch_end (which 1.x ran after
    the callbacks) calls it first. The callback reads what only the subclass sets."""
    rw('''\
class Base(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()

    def on_validation_epoch_end(self):
        self.log("seen", 1.0)


class Child(Base):
    def validation_epoch_end(self, outputs):
        super().validation_epoch_end(outputs)
        self.val_max = torch.stack(outputs).max()


class Printer(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print(getattr(pl_module, "val_max"))
''', '''\
class Base(pl.LightningModule):
    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.validation_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.validation_step_outputs[dataloader_idx].append(outputs)

    def _finish_validation_epoch(self):
        # 1.x ran validation_epoch_end before the callbacks' on_validation_epoch_end:
        # Printer calls this first; it runs once per epoch
        outputs = self.validation_step_outputs
        if outputs is None:
            return
        self.validation_step_outputs = None
        if len(outputs) == 1:
            outputs = outputs[0]
        self._validation_epoch_end(outputs)

    def _validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()

    def on_validation_epoch_end(self):
        self._finish_validation_epoch()
        self.log("seen", 1.0)


class Child(Base):
    def _validation_epoch_end(self, outputs):
        super()._validation_epoch_end(outputs)
        self.val_max = torch.stack(outputs).max()


class Printer(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        pl_module._finish_validation_epoch()
        print(getattr(pl_module, "val_max"))
''')


def test_run_once_subclass_overriding_the_epoch_end_hook_calls_it():
    """A subclass whose own on_validation_epoch_end does not call super() gets the run-once
    call, not the outputs handed to the helper a second time."""
    out, _ = run_rule(RULE, HEAD + '''\
class Base(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()


class Child(Base):
    def on_validation_epoch_end(self):
        self.log("child", 1.0)


class Printer(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print(pl_module.val_mean)
''')
    child = out.split("class Child(Base):")[1].split("class Printer")[0]
    assert child.strip().splitlines()[:2] == ["def on_validation_epoch_end(self):",
                                              "        self._finish_validation_epoch()"]
    assert "def _finish_validation_epoch(self):" in out.split("class Child")[0]
    assert run_rule(RULE, out)[0] == out


def test_run_once_body_without_outputs_metrics_guard_and_monitoring_callbacks():
    """A body that never reads its outputs still runs once (the buffer is the guard); a callback
    reading trainer.callback_metrics counts as reading what the body logged; another
    LightningModule of the project that uses the attribute without the method gets a guarded
    call; a ModelCheckpoint subclass runs after the module's on_train_epoch_end in 2.x too, so it
    is left alone."""
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def test_epoch_end(self, outputs):
        self.log("test_done", 1.0)

    def training_epoch_end(self, outputs):
        self.history.append(1)

    def on_test_epoch_end(self):
        print("end")


class Other(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.history = []


class Ckpt(pl.callbacks.ModelCheckpoint):
    def on_train_epoch_end(self, trainer, pl_module):
        print(pl_module.history)


class MetricsReader(pl.Callback):
    def on_test_epoch_end(self, trainer, pl_module):
        print(trainer.callback_metrics["test_done"])

    def on_train_epoch_end(self, trainer, pl_module):
        print(trainer.lightning_module.history[-1])
''')
    assert '''\
    def _finish_test_epoch(self):
        # 1.x ran test_epoch_end before the callbacks' on_test_epoch_end:
        # MetricsReader calls this first; it runs once per epoch
        if self.test_step_outputs is None:
            return
        self.test_step_outputs = None
        self.log("test_done", 1.0)
''' in out
    assert '''\
    def on_test_epoch_end(self):
        self._finish_test_epoch()
        print("end")
''' in out
    assert '''\
class Ckpt(pl.callbacks.ModelCheckpoint):
    def on_train_epoch_end(self, trainer, pl_module):
        print(pl_module.history)
''' in out
    assert '''\
class MetricsReader(pl.Callback):
    def on_test_epoch_end(self, trainer, pl_module):
        if hasattr(pl_module, "_finish_test_epoch"):
            pl_module._finish_test_epoch()
        print(trainer.callback_metrics["test_done"])

    def on_train_epoch_end(self, trainer, pl_module):
        if hasattr(pl_module, "_finish_train_epoch"):
            pl_module._finish_train_epoch()
        print(trainer.lightning_module.history[-1])
''' in out
    assert "TODO(lightmigrate)" not in out
    assert run_rule(RULE, out)[0] == out


def test_run_once_name_taken_gives_a_marker_on_the_reading_line():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()

    def _finish_validation_epoch(self):
        pass


class Printer(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        if trainer.sanity_checking:
            return
        print(pl_module.val_mean); print(1)
''')
    assert '''\
        if trainer.sanity_checking:
            return
        # TODO(lightmigrate): LM001 this on_validation_epoch_end reads val_mean, which validation_epoch_end of M \
computed before it in 1.x, and 2.x runs the module's on_validation_epoch_end after it; M already has a \
_finish_validation_epoch: run the old body before this hook by hand
        print(pl_module.val_mean); print(1)
''' in out
    assert "pl_module._finish_validation_epoch()" not in out
    assert run_rule(RULE, out)[0] == out


def test_callback_reading_what_a_multi_optimizer_epoch_end_computed_is_marked():
    """The family's training_epoch_end is left to the multiple-optimizer migration (here: marked):
    no run-once method, and the callback that reads its result is marked, never silent."""
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return batch.sum()

    def training_epoch_end(self, outputs):
        self.avg = 1.0


class Reader(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        print(pl_module.avg)
''')
    assert "_finish_train_epoch" not in out
    reader = out.split("class Reader")[1]
    assert ("# TODO(lightmigrate): LM001 this on_train_epoch_end reads avg, which training_epoch_end of M "
            "computed before it in 1.x") in reader
    assert run_rule(RULE, out)[0] == out


CALLBACKS_FILE = '''\
import pytorch_lightning as pl


class ValPrinter(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print(trainer.lightning_module.val_mean)

    def on_train_start(self, trainer, pl_module):
        print(pl_module.val_mean)
'''
MODEL_FILE = '''\
import pytorch_lightning as pl
import torch


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self._summarize(outputs)

    def _summarize(self, outputs):
        self.val_mean = torch.stack(outputs).mean()
'''


def test_run_once_across_files_finds_both_sides():
    """The callback and the module in different files (the attribute set in a helper the body
    calls): find gives the callback's file a "callback" site and the module's a "once" site,
    from the same project index; each file is rewritten to match, and a second run over the
    migrated project changes nothing."""
    files = {"callbacks.py": CALLBACKS_FILE, "model.py": MODEL_FILE}
    index = ProjectIndex()
    for p, t in files.items():
        index.add_source(t, p)
    cb_sites = RULE.find(SourceFile("callbacks.py", CALLBACKS_FILE), RuleContext("callbacks.py", index))
    assert [(s.target, s.action, s.data[:5]) for s in cb_sites] == [
        ("ValPrinter", "callback", ("on_validation_epoch_end", "_finish_validation_epoch", "pl_module", False, None))]
    model_sites = RULE.find(SourceFile("model.py", MODEL_FILE), RuleContext("model.py", index))
    assert [(s.target, s.action, s.data) for s in model_sites] == [
        ("Model", "migrate", ("validation_epoch_end",)),
        ("Model", "once", (("validation_epoch_end", ("ValPrinter",)),))]
    out = {}
    for p in files:
        others = {q: t for q, t in files.items() if q != p}
        out[p], _ = run_rule(RULE, files[p], path=p, project_files=others)
    assert out["callbacks.py"] == CALLBACKS_FILE.replace(
        "    def on_validation_epoch_end(self, trainer, pl_module):\n",
        "    def on_validation_epoch_end(self, trainer, pl_module):\n        pl_module._finish_validation_epoch()\n")
    assert '''\
    def on_validation_epoch_end(self):
        self._finish_validation_epoch()

    def _finish_validation_epoch(self):
        # 1.x ran validation_epoch_end before the callbacks' on_validation_epoch_end:
        # ValPrinter calls this first; it runs once per epoch
        outputs = self.validation_step_outputs
        if outputs is None:
            return
        self.validation_step_outputs = None
        if len(outputs) == 1:
            outputs = outputs[0]
        self._summarize(outputs)
''' in out["model.py"]
    for p in files:
        others = {q: t for q, t in out.items() if q != p}
        assert run_rule(RULE, out[p], path=p, project_files=others)[0] == out[p]
    # the callback's file alone (its module not in the run) is left as it is
    assert run_rule(RULE, CALLBACKS_FILE, path="callbacks.py")[0] == CALLBACKS_FILE


# ---------------------------------------------------------------------------------------------
# find: one site per class the class walk changes, [] exactly where it changes nothing
# (these cases were the gate's: aliases, subclasses in other files, unrecognised classes)


def find_sites(path, files):
    """``RULE.find`` for ``files[path]`` in a project of ``files`` (path -> text), and check
    that it is exact: the unrestricted class walk changes or reports something in a class
    exactly when find has a site for it."""
    files = {p: textwrap.dedent(t) for p, t in files.items()}
    index = ProjectIndex()
    for p, t in files.items():
        index.add_source(t, p)
    text = files[path]
    sites = RULE.find(SourceFile(path, text), RuleContext(path, index))
    ctx = RuleContext(path, index)
    out = migrate_classes(cst.parse_module(text), ctx, "LM001", HOOKS, _ClassMigration, UNKNOWN_CLASS)
    assert bool(sites) is (out.code != text or bool(ctx.findings))
    return sites


BASE_WITH_EPOCH_END = {
    "base.py": """\
        import lightning.pytorch as L


        class Base(L.LightningModule):
            def validation_epoch_end(self, outputs):
                self.log("n", float(len(outputs)))
        """,
}


def test_find_own_hook_through_a_module_alias():
    files = {"m.py": """\
        import lightning.pytorch as L


        class Model(L.LightningModule):
            def training_epoch_end(self, outputs):
                print(len(outputs))
        """}
    assert find_sites("m.py", files) == [Site(4, 0, "Model", "migrate", ("training_epoch_end",))]


def test_find_the_base_in_its_own_file():
    assert find_sites("base.py", BASE_WITH_EPOCH_END) == [Site(4, 0, "Base", "migrate", ("validation_epoch_end",))]


def test_find_subclass_in_another_file_overriding_a_collecting_hook():
    files = {**BASE_WITH_EPOCH_END, "sub.py": """\
        from base import Base


        class Sub(Base):
            def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
                self.seen = True
        """}
    assert find_sites("sub.py", files) == [Site(4, 0, "Sub", "migrate", ("validation_epoch_end",))]


@pytest.mark.parametrize("body", [
    "def forward(self, x):\n    return x",
    # a collecting hook that leaves the collection to super() is not touched
    "def on_validation_epoch_start(self):\n    super().on_validation_epoch_start()\n    self.n = 0",
    # the hooks of another stage
    "def on_train_batch_end(self, outputs, batch, batch_idx):\n    self.seen = True",
])
def test_find_nothing_in_a_subclass_that_overrides_nothing_relevant(body):
    sub = "from base import Base\n\n\nclass Sub(Base):\n" + textwrap.indent(body, "    ") + "\n"
    assert find_sites("sub.py", {**BASE_WITH_EPOCH_END, "sub.py": sub}) == []


def test_find_marks_an_unrecognised_class_and_skips_a_plain_one():
    plain = {"p.py": """\
        class Recorder:
            def validation_epoch_end(self, outputs):
                return outputs
        """}
    assert find_sites("p.py", plain) == []
    unknown = {"u.py": """\
        from somewhere import Mystery


        class Recorder(Mystery):
            def validation_epoch_end(self, outputs):
                return outputs
        """}
    assert find_sites("u.py", unknown) == [Site(4, 0, "Recorder", "mark")]


def test_find_an_old_hook_assigned_in_the_class_body():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def _shared(self, outputs):
                pass

            validation_epoch_end = test_epoch_end = _shared
        """}
    assert find_sites("m.py", files) == [
        Site(4, 0, "Model", "migrate", ("validation_epoch_end", "test_epoch_end"))]
    # a body on the class line itself is left alone by the class walk
    one_line = {"m.py": "import pytorch_lightning as pl\nfrom x import f\n\n\n"
                        "class Model(pl.LightningModule): validation_epoch_end = f\n"}
    assert find_sites("m.py", one_line) == []


@pytest.mark.parametrize("signature,expected", [
    ("self, results", ("on_predict_epoch_end",)),
    ("self", None),  # already 2.x
    ("self, trainer, pl_module, outputs", None),  # callback-style signature
    ("self, results, *args", None),
])
def test_find_predict_epoch_end_only_with_the_results_parameter(signature, expected):
    files = {"m.py": f"""\
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def on_predict_epoch_end({signature}):
                pass
        """}
    sites = find_sites("m.py", files)
    assert sites == ([] if expected is None else [Site(4, 0, "Model", "migrate", expected)])


def test_find_only_the_classes_that_change_and_fix_edits_only_those():
    text = HEAD + '''\
class A(pl.LightningModule):
    def test_epoch_end(self, outputs):
        pass


class B(pl.LightningModule):
    def on_test_epoch_end(self):
        pass
'''
    sites = find_sites("model.py", {"model.py": text})
    assert [(s.target, s.data) for s in sites] == [("A", ("test_epoch_end",))]
    assert RULE.find(SourceFile("x.py", HEAD + "class B(pl.LightningModule):\n    pass\n"), RuleContext("x.py")) == []


# ---------------------------------------------------------------------------------------------
# Class-body aliases (issue 21 kind 3): they follow the migration instead of naming a method
# that no longer exists (NameError when the class is defined)


def test_alias_of_the_validation_epoch_end_becomes_the_test_stage():
    rw(
        '''\
class M(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))

    test_epoch_end = validation_epoch_end
''',
        '''\
class M(pl.LightningModule):
    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.validation_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.validation_step_outputs[dataloader_idx].append(outputs)

    def on_validation_epoch_end(self):
        outputs = self.validation_step_outputs
        if len(outputs) == 1:
            outputs = outputs[0]
        self._validation_epoch_end(outputs)

    def _validation_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))

    def on_test_epoch_start(self):
        loaders = self.trainer.test_dataloaders
        self.test_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]

    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.test_step_outputs[dataloader_idx].append(outputs)

    def on_test_epoch_end(self):
        outputs = self.test_step_outputs
        if len(outputs) == 1:
            outputs = outputs[0]
        self._test_epoch_end(outputs)

    _test_epoch_end = _validation_epoch_end
''',
    )


def test_aliases_of_a_shared_method_for_two_stages():
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def _shared_end(self, outputs):
        self.log("n", float(len(outputs)))

    validation_epoch_end = test_epoch_end = _shared_end
''')
    assert "    _validation_epoch_end = _test_epoch_end = _shared_end\n" in out
    assert "self._validation_epoch_end(outputs)" in out and "self._test_epoch_end(outputs)" in out
    assert "TODO(lightmigrate)" not in out
    again, _ = run_rule(RULE, out)
    assert again == out


def test_aliases_of_hooks_the_rule_extends_keep_the_1x_function():
    # on_test_batch_end / on_test_epoch_end must not collect into (or read) the validation buffer
    rw(
        '''\
class M(pl.LightningModule):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.seen += 1

    on_test_batch_end = on_validation_batch_end

    def on_validation_epoch_end(self):
        self.log("seen", float(self.seen))

    on_test_epoch_end = on_validation_epoch_end

    def validation_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))
''',
        '''\
class M(pl.LightningModule):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.validation_step_outputs[dataloader_idx].append(outputs)
        return self._on_validation_batch_end(outputs, batch, batch_idx, dataloader_idx)

    def _on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.seen += 1

    on_test_batch_end = _on_validation_batch_end

    def _on_validation_epoch_end(self):
        self.log("seen", float(self.seen))

    on_test_epoch_end = _on_validation_epoch_end

    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.validation_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]

    def on_validation_epoch_end(self):
        outputs = self.validation_step_outputs
        if len(outputs) == 1:
            outputs = outputs[0]
        self.log("n", float(len(outputs)))
        return self._on_validation_epoch_end()
''',
    )


def test_find_an_alias_bound_stage_and_a_subclass_alias():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def validation_epoch_end(self, outputs):
                pass

            test_epoch_end = validation_epoch_end
        """, "sub.py": """\
        from m import Model


        class Sub(Model):
            def _end(self, outputs):
                pass

            test_epoch_end = _end
        """}
    assert find_sites("m.py", files) == [
        Site(4, 0, "Model", "migrate", ("validation_epoch_end", "test_epoch_end"))]
    assert find_sites("sub.py", files) == [Site(4, 0, "Sub", "migrate", ("test_epoch_end",))]
    out, _ = run_rule(RULE, textwrap.dedent(files["sub.py"]), path="sub.py",
                      project_files={"m.py": textwrap.dedent(files["m.py"])})
    assert "    _test_epoch_end = _end\n" in out  # overrides the helper the base calls


# ---------------------------------------------------------------------------------------------
# Mixins earlier in the MRO (issue 21 kind 2): their hooks must not shadow the buffer hooks


MIXIN = '''\
class LoggingMixin:
    def on_train_epoch_start(self):
        self.started = True

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        """Count the batches."""
        self.seen += 1


'''
BASE = '''\
class Base(pl.LightningModule):
    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))

    def validation_epoch_end(self, outputs):
        self.log("v", float(len(outputs)))


'''
MODEL = '''\
class Model(LoggingMixin, Base):
    def training_step(self, batch, batch_idx):
        return batch.sum()
'''


def test_a_mixin_before_the_base_calls_super_first():
    out, findings = run_rule(RULE, HEAD + MIXIN + BASE + MODEL)
    assert '''\
class LoggingMixin:
    def on_train_epoch_start(self):
        super().on_train_epoch_start()
        self.started = True

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        """Count the batches."""
        super().on_validation_batch_end(outputs, batch, batch_idx, dataloader_idx)
        self.seen += 1
''' in out
    assert "def on_train_epoch_start(self):\n        self.training_step_outputs = []\n" in out  # the base's
    assert "TODO(lightmigrate)" not in out
    assert sum(f.kind is Kind.FIXED and "now calls super() first" in f.message for f in findings) == 2
    again, _ = run_rule(RULE, out)
    assert again == out


def test_a_mixin_in_another_file():
    files = {"mixins.py": MIXIN, "base.py": HEAD + BASE,
             "model.py": "from base import Base\nfrom mixins import LoggingMixin\n\n\n" + MODEL}
    files["base.py"] = files["base.py"]
    sites = RULE.find(SourceFile("mixins.py", MIXIN), RuleContext("mixins.py", _index(files)))
    assert sites == [Site(1, 0, "LoggingMixin", "mixin", (
        ("on_train_epoch_start", "Base", "Model", "", None),
        ("on_validation_batch_end", "Base", "Model", "outputs, batch, batch_idx, dataloader_idx", None)))]
    project = {p: t for p, t in files.items() if p != "mixins.py"}
    out, _ = run_rule(RULE, MIXIN, path="mixins.py", project_files=project)
    assert "        super().on_train_epoch_start()\n        self.started = True" in out
    again, _ = run_rule(RULE, out, path="mixins.py", project_files=project)
    assert again == out
    # nothing for the mixin when no LightningModule puts it before a migrated class
    alone = {"mixins.py": MIXIN, "model.py": HEAD + "class Other(LoggingMixin, pl.LightningModule):\n"
                                                   "    def training_step(self, batch, batch_idx):\n"
                                                   "        return batch\n"}
    assert RULE.find(SourceFile("mixins.py", MIXIN), RuleContext("mixins.py", _index(alone))) == []


def _index(files):
    index = ProjectIndex()
    for p, t in files.items():
        index.add_source(t, p)
    return index


def test_a_mixin_that_already_calls_super_or_comes_after_is_left_alone():
    cooperative = MIXIN.replace("        self.started = True", "        super().on_train_epoch_start()\n"
                                                             "        self.started = True").replace(
        "        self.seen += 1", "        super().on_validation_batch_end(outputs, batch, batch_idx, dataloader_idx)\n"
                                 "        self.seen += 1")
    out, _ = run_rule(RULE, HEAD + cooperative + BASE + MODEL)
    assert out.count("super().on_train_epoch_start()") == 1
    # after the base: LightningModule's own (empty) hooks came first in 1.x, so the mixin's never ran
    after = MODEL.replace("(LoggingMixin, Base)", "(Base, LoggingMixin)")
    out, _ = run_rule(RULE, HEAD + MIXIN + BASE + after)
    assert "super()" not in out


def test_the_subclass_does_the_work_when_super_in_the_mixin_would_run_a_hook_1x_skipped():
    # Base's own on_validation_batch_end never ran in Model in 1.x: the mixin's shadowed it
    base = BASE.replace('''    def validation_epoch_end''', '''    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.base_seen = True

    def validation_epoch_end''')
    out, findings = run_rule(RULE, HEAD + MIXIN + base + MODEL)
    assert '''\
class Model(LoggingMixin, Base):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.validation_step_outputs[dataloader_idx].append(outputs)
        super().on_validation_batch_end(outputs, batch, batch_idx, dataloader_idx)

    def training_step(self, batch, batch_idx):
''' in out
    assert "        super().on_train_epoch_start()\n        self.started = True" in out  # that one is safe
    assert "super().on_validation_batch_end" not in out.split("class Base")[0]  # not in the mixin
    assert "TODO(lightmigrate)" not in out
    again, _ = run_rule(RULE, out)
    assert again == out


def test_the_epoch_end_work_moves_to_the_subclass_with_a_helper():
    mixin = MIXIN + '''\
class Reporting:
    def on_validation_epoch_end(self):
        self.log("seen", float(self.seen))


'''
    base = BASE.replace('''    def validation_epoch_end''', '''    def on_validation_epoch_end(self):
        self.log("base", 1.0)

    def validation_epoch_end''')
    model = MODEL.replace("(LoggingMixin, Base)", "(Reporting, LoggingMixin, Base)")
    out, _ = run_rule(RULE, HEAD + mixin + base + model)
    assert "    def _validation_epoch_end(self, outputs):\n" in out  # Base keeps a helper
    assert '''\
    def on_validation_epoch_end(self):
        outputs = self.validation_step_outputs
        if len(outputs) == 1:
            outputs = outputs[0]
        self._validation_epoch_end(outputs)
        super().on_validation_epoch_end()
''' in out.split("class Model")[1]
    again, _ = run_rule(RULE, out)
    assert again == out


def test_a_mixin_marked_when_no_subclass_can_do_the_work():
    # the mixin comes through another plain mixin: no class below Base lists it
    mixin = MIXIN + "class Mid(LoggingMixin):\n    pass\n\n\n"
    base = BASE.replace('''    def validation_epoch_end''', '''    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.base_seen = True

    def validation_epoch_end''')
    model = MODEL.replace("(LoggingMixin, Base)", "(Mid, Base)")
    out, findings = run_rule(RULE, HEAD + mixin + base + model)
    assert ("    # TODO(lightmigrate): LM001 in Model this on_validation_batch_end comes before Base's, which does the "
            "work of validation_epoch_end, and does not call super(); super() would also run "
            "Base.on_validation_batch_end (in Model), which 1.x skipped: call both by hand\n"
            "    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):") in out
    again, _ = run_rule(RULE, out)
    assert again == out


def test_a_generated_hook_calls_super_when_a_later_class_of_the_mro_defines_it():
    # the mixin is itself a LightningModule listed after the base: in 1.x its hook ran
    mixin = MIXIN.replace("class LoggingMixin:", "class LoggingMixin(pl.LightningModule):")
    model = MODEL.replace("(LoggingMixin, Base)", "(Base, LoggingMixin)")
    out, _ = run_rule(RULE, HEAD + mixin + BASE + model)
    assert ("    def on_train_epoch_start(self):\n        self.training_step_outputs = []\n"
            "        super().on_train_epoch_start()\n") in out
    assert "        super().on_validation_batch_end(outputs, batch, batch_idx, dataloader_idx)\n" in out
    again, _ = run_rule(RULE, out)
    assert again == out


# --- issue 21 kind 7: a hierarchy with several optimizers below the hook's class


MULTI_OPT_BASE = '''\
import pytorch_lightning as pl


class Base(pl.LightningModule):
    def training_epoch_end(self, outputs):
        self.log("n_batches", float(len(outputs)))
'''

GAN_BELOW = '''\
from base import Base


class GAN(Base):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return {"loss": batch.sum()}

    def training_epoch_end(self, outputs):
        super().training_epoch_end(outputs)
        self.log("g", float(len(outputs[0])))
'''

SIBLING = '''\
from base import Base


class Plain(Base):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_epoch_end(self, outputs):
        super().training_epoch_end(outputs)
        self.log("a", 1.0)

    def on_train_epoch_start(self):
        self.log("start", 1.0)
'''

FAMILY_WHY = ("# TODO(lightmigrate): LM001 GAN, in this hierarchy, takes optimizer_idx: training_epoch_end gets its "
              "outputs nested per optimizer; migrate the hierarchy together by hand (manual optimization)")


def test_base_hook_is_marked_not_migrated_when_a_subclass_has_several_optimizers():
    # before: the base became _training_epoch_end + buffer hooks while the subclass kept
    # training_epoch_end (marked) calling super().training_epoch_end(), which no longer
    # existed; a second run then migrated the subclass into a call of the base's helper
    files = {"base.py": MULTI_OPT_BASE, "gan.py": GAN_BELOW, "plain.py": SIBLING}
    out, _ = run_rule(RULE, MULTI_OPT_BASE, path="base.py", project_files=files)
    assert out == MULTI_OPT_BASE.replace("    def training_epoch_end", f"    {FAMILY_WHY}\n    def training_epoch_end")
    # the sibling without optimizer_idx is marked too, its hooks left as they are
    plain, _ = run_rule(RULE, SIBLING, path="plain.py", project_files=files)
    assert plain == SIBLING.replace("    def training_epoch_end", f"    {FAMILY_WHY}\n    def training_epoch_end")
    # and every file: a second run changes nothing
    for path, text in files.items():
        once, _ = run_rule(RULE, text, path=path, project_files=files)
        again, _ = run_rule(RULE, once, path=path, project_files={**files, path: once})
        assert again == once, path


def test_hierarchy_with_several_optimizers_is_stable_over_two_whole_runs(tmp_path):
    from lightmigrate.engine import transform_text
    from lightmigrate.rules import ALL_RULES

    files = {"base.py": MULTI_OPT_BASE, "gan.py": GAN_BELOW, "plain.py": SIBLING}

    def run(texts):
        index = ProjectIndex()
        for path, text in texts.items():
            index.add_source(text, path)
        return {path: transform_text(text, ALL_RULES, path=path, project=index).text for path, text in texts.items()}

    once = run(files)
    assert "def _training_epoch_end" not in "".join(once.values())
    assert run(once) == once


def test_inheriting_class_below_a_blocked_hook_gets_no_buffer_code():
    files = {"base.py": MULTI_OPT_BASE, "gan.py": GAN_BELOW}
    child = '''\
from base import Base


class Child(Base):
    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.seen = outputs
'''
    from .find_imports import sites_of
    assert sites_of(RULE, child, {**files, "child.py": child}, path="child.py") == []
    out, _ = run_rule(RULE, child, path="child.py", project_files=files)
    assert out == child


def test_classes_of_one_name_in_several_test_functions_are_each_migrated():
    # a test file defines `class TestModel` in each test: each one is its own class
    src = HEAD + '''\
def test_a():
    class TestModel(pl.LightningModule):
        def validation_epoch_end(self, outputs):
            self.log("a", float(len(outputs)))


def test_b():
    class TestModel(pl.LightningModule):
        def test_epoch_end(self, outputs):
            self.log("b", 1.0)
'''
    from .find_imports import sites_of
    assert [(s.line, s.data) for s in sites_of(RULE, src)] == [(5, ("validation_epoch_end",)), (11, ("test_epoch_end",))]
    out, _ = run_rule(RULE, src)
    first, second = out.split("def test_b():")
    assert "def on_validation_epoch_end(self):" in first and "validation_epoch_end(self, outputs)" not in first
    assert "def on_test_epoch_end(self):" in second and "def test_epoch_end" not in second
    assert run_rule(RULE, out)[0] == out


def test_subclass_in_another_file_overriding_a_collecting_hook_collects_too():
    """Issue 21 kind 1: the subclass's file holds no ``_epoch_end`` (the prefilter's trigger),
    yet its ``on_validation_batch_end`` (no super(): 1.x's was a no-op) replaces the hook that
    fills the base's buffer, so it must fill it too."""
    base = ("import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n"
            "    def validation_step(self, batch, batch_idx):\n        return batch\n\n"
            "    def validation_epoch_end(self, outputs):\n        self.log('n', float(len(outputs)))\n")
    sub = ("from base import Base\n\n\nclass Sub(Base):\n"
           "    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):\n"
           "        self.log('b', outputs.sum())\n")
    index = ProjectIndex()
    index.add_source(base, "base.py")
    index.add_source(sub, "sub.py")
    assert index.linked_paths(HOOKS - {"on_predict_epoch_end"}) == {"sub.py": frozenset({"Base"})}
    assert [(s.target, s.action) for s in RULE.find(SourceFile("sub.py", sub), RuleContext("sub.py", index))] == [
        ("Sub", "migrate")]
    out, _ = run_rule(RULE, sub, path="sub.py", project_files={"base.py": base})
    assert "self.validation_step_outputs[dataloader_idx].append(outputs)" in out
    assert "dataloader_idx=0):" in out
    # the same run migrates the base; a second run over both changes nothing
    base_out, _ = run_rule(RULE, base, path="base.py", project_files={"sub.py": sub})
    assert "self.validation_step_outputs[dataloader_idx].append(outputs)" in base_out
    assert run_rule(RULE, out, path="sub.py", project_files={"base.py": base_out})[0] == out
    assert run_rule(RULE, base_out, path="base.py", project_files={"sub.py": out})[0] == base_out


def test_below_a_marked_owner_the_subclass_hooks_collect_nothing():
    """Issue 21 kind 1: the owner's hook is marked (here: a second parameter), so it keeps it
    and gets no buffer; a subclass's on_validation_batch_end (this file or another) must not
    append to a buffer nobody creates (AttributeError on 2.x)."""
    base = ("import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n"
            "    def validation_step(self, batch, batch_idx):\n        return batch\n\n"
            "    def validation_epoch_end(self, outputs, extra):\n        self.log('n', 1.0)\n")
    sub = ("from base import Base\n\n\nclass Sub(Base):\n"
           "    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):\n"
           "        self.log('b', outputs.sum())\n")
    index = ProjectIndex()
    index.add_source(base, "base.py")
    index.add_source(sub, "sub.py")
    assert RULE.find(SourceFile("sub.py", sub), RuleContext("sub.py", index)) == []
    out, _ = run_rule(RULE, sub, path="sub.py", project_files={"base.py": base})
    assert out == sub
    one_file, _ = run_rule(RULE, base + "\n\n" + sub.split("\n\n\n", 1)[1])
    assert "validation_step_outputs" not in one_file and one_file.count("TODO(lightmigrate): LM001") == 1
    assert run_rule(RULE, one_file)[0] == one_file


def test_run_once_keeps_a_decorator_on_the_body_not_on_the_guard():
    """A decorated old hook (a call counter, ``torch.no_grad``) keeps its decorator on the
    helper, which runs once per epoch; the run-once method's guard runs outside it."""
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    @counted("validation")
    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()


class Printer(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print(pl_module.val_mean)
''')
    assert '''\
    def _finish_validation_epoch(self):
        # 1.x ran validation_epoch_end before the callbacks' on_validation_epoch_end:
        # Printer calls this first; it runs once per epoch
        outputs = self.validation_step_outputs
        if outputs is None:
            return
        self.validation_step_outputs = None
        if len(outputs) == 1:
            outputs = outputs[0]
        self._validation_epoch_end(outputs)

    @counted("validation")
    def _validation_epoch_end(self, outputs):
''' in out
    assert run_rule(RULE, out)[0] == out


METRIC_MODEL = '''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("val_loss", sum(outputs))
'''


@pytest.mark.parametrize("read, changed", [
    ('trainer.callback_metrics["val_loss"]', True),
    ('trainer.callback_metrics.get("val_acc")', False),  # a metric the body does not log
    ("trainer.callback_metrics[self.monitor]", True),  # any metric
    ("pl_module.trainer.logged_metrics", True),
])
def test_callbacks_reading_logged_metrics_match_by_name(read, changed):
    text = METRIC_MODEL + f'''

class Watcher(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print({read})
'''
    out, _ = run_rule(RULE, text)
    assert ("pl_module._finish_validation_epoch()" in out) is changed
    assert ("def _finish_validation_epoch(self):" in out) is changed


def test_logged_metrics_count_only_for_modules_used_with_the_callback():
    """A metric's name says little: a module in another file that logs it gets the run-once
    method only when some file of the project names both it and the callback."""
    watcher = '''\
import pytorch_lightning as pl


class Watcher(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print(trainer.callback_metrics["val_loss"])
'''
    alone = {"watcher.py": watcher}
    out, _ = run_rule(RULE, METRIC_MODEL, path="model.py", project_files=alone)
    assert "_finish_validation_epoch" not in out
    script = "from model import Model\nfrom watcher import Watcher\n\ntrainer_callbacks = [Watcher()]\nmodel = Model()\n"
    both = {"watcher.py": watcher, "train.py": script}
    out, _ = run_rule(RULE, METRIC_MODEL, path="model.py", project_files=both)
    assert "def _finish_validation_epoch(self):" in out
    cb_out, _ = run_rule(RULE, watcher, path="watcher.py", project_files={"model.py": METRIC_MODEL, "train.py": script})
    assert "        pl_module._finish_validation_epoch()\n" in cb_out


def test_files_are_not_parsed_for_callbacks_when_no_callback_defines_the_hook():
    """Speed: the plan reads other files' classes only when a callback of the project defines
    an on_*_epoch_end hook."""
    files = {f"m{i}.py": METRIC_MODEL.replace("class Model", f"class Model{i}") for i in range(5)}
    files["cb.py"] = "import pytorch_lightning as pl\n\n\nclass Cb(pl.Callback):\n    def on_fit_start(self, trainer, pl_module):\n        pass\n"
    index = ProjectIndex()
    for p, t in files.items():
        index.add_source(t, p)
    read = []
    tree_of = index.tree_of
    index.tree_of = lambda path: read.append(path) or tree_of(path)
    for p, text in files.items():
        RULE.find(SourceFile(p, text), RuleContext(p, index))
    assert read == []
    # (the same files with a callback that defines the hook: other files' classes are read)
    files["cb.py"] = files["cb.py"].replace("on_fit_start", "on_train_epoch_end")
    index = ProjectIndex()
    for p, t in files.items():
        index.add_source(t, p)
    tree_of = index.tree_of
    index.tree_of = lambda path: read.append(path) or tree_of(path)
    for p, text in files.items():
        RULE.find(SourceFile(p, text), RuleContext(p, index))
    assert read


def test_run_once_through_an_alias_and_a_callback_helper():
    """``test_epoch_end = validation_epoch_end`` computes the attribute for the test stage too;
    a callback that hands the module to its own helper reads what the helper reads."""
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.score = torch.stack(outputs).mean()

    test_epoch_end = validation_epoch_end


class Printer(pl.Callback):
    def on_test_epoch_end(self, trainer, pl_module):
        print(pl_module.score)

    def on_validation_epoch_end(self, trainer, pl_module):
        self._report(trainer, module=pl_module)

    def _report(self, trainer, module):
        print(module.score)
''')
    assert '''\
    def on_test_epoch_end(self):
        self._finish_test_epoch()

    def _finish_test_epoch(self):
        # 1.x ran test_epoch_end before the callbacks' on_test_epoch_end:
        # Printer calls this first; it runs once per epoch
        outputs = self.test_step_outputs
        if outputs is None:
            return
        self.test_step_outputs = None
        if len(outputs) == 1:
            outputs = outputs[0]
        self._test_epoch_end(outputs)

    _test_epoch_end = _validation_epoch_end
''' in out
    assert '''\
class Printer(pl.Callback):
    def on_test_epoch_end(self, trainer, pl_module):
        pl_module._finish_test_epoch()
        print(pl_module.score)

    def on_validation_epoch_end(self, trainer, pl_module):
        pl_module._finish_validation_epoch()
        self._report(trainer, module=pl_module)
''' in out
    assert "self._finish_validation_epoch()\n" in out.split("class Printer")[0]
    assert run_rule(RULE, out)[0] == out


# Issue 26, ledger fact L1 (read from 1.9.5's FitLoop.on_advance_end): an epoch whose first
# on_train_batch_start returned -1 ran no batch, and 1.9 did not call training_epoch_end for it;
# 2.x still calls on_train_epoch_end. A probe (on_train_batch_start returning -1 at batch 0 of
# epoch 1) logged from the body in epoch 1 after the plain rewrite, and not on 1.9.5.

SKIPPING = '''\
class M(pl.LightningModule):
    def on_train_batch_start(self, batch, batch_idx):
        if self.current_epoch == 1:
            return -1

    def training_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))
'''
GUARD = ("if self.trainer.fit_loop.epoch_loop.batch_progress.current.completed:  # 1.x skipped training_epoch_end "
         "after an epoch that ran no batch (on_train_batch_start returned -1)\n"
         "            self._training_epoch_end(outputs)\n")


def test_epoch_end_is_skipped_after_an_epoch_without_batches():
    out, findings = run_rule(RULE, HEAD + SKIPPING)
    assert "    def on_train_epoch_end(self):\n        outputs = self.training_step_outputs\n        " + GUARD in out
    assert "    def _training_epoch_end(self, outputs):\n        self.log(" in out
    assert run_rule(RULE, out)[0] == out
    compile(out, "<rewritten>", "exec")


def test_on_train_batch_start_in_a_subclass_file_guards_the_base_epoch_end():
    base = HEAD + SKIPPING.replace('''    def on_train_batch_start(self, batch, batch_idx):
        if self.current_epoch == 1:
            return -1

''', "")
    child = ("from base import M\n\n\nclass Child(M):\n    def on_train_batch_start(self, batch, batch_idx):\n"
             "        return -1\n")
    out, _ = run_rule(RULE, base, path="base.py", project_files={"child.py": child})
    assert GUARD in out
    # without an on_train_batch_start anywhere the body is inlined as before
    out, _ = run_rule(RULE, base, path="base.py")
    assert "completed" not in out and "    def on_train_epoch_end(self):\n        outputs = self.training_step_outputs\n        self.log(" in out


def test_training_epoch_end_returning_a_value_is_marked():
    """Spec B.1 (ledger B1.18): 1.9.5 raised MisconfigurationException when training_epoch_end
    returned anything but None; on_train_epoch_end's return value is ignored, so each
    ``return <value>`` of the moved body is marked (a bare ``return``, ``return None`` and the
    returns of a nested function are not; nor is a value that may be None, such as a call:
    code that ran on 1.9 returned None there)."""
    from lightmigrate.rules.lm001_epoch_end import RETURNS_VALUE

    marker = f"        # TODO(lightmigrate): LM001 {RETURNS_VALUE}\n"
    findings = rw(
        '''\
class M(pl.LightningModule):
    def training_epoch_end(self, outputs):
        total = sum(o["loss"] for o in outputs)
        if total > 10:
            return
        if total < 0:
            return None

        def helper():
            return 3
        return {"total": total}
''',
        '''\
class M(pl.LightningModule):
    def on_train_epoch_start(self):
        self.training_step_outputs = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs:
            self.training_step_outputs.append(outputs)

    def on_train_epoch_end(self):
        outputs = self.training_step_outputs
        total = sum(o["loss"] for o in outputs)
        if total > 10:
            return
        if total < 0:
            return None

        def helper():
            return 3
''' + marker + '''\
        return {"total": total}
''',
    )
    assert [f.kind for f in findings if f.kind is Kind.MARKER] == [Kind.MARKER]


def test_validation_epoch_end_returning_a_value_is_not_marked():
    """1.9.5 ignored what validation_epoch_end returned (only training raised)."""
    out, findings = run_rule(RULE, HEAD + textwrap.dedent('''\
        class M(pl.LightningModule):
            def validation_epoch_end(self, outputs):
                return {"n": len(outputs)}
        '''))
    assert "TODO(lightmigrate)" not in out


def test_batch_end_hooks_that_tell_an_empty_list_from_an_empty_dict_get_1x_empty_list():
    """Spec B.4 (ledger B4.3): after a training step that returned None 1.9.5 passed [] to the
    module's and callbacks' on_train_batch_end, 2.x passes {}. A hook that compares outputs with
    a list/dict display or asks its type starts by turning {} into []; one that only asks
    whether outputs is empty (the same in both), or whether it is a tensor, is left alone."""
    guard = "if isinstance({p}, dict) and not {p}:  # 1.x passed [] after a step that returned None\n"
    findings = rw(
        '''\
class M(pl.LightningModule):
    def on_train_batch_end(self, outputs, batch, batch_idx):
        """Count."""
        if outputs == []:
            self.skipped += 1


class CB(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, out, batch, batch_idx):
        self.kinds.append(isinstance(out, list))


class Other(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if not outputs:
            self.n += 1


class TensorOnly(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if not outputs or isinstance(outputs, torch.Tensor):
            self.n += 1
''',
        '''\
class M(pl.LightningModule):
    def on_train_batch_end(self, outputs, batch, batch_idx):
        """Count."""
        ''' + guard.format(p="outputs") + '''\
            outputs = []
        if outputs == []:
            self.skipped += 1


class CB(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, out, batch, batch_idx):
        ''' + guard.format(p="out") + '''\
            out = []
        self.kinds.append(isinstance(out, list))


class Other(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if not outputs:
            self.n += 1


class TensorOnly(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if not outputs or isinstance(outputs, torch.Tensor):
            self.n += 1
''',
    )
    assert sum(f.kind is Kind.FIXED and "on_train_batch_end" in f.message for f in findings) == 2


def test_batch_end_outputs_of_a_class_that_is_not_lightning_are_left_alone():
    rw(
        '''\
class Plain:
    def on_train_batch_end(self, outputs, batch, batch_idx):
        return outputs == []
''',
        None,
    )


def test_batch_end_guard_after_other_inserted_statements_is_not_repeated():
    """The guard may end up after statements other rules put first (here LM001's own collecting
    code for training_epoch_end): a second run of every rule finds it and adds no second one."""
    from lightmigrate.engine import transform_text
    from lightmigrate.rules import ALL_RULES

    src = HEAD + textwrap.dedent('''\
        class M(pl.LightningModule):
            def on_train_batch_end(self, outputs, batch, batch_idx):
                if outputs == []:
                    self.skipped += 1

            def training_epoch_end(self, outputs):
                self.total = len(outputs)
        ''')
    once = transform_text(src, ALL_RULES, path="model.py").text
    assert once.count("if isinstance(outputs, dict) and not outputs:") == 1
    assert once.index("self.training_step_outputs.append(outputs)") < once.index("if isinstance(outputs, dict)")
    assert transform_text(once, ALL_RULES, path="model.py").text == once


VAL_MODEL = '''\
import pytorch_lightning as pl
import torch


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()
'''


@pytest.mark.parametrize("setup, read", [
    # a module reference the callback keeps, read later
    ("    def on_fit_start(self, trainer, pl_module):\n        self.module = pl_module\n\n", "self.module.val_mean"),
    ("    def setup(self, trainer, pl_module, stage):\n        self.model = trainer.lightning_module\n\n",
     "self.model.val_mean"),
    # an attribute read by a name built at run time
    ("", 'getattr(pl_module, "val_" + "mean")'),
    ("", "vars(pl_module)"),
])
def test_callback_reads_through_kept_references_and_computed_names_call_the_run_once_method(setup, read):
    text = VAL_MODEL + f'''

class Watcher(pl.Callback):
{setup}    def on_validation_epoch_end(self, trainer, pl_module):
        print({read})
'''
    out, _ = run_rule(RULE, text)
    assert "    def on_validation_epoch_end(self, trainer, pl_module):\n        pl_module._finish_validation_epoch()\n" in out
    assert "def _finish_validation_epoch(self):" in out
    assert run_rule(RULE, out)[0] == out


def test_a_body_that_sets_attributes_by_computed_names_is_read_by_the_callback():
    text = VAL_MODEL.replace("self.val_mean = torch.stack(outputs).mean()",
                             'for key in ("val_mean",):\n            setattr(self, key, torch.stack(outputs).mean())') + '''

class Watcher(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print(pl_module.val_mean)
'''
    out, _ = run_rule(RULE, text)
    assert "        pl_module._finish_validation_epoch()\n        print(pl_module.val_mean)" in out
    assert run_rule(RULE, out)[0] == out


@pytest.mark.parametrize("read, what", [
    ("getattr(pl_module, self.name)", "the module's attributes"),
    ('trainer.callback_metrics[f"val_{self.name}"]', "the metrics it logs"),
])
def test_a_callback_that_may_read_what_an_unlinked_epoch_end_computed_is_marked(read, what):
    """No file names the callback with the module, and the names it reads are built at run
    time: whether it reads what the epoch-end computed cannot be told, so it is marked."""
    model = VAL_MODEL + '        self.log("val_mean", self.val_mean)\n'
    watcher = f'''\
import pytorch_lightning as pl


class Watcher(pl.Callback):
    def __init__(self, name):
        self.name = name

    def on_validation_epoch_end(self, trainer, pl_module):
        print({read})
'''
    out, _ = run_rule(RULE, watcher, path="watcher.py", project_files={"model.py": model})
    assert (f"# TODO(lightmigrate): LM001 this on_validation_epoch_end reads {what}, under names built at run "
            "time, and validation_epoch_end of Model computed such values before it in 1.x") in out
    assert "_finish_validation_epoch()\n" not in out.replace("pl_module._finish_validation_epoch() first", "")
    assert run_rule(RULE, out, path="watcher.py", project_files={"model.py": model})[0] == out
    # the model keeps its hook as it always did (no run-once method for an unlinked callback)
    model_out, _ = run_rule(RULE, model, path="model.py", project_files={"watcher.py": watcher})
    assert "_finish_validation_epoch" not in model_out


def test_training_epoch_end_returning_a_call_is_not_marked():
    """``return self.adapter.training_epoch_end(outputs)`` (a delegation, as published
    packages write it) returned None on 1.9 or 1.9 raised: no marker for it."""
    src = textwrap.dedent('''\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_epoch_end(self, outputs):
                if not outputs:
                    return self.log_nothing()
                return self.adapter.training_epoch_end(outputs)
    ''')
    out, _ = run_rule(RULE, src, path="m.py")
    assert "TODO(lightmigrate)" not in out
    assert "return self.adapter.training_epoch_end(outputs)" in out


@pytest.mark.parametrize("trainer, train_marked, val_marked", [
    ('ModelPruning("l1_unstructured", amount=0.5)', True, False),
    ('ModelPruning("l1_unstructured", amount=0.5, prune_on_train_epoch_end=False)', True, True),
    ("EarlyStopping(monitor='x')", False, False),
])
def test_model_pruning_before_the_body_is_marked_ledger_b2_4(trainer, train_marked, val_marked):
    """1.9.5 ran training_epoch_end before ModelPruning pruned the weights in its
    on_train_epoch_end (validation_epoch_end before its on_validation_epoch_end when
    prune_on_train_epoch_end=False); 2.x runs the Lightning callback first and it cannot call the
    run-once method (a probe: the body counted 0 zero weights at epoch 0 on 1.9.5, 2 migrated)."""
    text = HEAD + f'''\
class M(pl.LightningModule):
    def training_epoch_end(self, outputs):
        self.log("zeros", (self.net.weight == 0).float().sum())

    def validation_epoch_end(self, outputs):
        self.log("val_zeros", (self.net.weight == 0).float().sum())


trainer = pl.Trainer(callbacks=[{trainer}])
'''
    out, _ = run_rule(RULE, text)
    lines = out.splitlines()
    train = lines.index("    def on_train_epoch_end(self):")
    val = lines.index("    def on_validation_epoch_end(self):")
    assert lines[train - 1].startswith("    # TODO(lightmigrate): LM001 (ledger B2.4) ModelPruning") is train_marked
    assert lines[val - 1].startswith("    # TODO(lightmigrate): LM001 (ledger B2.2) ModelPruning") is val_marked
    assert run_rule(RULE, out)[0] == out


# ---------------------------------------------------------------------------------------------
# Ledger B2.6: a 1.x on_train_epoch_end that logs runs after ModelCheckpoint/EarlyStopping


MONITORED = '''\
class M(pl.LightningModule):
    def training_epoch_end(self, outputs):
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())

    def on_train_epoch_end(self):
        self.log("score", self.score)
        self.score = 0.0

    def configure_optimizers(self):
        return None


stop = EarlyStopping(monitor="score", strict=False)
'''
MONITORED_HEAD = "import torch\nimport pytorch_lightning as pl\nfrom pytorch_lightning.callbacks import EarlyStopping\n\n\n"


def test_monitored_on_train_epoch_end_runs_after_the_monitors():
    findings = check_rewrite(RULE, MONITORED_HEAD + MONITORED, '''\
import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import EarlyStopping, Checkpoint


class M(pl.LightningModule):
    def on_train_epoch_start(self):
        self.training_step_outputs = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs:
            self.training_step_outputs.append(outputs)

    def on_train_epoch_end(self):
        outputs = self.training_step_outputs
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())

    # 1.x ran on_train_epoch_end after ModelCheckpoint/EarlyStopping checked their monitor, 2.x
    # before: _MAfterMonitors (configure_callbacks) runs this body after them
    def _train_epoch_end_after_monitors(self):
        self.log("score", self.score)
        self.score = 0.0

    def configure_callbacks(self):
        return [_MAfterMonitors()]

    def configure_optimizers(self):
        return None


class _MAfterMonitors(Checkpoint):
    """Runs M's 1.x on_train_epoch_end body after ModelCheckpoint and EarlyStopping
    checked their monitor, as 1.x did (2.x runs Checkpoint callbacks last)."""

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module._train_epoch_end_after_monitors()


stop = EarlyStopping(monitor="score", strict=False)
''')
    assert any("_train_epoch_end_after_monitors" in f.message and f.kind == Kind.FIXED for f in findings)


def test_monitored_hook_of_a_validation_only_1x_class_moves_too():
    # the evidence is any removed epoch-end hook the run migrates; the monitor is in another file
    text = HEAD + '''\
class M(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("val", 1.0)

    def on_train_epoch_end(self):
        self.log("score", 1.0)
'''
    out, _ = run_rule(RULE, text, project_files={"train.py": "from pytorch_lightning.callbacks import "
                                                              "ModelCheckpoint\nModelCheckpoint(monitor='score')\n"})
    assert "    def on_train_epoch_end(self):" not in out
    assert "    def _train_epoch_end_after_monitors(self):\n        self.log(\"score\", 1.0)" in out
    assert "class _MAfterMonitors(Checkpoint):" in out
    assert out.count("from pytorch_lightning.callbacks import Checkpoint\n") == 1
    again, _ = run_rule(RULE, out, project_files={"train.py": "ModelCheckpoint(monitor='score')\n"})
    assert again == out


def test_monitored_hook_lightning_root_of_the_class():
    text = "from lightning.pytorch import LightningModule\nfrom lightning.pytorch.callbacks import EarlyStopping\n\n\n" \
        + MONITORED.replace("pl.LightningModule", "LightningModule").replace("torch.stack(", "sum(").replace(
            ").mean()", ")")
    out, _ = run_rule(RULE, text)
    assert "from lightning.pytorch.callbacks import EarlyStopping, Checkpoint\n" in out
    assert "class _MAfterMonitors(Checkpoint):" in out


@pytest.mark.parametrize("change, project", [
    # no 1.x evidence: its on_train_epoch_end may be 2.x code (LM309 notes it)
    (lambda t: t.replace('''    def training_epoch_end(self, outputs):
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())

''', ""), {}),
    # nothing monitored in the project
    (lambda t: t.replace('EarlyStopping(monitor="score", strict=False)', "EarlyStopping"), {}),
    # the class already returns callbacks of its own
    (lambda t: t.replace("    def configure_optimizers(self):", "    def configure_callbacks(self):\n        return []\n\n"
                         "    def configure_optimizers(self):"), {}),
    # a subclass elsewhere overrides the hook (it would no longer run after the monitors)
    (lambda t: t, {"sub.py": "from model import M\n\n\nclass Sub(M):\n    def on_train_epoch_end(self):\n"
                             "        super().on_train_epoch_end()\n"}),
    # the hook is called by name
    (lambda t: t.replace("        self.score = 0.0\n", "        self.score = 0.0\n\n    def reset(self):\n"
                         "        self.on_train_epoch_end()\n"), {}),
    # the file binds another Checkpoint
    (lambda t: t.replace("stop = ", "from mylib import Checkpoint\nstop = "), {}),
    # the only removed hook is marked, not migrated (several optimizers)
    (lambda t: t.replace("    def configure_optimizers(self):", "    def training_step(self, batch, batch_idx, optimizer_idx):\n"
                         "        return None\n\n    def configure_optimizers(self):"), {}),
])
def test_monitored_hook_left_where_it_cannot_move(change, project):
    text = change(MONITORED_HEAD + MONITORED)
    out, _ = run_rule(RULE, text, project_files=project)
    assert "_train_epoch_end_after_monitors" not in out and "Checkpoint)" not in out
    assert '        self.log("score", self.score)\n        self.score = 0.0\n' in out  # still in on_train_epoch_end


def test_on_train_epoch_end_an_earlier_rule_wrote_is_not_moved():
    # LM005 moves a multi-optimizer training_epoch_end into on_train_epoch_end before LM001 runs:
    # that body's metrics were seen by 1.9's monitors the same epoch (B2.5), it must stay
    from lightmigrate.rules.lm005_multi_optimizer import MultiOptimizerRule

    text = MONITORED_HEAD + '''\
class M(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return batch.sum()

    def training_epoch_end(self, outputs):
        self.log("score", 1.0)

    def validation_epoch_end(self, outputs):
        self.log("val", 1.0)

    def configure_optimizers(self):
        return [torch.optim.SGD([], lr=0.1), torch.optim.SGD([], lr=0.1)]


stop = EarlyStopping(monitor="score")
'''
    index = ProjectIndex()
    index.add_source(text, "model.py")
    from lightmigrate.engine import transform_text

    out = transform_text(text, [MultiOptimizerRule(), RULE], path="model.py", project=index).text
    assert "def on_train_epoch_end(self):" in out and "_train_epoch_end_after_monitors" not in out
