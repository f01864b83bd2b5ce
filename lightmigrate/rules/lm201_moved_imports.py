"""LM201: moved and renamed 1.x imports, and every use of them, become their 2.x names."""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple

import libcst as cst

from lightmigrate.rules.shared.import_find import FileView, table_sites
from lightmigrate.rules.shared.import_rewrite import ImportRewriter, drop_unused
from lightmigrate.catalog.imports import ENTRIES, GUIDE, Entry
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.cst.walk import transform
from lightmigrate.cst.helpers import code_of

CODE = "LM201"


def _spawn_positional_why(old: str) -> str:
    return (f"`{old.rsplit('.', 1)[-1]}` took `process_group_backend` as its 9th positional argument; "
            f"`DDPStrategy` takes `model_averaging_period` there: pass it by keyword; see {GUIDE}")


def _spawn_star_why(old: str) -> str:
    return (f"`{old.rsplit('.', 1)[-1]}` defaulted to `start_method=\"spawn\"`; `DDPStrategy` defaults "
            f"to \"popen\": make sure the `**` arguments hold `start_method=\"spawn\"`; see {GUIDE}")


def _amp_why(old: str) -> str:
    return (f"`{old.rsplit('.', 1)[-1]}` took precision 16 or \"bf16\"; 2.x `MixedPrecision` "
            f"takes \"16-mixed\" or \"bf16-mixed\": convert this value; see {GUIDE}")


