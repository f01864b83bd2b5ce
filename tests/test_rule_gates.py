"""The cheap gates that let the engine skip a rule's walk (``Rule.needed``) and the cached
subclass map of the project index: they must never change what a rule does."""

from __future__ import annotations

from gate_checks import project_of as _index, walk_acts

from lightmigrate.engine.transform import transform_text
from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.base import RuleContext
from lightmigrate.rules.lm203_loggers_cli import LoggersCliRule


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


def test_loggers_cli_gate():
    rule = LoggersCliRule()
    index = _index({"dm.py": "import lightning.pytorch as pl\nclass DM(pl.LightningDataModule):\n    pass\n",
                    "sub.py": "from dm import DM\nclass Sub(DM):\n    def get_batch_shape(self):\n        return self.size()\n",
                    "other.py": "class Data:\n    def get_batch_shape(self):\n        return self.size()\n"})
    # a CometLogger / ProgressBar / LightningCLI call is needed, by its name or by an alias the
    # import binds; the import alone (or a subclass) is not: the rule changes calls only
    for text in ("from pytorch_lightning.loggers import CometLogger\nlog = CometLogger(save_dir='x')\n",
                 "from pytorch_lightning.loggers import CometLogger as C\nlog = C(save_dir='x')\n",
                 "import pytorch_lightning as pl\nbar = pl.callbacks.ProgressBar(refresh_rate=1)\n",
                 "from pytorch_lightning import callbacks as cb\nbar = cb.ProgressBar()\n"):
        assert rule.needed(text, RuleContext("x.py", index)), text
        assert walk_acts(rule, text, "x.py", {"x.py": text}), text
    for text in ("from pytorch_lightning.loggers import CometLogger\n",
                 "from pytorch_lightning.callbacks import ProgressBar\n\n\nclass Bar(ProgressBar):\n    pass\n",
                 "from pytorch_lightning.loggers import CometLogger as C\nlog = make(C, save_dir='x')\n"):
        assert not rule.needed(text, RuleContext("x.py", index)), text
        assert not walk_acts(rule, text, "x.py", {"x.py": text}), text  # the walk, with no gate to stop it
    assert rule.needed("monitor.lr_sch_names\n", RuleContext("x.py", index))
    sub = "from dm import DM\nclass Sub(DM):\n    def get_batch_shape(self):\n        return self.size()\n"
    assert rule.needed(sub, RuleContext("sub.py", index))
    assert not rule.needed("class Sub(DM): ...\n", RuleContext("sub.py", index))  # nothing to mark
    assert not rule.needed("class Data:\n    def f(self):\n        return self.size()\n", RuleContext("other.py", index))
    assert "TODO(lightmigrate): LM203" in transform_text(sub, [rule], "sub.py", index).text


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
    # and the audit can fail: gates that always say "not needed" are caught (the gates left:
    # rules split into find and fix have none; LM002, LM201 and LM090 act on this file)
    from lightmigrate.engine import transform
    from lightmigrate.rules.base import GatedRule

    real = transform.rule_sites
    transform.rule_sites = lambda rule, source, ctx: [] if isinstance(rule, GatedRule) else real(rule, source, ctx)
    try:
        assert audit_gates.audit([str(root / "corpus" / "moved_utilities_combined_loader.py")], ALL_RULES)
    finally:
        transform.rule_sites = real
