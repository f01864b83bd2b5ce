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

from typing import FrozenSet, List, Optional

import libcst as cst
from lightmigrate.cst.matchers import m

from lightmigrate.cst.helpers import add_marker, positional_params, self_name, module_text, code_of
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import KindTransformer, ensure_indexed
from lightmigrate.rules.shared.gates import hook_facts, hooks_gate_facts, hooks_path_kinds
from lightmigrate.cst.helpers import ensure_import, lightning_root
from lightmigrate.rules.shared.marking import StatementMarker
from lightmigrate.cst.walk import transform, PrunedTransformer, find_all

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


def _returns_value(func: cst.FunctionDef) -> bool:
    for ret in find_all(func.body, m.Return()):
        value = ret.value  # type: ignore[attr-defined]
        if value is not None and not m.matches(value, m.Name("None")):
            return True
    return False


def _save_returns(text: str, facts) -> bool:
    """Whether some ``on_save_checkpoint`` of the file may return a value (what the callback
    fix marks, ``_returns_value``), read from Python's ``ast`` (True when it cannot say)."""
    if "on_save_checkpoint" not in facts.defs:
        return False
    found = hook_facts(text)
    return found is None or "on_save_checkpoint" in found.returning


class _ModuleCalls(PrunedTransformer):
    """``SELF.log`` keyword fixes and ``SELF.summarize`` in one method."""

    def __init__(self, slf: str, root: str) -> None:
        self.slf = slf
        self.root = root
        self.fixes: List[str] = []
        self.needs_import = False

    def leave_Call(self, original, updated):
        f = updated.func
        if not (isinstance(f, cst.Attribute) and m.matches(f.value, m.Name(self.slf))):
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
    def __init__(self, ctx, module) -> None:
        super().__init__(ctx, module)
        self.root = lightning_root(module)
        self.needs_import = False

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        changed = False
        own_model_size = bool(find_all(updated, m.AssignTarget(target=m.Attribute(attr=m.Name("model_size")))))
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            name = item.name.value
            params = positional_params(item)
            why: Optional[str] = None
            if kind == "callback" and name == "on_load_checkpoint" and len(params) == 4 and \
                    params[3].name.value == "callback_state":
                why = WHY_CALLBACK_STATE
            elif kind == "callback" and name == "on_save_checkpoint" and _returns_value(item):
                why = WHY_SAVE_RETURN
            elif kind == "datamodule" and name in ("on_save_checkpoint", "on_load_checkpoint"):
                why = WHY_DM.format(name=name)
            elif kind == "module" and name in ("add_to_queue", "get_from_queue"):
                why = WHY_QUEUE.format(name=name)
            if why:
                items[i] = add_marker(item, CODE, why)
                changed = True
                continue
            receiver = params[0].name.value if kind == "module" and params else \
                params[2].name.value if kind == "callback" and len(params) > 2 else None
            if receiver and not own_model_size:
                marker = StatementMarker(CODE, _why_model_size(receiver), (cst.Attribute,))
                item = transform(item, marker)  # type: ignore[assignment]
                if marker.marked:
                    items[i] = item
                    changed = True
            if kind == "module" and params:
                fixer = _ModuleCalls(self_name(item), self.root)
                new = transform(item, fixer)
                if fixer.fixes:
                    items[i] = new
                    changed = True
                    self.needs_import = self.needs_import or fixer.needs_import
                    self.report(CODE, original.body.body[i], f"{self.class_name}.{name}: " + ", ".join(fixer.fixes))
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


def _why_model_size(receiver: str):
    def why(node: cst.CSTNode) -> Optional[str]:
        if m.matches(node, m.Attribute(value=m.Name(receiver), attr=m.Name("model_size"))):
            return WHY_MODEL_SIZE
        return None
    return why


def _why_pbar(node: cst.CSTNode) -> Optional[str]:
    if isinstance(node, cst.Call) and m.matches(node.func, m.Attribute(attr=m.Name("get_progress_bar_dict"))):
        return WHY_PBAR
    return None


class LegacyModuleApiRule(GatedRule):
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

    gate_reads_hook_facts = True  # whether an on_save_checkpoint returns a value

    def gate_kinds(self, text: str) -> Optional[FrozenSet[str]]:
        # get_progress_bar_dict() is marked in any file; the rest only in classes of a kind
        return None if "get_progress_bar_dict" in text else _ANY_KIND

    def needed(self, text: str, ctx: RuleContext) -> bool:
        facts = hooks_gate_facts(text, ctx)
        if facts is None or "get_progress_bar_dict" in facts.calls:  # marked in any file
            return True
        # The rest happens in classes of a kind the index knows, per kind (see _Fix.edit_class).
        log_keywords = facts.call_keywords.get("log", frozenset()) | facts.call_keywords.get("log_dict", frozenset())
        work = set()
        if "model_size" in facts.attributes:
            work |= {"module", "callback"}
        if (facts.defs & {"add_to_queue", "get_from_queue"} or "summarize" in facts.calls
                or log_keywords & {"sync_dist_op", "tbptt_reduce_fx", "tbptt_pad_token"}):
            work.add("module")
        if _save_returns(text, facts) or ("on_load_checkpoint" in facts.defs and "callback_state" in facts.params):
            work.add("callback")
        if facts.defs & {"on_save_checkpoint", "on_load_checkpoint"}:
            work.add("datamodule")
        if not work:
            return False
        kinds = hooks_path_kinds(ctx)
        return kinds is None or bool(kinds & work)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        ensure_indexed(module, ctx)
        fixer = _Fix(ctx, module)
        out = transform(module, fixer)
        if fixer.needs_import:
            out = ensure_import(out, f"{fixer.root}.utilities.model_summary", "summarize")
        if "get_progress_bar_dict()" in module_text(out):
            out = transform(out, StatementMarker(CODE, _why_pbar, (cst.Call,)))
        return out
