"""The gates (``Rule.needed``) of the Trainer group: LM101, LM102
(LM005, LM006, LM302, LM304 and LM309 find their sites themselves: see their own tests). A gate may say "needed" for nothing,
but must never say "not needed" where the rule's walk changes or reports something."""

from __future__ import annotations

import pytest
from gate_checks import check, needed as _needed

from lightmigrate.engine.transform import transform_text
from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.base import RuleContext
from lightmigrate.rules.shared.gates import (
    attribute_assigned,
    attribute_compared,
    string_key,
    trainer_call_names,
)
from lightmigrate.rules.lm102_trainer_api import TrainerApiRule
from lightmigrate.rules.lm101_trainer_constructor import TrainerConstructorRule

GROUP = [TrainerConstructorRule(), TrainerApiRule()]


# --- every example that changes code passes its rule's gate --------------------------------

EXAMPLES = [(rule, ex) for rule in GROUP for ex in rule.examples if ex.after is not None and ex.after != ex.before]


@pytest.mark.parametrize("rule,example", EXAMPLES, ids=[f"{r.code}-{e.title or i}" for i, (r, e) in enumerate(EXAMPLES)])
def test_every_changing_example_passes_the_gate(rule, example):
    assert _needed(rule, example.before)  # indexed, as in a real run
    assert rule.needed(example.before, RuleContext("new.py", ProjectIndex()))  # never indexed
    assert transform_text(example.before, [rule]).text == example.after


def test_examples_cover_each_rule_of_the_group():
    assert {r.code for r, _ in EXAMPLES} == {"LM101", "LM102"}


@pytest.mark.parametrize("rule", GROUP, ids=[r.code for r in GROUP])
def test_unparsable_text_is_always_needed(rule):
    assert rule.needed("def broken(:\n    Trainer(\n", RuleContext("x.py", ProjectIndex()))


# --- helpers ----------------------------------------------------------------------------------

def test_trainer_aliases_are_found_across_lines_and_comments():
    text = "from lightning.pytorch import (\n    Trainer  # the loop\n    as PLTrainer,\n)\n"
    assert trainer_call_names(text) == {"Trainer", "PLTrainer"}
    assert trainer_call_names("from pytorch_lightning import Trainer\n") == {"Trainer"}


def test_text_helpers():
    assert attribute_compared("if (trainer.precision) != '16':", "precision")
    assert attribute_compared("x = trainer.precision in (16, 32)", "precision")
    assert not attribute_compared("print(trainer.precision)", "precision")
    assert not attribute_compared("trainer.precision_plugin == p", "precision")
    # a name or dotted name alone as the comparator: the rule leaves the comparison as it is
    assert not attribute_compared("if self.trainer.precision not in table:\n", "precision")
    assert not attribute_compared("ok = (trainer.precision == self.p and x)", "precision")
    assert not attribute_compared("f(trainer.precision != p, y)", "precision")
    # ... unless the chain goes on, or the name only starts a longer expression
    assert attribute_compared("if trainer.precision == x == 16:\n", "precision")
    assert attribute_compared("if trainer.precision == xor == 16:\n", "precision")
    assert attribute_compared("if trainer.precision < 3 == 16:\n", "precision")
    assert attribute_compared("x = (trainer.precision == p\n     == '16')\n", "precision")
    assert attribute_compared("if trainer.precision == p.get(16):\n", "precision")
    assert attribute_compared("if trainer.precision is not x:\n", "precision")
    assert attribute_assigned("trainer.model = net", frozenset({"model"}))
    assert attribute_assigned("(trainer.model  # the net\n ) = net", frozenset({"model"}))
    assert not attribute_assigned("if trainer.model == net: pass", frozenset({"model"}))
    assert not attribute_assigned("f(model=net)", frozenset({"model"}))
    assert string_key("d = {'gpus' : 2}", frozenset({"gpus"}))
    assert string_key('d = {"""gpus""": 2}', frozenset({"gpus"}))
    assert not string_key("d = dict(gpus=2)", frozenset({"gpus"}))
    assert not string_key("x = 'gpus'", frozenset({"gpus"}))


