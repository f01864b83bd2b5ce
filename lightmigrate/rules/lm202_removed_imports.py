"""LM202: 1.x modules, classes and functions that Lightning 2.x removed get a marker that says
what to do instead."""

from __future__ import annotations

from typing import FrozenSet, List, Optional

import libcst as cst

from lightmigrate.cst.walk import transform, PrunedTransformer

from lightmigrate.cst.helpers import add_marker, param_names
from lightmigrate.analysis.facts import file_facts
from lightmigrate.rules.shared.import_rewrite import ImportRewriter, dotted, reaches
from lightmigrate.catalog.imports import ENTRIES, GUIDE, Entry
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.gates import RootedTable, import_path_words, imports_pl_root

CODE = "LM202"

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


# For the gate: the removed names (root-relative).
REMOVED_TABLE = RootedTable(e.old[3:] for e in ENTRIES if removed(e))  # every ``old`` starts with "pl."


def _may_mark_plugin_methods(facts, words) -> bool:
    """A method ``_PluginMethods`` marks is defined, and a base of some class of the file is
    reached through an import from a Lightning package, on a path that contains the package of
    that method (accelerators for ``setup_environment``; strategies or plugins for the others)."""
    packages = set()
    for name in facts.defs.intersection(_PLUGIN_METHODS):
        packages.update(_PLUGIN_METHODS[name][2])
    if "optimizer_idx" in facts.params and not facts.defs.isdisjoint(_OPT_IDX_METHODS):
        packages.update(_OPT_IDX_PACKAGES)
    if not any(p.lstrip(".") in w for w in words for p in packages):
        return False
    for base in facts.bases:
        head, _, rest = base.partition(".")
        for path in facts.lightning_bindings.get(head, ()):
            full = path + ("." + rest if rest else "")
            if any(p in full for p in packages):
                return True
    return False


def _plugin_packages(expr: cst.BaseExpression, paths) -> FrozenSet[str]:
    """The plugin packages (``_PLUGIN_PACKAGES``) in the Lightning path of the base ``expr``;
    empty when it is not reached through a Lightning or Fabric import."""
    path = dotted(expr)
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
    def __init__(self, paths) -> None:
        self.paths = paths

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        packages = frozenset().union(*(_plugin_packages(b.value, self.paths) for b in updated.bases))
        if not packages or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        items = list(updated.body.body)
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            why: Optional[str] = None
            name = item.name.value
            if name in _PLUGIN_METHODS and not packages.isdisjoint(_PLUGIN_METHODS[name][2]):
                row, what, _ = _PLUGIN_METHODS[name]
                why = f"`{name}` ({row}): {what}; see {GUIDE}"
            elif (name in _OPT_IDX_METHODS and not packages.isdisjoint(_OPT_IDX_PACKAGES)
                  and "optimizer_idx" in param_names(item)):
                why = (f"`{name}` (R45): 2.x plugins and strategies no longer pass `optimizer_idx`: "
                       f"remove the parameter; see {GUIDE}")
            if why:
                items[i] = add_marker(item, CODE, why)
        return updated.with_changes(body=updated.body.with_changes(body=items))


class RemovedApisRule(GatedRule):
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

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # Markers go on names reached through an import of a Lightning root that the table
        # lists as removed (the words first, then each name looked up as the rewrite does),
        # and on some methods of classes based on Lightning plugins.
        facts = file_facts(text)
        if not facts.parsed:
            return True
        words = import_path_words(facts)
        if imports_pl_root(facts) and REMOVED_TABLE.may_reach(facts) and reaches(facts, removed):
            return True
        # (the plugin bases may also come from ``lightning_fabric``)
        return (imports_pl_root(facts) or "lightning_fabric" in facts.modules) and _may_mark_plugin_methods(facts, words)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        rewriter = ImportRewriter(CODE, module, removed)
        out = transform(module, rewriter)
        paths = rewriter.original_paths
        return transform(out, _PluginMethods(paths)) if paths else out


__all__: List[str] = ["RemovedApisRule"]
