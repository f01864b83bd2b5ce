"""LM308: from_compiled, load_from_checkpoint on an instance, dataloader_iter steps."""

import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm308_module_api import ModuleApiRule

from .conftest import check_corpus_case_idempotent, check_rewrite, run_rule

RULE = ModuleApiRule()


def sites(source, files=None, indexed=True, path="model.py"):
    """``RULE.find`` for ``source`` at ``path`` in a project of ``files`` (and ``source``
    itself, when ``indexed``), as (action, target, line)."""
    index = ProjectIndex()
    for other, text in (files or {}).items():
        index.add_source(text, other)
    if indexed:
        index.add_source(source, path)
    return [(s.action, s.target, s.line) for s in RULE.find(SourceFile(path, source), RuleContext(path, index))]


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


# ---------------------------------------------------------------------------------------------
# find: the sites, and none where nothing changes

LIGHTNING_BASE = "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n    pass\n"
ITER_STEP = '''\
from base import Base


class Model(Base):
    def training_step(self, dataloader_iter, batch_idx):
        batch = next(dataloader_iter)
        return batch
'''


@pytest.mark.parametrize("indexed", [True, False])
def test_find_step_of_a_subclass_of_a_module_in_another_file(indexed):
    # a file the index has not seen is indexed by find
    assert sites(ITER_STEP, {"base.py": LIGHTNING_BASE}, indexed) == [("step-drop", "Model", 5)]
    assert sites(ITER_STEP, {"base.py": "class Base:\n    pass\n"}) == []


@pytest.mark.parametrize("source, expected", [
    ("import pytorch_lightning as pl\nfrom model import Net\n\nnet = Net()\nbest = net.load_from_checkpoint('x.ckpt')\n",
     [("type", "net", 5)]),
    # no Lightning import: load_from_checkpoint is left alone
    ("from model import Net\n\nnet = Net()\nbest = net.load_from_checkpoint('x.ckpt')\n", []),
    ("import pytorch_lightning as pl\n\nm = pl.LightningModule.from_compiled(x)\n", [("function", "LightningModule", 3)]),
    # on a class (imported or defined here) the call is right; on ``self`` of a LightningModule it is not
    ("import pytorch_lightning as pl\nfrom model import Net as N\n\n\nclass Other:\n    pass\n\n\n"
     "best = N.load_from_checkpoint('x.ckpt')\nother = Other.load_from_checkpoint('y.ckpt')\n", []),
    ("import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def reload(me):\n"
     "        return me.load_from_checkpoint('x.ckpt')\n", [("type", "me", 6)]),
    # a thrown-away result: rewritten and marked
    ("import pytorch_lightning as pl\nfrom model import Net\n\nnet = Net()\nnet.load_from_checkpoint('x.ckpt')\n",
     [("type", "net", 5), ("mark", "net", 5)]),
    # the functions of 2.x's utilities.compile, called by their names, are left alone
    ("import pytorch_lightning as pl\nfrom pytorch_lightning.utilities.compile import from_compiled\n\n"
     "m = from_compiled(torch.compile(net))\n", []),
    # a receiver in parentheses is not a class name
    ("import pytorch_lightning as pl\n\nm = (pl.LightningModule).from_compiled(net)\n", []),
])
def test_find_calls(source, expected):
    assert sites(source) == expected


def test_find_a_call_in_a_one_line_suite_marks_the_next_statement_line():
    # (libcst's walk marks the next statement line it leaves; find names the same line)
    source = "import pytorch_lightning as pl\n\nif ok: model.load_from_checkpoint(p)\nx = 1\n"
    assert sites(source) == [("mark", "model", 4)]


