"""The cheap gates that let the engine skip a rule's walk (``Rule.needed``) and the cached
subclass map of the project index: they must never change what a rule does."""

from __future__ import annotations

from gate_checks import project_of as _index, walk_acts

from lightmigrate.engine.transform import transform_text
from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.base import RuleContext
from lightmigrate.rules.lm301_log_dict import LogDictRule


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


LOG_IN_PROJECT_SUBCLASS = '''\
from models import Base


class Model(Base):
    def training_step(self, batch, batch_idx):
        self.log("train", {"loss": batch})
        return batch
'''


def test_log_dict_gate_follows_the_hierarchy_across_files():
    files = {"models.py": "import lightning.pytorch as pl\n\n\nclass Base(pl.LightningModule):\n    pass\n",
             "train.py": LOG_IN_PROJECT_SUBCLASS,
             "plain.py": LOG_IN_PROJECT_SUBCLASS.replace("from models import Base", "Plain = object")
                                           .replace("(Base)", "(Plain)")}
    index = _index(files)
    rule = LogDictRule()
    assert rule.needed(files["train.py"], RuleContext("train.py", index))
    assert not rule.needed(files["plain.py"], RuleContext("plain.py", index))
    # a file the index never saw may need the rule (apply indexes it first)
    assert rule.needed(files["train.py"], RuleContext("new.py", index))
    out = transform_text(files["train.py"], [rule], "train.py", index)
    assert 'self.log_dict({"train/loss": batch})' in out.text
    assert not transform_text(files["plain.py"], [rule], "plain.py", index).changed


def test_classes_in_path_matches_a_scan_of_every_class_and_follows_additions():
    index = ProjectIndex()
    index.add_source("class A(pl.LightningModule):\n    pass\nclass B(A):\n    pass\n", "a.py")
    index.add_source("class C(A):\n    pass\n", "c.py")
    for path in ("a.py", "c.py", "missing.py"):
        assert index.classes_in(path) == [c for c in index.classes() if c.path == path]
    assert [c.name for c in index.classes_in("a.py")] == ["A", "B"]
    index.add_source("class D(pl.LightningModule):\n    pass\n", "a.py")  # the cache must not go stale
    assert [c.name for c in index.classes_in("a.py")] == ["A", "B", "D"]


def test_every_gate_open_gives_the_same_output_on_the_corpus():
    """scripts/audit_gates.py over corpus/: a gate that wrongly says "not needed" shows up as a
    file whose diff, findings, markers or error differ when every gate is open."""
    import importlib.util
    from pathlib import Path

    from lightmigrate.rules import ALL_RULES, OPT_IN_RULES

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("audit_gates", root / "scripts" / "audit_gates.py")
    audit_gates = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(audit_gates)
    assert audit_gates.audit([str(root / "corpus")], [*ALL_RULES, *OPT_IN_RULES]) == []
    # and the audit can fail: a gate that always says "not needed" is caught
    from lightmigrate.engine import transform

    real = transform.rule_sites
    transform.rule_sites = lambda rule, source, ctx: [] if rule.code == "LM001" else real(rule, source, ctx)
    try:
        assert audit_gates.audit([str(root / "corpus" / "merge_existing_hooks.py")], ALL_RULES)
    finally:
        transform.rule_sites = real
