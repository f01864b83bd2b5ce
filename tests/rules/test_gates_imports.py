"""The gates (``Rule.needed``) of the import rules' neighbours LM308 and LM307 (the import
rules LM201, LM202, LM090, LM210 and LM203 have no gate: their ``find`` tests are in their own
test files), and the gate helpers they use.

Each case states whether the gate must say "needed" and whether the rule's walk really changes
or reports something; a walk that does something behind a gate that says "not needed" would be
lost output, so every case also checks that invariant against the walk itself.
"""

from __future__ import annotations

import textwrap

import pytest
from gate_checks import gate_says, walk_acts

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules.base import RuleContext
from lightmigrate.rules.lm307_callback_api import CallbackApiRule
from lightmigrate.rules.shared.gates import DottedTable, RootedTable, import_path_words, marker_in_head
from lightmigrate.rules.lm308_module_api import ModuleApiRule
from lightmigrate.analysis.facts import file_facts

GROUP = [ModuleApiRule(), CallbackApiRule()]
BY_CODE = {r.code: r for r in GROUP}


LIGHTNING_BASE = "import pytorch_lightning as pl\n\n\nclass Base(pl.LightningModule):\n    pass\n"
CALLBACK_BASE = "from pytorch_lightning.callbacks import Callback\n\n\nclass BaseCallback(Callback):\n    pass\n"


def predict_end(params: str, base: str = "BaseCallback") -> str:
    """A file whose class, based on ``base`` (imported from base.py), defines
    ``on_predict_epoch_end(self, trainer, pl_module<params>)``."""
    return (f"import pytorch_lightning as pl\nfrom base import {base}\n\n\nclass C({base}):\n"
            f"    def on_predict_epoch_end(self, trainer, pl_module{params}):\n        pass\n")


DATAMODULE_BASE = "import lightning.pytorch as pl\n\n\nclass BaseDM(pl.LightningDataModule):\n    pass\n"

ITER_STEP = '''\
from base import Base


class Model(Base):
    def training_step(self, dataloader_iter, batch_idx):
        batch = next(dataloader_iter)
        return batch
'''

# (code, source, other project files, whether the file itself is indexed, gate must say needed,
#  the walk does something)
CASES = [
    # --- LM308 --------------------------------------------------------------------------------
    # a subclass of a LightningModule defined in another file
    ("LM308", ITER_STEP, {"base.py": LIGHTNING_BASE}, True, True, True),
    # a file the index has not seen: apply indexes it, so the gate cannot rule anything out
    ("LM308", ITER_STEP, {"base.py": LIGHTNING_BASE}, False, True, True),
    ("LM308", ITER_STEP, {"base.py": "class Base:\n    pass\n"}, True, False, False),
    ("LM308", "import pytorch_lightning as pl\nfrom model import Net\n\nnet = Net()\n"
              "best = net.load_from_checkpoint('x.ckpt')\n", {}, True, True, True),
    ("LM308", "from model import Net\n\nnet = Net()\nbest = net.load_from_checkpoint('x.ckpt')\n", {}, True, False, False),
    ("LM308", "import pytorch_lightning as pl\n\nm = pl.LightningModule.from_compiled(x)\n", {}, True, True, True),
    # on a class (imported or defined here) the call is right; on ``self`` of a LightningModule it is not
    ("LM308", "import pytorch_lightning as pl\nfrom model import Net as N\n\n\nclass Other:\n    pass\n\n\n"
              "best = N.load_from_checkpoint('x.ckpt')\nother = Other.load_from_checkpoint('y.ckpt')\n", {}, True, False, False),
    ("LM308", "import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def reload(me):\n"
              "        return me.load_from_checkpoint('x.ckpt')\n", {}, True, True, True),
    ("LM308", "import pytorch_lightning as pl\nfrom model import Net\n\nnet = Net()\nnet.load_from_checkpoint('x.ckpt')\n",
     {}, True, True, True),
    # the functions of 2.x's utilities.compile, called by their names, are left alone
    ("LM308", "import pytorch_lightning as pl\nfrom pytorch_lightning.utilities.compile import from_compiled\n\n"
              "m = from_compiled(torch.compile(net))\n", {}, True, False, False),
    ("LM308", "import pytorch_lightning as pl\n\nm = pl.LightningModule.from_compiled(torch.compile(net))\n",
     {}, True, True, True),
    # --- LM307 --------------------------------------------------------------------------------
    ("LM307", predict_end(", outputs"),
     {"base.py": CALLBACK_BASE}, True, True, True),
    ("LM307", predict_end(", outputs"),
     {"base.py": CALLBACK_BASE}, False, True, True),
    ("LM307", predict_end(", outputs", base="Base"),
     {"base.py": "class Base:\n    pass\n"}, True, False, False),
    # the 2.x signature (or an outputs parameter with a default) is left as it is
    ("LM307", predict_end(""),
     {"base.py": CALLBACK_BASE}, True, False, False),
    ("LM307", predict_end(", outputs=None"),
     {"base.py": CALLBACK_BASE}, True, False, False),
    ("LM307", predict_end(", /, outputs"),
     {"base.py": CALLBACK_BASE}, True, True, True),
    ("LM307", "from pytorch_lightning.callbacks import LearningRateFinder\n\nf = LearningRateFinder(min_lr=1e-5)\n",
     {}, True, True, True),
    ("LM307", "from pytorch_lightning.callbacks.progress.base import ProgressBarBase as PBB\n", {}, True, True, True),
    ("LM307", "from mylib import QuantizationAwareTraining\n\nq = QuantizationAwareTraining()\n", {}, True, True, True),
    ("LM307", "import pytorch_lightning as pl\n\n\nclass Bar:\n    def f(self):\n        return self.val_batch_idx\n",
     {}, True, False, False),
    ("LM307", "def step(batch, dataloader_idx, val_batch_idx):\n    return val_batch_idx\n", {}, True, False, False),
    # DataModule argparse methods: only on LightningDataModule or a project class that is one
    ("LM307", "from data import MyData\n\ndm = MyData.from_argparse_args(args)\n",
     {"data.py": DATAMODULE_BASE + "\n\nclass MyData(BaseDM):\n    pass\n"}, True, True, True),
    ("LM307", "from pytorch_lightning import LightningDataModule\n\n"
              "parser = LightningDataModule.add_argparse_args(parser)\n", {}, True, True, True),
    ("LM307", "import pytorch_lightning as pl\n\nparser = pl.LightningDataModule.add_argparse_args(parser)\n",
     {}, True, False, False),  # (LM090 marks this one)
    ("LM307", "import pytorch_lightning as pl\n\ntrainer = pl.Trainer.from_argparse_args(args)\n", {}, True, False, False),
    ("LM307", "from data import MyData\n\ndm = MyData.from_argparse_args(args)\n",
     {"data.py": "class MyData:\n    pass\n"}, True, False, False),
    # ... and only called on such a name: a DataModule named elsewhere in the file does not count
    ("LM307", "import pytorch_lightning as pl\nfrom data import MyData\n\ndm = MyData()\n"
              "trainer = pl.Trainer.from_argparse_args(args)\n",
     {"data.py": DATAMODULE_BASE + "\n\nclass MyData(BaseDM):\n    pass\n"}, True, False, False),
    ("LM307", "from data import MyData\n\ndm = (MyData  # the data\n      .\\\n      from_argparse_args(args))\n",
     {"data.py": DATAMODULE_BASE + "\n\nclass MyData(BaseDM):\n    pass\n"}, True, True, True),
]


