"""The gates (``Rule.needed``) of the import rules and their neighbours: LM201, LM202, LM090,
LM210, LM203.

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
from lightmigrate.rules.shared.gates import DottedTable, RootedTable, import_path_words, marker_in_head
from lightmigrate.rules.lm203_loggers_cli import LoggersCliRule
from lightmigrate.rules.lm201_moved_imports import MovedImportsRule
from lightmigrate.rules.lm090_removed_api import RemovedApiRule
from lightmigrate.rules.lm202_removed_imports import RemovedApisRule
from lightmigrate.rules.lm210_unified_imports import UnifiedImportsRule
from lightmigrate.analysis.facts import file_facts

GROUP = [MovedImportsRule(), RemovedApisRule(), RemovedApiRule(), UnifiedImportsRule(), LoggersCliRule()]
BY_CODE = {r.code: r for r in GROUP}


DATAMODULE_BASE = "import lightning.pytorch as pl\n\n\nclass BaseDM(pl.LightningDataModule):\n    pass\n"

# (code, source, other project files, whether the file itself is indexed, gate must say needed,
#  the walk does something)
CASES = [
    # --- LM201 --------------------------------------------------------------------------------
    ("LM201", "from pytorch_lightning.profiler import SimpleProfiler\n", {}, True, True, True),
    ("LM201", "import lightning.pytorch as L\n\nprof = L.profiler.SimpleProfiler()\n", {}, True, True, True),
    ("LM201", "from lightning import pytorch as PL\n\n\nclass Log(PL.loggers.base.LightningLoggerBase):\n    pass\n",
     {}, True, True, True),
    ("LM201", "from pytorch_lightning.strategies import DDPSpawnStrategy as Spawn\n\ns = Spawn()\n", {}, True, True, True),
    # the argument fixes follow any import of the callee's name, Lightning or not
    ("LM201", "from mylib import DDPSpawnStrategy\n\ns = DDPSpawnStrategy()\n", {}, True, True, True),
    ("LM201", "from mylib import CombinedLoader\n\nc = CombinedLoader(loaders=[1])\n", {}, True, True, True),
    ("LM201", "from pytorch_lightning.utilities.combined_loader import CombinedLoader\n\n"
              "c = CombinedLoader(iterables=[1])\n", {}, True, False, False),
    ("LM201", "from pytorch_lightning.profilers import SimpleProfiler\nfrom pytorch_lightning import Trainer\n",
     {}, True, False, False),
    ("LM201", "import pytorch_lightning as pl\n\n# pl.profiler and pl.core.lightning were renamed\n"
              "NAME = 'pytorch_lightning.profiler.SimpleProfiler'\n", {}, True, False, False),
    ("LM201", "from mylib.profiler import SimpleProfiler\n\nprofiler = SimpleProfiler()\n", {}, True, False, False),
    ("LM201", "from lightning.pytorch.core.module import LightningModule\nimport lightning.pytorch as pl\n\n"
              "def f(model):\n    return model.layer, pl.core\n", {}, True, False, False),
    # the table's words are all there, but no name the file reaches starts with a moved one
    ("LM201", "import lightning.pytorch as pl\n\n\ndef f(model):\n    return model.profiler, pl.Trainer\n",
     {}, True, False, False),
    ("LM201", "import pytorch_lightning.utilities.apply_func as af\n\nx = af.move_data_to_device\n",
     {}, True, True, True),
    ("LM201", "import pytorch_lightning as pl\n\n\ndef f():\n    import mylib as pl\n    return pl.profiler.X\n",
     {}, True, True, True),
    # --- LM202 --------------------------------------------------------------------------------
    ("LM202", "from pytorch_lightning.lite import LightningLite\n", {}, True, True, True),
    # names 2.x kept under the loop modules: the words match, the names do not
    ("LM202", "from lightning.pytorch.loops.utilities import _parse_loop_limits\n", {}, True, False, False),
    ("LM202", "import pytorch_lightning.loops.utilities as lu\n\nx = lu._get_active_optimizers\n",
     {}, True, True, True),
    # the accelerators package is imported, but the class with setup_environment is a strategy
    ("LM202", "from lightning.fabric.accelerators import Accelerator\nfrom lightning.fabric.strategies import "
              "DDPStrategy\n\n\nclass S(DDPStrategy):\n    def setup_environment(self):\n        pass\n\n"
              "    def device(self, a: Accelerator):\n        pass\n", {}, True, False, False),
    ("LM202", "import lightning.pytorch as pl\n\n\nclass A(pl.accelerators.Accelerator):\n"
              "    def setup_environment(self, root_device):\n        pass\n", {}, True, True, True),
    ("LM202", "from lightning.fabric.accelerators import Accelerator as Acc\n\n\nclass A(Acc):\n"
              "    def setup_environment(self, root_device):\n        pass\n", {}, True, True, True),
    ("LM202", "import pytorch_lightning as pl\n\nx = pl.utilities.distributed.sync_ddp(1)\n", {}, True, True, True),
    ("LM202", "from pytorch_lightning.accelerators import Accelerator\n\n\nclass A(Accelerator):\n"
              "    def setup_environment(self, root_device):\n        pass\n", {}, True, True, True),
    # a strategy's setup_environment(self) is another method, which 2.x still calls
    ("LM202", "from pytorch_lightning.strategies import DDPStrategy\n\n\nclass S(DDPStrategy):\n"
              "    def setup_environment(self):\n        pass\n", {}, True, False, False),
    ("LM202", "from pytorch_lightning.accelerators import Accelerator\n\n\nclass A(Accelerator):\n"
              "    def dispatch(self, trainer):\n        pass\n", {}, True, False, False),
    ("LM202", "from lightning_fabric.plugins import Precision as P\n\n\nclass MyPrecision(P):\n"
              "    def backward(self, tensor, model, optimizer_idx):\n        pass\n", {}, True, True, True),
    ("LM202", "from pytorch_lightning.utilities.seed import isolate_rng\n", {}, True, False, False),
    ("LM202", "import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def dispatch(self):\n"
              "        pass\n", {}, True, False, False),
    ("LM202", "from mylib.utilities.distributed import sync_ddp\n", {}, True, False, False),
    # --- LM090 --------------------------------------------------------------------------------
    ("LM090", "def f(trainer):\n    return trainer.root_gpu\n", {}, True, True, True),
    ("LM090", "class C:\n    def f(self):\n        return self.trainer.use_amp\n", {}, True, True, True),
    ("LM090", "from pytorch_lightning import Trainer as T\n\nt = T(gpus=1)\n", {}, True, True, True),
    ("LM090", "import pytorch_lightning as pl\n\n\ndef f(parser):\n    return pl.Trainer.add_argparse_args(parser)\n",
     {}, True, True, True),
    ("LM090", "from pytorch_lightning.metrics import Accuracy\n", {}, True, True, True),
    ("LM090", "# TODO(lightmigrate): LM201 something\nimport os\n", {}, True, True, False),
    ("LM090", "import lightning.pytorch as pl\n\ntrainer = pl.Trainer(accelerator='gpu', devices=2)\n"
              "print(trainer.num_devices)\n", {}, True, False, False),
    ("LM090", "import pytorch_lightning as pl\n\n\ndef f(model):\n    return model.root_gpu\n", {}, True, False, False),
    ("LM090", "import pytorch_lightning as pl\n\n\nclass Foo:\n    pass\n\n\nx = Foo(gpus=1)\n", {}, True, False, False),
    ("LM090", "from mylib import Trainer\n\nt = Trainer(gpus=1)\n", {}, True, False, False),
    ("LM090", "import pytorch_lightning as pl\n\nt = (pl.Trainer  # one\n     )(gpus=1)\n", {}, True, True, True),
    # a Trainer argument's name passed to something else, in a file that imports Lightning
    ("LM090", "def f(self, trainer):\n    set_threads(num_processes=self.n)\n"
              "    return self.model.root_gpu, trainer\n", {}, True, False, False),
    # statements another rule marked already are left alone
    ("LM090", "import pytorch_lightning as pl\n\n\ndef f(parser):\n    # TODO(lightmigrate): LM101 gone\n"
              "    return pl.Trainer.add_argparse_args(parser)\n", {}, True, False, False),
    ("LM090", "import pytorch_lightning as pl\n\n\ndef f(parser, trainer):\n    # TODO(lightmigrate): LM101 gone\n"
              "    parser = pl.Trainer.add_argparse_args(parser)\n    return trainer.root_gpu\n", {}, True, True, True),
    ("LM090", "import pytorch_lightning as pl\n\n# TODO(lightmigrate): LM101 gone\n@pl.Trainer.add_argparse_args\n"
              "def f(parser):\n    pass\n", {}, True, False, False),
    # (only a marker right above a statement that begins its line is trusted)
    ("LM090", "def f(trainer, x):\n    # TODO(lightmigrate): LM101 gone\n    if x: return trainer.root_gpu\n",
     {}, True, True, False),
    # (libcst counts a marker at another indentation too; the gate does not trust it)
    ("LM090", "def f(trainer):\n# TODO(lightmigrate): LM101 gone\n    return trainer.root_gpu\n", {}, True, True, False),
    ("LM090", "def f(trainer):\n    x = '''\n    # TODO(lightmigrate): LM101 gone'''\n    return trainer.root_gpu\n",
     {}, True, True, True),
    # the words are there, but not as ``trainer.<removed attribute>``
    ("LM090", "class M:\n    def f(self):\n        self.trainer.fit_loop.run()\n        return self.tune()\n",
     {}, True, False, False),
    # an ``except*`` clause belongs to its ``try`` statement (libcst), whatever is above ``except*``
    ("LM090", "def f(trainer):\n    try:\n        pass\n    # TODO(lightmigrate): LM101 x\n"
              "    except* trainer.root_gpu:\n        pass\n", {}, True, True, True),
    ("LM090", "def f(trainer):\n    try:\n        pass\n    # TODO(lightmigrate): LM101 x\n"
              "    except trainer.root_gpu:\n        pass\n", {}, True, False, False),
    # imports from Lightning whose names the catalogue does not list (though each of their
    # components is in some entry): nothing to mark
    ("LM090", "from lightning.pytorch.utilities.rank_zero import rank_zero_warn\nimport lightning.pytorch as pl\n\n"
              "m = pl.utilities.memory.garbage_collection_cuda\n", {}, True, False, False),
    # a removed name reached through an alias of an import, a module alias, or a from-import
    ("LM090", "import pytorch_lightning.callbacks as cb\n\nx = cb.GPUStatsMonitor()\n", {}, True, True, True),
    ("LM090", "from pytorch_lightning import core as C\n\nx = C.memory\n", {}, True, True, True),
    ("LM090", "from pytorch_lightning.loggers import LoggerCollection\n", {}, True, True, True),
    ("LM090", "import lightning.pytorch as pl\n\nx = pl.Trainer.add_argparse_args\n", {}, True, True, True),
    # --- LM210 --------------------------------------------------------------------------------
    ("LM210", "import pytorch_lightning as pl\n", {}, True, True, True),
    ("LM210", "from lightning_fabric import Fabric\n", {}, True, True, True),
    ("LM210", "import lightning.pytorch as pl\n\n# pytorch_lightning was the old name\n", {}, True, False, False),
    # --- LM203 --------------------------------------------------------------------------------
    ("LM203", "from pytorch_lightning.loggers import CometLogger as Comet\n\nlog = Comet(project_name='p')\n",
     {}, True, True, True),
    ("LM203", "import pytorch_lightning as pl\n\ncli = pl.cli.LightningCLI(M, save_config_overwrite=True)\n",
     {}, True, True, True),
    ("LM203", "from pytorch_lightning.callbacks import ProgressBar\n\nbar = ProgressBar()\n", {}, True, True, True),
    ("LM203", "def f(monitor):\n    return monitor.lr_sch_names\n", {}, True, True, True),
    # (the index only parses files that look like Lightning code: the comment says "lightning")
    ("LM203", "# a lightning datamodule\nfrom dm import BaseDM\n\n\nclass DM(BaseDM):\n    def __init__(self):\n"
              "        super().__init__(dims=(1, 2))\n", {"dm.py": DATAMODULE_BASE}, True, True, True),
    ("LM203", "from pytorch_lightning.cli import LightningCLI\n\ncli = LightningCLI(M, save_config_kwargs={'overwrite': True})\n",
     {}, True, False, False),
    ("LM203", "from mylib import CometLogger\n\nlogger = CometLogger(save_dir='x', offline=True)\n", {}, True, False, False),
    ("LM203", "# a lightning datamodule\nfrom dm import BaseDM\n\n\nclass DM(BaseDM):\n    def __init__(self):\n"
              "        super().__init__(dims=(1, 2))\n", {"dm.py": "class BaseDM:\n    pass\n"}, True, False, False),
    ("LM203", "class Data:\n    def shape(self):\n        return self.size()\n", {}, True, False, False),
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


def test_lm090_looks_closer_only_where_an_import_may_reach_the_catalogue():
    # ``_may_offend`` decides whether the gate reads the file's statements one by one
    # (``all_offences_marked``): only when some module or dotted use through an import is in
    # the catalogue (each component of an entry being somewhere in the file is not enough)
    from lightmigrate.analysis.facts import file_facts
    from lightmigrate.rules.lm090_removed_api import RemovedApiRule

    unrelated = ("from lightning.pytorch.utilities.rank_zero import rank_zero_warn\nimport lightning.pytorch as pl\n\n"
                 "from lightning.pytorch.core.module import LightningModule\nm = pl.utilities.memory.garbage_collection_cuda\n")
    assert not RemovedApiRule._may_offend(file_facts(unrelated), unrelated)
    for text in ("from pytorch_lightning import core as C\nx = C.memory\n",
                 "import pytorch_lightning.callbacks as cb\nx = cb.GPUStatsMonitor()\n",
                 "from pytorch_lightning.core.lightning import LightningModule\n"):
        assert RemovedApiRule._may_offend(file_facts(text), text), text
