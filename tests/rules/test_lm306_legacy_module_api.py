"""LM306: removed module/callback/datamodule APIs: rewrites and markers."""

import textwrap

import pytest

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.lm306_legacy_module_api import LegacyModuleApiRule

from .conftest import check_rewrite, run_rule

RULE = LegacyModuleApiRule()


def sites(path, files):
    """``RULE.find`` for ``files[path]`` in a project of ``files`` (path -> text), as (target,
    action, line)."""
    files = {p: textwrap.dedent(t) for p, t in files.items()}
    index = ProjectIndex()
    for other, text in files.items():
        index.add_source(text, other)
    return [(s.target, s.action, s.line) for s in RULE.find(SourceFile(path, files[path]), RuleContext(path, index))]


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


# ---------------------------------------------------------------------------------------------
# find: the sites, and none where nothing changes


def test_find_progress_bar_dict_call_anywhere():
    files = {"s.py": """\
        def show(trainer):
            print(trainer.model.get_progress_bar_dict())
        """}
    assert sites("s.py", files) == [("", "pbar", 2)]


def test_find_per_kind():
    module = {"m.py": """\
        import pytorch_lightning as pl


        class M(pl.LightningModule):
            def training_step(self, batch, batch_idx):
                self.log("loss", batch, sync_dist_op="sum")
                return batch
        """}
    assert sites("m.py", module) == [("M", "calls", 5)]
    callback = {"c.py": """\
        from pytorch_lightning.callbacks import Callback


        class C(Callback):
            def on_load_checkpoint(self, trainer, pl_module, callback_state):
                self.count = callback_state["count"]
        """}
    assert sites("c.py", callback) == [("C", "mark", 5)]
    datamodule = {"d.py": """\
        import pytorch_lightning as pl


        class D(pl.LightningDataModule):
            def on_save_checkpoint(self, checkpoint):
                checkpoint["x"] = 1
        """}
    assert sites("d.py", datamodule) == [("D", "mark", 5)]
    # a LightningModule's own checkpoint hooks are 2.x API
    module_ckpt = {"m.py": datamodule["d.py"].replace("pl.LightningDataModule", "pl.LightningModule")}
    assert sites("m.py", module_ckpt) == []


@pytest.mark.parametrize("body, expected", [
    ("return {'count': self.count}", True),
    ("def state():\n        return self.count\n    checkpoint['s'] = state()", True),  # a nested return counts
    ("if self.count:\n        return (None)\n    checkpoint['count'] = self.count", False),
    ("checkpoint['count'] = self.count\n    return", False),
    ("checkpoint['count'] = self.count", False),
])
def test_find_callback_save_checkpoint_only_when_it_returns_a_value(body, expected):
    files = {"c.py": """\
        from pytorch_lightning.callbacks import Callback


        class C(Callback):
            def on_save_checkpoint(self, trainer, pl_module, checkpoint):
                BODY
        """.replace("BODY", body.replace("\n    ", "\n" + " " * 16))}
    assert sites("c.py", files) == ([("C", "mark", 5)] if expected else [])


def test_find_model_size_only_on_lightning_objects():
    files = {"p.py": """\
        class Net:
            def size(self):
                return self.model_size
        """}
    assert sites("p.py", files) == []
    # a callback's pl_module in a file whose base class is in another file
    files = {
        "cb.py": "import pytorch_lightning as pl\n\n\nclass Base(pl.Callback):\n    pass\n",
        "w.py": "import pytorch_lightning as pl\nfrom cb import Base\n\n\nclass W(Base):\n"
                "    def on_fit_start(self, trainer, pl_module):\n        print(pl_module.model_size)\n",
    }
    assert sites("w.py", files) == [("W", "model-size", 6)]


@pytest.mark.parametrize("call, expected", [
    ("self.summarize()", True),
    ("self.summarize(max_depth=2)", True),
    ("self.summarize(mode='full')", True),
    ("self.summarize(mode='fu' 'll')", False),  # not one string literal: left as it is
    ("self.summarize('full')", False),
    ("self.summarize(mode='other')", False),
    ("other.summarize()", False),
])
def test_find_summarize(call, expected):
    files = {"m.py": f"import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n    def f(self):\n        {call}\n"}
    assert sites("m.py", files) == ([("M", "calls", 5)] if expected else [])


def test_find_nothing_where_the_marks_are_there_already():
    src = """\
        from pytorch_lightning.callbacks import Callback


        class C(Callback):
            def on_load_checkpoint(self, trainer, pl_module, callback_state):
                self.count = callback_state["count"]

            def on_fit_start(self, trainer, pl_module):
                print(pl_module.model_size)


        def show(trainer):
            return trainer.model.get_progress_bar_dict()
        """
    assert [s[1] for s in sites("c.py", {"c.py": src})] == ["mark", "model-size", "pbar"]
    out, _ = run_rule(RULE, textwrap.dedent(src), path="c.py")
    assert out.count("TODO(lightmigrate): LM306") == 3
    assert sites("c.py", {"c.py": out}) == []
