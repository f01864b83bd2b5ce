"""LM308: from_compiled, load_from_checkpoint on an instance, dataloader_iter steps."""

from lightmigrate.output.findings import Kind
from lightmigrate.rules.lm308_module_api import ModuleApiRule

from .conftest import check_rewrite, run_rule

RULE = ModuleApiRule()


def test_discarded_result_on_unknown_name_is_only_marked():
    out, findings = run_rule(RULE, '''\
import pytorch_lightning as pl


def restore(model, klass, path):
    model.load_from_checkpoint(path)
    return klass.load_from_checkpoint(path)
''')
    assert "    model.load_from_checkpoint(path)" in out and "type(" not in out
    assert "# TODO(lightmigrate): LM308 `load_from_checkpoint` returns a new model and never changed `model`" in out
    assert [(f.code, f.kind) for f in findings] == [("LM308", Kind.MARKER)]


def test_discarded_result_on_instance_is_rewritten_and_marked():
    out, findings = run_rule(RULE, '''\
import pytorch_lightning as pl
from model import Net

model = Net()
model.load_from_checkpoint("a.ckpt")
''')
    assert "\ntype(model).load_from_checkpoint(\"a.ckpt\")" in out
    assert "# TODO(lightmigrate): LM308 `load_from_checkpoint` returns a new model and never changed `model`" in out
    assert sorted((f.code, f.kind.value) for f in findings) == [("LM308", "fixed"), ("LM308", "marker")]
    again, _ = run_rule(RULE, out)
    assert again == out


def test_self_and_project_subclass_from_compiled_with_lightning_root():
    check_rewrite(RULE, '''\
import lightning.pytorch as pl


class Net(pl.LightningModule):
    def fresh(self, path):
        return self.load_from_checkpoint(path)


plain = Net.to_uncompiled(compiled)
''', '''\
import lightning.pytorch as pl
from lightning.pytorch.utilities.compile import to_uncompiled


class Net(pl.LightningModule):
    def fresh(self, path):
        return type(self).load_from_checkpoint(path)


plain = to_uncompiled(compiled)
''')


def test_non_lightning_files_and_modules_untouched():
    check_rewrite(RULE, '''\
import checkpoints


def f(loader, cls):
    checkpoints.load_from_checkpoint("x")
    return loader.load_from_checkpoint("x"), cls.load_from_checkpoint("y")
''', None)


def test_dataloader_iter_step_reading_batch_idx_is_marked():
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def training_step(self, dataloader_iter, batch_idx):
        batch = next(dataloader_iter)
        self.log("i", batch_idx)
        return batch.sum()
''')
    assert "def training_step(self, dataloader_iter, batch_idx):" in out
    assert "# TODO(lightmigrate): LM308 Lightning 2.1+ passes only `dataloader_iter`" in out
