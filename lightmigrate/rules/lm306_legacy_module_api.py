"""LM306: the LightningModule, Callback and DataModule API removed before 1.9 (spec A.8
"LightningModule" and "Callback and DataModule checkpoint state").

Rewritten (same behaviour):
- ``self.log(..., sync_dist_op=X)`` -> ``reduce_fx=X`` (the 1.4 name of the same option);
  ``tbptt_reduce_fx=`` / ``tbptt_pad_token=`` (ignored since 1.5, rejected by 2.x) are dropped.
- ``self.summarize(max_depth=N)`` / ``self.summarize(mode="top"|"full")`` in a LightningModule ->
  ``summarize(self, max_depth=...)`` from ``<root>.utilities.model_summary``.

Marked (a human decides):
- ``Callback.on_load_checkpoint(trainer, pl_module, callback_state)``: 2.x passes the whole
  checkpoint; the callback's own state belongs in ``state_dict``/``load_state_dict``.
- ``Callback.on_save_checkpoint`` returning a value: 2.x ignores it (``state_dict`` instead).
- DataModule ``on_save_checkpoint``/``on_load_checkpoint``: never called by 2.x
  (``state_dict``/``load_state_dict``).
- ``.model_size`` of a LightningModule, ``get_progress_bar_dict()`` calls, ``add_to_queue`` /
  ``get_from_queue`` overrides: removed without a drop-in replacement.
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Dict, List, Optional, Sequence, Set

import libcst as cst
from lightmigrate.cst.helpers import is_attribute, is_name

from lightmigrate.cst.helpers import add_marker, self_name, code_of
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import KindTransformer, kind_classes
from lightmigrate.rules.shared.method_sites import (
    has_marker_above, index_source, marked_statement, methods, parents, physical_lines, positional,
    statement_lines,
)
from lightmigrate.cst.helpers import ensure_import, lightning_root
from lightmigrate.rules.shared.marking import StatementMarker
from lightmigrate.cst.walk import transform, PrunedTransformer
from lightmigrate.analysis.ast_nodes import ast_nodes

CODE = "LM306"
_ANY_KIND = frozenset({"module", "callback", "datamodule"})
GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"
WHY_CALLBACK_STATE = ("Lightning 2.x passes the whole checkpoint to `on_load_checkpoint`, not this callback's state: "
                      "move the state to `state_dict()` / `load_state_dict(state_dict)`")
WHY_SAVE_RETURN = ("Lightning 2.x ignores what `on_save_checkpoint` returns: return the callback's state from "
                   "`state_dict()` and restore it in `load_state_dict(state_dict)`")
WHY_DM = ("Lightning 2.x never calls `{name}` on a LightningDataModule: use `state_dict()` / "
          "`load_state_dict(state_dict)`")
WHY_QUEUE = ("`{name}` is no longer called (the ddp_spawn result queue changed in 1.7): move the logic to "
             "`on_fit_end` / the strategy")
WHY_MODEL_SIZE = ("`model_size` was removed: use `pl.utilities.model_summary.ModelSummary(model).model_size`")
WHY_PBAR = ("`get_progress_bar_dict()` was removed: read `trainer.progress_bar_metrics`, or override a progress "
            "bar's `get_metrics(trainer, pl_module)`")
_MODES = {"top": "1", "full": "-1"}


_LOG_KEYWORDS = frozenset({"sync_dist_op", "tbptt_reduce_fx", "tbptt_pad_token"})


def _returns_value(func: ast.AST) -> bool:
    """Whether some ``return`` in the body of ``func`` (nested functions too) gives a value other
    than ``None``."""
    for stmt in func.body:
        for node in ast_nodes(stmt):
            if isinstance(node, ast.Return) and node.value is not None and not (
                    isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
    return False


def _one_string(text: str, node: ast.Constant) -> bool:
    """Whether ``node`` is written as one string literal (libcst's ``SimpleString``), not as
    several side by side (``"to" "p"``)."""
    code = ast.get_source_segment(text, node) or ""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(tokens) == 1


def _summarize_fixed(text: str, call: ast.Call) -> bool:
    """Whether ``_ModuleCalls`` rewrites this ``SELF.summarize(...)``: keywords only, each
    ``max_depth=`` or ``mode=`` a literal "top" or "full"."""
    if call.args:
        return False
    for kw in call.keywords:
        if kw.arg == "max_depth":
            continue
        if kw.arg == "mode" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str) and \
                kw.value.value in _MODES and _one_string(text, kw.value):
            continue
        return False
    return True


def _module_calls(text: str, func: ast.AST, slf: str) -> bool:
    """Whether ``_ModuleCalls`` changes a call in ``func``: ``SLF.log``/``log_dict`` with a
    keyword it renames or drops, or a ``SLF.summarize(...)`` it rewrites."""
    for node in ast_nodes(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        f = node.func
        if not (isinstance(f.value, ast.Name) and f.value.id == slf):
            continue
        if f.attr in ("log", "log_dict") and any(kw.arg in _LOG_KEYWORDS for kw in node.keywords):
            return True
        if f.attr == "summarize" and _summarize_fixed(text, node):
            return True
    return False


class _Marks:
    """Where ``StatementMarker`` would put a new LM306 mark, on ``ast``: the statement holding a
    node, unless that statement carries an LM306 mark already (then marking changes nothing).
    The maps it needs are made on the first question."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.lines = physical_lines(source.text)
        self._up: Optional[Dict[ast.AST, ast.AST]] = None
        self._in_suite: Set[ast.stmt] = set()

    def new(self, node: ast.AST) -> Optional[ast.stmt]:
        if self._up is None:
            self._up = parents(self.source.tree)
            self._in_suite = {st for st, line in statement_lines(self.source.tree, self.source.text) if line is None}
        stmt = marked_statement(node, self._up, self._in_suite)
        if stmt is None or has_marker_above(self.lines, stmt, CODE):
            return None
        return stmt

    def unmarked(self, stmt: ast.stmt) -> bool:
        return not has_marker_above(self.lines, stmt, CODE)


class _ModuleCalls(PrunedTransformer):
    """``SELF.log`` keyword fixes and ``SELF.summarize`` in one method."""

    def __init__(self, slf: str, root: str) -> None:
        self.slf = slf
        self.root = root
        self.fixes: List[str] = []
        self.needs_import = False

    def leave_Call(self, original, updated):
        f = updated.func
        if not (isinstance(f, cst.Attribute) and is_name(f.value, self.slf)):
            return updated
        if f.attr.value in ("log", "log_dict"):
            args = []
            before = len(self.fixes)
            for a in updated.args:
                kw = a.keyword.value if a.keyword is not None else None
                if kw == "sync_dist_op":
                    args.append(a.with_changes(keyword=cst.Name("reduce_fx")))
                    self.fixes.append("sync_dist_op= -> reduce_fx=")
                elif kw in ("tbptt_reduce_fx", "tbptt_pad_token"):
                    self.fixes.append(f"dropped {kw}=")
                else:
                    args.append(a)
            if len(self.fixes) != before:
                if args:
                    args[-1] = args[-1].with_changes(comma=updated.args[-1].comma)
                return updated.with_changes(args=args)
            return updated
        if f.attr.value == "summarize":
            depth = "1"
            for a in updated.args:
                if a.keyword is None:
                    return updated
                if a.keyword.value == "max_depth":
                    depth = code_of(a.value)
                elif a.keyword.value == "mode" and isinstance(a.value, cst.SimpleString) and \
                        a.value.evaluated_value in _MODES:
                    depth = _MODES[a.value.evaluated_value]  # type: ignore[index]
                else:
                    return updated
            self.fixes.append("self.summarize() -> summarize(self)")
            self.needs_import = True
            return cst.parse_expression(f"summarize({self.slf}, max_depth={depth})")
        return updated


class _Fix(KindTransformer):
    """Carries out the method sites, found by the line of their ``def``: "mark" (data: why),
    "model-size" (data: the receiver whose ``.model_size`` marks its statements), "calls" (the
    ``self.log`` / ``self.summarize`` fixes)."""

    def __init__(self, ctx, module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target for s in sites))
        self.root = lightning_root(module)
        self.needs_import = False
        self.by_line: Dict[int, List[Site]] = {}
        for site in sites:
            self.by_line.setdefault(site.line, []).append(site)

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            here = self.by_line.get(self.ctx.position(self.module, original.body.body[i])[0], ())
            for site in here:
                if site.action == "mark":
                    items[i] = add_marker(item, CODE, site.data)
                elif site.action == "model-size":
                    items[i] = transform(items[i], StatementMarker(CODE, _why_model_size(site.data), (cst.Attribute,)))
                elif site.action == "calls":
                    fixer = _ModuleCalls(self_name(items[i]), self.root)
                    items[i] = transform(items[i], fixer)
                    self.needs_import = self.needs_import or fixer.needs_import
                    self.report(CODE, original.body.body[i], f"{self.class_name}.{item.name.value}: " + ", ".join(fixer.fixes))
                changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