def test_classes_in_follows_additions_and_merges():
    index = ProjectIndex([ClassInfo("A", "a.py", ("pl.LightningModule",), frozenset())])
    assert [c.name for c in index.classes_in("a.py")] == ["A"]
    index.add(ClassInfo("B", "a.py", ("A",), frozenset()))
    other = ProjectIndex([ClassInfo("C", "c.py", ("A",), frozenset())])
    index.merge(other)
    assert [c.name for c in index.classes_in("a.py")] == ["A", "B"]
    assert [c.name for c in index.classes_in("c.py")] == ["C"]
    assert index.classes_in("none.py") == []


# --- LM101 ------------------------------------------------------------------------------------

LM101 = TrainerConstructorRule()


@pytest.mark.parametrize("text", [
    "import pytorch_lightning as pl\ntrainer = pl.Trainer(max_epochs=1)\n",
    "from lightning.pytorch import Trainer as PLTrainer\nt = PLTrainer(max_epochs=1)\n",
    "from lightning.pytorch import trainer as tr\nt = tr.Trainer(max_epochs=1)\n",
    "import pytorch_lightning as pl\nconfig = {'gpus': 2, 'max_epochs': 3}\n",
    "import pytorch_lightning as pl\nparams = {'trainer': {'precision': 16}}\n",
    "import pytorch_lightning as pl\nparser = pl.Trainer.add_argparse_args(parser)\n",
    "import pytorch_lightning as pl\nfrom pytorch_lightning.strategies import DDPStrategy\ns = DDPStrategy()\n",
    "import pytorch_lightning as pl\nimport os\nos.environ['PL_RECONCILE_PROCESS'] = '1'\n",
])
def test_lm101_needed(text):
    check(LM101, text, True)


@pytest.mark.parametrize("text", [
    "from transformers import Trainer\ntrainer = Trainer(model=model, gpus=2)\n",  # no Lightning import
    "import pytorch_lightning as pl\ntrainer.fit(model)\n",  # a trainer made elsewhere
    "import pytorch_lightning as pl\nconfig = {'max_epochs': 3, 'logger': False}\n",  # nothing to map
    "import pytorch_lightning as pl\n# pl.Trainer(gpus=2) is how 1.x did it\n",
    "import pytorch_lightning as pl\nimport lightning_fabric\nDDPStrategy()\n",  # fabric's strategy
])
def test_lm101_not_needed(text):
    check(LM101, text, False)


# --- LM102 ------------------------------------------------------------------------------------

LM102 = TrainerApiRule()
LOADERS_GUARDED = '''\
import pytorch_lightning as pl


class M(pl.LightningModule):
    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.outputs = [[] for _ in (loaders if isinstance(loaders, (list, tuple)) else [loaders])]

    def on_test_epoch_start(self):
        n = len((self.trainer.test_dataloaders if isinstance(self.trainer.test_dataloaders, (list, tuple)) else [self.trainer.test_dataloaders]))
'''


