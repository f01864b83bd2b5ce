"""rules/shared/mro.py: the project's C3 orders match Python's, and the shadowing questions
LM001/LM003 ask (issue 21 kind 2)."""

import textwrap

import pytest

from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.shared.mro import linearize, mixin_shadowing, reached_after, shadowed_by

HIERARCHIES = [
    """
    class A(LightningModule): pass
    class M: pass
    class B(M, A): pass
    class C(B): pass
    """,
    """
    class A(LightningModule): pass
    class M1: pass
    class M2(M1): pass
    class B(A, M2): pass
    class C(B, M1): pass
    """,
    """
    class A(LightningModule): pass
    class B(A): pass
    class C(A): pass
    class D(B, C): pass
    class E(D, LightningModule): pass
    """,
]


@pytest.mark.parametrize("code", HIERARCHIES)
def test_linearize_matches_python(code):
    code = textwrap.dedent(code)
    index = ProjectIndex()
    index.add_source("# _step\n" + code, "m.py")
    namespace = {"LightningModule": type("LightningModule", (), {})}
    exec(code, namespace)
    for info in index.classes_in("m.py"):
        order = linearize(index, info)
        names = [e.name if isinstance(e, ClassInfo) else e for e in order]
        assert names == [k.__name__ for k in namespace[info.name].__mro__[:-1]], info.name


def _index(code):
    index = ProjectIndex()
    index.add_source(textwrap.dedent(code), "m.py")
    return index, {c.name: c for c in index.classes_in("m.py")}


def test_shadowing_questions():
    index, c = _index("""
        import pytorch_lightning as pl
        class Mixin:
            def on_validation_batch_end(self, *args): pass
        class Base(pl.LightningModule):
            def validation_epoch_end(self, outputs): pass
        class Model(Mixin, Base): pass
        class Later(pl.LightningModule):
            def on_validation_batch_end(self, *args): pass
        class Other(Base, Later): pass
        """)
    found = mixin_shadowing(index, c["Mixin"], "on_validation_batch_end", "validation_epoch_end")
    assert (found.subclass, found.owner, found.why) == ("Model", "Base", None)
    assert shadowed_by(index, c["Base"], "on_validation_batch_end") == "Mixin"
    assert reached_after(index, c["Base"], "on_validation_batch_end")  # Later, in Other
    assert not reached_after(index, c["Later"], "on_validation_batch_end")
    assert mixin_shadowing(index, c["Later"], "on_validation_batch_end", "validation_epoch_end") is None
