"""The project index's per-file and subclass lists follow classes added after a lookup."""

from __future__ import annotations

from lightmigrate.analysis.project import ClassInfo, ProjectIndex


def test_subclasses_see_classes_added_after_a_lookup():
    base = ClassInfo("Base", "a.py", ("pl.LightningModule",), frozenset())
    index = ProjectIndex([base])
    assert index.subclasses(base) == []
    child = ClassInfo("Child", "b.py", ("Base",), frozenset())
    index.add(child)
    assert index.subclasses(base) == [child]
    other = ProjectIndex([ClassInfo("Grand", "c.py", ("Child", "Child"), frozenset())])
    index.merge(other)
    assert [c.name for c in index.descendants(base)] == ["Child", "Grand"]


def test_classes_in_path_matches_a_scan_of_every_class_and_follows_additions():
    index = ProjectIndex()
    index.add_source("class A(pl.LightningModule):\n    pass\nclass B(A):\n    pass\n", "a.py")
    index.add_source("class C(A):\n    pass\n", "c.py")
    for path in ("a.py", "c.py", "missing.py"):
        assert index.classes_in(path) == [c for c in index.classes() if c.path == path]
    assert [c.name for c in index.classes_in("a.py")] == ["A", "B"]
    index.add_source("class D(pl.LightningModule):\n    pass\n", "a.py")  # the cache must not go stale
    assert [c.name for c in index.classes_in("a.py")] == ["A", "B", "D"]


def test_classes_in_follows_additions_and_merges():
    index = ProjectIndex([ClassInfo("A", "a.py", ("pl.LightningModule",), frozenset())])
    assert [c.name for c in index.classes_in("a.py")] == ["A"]
    index.add(ClassInfo("B", "a.py", ("A",), frozenset()))
    other = ProjectIndex([ClassInfo("C", "c.py", ("A",), frozenset())])
    index.merge(other)
    assert [c.name for c in index.classes_in("a.py")] == ["A", "B"]
    assert [c.name for c in index.classes_in("c.py")] == ["C"]
    assert index.classes_in("none.py") == []


def test_classes_of_one_name_in_a_file_are_told_apart_by_their_place():
    from lightmigrate.analysis.project import ProjectIndex as Index
    text = ("import pytorch_lightning as pl\n\n\ndef test_a():\n    class M(pl.LightningModule):\n        def a(self):\n"
            "            pass\n\n\ndef test_b():\n    class M(pl.LightningModule):\n        def b(self):\n            pass\n")
    index = Index()
    index.add_source(text, "t.py")
    assert index.resolve("M", "t.py") is None  # ambiguous by name
    assert index.local_class("M", "t.py", 0).methods == frozenset({"a"})
    assert index.local_class("M", "t.py", 1).methods == frozenset({"b"})
    assert index.local_class("M", "t.py", 2) is None


def test_a_base_named_like_lightnings_class_is_lightnings_only_when_its_file_may_bind_it_so():
    from lightmigrate.analysis.project import CALLBACK_NAMES

    body = "\n    def on_epoch_end(self):\n        pass\n"  # (a file without such a word is not indexed)
    index = ProjectIndex()
    index.add_source("import mxnet\n\n\nclass Callback:\n    pass\n\n\nclass Local(Callback):" + body,
                     "pkg/callback.py")
    index.add_source("from .callback import Callback\n\n\nclass Relative(Callback):" + body, "pkg/a.py")
    index.add_source("from pkg.callback import Callback\n\n\nclass Absolute(Callback):" + body, "pkg/b.py")
    index.add_source("from pytorch_lightning import Callback\n\n\nclass Real(Callback):" + body, "r.py")
    index.add_source("from pytorch_lightning import *\n\n\nclass Star(Callback):" + body, "s.py")
    answers = {c.name: index.in_lightning_hierarchy(c, CALLBACK_NAMES) for c in index.classes()}
    assert answers == {"Callback": False, "Local": False, "Relative": False, "Absolute": False,
                       "Real": True, "Star": True}
    assert [c.name for c in index.kind_classes(CALLBACK_NAMES)] == ["Real", "Star"]
    # another library's class, which the project does not define: not known to be Lightning's
    other = ProjectIndex()
    other.add_source("from keras.callbacks import Callback\n\n\nclass Keras(Callback):" + body, "k.py")
    (keras,) = other.classes()
    assert other.in_lightning_hierarchy(keras, CALLBACK_NAMES) is None and other.kind_classes(CALLBACK_NAMES) == []


def test_a_base_under_an_import_alias_is_the_class_it_names():
    """``from pytorch_lightning import LightningModule as LM; class M(LM)`` derives from Lightning's
    LightningModule, and ``from .trainer import MyTrainer as Base; class Quiet(Base)`` from the
    project's MyTrainer (issue 25): the index reads a base through its file's import aliases."""
    from lightmigrate.analysis.project import CALLBACK_NAMES

    index = ProjectIndex()
    index.add_source("from pytorch_lightning import LightningModule as LM, Trainer as PLT\n"
                     "from pytorch_lightning.callbacks import Callback as CB\n\n\n"
                     "class Model(LM):\n    def training_step(self, b, i):\n        pass\n\n\n"
                     "class Hook(CB):\n    def on_epoch_end(self, t, m):\n        pass\n\n\n"
                     "class MyTrainer(PLT):\n    pass\n", "pkg/trainer.py")
    index.add_source("from .trainer import MyTrainer as Base\n\n\nclass Quiet(Base):\n    pass\n", "pkg/quiet.py")
    index.add_source("from keras.callbacks import Callback as KC\n\n\nclass Keras(KC):\n"
                     "    def on_epoch_end(self):\n        pass\n", "k.py")
    by_name = {c.name: c for c in index.classes()}
    assert by_name["Model"].bases == ("LightningModule",) and by_name["Quiet"].bases == ("MyTrainer",)
    assert index.is_lightning_module(by_name["Model"]) is True
    assert [c.name for c in index.kind_classes(CALLBACK_NAMES)] == ["Hook"]
    assert by_name["MyTrainer"].trainer_base
    assert [c.name for c in index.trainer_chain(by_name["Quiet"])] == ["Quiet", "MyTrainer"]
    assert [c.name for c in index.kind_classes(frozenset({"Trainer"}))] == ["MyTrainer", "Quiet"]


def test_trainer_settings_of_an_aliased_trainer_call_are_read():
    index = ProjectIndex()
    index.add_source("from pytorch_lightning import Trainer as PLT\n\nt = PLT(accumulate_grad_batches=2)\n", "t.py")
    assert index.trainer_settings == {"t.py": {"accumulate_grad_batches": 2}}
