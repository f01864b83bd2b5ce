"""The gates (``Rule.needed``) of the hook rules LM001-LM003, LM301, LM303, LM305 and LM306:
they must say "needed" whenever the rule's walk changes or reports something (aliases,
subclasses of project classes defined in other files, files the index has not seen), and
"not needed" for the common files where the walk would do nothing."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from gate_checks import gate_says, walk_acts

from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.base import RuleContext
from lightmigrate.rules.shared.gates import def_parameter_names
from lightmigrate.rules.lm303_dataloader_idx import DataloaderIdxRule
from lightmigrate.rules.lm002_dead_hooks import DeadHooksRule
from lightmigrate.rules.lm001_epoch_end import EpochEndRule
from lightmigrate.rules.lm305_legacy_hooks import LegacyHooksRule
from lightmigrate.rules.lm306_legacy_module_api import LegacyModuleApiRule
from lightmigrate.rules.lm301_log_dict import LogDictRule
from lightmigrate.rules.lm003_step_end import StepEndRule

RULES = [EpochEndRule(), DeadHooksRule(), StepEndRule(), LogDictRule(), DataloaderIdxRule(),
         LegacyHooksRule(), LegacyModuleApiRule()]
BY_CODE = {r.code: r for r in RULES}


def _files(files):
    return {path: textwrap.dedent(text) for path, text in files.items()}


def needed(code: str, path: str, files) -> bool:
    """The gate of rule ``code`` for ``files[path]``, with every file of ``files`` indexed."""
    files = _files(files)
    return gate_says(BY_CODE[code], files[path], path, files)


def changes(code: str, path: str, files) -> bool:
    """Whether the rule's walk (every gate open) changes or reports anything in ``files[path]``."""
    files = _files(files)
    return walk_acts(BY_CODE[code], files[path], path, files)


def check(code: str, path: str, files, expected: bool) -> None:
    """The gate says ``expected``, and the rule's walk agrees: it changes or reports something
    exactly when the gate says "needed" (for these cases the gate is exact)."""
    assert needed(code, path, files) is expected
    assert changes(code, path, files) is expected


# ---------------------------------------------------------------------------------------------
# Every rewriting example of every rule of the group passes its gate, and a file the index
# has not seen always does.


EXAMPLES = [(r, ex) for r in RULES for ex in r.examples if ex.after is not None and ex.after != ex.before]


@pytest.mark.parametrize("rule,example", EXAMPLES, ids=[f"{r.code}-{e.title}" for r, e in EXAMPLES])
def test_gate_passes_every_rewriting_example(rule, example):
    index = ProjectIndex()
    index.add_source(example.before, "model.py")
    assert rule.needed(example.before, RuleContext("model.py", index))
    # and when the index has not seen the file (apply indexes it itself)
    assert rule.needed(example.before, RuleContext("model.py", ProjectIndex()))
    assert rule.needed(example.before, RuleContext("other.py", index))


UNCHANGED = [(r, ex) for r in RULES for ex in r.examples if ex.after is None]


@pytest.mark.parametrize("rule,example", UNCHANGED, ids=[f"{r.code}-{e.title}" for r, e in UNCHANGED])
def test_gate_closed_only_where_the_walk_does_nothing(rule, example):
    # the examples a rule leaves alone: where the gate says "not needed", the walk itself
    # (run directly, no gate) changes and reports nothing
    if not needed(rule.code, "model.py", {"model.py": example.before}):
        assert not changes(rule.code, "model.py", {"model.py": example.before})


@pytest.mark.parametrize("code", sorted(BY_CODE))
def test_unparsable_text_is_needed(code):
    index = ProjectIndex()
    index.add_source("x = 1\n", "m.py")
    assert BY_CODE[code].needed("def broken(:\n", RuleContext("m.py", index))


# ---------------------------------------------------------------------------------------------
# LM001 epoch-end hooks

BASE_WITH_EPOCH_END = {
    "base.py": """\
        import lightning.pytorch as L


        class Base(L.LightningModule):
            def validation_epoch_end(self, outputs):
                self.log("n", float(len(outputs)))
        """,
}


def test_lm001_module_alias_and_own_hook():
    files = {"m.py": """\
        import lightning.pytorch as L


        class Model(L.LightningModule):
            def training_epoch_end(self, outputs):
                print(len(outputs))
        """}
    check("LM001", "m.py", files, True)


def test_lm001_subclass_in_another_file_overriding_a_collecting_hook():
    files = {**BASE_WITH_EPOCH_END, "sub.py": """\
        from base import Base


        class Sub(Base):
            def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
                self.seen = True
        """}
    check("LM001", "sub.py", files, True)


def test_lm001_subclass_that_overrides_nothing_relevant_is_not_needed():
    files = {**BASE_WITH_EPOCH_END, "sub.py": """\
        from base import Base


        class Sub(Base):
            def forward(self, x):
                return x
        """}
    check("LM001", "sub.py", files, False)


