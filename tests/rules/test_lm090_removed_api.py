"""LM090: the last-resort marker for removed 1.x APIs; never marks valid 2.x code."""

import importlib
import inspect
import json
import subprocess
from pathlib import Path

import pytest

from lightmigrate.engine import transform_text
from lightmigrate.output.findings import Kind
from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.catalog.removed import NAMES, TRAINER_ATTRS, TRAINER_KWARGS
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.lm090_removed_api import RemovedApiRule, lookup_name
from lightmigrate.catalog.spec import rows_by_id

from .conftest import check_rewrite, run_rule

RULE = RemovedApiRule()
ROOT = Path(__file__).resolve().parents[2]


def markers(out):
    return [line.strip() for line in out.splitlines() if "TODO(lightmigrate): LM090" in line]


def test_runs_last():
    assert ALL_RULES[-1].code == "LM090"


def test_removed_imports_are_marked_once_per_statement_and_idempotent():
    src = '''\
import os
import pytorch_lightning.metrics
from pytorch_lightning.utilities.distributed import rank_zero_only, sync_ddp_if_available
from pytorch_lightning.profiler import SimpleProfiler
from pytorch_lightning.loggers import LightningLoggerBase, TensorBoardLogger
'''
    out, findings = run_rule(RULE, src)
    found = markers(out)
    assert len(found) == 4
    assert "`pl.metrics` -> `torchmetrics` [A8-imports]" in found[0]
    assert "`pl.utilities.distributed.rank_zero_only` -> `pl.utilities.rank_zero.rank_zero_only` [R13]" in found[1]
    assert "`pl.utilities.distributed.sync_ddp_if_available`" in found[1]
    assert "[R1]" in found[2] and "[L3]" in found[3]
    assert [f.line for f in findings if f.kind is Kind.MARKER] == [2, 4, 6, 8]
    again, _ = run_rule(RULE, out)
    assert again == out


def test_marker_on_the_first_line_of_a_file_is_idempotent():
    src = "from pytorch_lightning.core.lightning import LightningModule\n\nx = 1\n"
    out, _ = run_rule(RULE, src)
    assert out.startswith("# TODO(lightmigrate): LM090 ")
    assert out.endswith(src)
    again, _ = run_rule(RULE, out)
    assert again == out
    licensed = "# Copyright\n# License\nimport pytorch_lightning.lite as lite\n"
    out, _ = run_rule(RULE, licensed)
    assert out.startswith("# Copyright\n# License\n# TODO(lightmigrate): LM090 ")
    assert run_rule(RULE, out)[0] == out


def test_dotted_references_through_aliases():
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl
from pytorch_lightning import Trainer


def build(parser):
    parser = pl.Trainer.add_argparse_args(parser)
    metric = pl.metrics.Accuracy()
    return Trainer.from_argparse_args(parser.parse_args())
''')
    found = markers(out)
    assert len(found) == 3
    assert "`pl.Trainer.add_argparse_args`" in found[0] and "`pl.metrics`" in found[1] and "from_argparse_args" in found[2]


def test_trainer_keywords_and_attributes():
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl


class Cb(pl.Callback):
    def on_fit_start(self, trainer, pl_module):
        if trainer.root_gpu is not None and pl_module.trainer.use_amp:
            print(trainer.num_devices)


trainer = pl.Trainer(
    max_epochs=2,
    gpus=2,
    resume_from_checkpoint="last.ckpt",
)
''')
    found = markers(out)
    assert len(found) == 2
    assert "`trainer.root_gpu`" in found[0] and "`trainer.use_amp`" in found[0]
    assert "`Trainer(gpus=)`" in found[1] and "[T1]" in found[1] and "[T6]" in found[1]
    lines = out.splitlines()
    assert lines[lines.index("trainer = pl.Trainer(") - 1].startswith("# TODO(lightmigrate): LM090")


def test_a_statement_another_rule_marked_is_left_alone():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl

# TODO(lightmigrate): LM101 something else decides about this Trainer
trainer = pl.Trainer(gpus=2)
''', None)


def test_names_that_are_not_lightning_are_left_alone():
    check_rewrite(RULE, '''\
