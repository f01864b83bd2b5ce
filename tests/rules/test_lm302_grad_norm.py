"""LM302: track_grad_norm becomes 1.9's grad-norm logging in on_before_optimizer_step."""

from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.lm302_grad_norm import GradNormRule

from .conftest import check_rewrite, run_rule

RULE = GradNormRule()


def test_existing_hook_with_inherited_base_and_kwargs_dict_lightning_root():
    findings = check_rewrite(RULE, '''\
"""Doc."""
import lightning.pytorch as pl


class Model(pl.LightningModule):
    def on_before_optimizer_step(self, opt):
        self.seen = True

    def log_grad_norm(self, grad_norm_dict):
        self.log_dict(grad_norm_dict)


TRAINER_KW = {"max_epochs": 1, "track_grad_norm": 1.0}
''', '''\
"""Doc."""
import lightning.pytorch as pl
from lightning.pytorch.utilities import grad_norm


class Model(pl.LightningModule):
    def on_before_optimizer_step(self, opt):
        self.seen = True
        # Lightning 1.x Trainer(track_grad_norm=1.0): optimizer 0, stepping batches, rounded to 4 digits
        if opt is self.trainer.optimizers[0]:
            norms = {k: round(v.item(), 4) for k, v in grad_norm(self, norm_type=1.0).items()}
            if norms:
                self.log_grad_norm(norms)

    def log_grad_norm(self, grad_norm_dict):
        self.log_dict(grad_norm_dict)


TRAINER_KW = {"max_epochs": 1}
''')
    assert [(f.code, f.kind) for f in findings] == [("LM302", Kind.FIXED)]


def test_inherited_hook_is_called_first():
    out, _ = run_rule(RULE, '''\
from base import Base
import pytorch_lightning as pl


class Leaf(Base):
    pass


pl.Trainer(track_grad_norm=2)
''', project_files={"base.py": '''\
import pytorch_lightning as pl


class Base(pl.LightningModule):
    def on_before_optimizer_step(self, optimizer):
        pass
'''})
    assert "super().on_before_optimizer_step(optimizer)\n        # Lightning 1.x" in out


def test_minus_one_is_just_dropped():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl

trainer = pl.Trainer(track_grad_norm=-1, max_epochs=2)
''', '''\
import pytorch_lightning as pl

trainer = pl.Trainer(max_epochs=2)
''')


def test_two_modules_or_variable_value_are_marked():
    for src in ('''\
import pytorch_lightning as pl


class A(pl.LightningModule):
    pass


class B(pl.LightningModule):
    pass


trainer = pl.Trainer(track_grad_norm=2)
''', '''\
import pytorch_lightning as pl


class A(pl.LightningModule):
    pass


trainer = pl.Trainer(track_grad_norm=args.norm)
'''):
        out, _ = run_rule(RULE, src)
        assert "# TODO(lightmigrate): LM302 `track_grad_norm` is gone" in out
        assert "track_grad_norm=" in out and "def on_before_optimizer_step" not in out


def test_early_return_in_existing_hook_is_marked():
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl


class A(pl.LightningModule):
    def on_before_optimizer_step(self, optimizer):
        if self.skip:
            return
        self.x = 1


trainer = pl.Trainer(track_grad_norm=2)
''')
    assert "norms = " not in out and "import grad_norm" not in out and "# TODO(lightmigrate): LM302" in out


def test_lm002_no_longer_marks_called_log_grad_norm():
    src = '''\
import pytorch_lightning as pl


class A(pl.LightningModule):
    def log_grad_norm(self, grad_norm_dict):
        self.log_dict(grad_norm_dict)


trainer = pl.Trainer(track_grad_norm=2)
'''
    out = transform_text(src, ALL_RULES, path="m.py").text
    assert "self.log_grad_norm(norms)" in out and "TODO(lightmigrate)" not in out
    # without track_grad_norm the override is dead code and LM002 says so
    dead = transform_text(src.replace("track_grad_norm=2", "max_epochs=1"), ALL_RULES, path="m.py").text
    assert "TODO(lightmigrate): LM002 `log_grad_norm`" in dead