def _method_sites(source: SourceFile, cls: ast.ClassDef, kind: str, marks: _Marks) -> List[Site]:
    """The sites of the methods of one class statement of ``kind`` (see ``_Fix``)."""
    sites = []
    own_model_size = any(isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Attribute) and t.attr == "model_size" for t in node.targets) for node in ast_nodes(cls))
    for func in methods(cls):
        name = func.name
        params = positional(func)

        def site(action: str, data: object) -> Site:
            return Site(func.lineno, func.col_offset, cls.name, action, data)

        why: Optional[str] = None
        if kind == "callback" and name == "on_load_checkpoint" and len(params) == 4 and \
                params[3].arg == "callback_state":
            why = WHY_CALLBACK_STATE
        elif kind == "callback" and name == "on_save_checkpoint" and _returns_value(func):
            why = WHY_SAVE_RETURN
        elif kind == "datamodule" and name in ("on_save_checkpoint", "on_load_checkpoint"):
            why = WHY_DM.format(name=name)
        elif kind == "module" and name in ("add_to_queue", "get_from_queue"):
            why = WHY_QUEUE.format(name=name)
        if why:
            if marks.unmarked(func):
                sites.append(site("mark", why))
            continue
        receiver = params[0].arg if kind == "module" and params else \
            params[2].arg if kind == "callback" and len(params) > 2 else None
        if receiver and not own_model_size and "model_size" in source.text and any(
                isinstance(node, ast.Attribute) and node.attr == "model_size" and isinstance(node.value, ast.Name)
                and node.value.id == receiver and marks.new(node) is not None for node in ast_nodes(func)):
            sites.append(site("model-size", receiver))
        if kind == "module" and params and _module_calls(source.text, func, params[0].arg):
            sites.append(site("calls", None))
    return sites