@pytest.mark.parametrize("text", [
    "import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def f(self):\n"
    "        return self.trainer.root_gpu\n",
    "import pytorch_lightning as pl\nif trainer.precision == 16:\n    pass\n",
    "import pytorch_lightning as pl\ntrainer.model = net\n",
    "import pytorch_lightning as pl\ntrainer.fit(model, train_dataloader=dl)\n",
    "import pytorch_lightning as pl\ntrainer.test(model, ckpt_path='best')\n",
    "from pytorch_lightning import Trainer as T\nt = T(auto_lr_find=True)\nt.tune(model)\n",
    "import pytorch_lightning as pl\nn = len(trainer.val_dataloaders)\n",
    "import pytorch_lightning as pl\nloop.fit_loop.max_steps = 3\n",
    "import pytorch_lightning as pl\nloop.fit_loop.max_steps = (  # set once\n    3)\nprint(loop.fit_loop.min_steps)\n",
    "import pytorch_lightning as pl\nx = self.trainer.fit_loop.epoch_loop.batch_loop\n",
    "import pytorch_lightning as pl\n(loop.fit_loop  # the loop\n ).max_steps = 3\n",
    "from pytorch_lightning import Trainer\nt = Trainer()\nn = t.num_gpus\n",  # a name bound to a Trainer
    "from pytorch_lightning import Trainer\nt = Trainer()\nt.model = net\n",
    "import pytorch_lightning as pl\nself.tr = pl.Trainer()\nif self.tr.precision == '16':\n    pass\n",
    "import pytorch_lightning as pl\nfor dl in trainer.val_dataloaders:\n    pass\n",
    "import pytorch_lightning as pl\nn = (self.trainer  # the loop\n     ).test_dataloaders[0]\n",
    "import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def on_validation_epoch_start(self):\n"
    "        loaders = self.trainer.val_dataloaders\n\n    def check(self, loaders):\n"
    "        return isinstance(loaders, (list, tuple))\n",  # the check is in another function
])
def test_lm102_needed(text):
    check(LM102, text, True)


@pytest.mark.parametrize("text", [
    "import pytorch_lightning as pl\nif trainer.precision < 3 == 16:\n    pass\n",  # a chain: marked
    "import pytorch_lightning as pl\nok = trainer.precision == p == '16'\n",
    "import pytorch_lightning as pl\nd = trainer.val_dataloaders  # all of them\n",
    "import pytorch_lightning as pl\nd = trainer.val_dataloaders\\\n    [0]\n",
    "import pytorch_lightning as pl\nfor i, d in enumerate(trainer.test_dataloaders ):\n    pass\n",
    "import pytorch_lightning as pl\nn = len(trainer.val_dataloaders)",  # at the end of the text
])
def test_lm102_needed_reads_and_comparisons(text):
    check(LM102, text, True)


@pytest.mark.parametrize("text", [
    "trainer.fit(model, train_dataloader=dl)\nx = trainer.root_gpu\n",  # no Lightning import
    "import pytorch_lightning as pl\ntrainer.fit(model, train_dataloaders=dl)\n",
    "import pytorch_lightning as pl\nprint(trainer.precision)\nm = trainer.model\n",
    "import pytorch_lightning as pl\nrunner.fit(model, train_dataloader=dl)\nx = runner.root_gpu\n",  # no trainer
    "import pytorch_lightning as pl\nx = args.gpus\nself.model = net\nprint(trainer.max_epochs)\n",
    "import pytorch_lightning as pl\nif args.precision == 16:\n    print(trainer.precision)\n",
    LOADERS_GUARDED,  # what LM003 and LM102 write: left alone
    # a Trainer bound to `t`: `args.gpus` and `self.model = ...` are not on a Trainer
    "from pytorch_lightning import Trainer\nt = Trainer(gpus=args.gpus)\nself.model = net\nt.fit(self.model)\n",
    # fit_loop.max_steps read (2.x still has it), or changed by augmented assignment (not marked)
    "import pytorch_lightning as pl\nif self.trainer.fit_loop.max_steps == -1:\n    steps = 0\n",
    "import pytorch_lightning as pl\nloop.fit_loop.min_steps += 1\n",
    # the lists compared or tested, not indexed, measured, iterated or stored: left alone
    "import pytorch_lightning as pl\nif trainer.val_dataloaders is None:\n    pass\n",
    "import pytorch_lightning as pl\nok = bool(trainer.test_dataloaders or [])\n",
    # precision compared with a name: left alone
    "import pytorch_lightning as pl\nif self.trainer.precision not in precision_to_bits:\n    pass\n",
    "import pytorch_lightning as pl\nsame = trainer.precision == other.precision\n",
    # min_steps/max_steps set on something else, while fit_loop's are only read
    "import pytorch_lightning as pl\nself.max_steps = 3\nprint(self.trainer.fit_loop.min_steps)\n",
])
def test_lm102_not_needed(text):
    check(LM102, text, False)
