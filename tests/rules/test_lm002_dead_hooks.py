"""LM002: dead hooks are marked, never rewritten; valid hooks and plain methods are left alone."""

from lightmigrate.output.findings import Kind
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.lm002_dead_hooks import DeadHooksRule

from .conftest import check_rewrite, run_rule

RULE = DeadHooksRule()
HEAD = "import pytorch_lightning as pl\n\n\n"


def markers(out):
    return [line.strip() for line in out.splitlines() if "TODO(lightmigrate): LM002" in line]


def test_removed_step_end_hook_is_marked():
    out, findings = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def training_step_end(self, out):
        return out["loss"] * 2
''')
    (marker,) = markers(out)
    assert "`training_step_end` is never called by Lightning 2.x" in marker
    assert [(f.code, f.kind, f.line) for f in findings] == [("LM002", Kind.MARKER, 5)]


def test_optimizer_idx_in_hook_signatures_is_marked():
    out, _ = run_rule(RULE, HEAD + '''\
class GAN(pl.LightningModule):
    def training_step(self, batch, batch_idx, optimizer_idx):
        return batch.sum()

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None,
                       on_tpu=False, using_native_amp=False, using_lbfgs=False):
        optimizer.step(closure=optimizer_closure)

    def configure_gradient_clipping(self, optimizer, optimizer_idx, gradient_clip_val=None,
                                    gradient_clip_algorithm=None):
        pass

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        pass
''')
    assert len(markers(out)) == 4
    assert all("optimizer_idx" in m for m in markers(out))


def test_extra_required_argument_is_marked():
    out, _ = run_rule(RULE, HEAD + '''\
class M(pl.LightningModule):
    def on_train_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
''')
    (marker,) = markers(out)
    assert "calls `on_train_batch_end` with 3 positional argument(s); this signature needs 4" in marker


def test_callback_signatures_count_trainer_and_module():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class Good(pl.Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pass

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        pass
''', None)
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl


class Bad(pl.Callback):
    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        pass
''')
    assert "give it a default (`dataloader_idx=0`)" in markers(out)[0]


def test_tbptt_hiddens_is_marked():
    out, _ = run_rule(RULE, HEAD + '''\
class RNN(pl.LightningModule):
    def training_step(self, batch, batch_idx, hiddens):
        return {"loss": batch.sum(), "hiddens": hiddens}
''')
    assert "truncated BPTT" in markers(out)[0]


def test_not_lightning_classes_are_left_alone():
    check_rewrite(RULE, '''\
class Plain:
    def training_step_end(self, out):
        return out

    def on_training_epoch_end(self):
        pass
''', None)


def test_hook_marked_by_another_rule_is_not_marked_twice():
    src = HEAD + '''\
class GAN(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return batch.sum()

    def training_epoch_end(self, outputs, *rest):
        pass
'''
    from lightmigrate.engine import transform_text

    result = transform_text(src, ALL_RULES, path="gan.py")
    epoch_end_def = result.text.splitlines().index("    def training_epoch_end(self, outputs, *rest):")
    above = result.text.splitlines()[epoch_end_def - 1]
    assert "LM001" in above and "LM002" not in above
    assert result.text.count("TODO(lightmigrate)") == 1  # LM001 on the epoch end
    again = transform_text(result.text, ALL_RULES, path="gan.py")
    assert again.text == result.text


def test_base_class_in_another_file_is_followed():
    base = HEAD + "class Base(pl.LightningModule):\n    def training_step(self, b, i):\n        pass\n"
    out, _ = run_rule(RULE, '''\
from base import Base


class Child(Base):
    def on_validation_epoch_ends(self):
        pass
''', path="child.py", project_files={"base.py": base})
    assert "did you mean `on_validation_epoch_end`?" in markers(out)[0]
