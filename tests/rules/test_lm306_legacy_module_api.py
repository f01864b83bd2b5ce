"""LM306: removed module/callback/datamodule APIs: rewrites and markers."""

from lightmigrate.output.findings import Kind
from lightmigrate.rules.lm306_legacy_module_api import LegacyModuleApiRule

from .conftest import check_rewrite, run_rule

RULE = LegacyModuleApiRule()


def test_summarize_max_depth_and_lightning_root():
    findings = check_rewrite(RULE, '''\
from lightning.pytorch import LightningModule


class M(LightningModule):
    def on_train_start(self):
        self.summary = self.summarize(max_depth=3)
''', '''\
from lightning.pytorch import LightningModule
from lightning.pytorch.utilities.model_summary import summarize


class M(LightningModule):
    def on_train_start(self):
        self.summary = summarize(self, max_depth=3)
''')
    assert [(f.code, f.kind) for f in findings] == [("LM306", Kind.FIXED)]


def test_summarize_with_positional_mode_is_left():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_train_start(self):
        self.summarize("top")
''', None)


def test_datamodule_checkpoint_hooks_and_queue_overrides_marked():
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl


class DM(pl.LightningDataModule):
    def on_save_checkpoint(self, checkpoint):
        checkpoint["x"] = 1


class M(pl.LightningModule):
    def add_to_queue(self, queue):
        queue.put(1)
''')
    assert "LM306 Lightning 2.x never calls `on_save_checkpoint` on a LightningDataModule" in out
    assert "LM306 `add_to_queue` is no longer called" in out


def test_model_size_marked_only_on_lightning_objects():
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl


class Cb(pl.Callback):
    def on_fit_start(self, trainer, pl_module):
        print(pl_module.model_size)


class Config:
    def __init__(self):
        self.model_size = 512

    def f(self):
        return self.model_size


class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.model_size = 3

    def f(self):
        return self.model_size
''')
    assert out.count("TODO(lightmigrate): LM306 `model_size` was removed") == 1
    assert out.index("LM306") < out.index("print(pl_module.model_size)")


def test_progress_bar_dict_call_marked_and_idempotent():
    src = '''\
def show(model):
    items = model.get_progress_bar_dict()
    return items
'''
    out, _ = run_rule(RULE, src)
    assert "# TODO(lightmigrate): LM306 `get_progress_bar_dict()` was removed" in out
    again, _ = run_rule(RULE, out)
    assert again == out
