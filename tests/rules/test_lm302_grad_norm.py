"""LM302: track_grad_norm becomes 1.9's grad-norm logging in on_before_optimizer_step."""

import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.rules.base import RuleContext, SourceFile
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


# --- find: one site, with what to do; none where nothing changes -----------------------------

def _find(text, path="m.py", files=None):
    index = ProjectIndex()
    for other, other_text in {**(files or {}), path: text}.items():
        index.add_source(other_text, other)
    return RULE.find(SourceFile(path, text), RuleContext(path, index))


def _acts(text, path="m.py", files=None):
    out, findings = run_rule(RULE, text, path, files)
    return out != text or bool(findings)


MODULE = "import pytorch_lightning as pl\n\n\nclass Model(pl.LightningModule):\n    pass\n\n\n"


@pytest.mark.parametrize("text,action,data", [
    (MODULE + "trainer = pl.Trainer(track_grad_norm=2)\n", "rewrite", "2"),
    (MODULE + "trainer = Trainer(track_grad_norm=(2.0))\n", "rewrite", "2.0"),
    (MODULE + "kw = {'max_epochs': 1, 'track_grad_norm': 'inf'}\ntrainer = pl.Trainer(**kw)\n", "rewrite", "'inf'"),
    (MODULE + "trainer = pl.Trainer(track_grad_norm='-1')\n", "remove", None),
    (MODULE + "trainer = pl.Trainer(track_grad_norm=- 1.0)\n", "remove", None),
    # the first one in the order libcst visits: the enclosing call before its arguments
    (MODULE + "t = pl.Trainer(callbacks=pl.Trainer(track_grad_norm=2), track_grad_norm=-1)\n", "remove", None),
    (MODULE + "kw = {'track_grad_norm': 1, 'track_grad_norm': -1}\n", "rewrite", "1"),
    (MODULE + "trainer = pl.Trainer(track_grad_norm=args.norm)\n", "mark", "the value is not a literal"),
    (MODULE + "trainer = pl.Trainer(track_grad_norm='in' 'f')\n", "mark", "the value is not a literal"),
    (MODULE + "trainer = pl.Trainer(track_grad_norm=True)\n", "mark", "the value is not a literal"),
    ("import pytorch_lightning as pl\ntrainer = pl.Trainer(track_grad_norm=2)\n", "mark",
     "this file does not define exactly one LightningModule"),
    (MODULE.replace("pass", "def on_before_optimizer_step(self, optimizer):\n        yield") +
     "trainer = pl.Trainer(track_grad_norm=2)\n", "mark",
     "cannot append the grad-norm logging to `on_before_optimizer_step` (it returns early or takes no optimizer)"),
    (MODULE.replace("pass", "def on_before_optimizer_step(self):\n        pass") +
     "trainer = pl.Trainer(track_grad_norm=2)\n", "mark",
     "cannot append the grad-norm logging to `on_before_optimizer_step` (it returns early or takes no optimizer)"),
])
def test_find_one_site_with_its_action(text, action, data):
    sites = _find(text)
    assert [(s.action, s.data) for s in sites] == [(action, data)]
    assert _acts(text)


def test_find_rewrite_names_the_module_across_files():
    base = "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n    pass\n"
    text = "from base import Base\nimport pytorch_lightning as pl\n\n\nclass Leaf(Base):\n    pass\n\n\npl.Trainer(track_grad_norm=2)\n"
    assert [(s.line, s.col, s.target, s.action) for s in _find(text, files={"base.py": base})] == [
        (5, 0, "Leaf", "rewrite")]
    # without the base, Leaf is not known to be a LightningModule: the argument is marked
    assert [s.action for s in _find(text)] == ["mark"]


@pytest.mark.parametrize("text", [
    "import pytorch_lightning as pl\n# Trainer(track_grad_norm=2) was removed\ntrainer = pl.Trainer()\n",
    "def log(track_grad_norm=2):\n    return track_grad_norm\n\nlog(track_grad_norm=3)\n",
    # a dict with a key that is not a Trainer argument is not a Trainer-kwargs dict
    "cfg = {'track_grad_norm': 2, 'lr': 0.1}\n",
])
def test_find_nothing(text):
    assert _find(text) == []
    assert not _acts(text)


@pytest.mark.parametrize("imported", ["from pytorch_lightning import Trainer as PLT",
                                      "from lightning.pytorch import Trainer as PLT"])
def test_an_aliased_trainer_call_is_rewritten(imported):
    # ``PLT(track_grad_norm=2)`` makes a Lightning Trainer as ``pl.Trainer(...)`` does: the logging
    # is written and the argument goes (it was left to LM090's marker)
    text = imported + "\n" + MODULE + "trainer = PLT(max_epochs=1, track_grad_norm=2)\n"
    assert [(s.action, s.data) for s in _find(text)] == [("rewrite", "2")]
    out, _ = run_rule(RULE, text)
    assert "trainer = PLT(max_epochs=1)\n" in out
    assert "grad_norm(self, norm_type=2)" in out
    assert run_rule(RULE, out)[0] == out
    # a name imported from elsewhere is not Lightning's Trainer
    other = text.replace(imported, "from mylib import Trainer as PLT")
    assert _find(other) == []


def test_an_aliased_trainer_call_with_the_argument_off_loses_it():
    text = "from pytorch_lightning import Trainer as PLT\n" + MODULE + "trainer = PLT(track_grad_norm=-1)\n"
    out, _ = run_rule(RULE, text)
    assert "trainer = PLT()\n" in out