def test_fix_keeps_calls_apart_on_a_line_a_step_shortened():
    out, findings = run_rule(RULE, '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def training_step(self, dataloader_iter, batch_idx): x = next(dataloader_iter); return self.load_from_checkpoint(x)
''')
    assert "def training_step(self, dataloader_iter): x = next(dataloader_iter)[0]; " \
           "return type(self).load_from_checkpoint(x)" in out
    assert len(findings) == 2


# ---------------------------------------------------------------------------------------------
# B-9: eval mode set in __init__ / setup, which 1.9's fit undid (corpus eval_mode_in_init)


def test_eval_in_init_gets_an_on_fit_start_that_trains():
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl
from torch import nn


class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(2, 2)
        self.backbone.eval()

    def training_step(self, batch, batch_idx):
        return self.backbone(batch).sum()
''', '''\
import pytorch_lightning as pl
from torch import nn


class M(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(2, 2)
        self.backbone.eval()

    def on_fit_start(self):
        # Lightning 1.x put the whole model in train mode when fit started
        self.train()

    def training_step(self, batch, batch_idx):
        return self.backbone(batch).sum()
''')
    assert [(f.code, f.kind) for f in findings] == [("LM308", Kind.FIXED)]


def test_eval_in_init_extends_an_existing_on_fit_start_or_marks_it():
    findings = check_rewrite(RULE, '''\
import pytorch_lightning as pl


class Base(pl.LightningModule):
    def on_fit_start(self):
        print("base")


class N(Base):
    def __init__(self):
        super().__init__()
        self.train(False)


class O(pl.LightningModule):
    def setup(self, stage):
        self.encoder.eval()

    def on_fit_start(self):
        """Doc."""
        print("start")


class P(pl.LightningModule):
    def setup(self, stage):
        self.eval()

    def on_fit_start(self):
        if self.x:
            return
''', '''\
import pytorch_lightning as pl


class Base(pl.LightningModule):
    def on_fit_start(self):
        print("base")


class N(Base):
    def __init__(self):
        super().__init__()
        self.train(False)

    def on_fit_start(self):
        # Lightning 1.x put the whole model in train mode when fit started
        super().on_fit_start()
        self.train()


class O(pl.LightningModule):
    def setup(self, stage):
        self.encoder.eval()

    def on_fit_start(self):
        """Doc."""
        print("start")
        self.train()


class P(pl.LightningModule):
    def setup(self, stage):
        self.eval()

    # TODO(lightmigrate): LM308 Lightning 1.x put the whole model in train mode when `fit` started, undoing the `.eval()` of `setup`; 2.2+ keeps it: end this hook with `self.train()` on every path to keep 1.x training
    def on_fit_start(self):
        if self.x:
            return
''')
    assert [(f.line, f.kind) for f in findings] == [(9, Kind.FIXED), (19, Kind.FIXED), (34, Kind.MARKER)]


@pytest.mark.parametrize("source", [
    "import pytorch_lightning as pl\nclass M(pl.LightningModule):\n    def forward(self, x):\n        self.net.eval()\n",
    "import torch\nclass M(torch.nn.Module):\n    def __init__(self):\n        self.eval()\n",
    "import pytorch_lightning as pl\nclass M(pl.LightningModule):\n    def __init__(self):\n        self.net.train(True)\n",
    "import pytorch_lightning as pl\nclass M(pl.LightningModule):\n    def __init__(self):\n        self.net.eval()\n"
    "    def on_fit_start(self):\n        self.train()\n",
])
def test_find_nothing_where_fit_keeps_the_mode_anyway(source):
    assert sites(source) == []


def test_find_eval_in_init_of_a_subclass_of_a_module_in_another_file():
    base = "import pytorch_lightning as pl\nclass Base(pl.LightningModule):\n    pass\n"
    source = ("from base import Base\nclass M(Base):\n    def __init__(self):\n        self.net.eval()\n"
              "    def training_step(self, batch, batch_idx):\n        return self.net(batch).sum()\n")
    assert sites(source, {"base.py": base}) == [("train-add", "M", 2)]
    assert sites(source, {"base.py": "class Base:\n    pass\n"}) == []