def _spawn_fix(call: cst.Call, old: str) -> Tuple[cst.Call, Optional[str]]:
    """``DDPSpawnStrategy(...)`` -> ``DDPStrategy(start_method="spawn", ...)``."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) > 8:  # 1.9 binds the 9th positional to process_group_backend, 2.x to model_averaging_period
        return call, _spawn_positional_why(old)
    if any(a.keyword is not None and a.keyword.value == "start_method" for a in call.args) or \
            any(a.star == "**" for a in call.args):
        if any(a.star == "**" for a in call.args) and not any(
                a.keyword is not None and a.keyword.value == "start_method" for a in call.args):
            return call, _spawn_star_why(old)
        return call, None
    arg = cst.Arg(keyword=cst.Name("start_method"), value=cst.SimpleString('"spawn"'),
                  equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    args = list(call.args)
    if args:
        last = args[-1]
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        trailing = last.comma
        return call.with_changes(args=[*args, arg.with_changes(comma=trailing)]), None
    return call.with_changes(args=[arg]), None


_PRECISION = {"16": '"16-mixed"', "'16'": '"16-mixed"', '"16"': '"16-mixed"', "'bf16'": '"bf16-mixed"',
              '"bf16"': '"bf16-mixed"'}


def _amp_fix(call: cst.Call, old: str) -> Tuple[cst.Call, Optional[str]]:
    """``NativeMixedPrecisionPlugin(16, "cuda")`` -> ``MixedPrecision("16-mixed", "cuda")``."""
    args = list(call.args)
    for i, a in enumerate(args):
        if (a.keyword is None and i == 0 and not a.star) or (a.keyword is not None and a.keyword.value == "precision"):
            code = code_of(a.value)
            if code in ("'16-mixed'", '"16-mixed"', "'bf16-mixed'", '"bf16-mixed"'):
                return call, None
            if code not in _PRECISION:
                return call, _amp_why(old)
            args[i] = a.with_changes(value=cst.parse_expression(_PRECISION[code]))
            return call.with_changes(args=args), None
    return call, None


def _combined_fix(call: cst.Call, old: str) -> Tuple[cst.Call, Optional[str]]:
    """``CombinedLoader(loaders=...)`` -> ``CombinedLoader(iterables=...)``."""
    args = [a.with_changes(keyword=cst.Name("iterables")) if a.keyword is not None and a.keyword.value == "loaders" else a
            for a in call.args]
    return (call.with_changes(args=args) if args != list(call.args) else call), None


CALL_FIXES = {"DDPSpawnStrategy": _spawn_fix, "DDPSpawnPlugin": _spawn_fix,
              "NativeMixedPrecisionPlugin": _amp_fix, "MixedPrecisionPlugin": _amp_fix,
              "CombinedLoader": _combined_fix}


# The same decisions on Python's ``ast`` (for ``find``): None when the fix leaves the call as
# it is, ("rewrite", None) when it changes it, ("mark", why) when it marks it.
Verdict = Optional[Tuple[str, Optional[str]]]


def _spawn_check(call: ast.Call, old: str, text: str) -> Verdict:
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(positional) > 8:
        return "mark", _spawn_positional_why(old)
    has_start = any(k.arg == "start_method" for k in call.keywords)
    if has_start:
        return None
    if any(k.arg is None for k in call.keywords):  # ``**kwargs``
        return "mark", _spawn_star_why(old)
    return "rewrite", None


_MIXED = ("'16-mixed'", '"16-mixed"', "'bf16-mixed'", '"bf16-mixed"')


def _amp_check(call: ast.Call, old: str, text: str) -> Verdict:
    # the first argument when it is positional and not starred (a plain positional argument
    # never follows a keyword), else ``precision=``
    if call.args and not isinstance(call.args[0], ast.Starred):
        value = call.args[0]
    else:
        precision = next((k for k in call.keywords if k.arg == "precision"), None)
        if precision is None:
            return None
        value = precision.value
    code = ast.get_source_segment(text, value)
    if code in _MIXED:
        return None
    if code not in _PRECISION:
        return "mark", _amp_why(old)
    return "rewrite", None


def _combined_check(call: ast.Call, old: str, text: str) -> Verdict:
    return ("rewrite", None) if any(k.arg == "loaders" for k in call.keywords) else None


CALL_CHECKS = {"DDPSpawnStrategy": _spawn_check, "DDPSpawnPlugin": _spawn_check,
               "NativeMixedPrecisionPlugin": _amp_check, "MixedPrecisionPlugin": _amp_check,
               "CombinedLoader": _combined_check}


_SPAWN_WHY = ("`{0}` is `DDPStrategy` in 2.x: this check or subclass now also matches plain DDP; compare "
              "`strategy._start_method == \"spawn\"` if the difference matters; see " + GUIDE)
NON_CALL_WHYS = {name: _SPAWN_WHY.format(name) for name in ("DDPSpawnStrategy", "DDPSpawnPlugin")}


def moved(entry: Entry) -> bool:
    return entry.new is not None


class MovedImportsRule(Rule):
    code = CODE
    name = "moved-imports"
    summary = "Moved and renamed 1.x modules, classes and functions become their 2.x names, in imports and every use."
    # The exact rows are in ``coverage``; the table shows the sections.
    spec_rows = ("A.5", "L3", "CLI4", "A8-imports")
    guide = (f"{GUIDE} (rows on moved imports: `pl.profiler`, `pl.utilities.*`, precision plugins, strategies; "
             "PRs 16059, 16390, 16413, 16490, 16809, 16781, 17383, 18840)")
    safety = Safety.PRESERVING
    triggers = ("pytorch_lightning", "lightning")
    description = (
        "Lightning 2.0 moved or renamed many 1.x names (`pl.profiler` -> `pl.profilers`, "
        "`pl.utilities.distributed.rank_zero_only` -> `pl.utilities.rank_zero.rank_zero_only`, "
        "`LightningLoggerBase` -> `Logger`, `NativeMixedPrecisionPlugin` -> `MixedPrecision`, "
        "`DDPSpawnStrategy(...)` -> `DDPStrategy(start_method=\"spawn\", ...)`, ...). The rule rewrites "
        "the import and every use, however the name is reached (`from a import C as D`, "
        "`import a.b as m; m.C`, `pl.a.b.C`), keeps the project's root (`pytorch_lightning` or "
        "`lightning.pytorch`, with `lightning_fabric` or `lightning.fabric` to match) and its aliases, "
        "and never leaves an import it made unused or duplicate. Where the new API differs in its "
        "arguments it converts them (`precision=16` -> \"16-mixed\", `loaders=` -> `iterables=`) or "
        "marks the call. The full table is `lightmigrate/catalog/imports.py`."
    )
    examples = (
        Example(
            title="profiler-module",
            before="from pytorch_lightning.profiler import SimpleProfiler\n\nprofiler = SimpleProfiler()\n",
            after="from pytorch_lightning.profilers import SimpleProfiler\n\nprofiler = SimpleProfiler()\n",
        ),
        Example(
            title="dotted-and-renamed",
            before=("import lightning.pytorch as pl\nfrom lightning.pytorch.loggers.base import LightningLoggerBase\n\n\n"
                    "class MyLogger(LightningLoggerBase):\n    pass\n\n\n"
                    "strategy = pl.strategies.DDPSpawnStrategy(find_unused_parameters=False)\n"),
            after=("import lightning.pytorch as pl\nfrom lightning.pytorch.loggers.logger import Logger\n\n\n"
                   "class MyLogger(Logger):\n    pass\n\n\n"
                   "strategy = pl.strategies.DDPStrategy(find_unused_parameters=False, start_method=\"spawn\")\n"),
        ),
        Example(
            title="already-2x",
            before="from pytorch_lightning.profilers import SimpleProfiler\nfrom pytorch_lightning import Trainer\n",
            after=None,
        ),
    )
    coverage = {row: Handling.REWRITTEN for row in sorted({e.row for e in ENTRIES if e.new is not None})}

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # The imports and dotted uses of names the table moves, reached through the file's
        # imports, and the calls of the CALL_FIXES names through any import whose arguments
        # change or get a marker.
        return table_sites(FileView.of(source), CODE, moved, CALL_CHECKS, NON_CALL_WHYS)

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        only = frozenset(s.target for s in sites)
        rewriter = ImportRewriter(CODE, module, moved, CALL_FIXES, NON_CALL_WHYS, only=only)
        out = transform(module, rewriter)
        return drop_unused(out, rewriter.info, rewriter.touched)