@pytest.mark.parametrize("code,source,files,indexed,needed,effect", CASES)
def testgate_says(code, source, files, indexed, needed, effect):
    rule = BY_CODE[code]
    source = textwrap.dedent(source)
    all_files = dict(files)
    if indexed:
        all_files["model.py"] = source
    assert walk_acts(rule, source, "model.py", all_files) == effect
    assert gate_says(rule, source, "model.py", all_files) == needed
    assert needed or not effect, "a gate that skips a walk that does something loses output"


@pytest.mark.parametrize("rule", GROUP, ids=lambda r: r.code)
def test_gate_says_needed_for_every_changing_example(rule):
    changing = [ex for ex in rule.examples if ex.after is not None and ex.after != ex.before]
    assert changing, f"{rule.code} has no changing example"
    for ex in changing:
        assert gate_says(rule, ex.before, "model.py", {"model.py": ex.before}), ex.title
        assert gate_says(rule, ex.before, "model.py", {}), ex.title  # not indexed


@pytest.mark.parametrize("rule", GROUP, ids=lambda r: r.code)
def test_gate_is_open_when_the_text_does_not_parse(rule):
    broken = "import pytorch_lightning as pl\ndef (:\n"
    assert rule.needed(broken, RuleContext("model.py", ProjectIndex()))


def test_dotted_table_needs_every_component():
    table = DottedTable(["pl.utilities.seed.seed_everything", "pl.profiler"], drop_roots=("pl",))
    assert table.may_reach(frozenset({"utilities", "seed", "seed_everything"}))
    assert not table.may_reach(frozenset({"seed", "seed_everything"}))  # no "utilities"
    assert table.may_reach(frozenset({"profiler"}))
    assert not table.may_reach(frozenset({"profilers"}))


@pytest.mark.parametrize("source,reached", [
    ("from pytorch_lightning.core.lightning import LightningModule\n", True),
    ("import pytorch_lightning.core.lightning as m\n", True),
    ("from pytorch_lightning.core import lightning\n", True),
    ("import pytorch_lightning as pl\nx = pl.core.lightning.LightningModule\n", True),
    ("import lightning as L\nx = L.pytorch.core.lightning\n", True),
    ("from lightning import pytorch as pl\nx = pl.core.lightning\n", True),
    # 2.x code: "lightning" is the root here, not the removed module
    ("from lightning.pytorch.core.module import LightningModule\n", False),
    ("import lightning.pytorch as pl\nx = pl.core.module\n", False),
    ("from pytorch_lightning import core\nx = core.module\n", False),
])
def test_rooted_table_follows_imports_then_attributes(source, reached):
    table = RootedTable(["core.lightning"])
    assert table.may_reach(file_facts(source)) == reached


def test_import_path_words_are_imports_and_attributes_only():
    facts = file_facts("import a.b as c\nfrom d.e import f\nx = c.g.h  # comment_word\ny = 'string_word'\nz = local\n")
    words = import_path_words(facts)
    assert {"a", "b", "c", "d", "e", "f", "g", "h"} <= words
    assert not {"comment_word", "string_word", "local", "x"} & words


def test_marker_in_head_only_above_the_first_statement():
    assert marker_in_head("#!/usr/bin/env python\n\n# TODO(lightmigrate): LM201 x\nimport os\n")
    assert not marker_in_head("import os\n# TODO(lightmigrate): LM201 x\nimport sys\n")
    assert not marker_in_head('"""doc"""\n# TODO(lightmigrate): LM201 x\nimport sys\n')
