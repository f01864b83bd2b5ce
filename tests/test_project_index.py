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
