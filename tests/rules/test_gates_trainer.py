"""The text helpers of ``rules/shared/gates.py`` the Trainer group's gates used, and the project
index's per-file class lists. (Every rule of the group, LM101, LM102, LM005, LM006, LM302, LM304
and LM309, now finds its sites itself: see their own tests.)"""

from __future__ import annotations

from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.shared.gates import (
    attribute_assigned,
    attribute_compared,
    string_key,
    trainer_call_names,
)


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
