"""LM210 (opt-in, ``lightmigrate rewrite --unified-imports``): move every ``pytorch_lightning`` /
``lightning_fabric`` import and use to ``lightning.pytorch`` / ``lightning.fabric``."""

from __future__ import annotations

import ast
from collections import Counter
from typing import Dict, FrozenSet, List, Sequence, Set

import libcst as cst

from lightmigrate.analysis.ast_nodes import ast_dotted
from lightmigrate.rules.shared.import_rewrite import build_dotted, dotted
from lightmigrate.catalog.imports import GUIDE
from lightmigrate.rules.base import Example, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.cst.walk import transform, PrunedTransformer

CODE = "LM210"
UNIFIED = {"pytorch_lightning": "lightning.pytorch", "lightning_fabric": "lightning.fabric"}


def unified(path: str) -> str:
    """``path`` under the unified ``lightning`` package (unchanged when it is not an old root)."""
    head, dot, rest = path.partition(".")
    return UNIFIED[head] + dot + rest if head in UNIFIED else path


IMPORT, USE = "import", "use"  # the actions of the sites: an import's module, a dotted use


class _Unify(PrunedTransformer):
    """Moves the imported modules (``import X``, ``from X import``) in ``imports`` and the
    dotted uses in ``uses`` to the unified root."""

    def __init__(self, imports: FrozenSet[str], uses: FrozenSet[str]) -> None:
        self.imports = imports
        self.uses = uses

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # (its dotted names are modules, not uses)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        names = []
        for a in updated.names:
            path = dotted(a.name) or ""
            if path in self.imports:
                a = a.with_changes(name=build_dotted(unified(path)))
            names.append(a)
        return updated.with_changes(names=names)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        if updated.relative or updated.module is None:
            return updated
        path = dotted(updated.module) or ""
        if path not in self.imports:
            return updated
        return updated.with_changes(module=build_dotted(unified(path)))

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return dotted(node) is None

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        path = dotted(original)
        if path is None or path not in self.uses:
            return updated
        return build_dotted(unified(path))


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


def _old_root(path: str) -> bool:
    return path.partition(".")[0] in UNIFIED


class UnifiedImportsRule(Rule):
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

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # Every import of an old root moves; so does every dotted use ``pytorch_lightning.x``
        # when some ``import pytorch_lightning[.x]`` without ``as`` binds the root name
        # (anywhere in the file: an alias such as ``pl`` needs no change).
        sites: List[Site] = []
        roots: Set[str] = set()
        attributes: List[ast.Attribute] = []
        for node in source.nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    if _old_root(a.name):
                        sites.append(Site(node.lineno, node.col_offset, a.name, IMPORT))
                        if a.asname is None:
                            roots.add(a.name.partition(".")[0])
            elif isinstance(node, ast.ImportFrom):
                if not node.level and node.module and _old_root(node.module):
                    sites.append(Site(node.lineno, node.col_offset, node.module, IMPORT))
            elif type(node) is ast.Attribute:
                attributes.append(node)
        if roots:
            inner: Set[int] = set()  # the chains inside a longer chain (``a.b`` of ``a.b.c``)
            for node in attributes:  # (``ast.walk`` gives a chain before the nodes inside it)
                if id(node) in inner:
                    inner.add(id(node.value))
                    continue
                path = ast_dotted(node)
                if path is None:
                    continue
                inner.add(id(node.value))
                if path.partition(".")[0] in roots:
                    sites.append(Site(node.lineno, node.col_offset, path, USE))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        t = _Unify(frozenset(s.target for s in sites if s.action == IMPORT),
                   frozenset(s.target for s in sites if s.action == USE))
        out = transform(module, t)
        return _drop_duplicate_imports(out, module) if out is not module else out
