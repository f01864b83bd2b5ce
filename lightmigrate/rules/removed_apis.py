"""LM202: 1.x modules, classes and functions that Lightning 2.x removed get a marker that says
what to do instead."""

from __future__ import annotations

from typing import List, Optional

import libcst as cst

from lightmigrate.cst_walk import transform, PrunedTransformer

from lightmigrate.cst_helpers import add_marker, param_names
from lightmigrate.facts import file_facts
from lightmigrate.import_rewrite import ImportRewriter, dotted
from lightmigrate.import_table import ENTRIES, GUIDE, Entry
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety
from lightmigrate.rules.gates import RootedTable, import_path_words, imports_pl_root

CODE = "LM202"

# R44/R45: methods of custom accelerator / strategy / precision-plugin subclasses that 2.x no
# longer calls, or calls with other arguments.
_PLUGIN_PACKAGES = (".accelerators", ".strategies", ".plugins")
_PLUGIN_METHODS = {
    "setup_environment": ("R44", "2.x calls `setup_device(self, device)` instead of `setup_environment(self, root_device)`: "
                                 "rename it and check the super() call"),
    "dispatch": ("R45", "2.x no longer calls `dispatch`: move the code to `setup` or `on_fit_start`"),
}
_OPT_IDX_METHODS = frozenset({"optimizer_step", "backward", "pre_backward", "post_backward"})


def removed(entry: Entry) -> bool:
    return entry.new is None


# For the gate: the removed names (root-relative).
REMOVED_TABLE = RootedTable(e.old[3:] for e in ENTRIES if removed(e))  # every ``old`` starts with "pl."
_PLUGIN_PACKAGE_WORDS = tuple(p.lstrip(".") for p in _PLUGIN_PACKAGES)


def _may_mark_plugin_methods(facts, words) -> bool:
    """A method ``_PluginMethods`` marks is defined, and a base of its class can be reached
    under a Lightning root through a module whose name contains accelerators/strategies/plugins."""
    if facts.defs.isdisjoint(_PLUGIN_METHODS) and (
            facts.defs.isdisjoint(_OPT_IDX_METHODS) or "optimizer_idx" not in facts.params):
        return False
    return any(p in w for w in words for p in _PLUGIN_PACKAGE_WORDS)


def _is_plugin_base(expr: cst.BaseExpression, paths) -> bool:
    path = dotted(expr)
    if path is None:
        return False
    head, _, rest = path.partition(".")
    full = paths.get(head)
    if full is None:
        return False
    full = full + ("." + rest if rest else "")
    if not (full.startswith("pytorch_lightning.") or full.startswith("lightning.pytorch.")
            or full.startswith("lightning_fabric.") or full.startswith("lightning.fabric.")):
        return False
    return any(p in full for p in _PLUGIN_PACKAGES)


class _PluginMethods(PrunedTransformer):
    def __init__(self, paths) -> None:
        self.paths = paths

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        if not any(_is_plugin_base(b.value, self.paths) for b in updated.bases):
            return updated
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        items = list(updated.body.body)
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            why: Optional[str] = None
            if item.name.value in _PLUGIN_METHODS:
                row, what = _PLUGIN_METHODS[item.name.value]
                why = f"`{item.name.value}` ({row}): {what}; see {GUIDE}"
            elif item.name.value in _OPT_IDX_METHODS and "optimizer_idx" in param_names(item):
                why = (f"`{item.name.value}` (R45): 2.x plugins and strategies no longer pass `optimizer_idx`: "
                       f"remove the parameter; see {GUIDE}")
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
        "of such a name. It also marks methods of custom accelerators, strategies and precision plugins "
        "that 2.x no longer calls (`setup_environment`, `dispatch`) or calls without `optimizer_idx`."
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
        # lists as removed, and on some methods of classes based on Lightning plugins.
        facts = file_facts(text)
        if not facts.parsed:
            return True
        words = import_path_words(facts)
        if imports_pl_root(facts) and REMOVED_TABLE.may_reach(facts):
            return True
        # (the plugin bases may also come from ``lightning_fabric``)
        return (imports_pl_root(facts) or "lightning_fabric" in facts.modules) and _may_mark_plugin_methods(facts, words)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        rewriter = ImportRewriter(CODE, module, removed)
        out = transform(module, rewriter)
        paths = rewriter.original_paths
        return transform(out, _PluginMethods(paths)) if paths else out


__all__: List[str] = ["RemovedApisRule"]