def test_lm001_plain_class_is_not_needed_but_unknown_base_is():
    plain = {"p.py": """\
        class Recorder:
            def validation_epoch_end(self, outputs):
                return outputs
        """}
    check("LM001", "p.py", plain, False)
    unknown = {"u.py": """\
        from somewhere import Mystery


        class Recorder(Mystery):
            def validation_epoch_end(self, outputs):
                return outputs
        """}
    check("LM001", "u.py", unknown, True)  # marked: the class is not recognisable


# ---------------------------------------------------------------------------------------------
# LM003 step-end hooks

BASE_WITH_STEP_END = {
    "base.py": """\
        import pytorch_lightning as pl


        class Base(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                return batch

            def training_step_end(self, out):
                return out * 2
        """,
}


def test_lm003_own_hook_and_subclass_step_in_another_file():
    check("LM003", "base.py", BASE_WITH_STEP_END, True)
    files = {**BASE_WITH_STEP_END, "sub.py": """\
        from base import Base


        class Sub(Base):
            def training_step(self, batch, batch_idx):
                return batch + 1
        """}
    check("LM003", "sub.py", files, True)


def test_lm003_subclass_without_step_or_hook_is_not_needed():
    files = {**BASE_WITH_STEP_END, "sub.py": """\
        from base import Base


        class Sub(Base):
            def configure_optimizers(self):
                return None
        """}
    check("LM003", "sub.py", files, False)


# ---------------------------------------------------------------------------------------------
# def_parameter_names (the text gates' reading of def headers)

def test_def_parameter_names_holds_every_parameter_ast_finds():
    """For every function of the corpus and of this package, the names read from its headers
    include each parameter Python's ``ast`` finds."""
    root = Path(__file__).resolve().parents[2]
    checked = 0
    for path in sorted([*root.joinpath("corpus").rglob("*.py"), *root.joinpath("lightmigrate").rglob("*.py")]):
        text = path.read_text(encoding="utf-8")
        params: dict = {}
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                params.setdefault(node.name, set()).update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        for name, expected in params.items():
            found = def_parameter_names(text, name)
            assert found is not None and expected <= set(found), (path, name)
            checked += 1
    assert checked > 1000


def test_def_parameter_names_reads_only_the_header():
    text = "def f(a, b: Dict[str, int] = g(')'), *c, d=1, **e) -> int:\n    z = 1\nx = 'def f(q)'\n"
    assert def_parameter_names(text, "f") == ["a", "b", "Dict", "str", "int", "g", "c", "d", "e", "q"]
    assert def_parameter_names("def f\n", "f") == []  # not a header: no parenthesis
    assert def_parameter_names("def f(a,\n", "f") is None  # unreadable: the file may need the rule
    assert def_parameter_names("undef f(a)\n", "f") == []


# ---------------------------------------------------------------------------------------------
# LM002 dead hooks

def test_lm002_misspelt_and_removed_hooks_are_needed():
    module = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def on_training_epoch_end(self):
                pass
        """}
    check("LM002", "m.py", module, True)
    callback = {
        "cb.py": "from lightning.pytorch.callbacks import Callback\n\n\nclass Base(Callback):\n    pass\n",
        "p.py": """\
            from cb import Base


            class Printer(Base):
                def on_epoch_end(self, trainer, pl_module):
                    print(trainer.current_epoch)
            """,
    }
    check("LM002", "p.py", callback, True)


def test_lm002_callback_signature_next_to_a_module_is_not_needed():
    # each class's methods are checked against its own kind's hook table
    files = {"m.py": """\
        import pytorch_lightning as pl


        class Model(pl.LightningModule):
            def on_validation_end(self):
                pass


        class Watch(pl.Callback):
            def on_validation_end(self, trainer, pl_module):
                pass

            def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
                pass
        """}
    check("LM002", "m.py", files, False)


def test_lm002_plain_class_is_not_needed():
    files = {"p.py": """\
        class Plain:
            def on_epoch_end(self):
                pass

            def training_step_end(self, out):
                return out
        """}
    check("LM002", "p.py", files, False)


def test_lm002_signature_that_2x_cannot_call():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def on_train_batch_start(self, batch, batch_idx, unused):
                pass
        """}
    check("LM002", "m.py", files, True)


# ---------------------------------------------------------------------------------------------
# LM303 dataloader_idx defaults

def test_lm303_module_and_callback_hooks():
    files = {"m.py": """\
        import lightning.pytorch as L


        class M(L.LightningModule):
            def predict_step(self, batch, batch_idx, dataloader_idx):
                return batch
        """}
    check("LM303", "m.py", files, True)
    files = {
        "cb.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.Callback):\n    pass\n",
        "w.py": """\
            from cb import Base


            class Watch(Base):
                def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, idx):
                    print(idx)
            """,
    }
    check("LM303", "w.py", files, True)


