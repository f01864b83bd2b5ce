"""LM305: legacy hooks are renamed where 2.x has the same hook; otherwise LM002 marks them."""

from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.lm305_legacy_hooks import LegacyHooksRule

from .conftest import check_rewrite

RULE = LegacyHooksRule()


def test_batch_hooks_gain_parameters_with_fresh_names():
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_batch_start(self, trainer, pl_module):
        batch = 3
        print(batch)
''', '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_train_batch_start(self, trainer, pl_module, batch_1, batch_idx):
        batch = 3
        print(batch)
''')
    assert [(f.code, f.kind) for f in findings] == [("LM305", Kind.FIXED)]


def test_setup_hooks_and_pretrain_routine_in_callback():
    check_rewrite(RULE, '''\
from pytorch_lightning.callbacks import Callback


class C(Callback):
    def on_before_accelerator_backend_setup(self, trainer, pl_module):
        self.ready = True

    def on_pretrain_routine_end(self, trainer, pl_module):
        self.started = True
''', '''\
from pytorch_lightning.callbacks import Callback


class C(Callback):
    def setup(self, trainer, pl_module, stage):
        self.ready = True

    def on_fit_start(self, trainer, pl_module):
        self.started = True
''')


def test_keyboard_interrupt_keeps_docstring_outside_guard():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_keyboard_interrupt(self, trainer, pl_module):
        """Save on Ctrl-C."""
        trainer.save_checkpoint("x.ckpt")
''', '''\
import pytorch_lightning as pl


class C(pl.Callback):
    def on_exception(self, trainer, pl_module, exception):
        """Save on Ctrl-C."""
        if isinstance(exception, KeyboardInterrupt):
            trainer.save_checkpoint("x.ckpt")
''')


def test_calls_to_renamed_module_hook_follow():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def configure_sharded_model(self):
        self.block = 1

    def rebuild(self):
        self.configure_sharded_model()
''', '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def configure_model(self):
        self.block = 1

    def rebuild(self):
        self.configure_model()
''')


def test_two_hooks_for_one_target_are_left_to_lm002():
    src = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_pretrain_routine_start(self):
        self.a = 1

    def on_pretrain_routine_end(self):
        self.b = 1
'''
    check_rewrite(RULE, src, None)
    out = transform_text(src, ALL_RULES, path="model.py").text
    assert out.count("TODO(lightmigrate): LM002") == 2


def test_choice_hooks_are_not_renamed_and_non_lightning_classes_untouched():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_epoch_end(self):
        pass


class NotLightning:
    def on_batch_end(self, trainer, pl_module):
        pass
''', None)
