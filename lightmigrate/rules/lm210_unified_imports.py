"""LM210 (opt-in, ``lightmigrate rewrite --unified-imports``): move every ``pytorch_lightning`` /
``lightning_fabric`` import and use to ``lightning.pytorch`` / ``lightning.fabric``."""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Set

import libcst as cst

from lightmigrate.analysis.facts import file_facts
from lightmigrate.rules.shared.import_rewrite import build_dotted, dotted
from lightmigrate.catalog.imports import GUIDE
from lightmigrate.rules.base import Example, GatedRule, Rule, RuleContext, Safety
from lightmigrate.cst.walk import transform, PrunedTransformer, walk

CODE = "LM210"
UNIFIED = {"pytorch_lightning": "lightning.pytorch", "lightning_fabric": "lightning.fabric"}
_OLD_ROOTS = frozenset(UNIFIED)


def unified(path: str) -> str:
    """``path`` under the unified ``lightning`` package (unchanged when it is not an old root)."""
    head, dot, rest = path.partition(".")
    return UNIFIED[head] + dot + rest if head in UNIFIED else path


class _Unify(PrunedTransformer):
    def __init__(self) -> None:
        self.roots: Set[str] = set()  # old root names bound by ``import pytorch_lightning[.x]``
        self.seen_lines: Set[str] = set()

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        names = []
        for a in updated.names:
            path = dotted(a.name) or ""
            new = unified(path)
            if new != path:
                if a.asname is None:
                    self.roots.add(path.split(".")[0])
                a = a.with_changes(name=build_dotted(new))
            names.append(a)
        return updated.with_changes(names=names)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        if updated.relative or updated.module is None:
            return updated
        path = dotted(updated.module) or ""
        new = unified(path)
        if new == path:
            return updated
        return updated.with_changes(module=build_dotted(new))

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return dotted(node) is None

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        path = dotted(original)
        if path is None or path.split(".")[0] not in self.roots:  # ``pl.x`` with an alias needs no change
            return updated
        return build_dotted(unified(path))



def _first_pass_roots(module: cst.Module) -> Set[str]:
    roots: Set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            for a in node.names:
                head = (dotted(a.name) or "").split(".")[0]
                if head in UNIFIED and a.asname is None:
                    roots.add(head)

    walk(module, V())
    return roots


def _import_lines(module: cst.Module) -> List[str]:
    return [module.code_for_node(s.with_changes(leading_lines=[])).strip() for s in module.body
            if isinstance(s, cst.SimpleStatementLine) and all(isinstance(i, (cst.Import, cst.ImportFrom)) for i in s.body)]


def _drop_duplicate_imports(module: cst.Module, before: cst.Module) -> cst.Module:
    """Remove top-level import lines that the rewrite made identical to another one (the first
    stays; duplicates the user already had are theirs to keep)."""
    allowed = Counter(_import_lines(before))
    seen: Counter = Counter()
    body: List = []
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            code = module.code_for_node(stmt.with_changes(leading_lines=[])).strip()
            seen[code] += 1
            if seen[code] > max(allowed[code], 1):
                continue
        body.append(stmt)
    return module.with_changes(body=body) if len(body) != len(module.body) else module


class UnifiedImportsRule(GatedRule):
    code = CODE
    name = "unified-imports"
    summary = "Opt-in (--unified-imports): pytorch_lightning / lightning_fabric imports and uses become lightning.pytorch / lightning.fabric."
    spec_rows = ("A8-imports",)
    guide = (f"{GUIDE} (Lightning 2.x ships the same code as `pytorch_lightning` and as `lightning.pytorch`; "
             "the two are separate class hierarchies, so a project must use one root everywhere)")
    safety = Safety.PRESERVING
    triggers = ("pytorch_lightning", "lightning_fabric")
    description = (
        "Only runs with `lightmigrate rewrite --unified-imports` (or `--select LM210`). The `lightning` "
        "package ships the same code as `pytorch-lightning` under `lightning.pytorch`, but the two are "
        "separate class hierarchies: a `lightning.pytorch` callback given to a `pytorch_lightning.Trainer` "
        "fails `isinstance` checks. So the move must be complete: this rule rewrites every "
        "`pytorch_lightning` and `lightning_fabric` import and every dotted use in every file of the "
        "run (`import pytorch_lightning as pl` -> `import lightning.pytorch as pl`, "
        "`pytorch_lightning.callbacks.X` -> `lightning.pytorch.callbacks.X`). Strings such as LightningCLI "
        "`class_path` values are not touched. Install the `lightning` package to run the result."
    )
    examples = (
        Example(
            title="unify",
            before=("import pytorch_lightning as pl\nimport pytorch_lightning.callbacks\n"
                    "from lightning_fabric.utilities import seed\n\n"
                    "cb = pytorch_lightning.callbacks.EarlyStopping(\"loss\")\ntrainer = pl.Trainer(callbacks=[cb])\n"),
            after=("import lightning.pytorch as pl\nimport lightning.pytorch.callbacks\n"
                   "from lightning.fabric.utilities import seed\n\n"
                   "cb = lightning.pytorch.callbacks.EarlyStopping(\"loss\")\ntrainer = pl.Trainer(callbacks=[cb])\n"),
        ),
        Example(title="already-unified", before="import lightning.pytorch as pl\nfrom lightning.fabric import Fabric\n",
                after=None),
    )
    coverage: Dict = {}

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # Only imports of an old root change (dotted uses only through such an import).
        facts = file_facts(text)
        return not facts.parsed or not _OLD_ROOTS.isdisjoint(facts.modules)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        t = _Unify()
        t.roots = _first_pass_roots(module)
        out = transform(module, t)
        return _drop_duplicate_imports(out, module) if out is not module else out