import metrics
from mylib import Trainer
from transformers import Trainer as HFTrainer

trainer = Trainer(gpus=2)
other = HFTrainer(gpus=1)
metrics.Accuracy()
''', None)


def test_valid_2x_code_is_left_alone():
    check_rewrite(RULE, '''\
import lightning.pytorch as L
import pytorch_lightning as pl
from lightning.pytorch.callbacks import ProgressBar, TQDMProgressBar
from pytorch_lightning.callbacks.progress import ProgressBar as PB
from pytorch_lightning.loggers.logger import DummyLogger, Logger
from pytorch_lightning.profilers import SimpleProfiler
from pytorch_lightning.utilities import rank_zero_only
from pytorch_lightning.utilities.combined_loader import CombinedLoader
from pytorch_lightning.utilities.rank_zero import rank_zero_warn
from pytorch_lightning.utilities.seed import isolate_rng


class Model(pl.LightningModule):
    def on_train_epoch_end(self):
        self.log("n", float(self.trainer.num_devices))
        print(self.trainer.strategy, self.trainer.lr_scheduler_configs, self.trainer.ckpt_path)


trainer = L.Trainer(accelerator="gpu", devices=2, precision="16-mixed", use_distributed_sampler=False)
trainer.fit(Model(), ckpt_path="last.ckpt")
print(trainer.device_ids, trainer.callback_metrics, pl.utilities.rank_zero.rank_zero_only)
''', None)


def test_lookup_covers_submodules_and_class_scopes():
    assert lookup_name("pytorch_lightning.metrics.functional.accuracy")[0] == "metrics"
    assert lookup_name("lightning.pytorch.trainer.trainer.Trainer.add_argparse_args")[0] == "Trainer.add_argparse_args"
    assert lookup_name("pytorch_lightning.Trainer") is None
    assert lookup_name("torchmetrics.Accuracy") is None


def test_catalogue_rows_are_spec_rows():
    rows = rows_by_id()
    for table in (NAMES, TRAINER_KWARGS, TRAINER_ATTRS):
        for key, (row, _) in table.items():
            assert row in rows, f"{key}: unknown spec row {row}"
    assert set(RULE.coverage) <= set(rows)


@pytest.mark.parametrize("root", ["pytorch_lightning", "lightning.pytorch"])
def test_catalogue_entries_do_not_exist_in_lightning_2(root):
    """The static table is checked against the real installed 2.x: nothing it lists exists there,
    so valid 2.x code can never be marked."""
    pl = importlib.import_module(root)

    def resolves(dotted):
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ModuleNotFoundError:
                continue
            for name in parts[i:]:
                if not hasattr(obj, name):
                    return False
                obj = getattr(obj, name)
            return True
        return False

    assert [n for n in NAMES if resolves(f"{root}.{n}")] == []
    params = set(inspect.signature(pl.Trainer.__init__).parameters)
    assert sorted(set(TRAINER_KWARGS) & params) == []
    trainer = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False,
                         enable_checkpointing=False, enable_model_summary=False)
    assert [a for a in TRAINER_ATTRS if hasattr(trainer, a)] == []


def test_catalogue_kwargs_and_attributes_existed_in_1x():
    """The Trainer keywords/attributes of the 1.9-era catalogue were real 1.9.5 API (legacy rows of
    A.8 that 1.9.5 itself had already removed are allowed to be absent)."""
    python = ROOT / ".venv-pl19" / "bin" / "python"
    if not python.exists():
        pytest.skip("pytorch-lightning 1.9.5 interpreter not available")
    code = ("import inspect, json, pytorch_lightning as pl; t = pl.Trainer(logger=False);"
            "print(json.dumps([sorted(inspect.signature(pl.Trainer.__init__).parameters), dir(t)]))")
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    params, attrs = json.loads(proc.stdout.strip().splitlines()[-1])
    for kw, (row, _) in TRAINER_KWARGS.items():
        assert kw in params or row.startswith("A8") or row == "M16", kw
    for attr, (row, _) in TRAINER_ATTRS.items():
        assert attr in attrs or row.startswith("A8"), attr


def _migrate(text, rules, path):
    index = ProjectIndex()
    index.add_source(text, path)
    return transform_text(text, rules, path=path, project=index).text


def test_corpus_after_migration_gets_no_lm090_marker():
    """Every corpus case, once migrated by the other rules (and checked against 1.9.5 by the
    oracle tests), is valid 2.x: LM090 must find nothing in it."""
    others = [r for r in ALL_RULES if r.code != "LM090"]
    files = sorted((ROOT / "corpus").glob("*.py"))
    assert files
    for path in files:
        migrated = _migrate(path.read_text(encoding="utf-8"), others, str(path))
        out, _ = run_rule(RULE, migrated, path=str(path))
        assert markers(out) == [], f"{path.name}: {markers(out)}"


# --- find --------------------------------------------------------------------------------------

from .find_imports import check_find, sites_of  # noqa: E402


@pytest.mark.parametrize("source,effect", [
    ("def f(trainer):\n    return trainer.root_gpu\n", True),
    ("class C:\n    def f(self):\n        return self.trainer.use_amp\n", True),
    ("from pytorch_lightning import Trainer as T\n\nt = T(gpus=1)\n", True),
    ("import pytorch_lightning as pl\n\n\ndef f(parser):\n    return pl.Trainer.add_argparse_args(parser)\n", True),
    ("from pytorch_lightning.metrics import Accuracy\n", True),
    ("# TODO(lightmigrate): LM201 something\nimport os\n", False),
    ("import lightning.pytorch as pl\n\ntrainer = pl.Trainer(accelerator='gpu', devices=2)\nprint(trainer.num_devices)\n",
     False),
    ("import pytorch_lightning as pl\n\n\ndef f(model):\n    return model.root_gpu\n", False),
    ("import pytorch_lightning as pl\n\n\nclass Foo:\n    pass\n\n\nx = Foo(gpus=1)\n", False),
    ("from mylib import Trainer\n\nt = Trainer(gpus=1)\n", False),
    ("import pytorch_lightning as pl\n\nt = (pl.Trainer  # one\n     )(gpus=1)\n", True),
    ("def f(self, trainer):\n    set_threads(num_processes=self.n)\n    return self.model.root_gpu, trainer\n", False),
    # statements another rule marked already are left alone
    ("import pytorch_lightning as pl\n\n\ndef f(parser):\n    # TODO(lightmigrate): LM101 gone\n"
     "    return pl.Trainer.add_argparse_args(parser)\n", False),
    ("import pytorch_lightning as pl\n\n\ndef f(parser, trainer):\n    # TODO(lightmigrate): LM101 gone\n"
     "    parser = pl.Trainer.add_argparse_args(parser)\n    return trainer.root_gpu\n", True),
    ("import pytorch_lightning as pl\n\n# TODO(lightmigrate): LM101 gone\n@pl.Trainer.add_argparse_args\n"
     "def f(parser):\n    pass\n", False),
    # a marker above a one-line ``if`` marks the ``if`` (libcst's statement), at any indentation
    ("def f(trainer, x):\n    # TODO(lightmigrate): LM101 gone\n    if x: return trainer.root_gpu\n", False),
    ("def f(trainer):\n# TODO(lightmigrate): LM101 gone\n    return trainer.root_gpu\n", False),
    ("def f(trainer):\n    x = '''\n    # TODO(lightmigrate): LM101 gone'''\n    return trainer.root_gpu\n", True),
    ("class M:\n    def f(self):\n        self.trainer.fit_loop.run()\n        return self.tune()\n", False),
    # an ``except*`` clause belongs to its ``try`` statement (libcst), an ``except`` clause not
    ("def f(trainer):\n    try:\n        pass\n    # TODO(lightmigrate): LM101 x\n"
     "    except* trainer.root_gpu:\n        pass\n", True),
    ("def f(trainer):\n    try:\n        pass\n    # TODO(lightmigrate): LM101 x\n"
     "    except trainer.root_gpu:\n        pass\n", False),
    # (a marker indented as the ``try`` body is that block's footer)
    ("def f(trainer):\n    try:\n        pass\n        # TODO(lightmigrate): LM101 x\n"
     "    except trainer.root_gpu:\n        pass\n", True),
    ("from lightning.pytorch.utilities.rank_zero import rank_zero_warn\nimport lightning.pytorch as pl\n\n"
     "m = pl.utilities.memory.garbage_collection_cuda\n", False),
    ("import pytorch_lightning.callbacks as cb\n\nx = cb.GPUStatsMonitor()\n", True),
    ("from pytorch_lightning import core as C\n\nx = C.memory\n", True),
    ("from pytorch_lightning.loggers import LoggerCollection\n", True),
    ("import lightning.pytorch as pl\n\nx = pl.Trainer.add_argparse_args\n", True),
    # an ``elif`` is a statement of its own in libcst; a comment indented as the ``if`` body
    # above it is that block's footer
    ("def f(trainer):\n    if x:\n        pass\n    # TODO(lightmigrate): LM101 x\n    elif trainer.root_gpu:\n"
     "        pass\n", False),
    ("def f(trainer):\n    if x:\n        pass\n        # TODO(lightmigrate): LM101 x\n    elif trainer.root_gpu:\n"
     "        pass\n", True),
    ("def f(trainer):\n    if x:\n        pass\n    # TODO(lightmigrate): LM101 x\n    else:\n"
     "        trainer.root_gpu\n", True),
    # a marker right above the first statement (in libcst's module header) marks it
    ("# TODO(lightmigrate): LM202 x\nfrom pytorch_lightning.loggers import LoggerCollection\n", False),
    ("# TODO(lightmigrate): LM202 x\n\nfrom pytorch_lightning.loggers import LoggerCollection\n", True),
])
def test_find_is_exact(source, effect):
    check_find(RULE, source, effect)


