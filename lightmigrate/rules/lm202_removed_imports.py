"""LM202: 1.x modules, classes and functions that Lightning 2.x removed get a marker that says
what to do instead."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Optional, Sequence

import libcst as cst

from lightmigrate.cst.walk import transform, PrunedTransformer

from lightmigrate import MARKER_PREFIX
from lightmigrate.analysis.ast_nodes import ast_dotted
from lightmigrate.cst.helpers import add_marker, param_names
from lightmigrate.rules.shared.import_find import FileView, table_sites
from lightmigrate.rules.shared.import_rewrite import ImportRewriter, dotted
from lightmigrate.catalog.imports import ENTRIES, GUIDE, Entry
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile

CODE = "LM202"
METHOD = "mark-method"  # the action of a site that marks a plugin method

# R44/R45: methods of custom accelerator / strategy / precision-plugin subclasses that 2.x no
# longer calls, or calls with other arguments, each with the packages whose classes had it in
# 1.9. ``Strategy.setup_environment(self)`` is another method, which 2.x still calls: only an
# accelerator's ``setup_environment(self, root_device)`` became ``setup_device``.
_ACCELERATORS, _STRATEGIES, _PLUGINS = ".accelerators", ".strategies", ".plugins"
_PLUGIN_PACKAGES = (_ACCELERATORS, _STRATEGIES, _PLUGINS)
_PLUGIN_METHODS = {
    "setup_environment": ("R44", "2.x calls `setup_device(self, device)` instead of `setup_environment(self, root_device)`: "
                                 "rename it and check the super() call", (_ACCELERATORS,)),
    "dispatch": ("R45", "2.x no longer calls `dispatch`: move the code to `setup` or `on_fit_start`",
                 (_STRATEGIES, _PLUGINS)),
}
_OPT_IDX_METHODS = frozenset({"optimizer_step", "backward", "pre_backward", "post_backward"})
_OPT_IDX_PACKAGES = (_STRATEGIES, _PLUGINS)


def removed(entry: Entry) -> bool:
    return entry.new is None


def _method_why(name: str, params: List[str], packages: FrozenSet[str]) -> Optional[str]:
    """The marker for method ``name`` (positional parameters ``params``) of a class based on
    classes of ``packages``, or None."""
    if name in _PLUGIN_METHODS and not packages.isdisjoint(_PLUGIN_METHODS[name][2]):
        row, what, _ = _PLUGIN_METHODS[name]
        return f"`{name}` ({row}): {what}; see {GUIDE}"
    if name in _OPT_IDX_METHODS and not packages.isdisjoint(_OPT_IDX_PACKAGES) and "optimizer_idx" in params:
        return (f"`{name}` (R45): 2.x plugins and strategies no longer pass `optimizer_idx`: "
                f"remove the parameter; see {GUIDE}")
    return None


def _plugin_method_sites(view: FileView) -> List[Site]:
    """The methods ``_PluginMethods`` marks: of a class (at any depth) with a body block, based
    on a class of a plugin package reached through the file's imports, that carry no LM202
    marker yet. ``target`` is "Class.method"."""
    sites: List[Site] = []
    own = f"{MARKER_PREFIX} {CODE}"
    for node in view.nodes:
        if type(node) is not ast.ClassDef or not node.body or not view.lines.starts_line(node.body[0]):
            continue
        packages = frozenset().union(*(_packages_of(ast_dotted(b), view.paths) for b in node.bases))
        if not packages:
            continue
        for item in node.body:
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = [a.arg for a in (*item.args.posonlyargs, *item.args.args)]
            if _method_why(item.name, params, packages) is None:
                continue
            if not any(own in comment for comment in view.comments.above(item)):
                sites.append(Site(item.lineno, item.col_offset, f"{node.name}.{item.name}", METHOD))
    return sites


def _plugin_packages(expr: cst.BaseExpression, paths) -> FrozenSet[str]:
    """The plugin packages (``_PLUGIN_PACKAGES``) in the Lightning path of the base ``expr``;
    empty when it is not reached through a Lightning or Fabric import."""
    return _packages_of(dotted(expr), paths)


def _packages_of(path: Optional[str], paths: Dict[str, str]) -> FrozenSet[str]:
    """The plugin packages in the Lightning path the dotted name ``path`` stands for."""
    if path is None:
        return frozenset()
    head, _, rest = path.partition(".")
    full = paths.get(head)
    if full is None:
        return frozenset()
    full = full + ("." + rest if rest else "")
    if not (full.startswith("pytorch_lightning.") or full.startswith("lightning.pytorch.")
            or full.startswith("lightning_fabric.") or full.startswith("lightning.fabric.")):
        return frozenset()
    return frozenset(p for p in _PLUGIN_PACKAGES if p in full)


class _PluginMethods(PrunedTransformer):
    """Marks the methods ``only`` names ("Class.method")."""

    def __init__(self, paths, only: FrozenSet[str]) -> None:
        self.paths = paths
        self.only = only

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        packages = frozenset().union(*(_plugin_packages(b.value, self.paths) for b in updated.bases))
        if not packages or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        items = list(updated.body.body)
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef) or f"{updated.name.value}.{item.name.value}" not in self.only:
                continue
            why = _method_why(item.name.value, param_names(item), packages)
            if why:
                items[i] = add_marker(item, CODE, why)
        return updated.with_changes(body=updated.body.with_changes(body=items))


class RemovedApisRule(Rule):
    code = CODE
    name = "removed-apis"
    summary = "Marks uses of 1.x modules, classes and functions that Lightning 2.x removed, with what to do instead."
    spec_rows = ("A.5", "L1", "L3", "CLI4", "A8-imports", "A8-callbacks-loggers")
    guide = (f"{GUIDE} (rows on removed utilities, FairScale/Horovod/IPU/HPU/apex, `LightningLite`, loops internals; "
             "PRs 16314, 16390, 16400, 16149, 16413, 16440)")
    safety = Safety.REVIEW
    triggers = ("pytorch_lightning", "lightning")
    description = (
        "Lightning 2.0 removed many 1.x utilities and integrations outright, or made them private: "
        "`LightningLite`, `pl.utilities.distributed.sync_ddp`, `get_len`, `CaptureIterableDataset`, the "
        "FairScale, Horovod, IPU, HPU and apex classes, the loop internals, `LoggerCollection`, "
        "`NeptuneLogger` (now raises), ... There is no mechanical replacement, so the rule changes no "
        "code: it puts `# TODO(lightmigrate): LM202 <what to do>` above each import (or dotted use) "
        "of such a name. The loop modules still exist in 2.x with fewer names: importing one is not marked, "
        "nor are the names 2.x still has there (the helpers it kept, such as "
        "`loops.utilities._parse_loop_limits`, and its protected loop classes), only the others. It also "
        "marks methods that 2.x no longer calls: a custom accelerator's `setup_environment(self, "
        "root_device)` (a strategy's `setup_environment(self)` is still called), a strategy's or precision "
        "plugin's `dispatch`, and their hooks that still take `optimizer_idx`."
    )
    examples = (
        Example(
            title="removed-import",
            before="from pytorch_lightning.lite import LightningLite\n",
            after=("# TODO(lightmigrate): LM202 `lite.LightningLite` was removed (R2): `LightningLite` "
                   "became `lightning_fabric.Fabric` with a different programming model (no `run()` subclassing): "
                   f"port the loop by hand; see {GUIDE}\nfrom pytorch_lightning.lite import LightningLite\n"),
        ),
        Example(
            title="kept-utility",
            before="from pytorch_lightning.utilities.seed import isolate_rng\n",
            after=None,
        ),
    )
    # rows that LM201 rewrites for their moved names stay with LM201 in the ledger
    # rows that LM201 rewrites for their moved names stay with LM201 in the ledger, and
    # A8-callbacks-loggers with LM203 (which renames ProgressBar; LM202 marks the rest of the bullet)
    coverage = {row: Handling.MARKED for row in sorted({e.row for e in ENTRIES if e.new is None} | {"R44", "R45"})
                if row not in {e.row for e in ENTRIES if e.new is not None} | {"A8-callbacks-loggers"}}

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # Markers go on the imports and dotted uses of names the table lists as removed, and
        # on some methods of classes based on Lightning plugins.
        view = FileView.of(source)
        return [*table_sites(view, CODE, removed), *_plugin_method_sites(view)]

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        names = frozenset(s.target for s in sites if s.action != METHOD)
        methods = frozenset(s.target for s in sites if s.action == METHOD)
        rewriter = ImportRewriter(CODE, module, removed, only=names)
        out = transform(module, rewriter)
        paths = rewriter.original_paths
        return transform(out, _PluginMethods(paths, methods)) if methods and paths else out


__all__: List[str] = ["RemovedApisRule"]