def test_corpus_case_is_rewritten_and_a_second_run_changes_nothing():
    check_corpus_case_idempotent(RULE, "eval_mode_in_init")


# --- an instance obtained from a call that is not a class's ----------------------------------

ESTIMATOR = '''\
import pytorch_lightning as pl


class Estimator:
    def create_module(self) -> pl.LightningModule:
        raise NotImplementedError

    def train_model(self, loader, **trainer_kwargs):
        net = self.create_module()
        checkpoint = pl.callbacks.ModelCheckpoint(monitor="train_loss")
        trainer = pl.Trainer(callbacks=[checkpoint], **trainer_kwargs)
        trainer.fit(model=net, train_dataloaders=loader)
        best = net.load_from_checkpoint(checkpoint.best_model_path)
        return best
'''


def test_instance_from_a_method_call_is_called_through_its_type():
    # 1.9's classmethod ran on type(net); 2.1+ raises on an instance ("cannot be called on an
    # instance"): the module comes from a factory method, and is trained by the Trainer
    check_rewrite(RULE, ESTIMATOR, ESTIMATOR.replace("net.load_from_checkpoint", "type(net).load_from_checkpoint"))
    assert sites(ESTIMATOR) == [("type", "net", 13)]


@pytest.mark.parametrize("evidence", [
    # the factory is annotated to return a LightningModule class of the project
    ("def make() -> Net:\n    return Net()\n\n\ndef run(path):\n    net = make()\n", "net"),
    # a parameter annotated with one
    ("def run(net: pl.LightningModule, path):\n", "net"),
    # passed to a Trainer's run as the model
    ("def run(path):\n    net = build()\n    pl.Trainer().fit(net)\n", "net"),
    ("def run(trainer, path):\n    net = registry.get('x')()\n    trainer.validate(model=net)\n", "net"),
    # used as only an instance can be
    ("def run(path, weights):\n    net = build()\n    net.load_state_dict(weights)\n", "net"),
])
def test_find_an_instance_by_how_its_function_gets_and_uses_it(evidence):
    head, name = evidence
    source = ("import pytorch_lightning as pl\n\n\nclass Net(pl.LightningModule):\n    pass\n\n\n"
              + head + f"    return {name}.load_from_checkpoint(path)\n")
    line = source.count("\n")
    assert sites(source) == [("type", name, line)]
    out, _ = run_rule(RULE, source)
    assert f"return type({name}).load_from_checkpoint(path)" in out and run_rule(RULE, out)[0] == out


@pytest.mark.parametrize("head", [
    # a call may give a class: nothing says it is an instance
    "def run(path):\n    net = registry.get('x')\n",
    "def run(path):\n    net = get_model_class()\n",
    # an annotation that is a class's type, or a factory annotated so
    "def run(net: Type[pl.LightningModule], path):\n",
    "def make() -> Type[Net]:\n    return Net\n\n\ndef run(path):\n    net = make()\n",
    # bound otherwise too (by a value that is not a call, a loop, a tuple target)
    "def run(path, weights):\n    net = build()\n    net.load_state_dict(weights)\n    net = Net\n",
    "def run(path, classes):\n    for net in classes:\n        pass\n    build().state_dict()\n",
    "def run(path):\n    net, other = build()\n    pl.Trainer().fit(net)\n",
    # used as an instance in another function only
    "def other(net):\n    pl.Trainer().fit(net)\n\n\ndef run(path):\n    net = build()\n",
    # fit of something that is not a Trainer by its name
    "def run(path, data):\n    net = build()\n    search.fit(net, data)\n",
])
def test_find_nothing_where_the_name_may_hold_a_class(head):
    source = ("import pytorch_lightning as pl\nfrom typing import Type\n\n\nclass Net(pl.LightningModule):\n"
              "    pass\n\n\n" + head + "    return net.load_from_checkpoint(path)\n")
    assert sites(source) == []
    check_rewrite(RULE, source, None)