def test_find_gives_one_site_per_statement_at_its_libcst_line():
    source = ("import pytorch_lightning as pl\n\n\n@decorate(pl.Trainer.add_argparse_args)\n"
              "def f(trainer):\n    x = trainer.root_gpu; y = trainer.use_amp\n    return x\n")
    assert [(s.line, s.action) for s in sites_of(RULE, source)] == [(5, "mark"), (6, "mark")]


def test_a_users_config_trainer_section_is_not_the_trainer():
    # issue 21 kind 8: `config.trainer.devices = 1` sets a user's config, not Lightning's Trainer
    # (whose removed attributes were read-only properties on 1.9: assigning one raised there)
    src = '''\
import pytorch_lightning as pl


def main(config, trainer):
    config.trainer.devices = 1
    config.trainer.devices, seed = 1, 0
    del cfg.trainer.devices
    n = self.hparams.trainer.devices + cfg.trainer.devices
    return n, trainer.devices, self.trainer.devices
'''
    from .find_imports import check_find
    out, _ = run_rule(RULE, src)
    assert markers(out) == [
        "# TODO(lightmigrate): LM090 removed in Lightning 2.x: `trainer.devices` -> `trainer.num_devices` / "
        "`trainer.device_ids` [A8-trainer-attributes] (see https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html)"]
    assert out.splitlines()[out.splitlines().index("    " + markers(out)[0]) + 1] == \
        "    return n, trainer.devices, self.trainer.devices"
    assert run_rule(RULE, out)[0] == out
    check_find(RULE, src.replace("    return n, trainer.devices, self.trainer.devices\n", "    return n\n"), False)


def test_any_name_still_imported_from_the_removed_utilities_distributed_is_marked():
    # `register_ddp_comm_hook` (and any name the tables do not list) was left unmarked: the
    # whole module is gone in 2.x, so the import fails
    out, _ = run_rule(RULE, "from pytorch_lightning.utilities.distributed import register_ddp_comm_hook\n")
    assert markers(out) and "utilities.distributed" in markers(out)[0] and "[R14]" in markers(out)[0]
    assert run_rule(RULE, out)[0] == out
    whole = transform_text("from pytorch_lightning.utilities.distributed import (\n    rank_zero_only,\n"
                           "    register_ddp_comm_hook,\n)\n", ALL_RULES, path="m.py")
    assert "from pytorch_lightning.utilities.rank_zero import (\n    rank_zero_only,\n)" in whole.text
    assert whole.text.count("TODO(lightmigrate)") == 1 and not whole.problems