def test_lm303_defaults_present_or_not_a_hook_of_the_kind():
    files = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def validation_step(self, batch, batch_idx, dataloader_idx=0):
                return batch


        class Watch(pl.Callback):
            def validation_step(self, batch, batch_idx, dataloader_idx):
                return batch


        class Other:
            def test_step(self, batch, batch_idx, dataloader_idx):
                return batch
        """}
    check("LM303", "m.py", files, False)


# ---------------------------------------------------------------------------------------------
# LM305 legacy hooks

def test_lm305_by_kind():
    module = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def on_pretrain_routine_start(self):
                self.started = True
        """}
    check("LM305", "m.py", module, True)
    # on_batch_end is a callback hook only: a LightningModule's is left to LM002
    module_batch_end = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def on_batch_end(self):
                pass
        """}
    check("LM305", "m.py", module_batch_end, False)
    callback = {
        "cb.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.Callback):\n    pass\n",
        "w.py": "from cb import Base\n\n\nclass W(Base):\n    def on_batch_end(self, trainer, pl_module):\n        pass\n",
    }
    check("LM305", "w.py", callback, True)


# ---------------------------------------------------------------------------------------------
# LM306 legacy module API

def test_lm306_progress_bar_dict_call_anywhere():
    files = {"s.py": """\
        def show(trainer):
            print(trainer.model.get_progress_bar_dict())
        """}
    check("LM306", "s.py", files, True)


def test_lm306_per_kind():
    module = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                self.log("loss", batch, sync_dist_op="sum")
                return batch
        """}
    check("LM306", "m.py", module, True)
    callback = {"c.py": """\
        from pytorch_lightning.callbacks import Callback


        class C(Callback):
            def on_load_checkpoint(self, trainer, pl_module, callback_state):
                self.count = callback_state["count"]
        """}
    check("LM306", "c.py", callback, True)
    datamodule = {"d.py": """\
        import pytorch_lightning as pl


        class D(pl.LightningDataModule):
            def on_save_checkpoint(self, checkpoint):
                checkpoint["x"] = 1
        """}
    check("LM306", "d.py", datamodule, True)
    # a LightningModule's own checkpoint hooks are 2.x API
    module_ckpt = {"m.py": datamodule["d.py"].replace("pl.LightningDataModule", "pl.LightningModule")}
    check("LM306", "m.py", module_ckpt, False)


@pytest.mark.parametrize("body, expected", [
    ("return {'count': self.count}", True),
    ("def state():\n        return self.count\n    checkpoint['s'] = state()", True),  # a nested return counts
    ("if self.count:\n        return (None)\n    checkpoint['count'] = self.count", False),
    ("checkpoint['count'] = self.count\n    return", False),
    ("checkpoint['count'] = self.count", False),
])
def test_lm306_callback_save_checkpoint_is_needed_only_when_it_returns_a_value(body, expected):
    files = {"c.py": """\
        from pytorch_lightning.callbacks import Callback


        class C(Callback):
            def on_save_checkpoint(self, trainer, pl_module, checkpoint):
                BODY
        """.replace("BODY", body.replace("\n    ", "\n" + " " * 16))}
    check("LM306", "c.py", files, expected)


def test_lm306_model_size_outside_lightning_is_not_needed():
    files = {"p.py": """\
        class Net:
            def size(self):
                return self.model_size
        """}
    check("LM306", "p.py", files, False)


# ---------------------------------------------------------------------------------------------
# LM301 self.log with a dict

def test_lm301_dict_value_and_local_dict():
    literal = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                self.log("train", value={"a": batch})
                return batch
        """}
    check("LM301", "m.py", literal, True)
    local = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def validation_step(self, batch, batch_idx):
                metrics = {"acc": batch}
                self.log("val", metrics)
        """}
    check("LM301", "m.py", local, True)


def test_lm301_scalars_or_outside_lightning_are_not_needed():
    scalars = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                metrics = {"acc": batch}
                self.log("loss", batch)
                self.log_dict(metrics)
                return batch
        """}
    check("LM301", "m.py", scalars, False)
    plain = {"p.py": """\
        class Logger:
            def step(self):
                self.log("train", {"a": 1})
        """}
    check("LM301", "p.py", plain, False)


# ---------------------------------------------------------------------------------------------
# The per-path class lookup the gates use


def test_classes_in_follows_additions_and_merges():
    a = ClassInfo("A", "a.py", ("pl.LightningModule",), frozenset())
    index = ProjectIndex([a])
    assert index.classes_in("a.py") == [a]
    assert index.classes_in("b.py") == []
    b = ClassInfo("B", "b.py", ("A",), frozenset())
    index.add(b)
    assert index.classes_in("b.py") == [b]
    other = ProjectIndex([ClassInfo("C", "a.py", (), frozenset())])
    index.merge(other)
    assert [c.name for c in index.classes_in("a.py")] == ["A", "C"]