def _why_model_size(receiver: str):
    def why(node: cst.CSTNode) -> Optional[str]:
        if is_attribute(node, "model_size", receiver):
            return WHY_MODEL_SIZE
        return None
    return why


def _why_pbar(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.Call) and is_attribute(node.func, "get_progress_bar_dict"):
        return WHY_PBAR
    return None


class LegacyModuleApiRule(Rule):
    code = CODE
    name = "legacy-module-api"
    summary = "Removed LightningModule/Callback/DataModule APIs: `sync_dist_op`, `summarize()` rewritten; checkpoint-state hooks marked."
    spec_rows = ("A8-module", "A8-checkpoint-state")
    guide = (f"{GUIDE} (and the 1.6-1.8 upgrade tables: 'LightningModule.summarize', 'model_size', "
             "'get_progress_bar_dict', 'sync_dist_op', 'callback_state', 'DataModule.on_save_checkpoint')")
    safety = Safety.PRESERVING
    triggers = ("sync_dist_op", "tbptt_reduce_fx", "tbptt_pad_token", "summarize(", "callback_state",
                "on_save_checkpoint", "on_load_checkpoint", "model_size", "get_progress_bar_dict", "add_to_queue",
                "get_from_queue")
    description = (
        "APIs removed between 1.5 and 1.9 that 2.x code can still contain. Rewritten: `self.log(sync_dist_op=)` "
        "-> `reduce_fx=`; `tbptt_reduce_fx=`/`tbptt_pad_token=` dropped (ignored since 1.5); "
        "`self.summarize(max_depth=N | mode=\"top\"/\"full\")` -> `summarize(self, max_depth=...)` imported from "
        "the file's Lightning root. Marked: `Callback.on_load_checkpoint(..., callback_state)` (2.x passes "
        "the whole checkpoint), `Callback.on_save_checkpoint` returning state (ignored by 2.x), DataModule "
        "`on_save/on_load_checkpoint` (never called), `model_size`, `get_progress_bar_dict()` calls, "
        "`add_to_queue`/`get_from_queue` overrides."
    )
    coverage = {"A8-module": Handling.REWRITTEN, "A8-checkpoint-state": Handling.MARKED}
    examples = (
        Example(
            title="log options and summarize",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log("loss", batch.sum(), sync_dist=True, sync_dist_op="max", tbptt_reduce_fx="mean")
        return batch.sum()

    def on_fit_start(self):
        print(self.summarize(mode="full"))
''',
            after='''\
import pytorch_lightning as pl
from pytorch_lightning.utilities.model_summary import summarize


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log("loss", batch.sum(), sync_dist=True, reduce_fx="max")
        return batch.sum()

    def on_fit_start(self):
        print(summarize(self, max_depth=-1))
''',
        ),
        Example(
            title="callback state through the checkpoint hooks",
            before='''\
from pytorch_lightning.callbacks import Callback


class Counter(Callback):
    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        return {"count": self.count}

    def on_load_checkpoint(self, trainer, pl_module, callback_state):
        self.count = callback_state["count"]
''',
            after='''\
from pytorch_lightning.callbacks import Callback


class Counter(Callback):
    # TODO(lightmigrate): LM306 Lightning 2.x ignores what `on_save_checkpoint` returns: return the callback's state from `state_dict()` and restore it in `load_state_dict(state_dict)`
    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        return {"count": self.count}

    # TODO(lightmigrate): LM306 Lightning 2.x passes the whole checkpoint to `on_load_checkpoint`, not this callback's state: move the state to `state_dict()` / `load_state_dict(state_dict)`
    def on_load_checkpoint(self, trainer, pl_module, callback_state):
        self.count = callback_state["count"]
''',
        ),
        Example(
            title="2.x-style checkpoint hooks are fine",
            before='''\
from pytorch_lightning.callbacks import Callback


class Counter(Callback):
    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        checkpoint["count"] = self.count

    def on_load_checkpoint(self, trainer, pl_module, checkpoint):
        self.count = checkpoint["count"]
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        index_source(source, ctx)
        marks = _Marks(source)
        sites: List[Site] = []
        for cls, kind in kind_classes(source, ctx):
            sites += _method_sites(source, cls, kind, marks)
        # get_progress_bar_dict() calls: their statements are marked anywhere in the file
        if "get_progress_bar_dict()" in source.text:
            for node in source.nodes:
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr == "get_progress_bar_dict":
                    stmt = marks.new(node)
                    if stmt is not None:
                        sites.append(Site(stmt.lineno, stmt.col_offset, "", "pbar", None))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        out = module
        methods_sites = [s for s in sites if s.action != "pbar"]
        if methods_sites:
            fixer = _Fix(ctx, module, methods_sites)
            out = transform(module, fixer)
            if fixer.needs_import:
                out = ensure_import(out, f"{fixer.root}.utilities.model_summary", "summarize")
        if len(methods_sites) < len(sites):
            out = transform(out, StatementMarker(CODE, _why_pbar, (cst.Call,)))
        return out
