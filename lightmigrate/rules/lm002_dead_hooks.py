"""LM002: methods that look like Lightning hooks but that Lightning 2.x never calls (or cannot).

Lightning 2.x silently ignores a hook it removed (``training_step_end``, ``on_epoch_end``), a
misspelt hook (``on_training_epoch_end``), and it cannot call a hook whose signature needs more
positional arguments than 2.x passes (``on_train_batch_end(self, outputs, batch, batch_idx,
dataloader_idx)``) or binds them differently (``optimizer_idx``). Their code just stops running,
or fails at the first call, with nothing to point at the cause. This rule runs after the rules
that migrate such hooks and marks whatever is left, so it is never silent.
"""

from __future__ import annotations

import functools
from typing import FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst
from lightmigrate.cst.matchers import m

from lightmigrate import MARKER_PREFIX
from lightmigrate.cst.helpers import add_marker, positional_params, module_text
from lightmigrate.catalog.hooks import hook_table, likely_misspelling, removed_table
from lightmigrate.analysis.project import CALLBACK_NAMES, ClassInfo
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.cst.walk import transform, PrunedTransformer, find_all
from lightmigrate.rules.shared.class_edit import HOOK_KINDS
from lightmigrate.rules.shared.gates import hooks_gate_facts, hooks_kind_methods, hooks_path_kinds

CODE = "LM002"
DATALOADER_IDX_HOOKS = frozenset(
    {"validation_step", "test_step", "predict_step", "on_validation_batch_start", "on_validation_batch_end",
     "on_test_batch_start", "on_test_batch_end", "on_predict_batch_start", "on_predict_batch_end"}
)
OPTIMIZER_IDX_NAMES = frozenset({"optimizer_idx", "opt_idx"})


def _has_any_marker(node: cst.FunctionDef) -> bool:
    return any(line.comment is not None and MARKER_PREFIX in line.comment.value for line in node.leading_lines)


def _self_calls(cls: cst.ClassDef) -> Set[str]:
    """Names called as ``self.NAME(...)`` in the methods of ``cls`` (first parameter as self)."""
    found: Set[str] = set()
    for item in getattr(cls.body, "body", ()):
        if isinstance(item, cst.FunctionDef) and positional_params(item):
            slf = positional_params(item)[0].name.value
            for call in find_all(item, m.Call(func=m.Attribute(value=m.Name(slf)))):
                found.add(call.func.attr.value)  # type: ignore[attr-defined]
    return found


def _diagnose(func: cst.FunctionDef, kind: str, called: FrozenSet[str] = frozenset()) -> Optional[str]:
    """Why Lightning 2.x will not run this method as the author meant, or None. A removed hook
    the class calls itself (``self.log_grad_norm(...)`` after LM302) is an ordinary method."""
    params = [(p.name.value, p.default is not None) for p in positional_params(func)]
    return diagnose(func.name.value, params, kind, called)


def diagnose(name: str, params: Sequence[Tuple[str, bool]], kind: str,
             called: FrozenSet[str] = frozenset()) -> Optional[str]:
    """:func:`_diagnose` from the method's name and its positional parameters as (name, has a
    default) pairs, so the gate can ask it from Python's ``ast`` without a libcst tree."""
    removed = removed_table(kind)
    if name in removed and name in called:
        return None
    if name in removed:
        return f"`{name}` is never called by Lightning 2.x, so this code silently stops running; instead: {removed[name]}"
    hooks = hook_table(kind)
    if name not in hooks:
        meant = likely_misspelling(name, kind)
        if meant:
            return f"`{name}` is not a Lightning hook and never runs; did you mean `{meant}`?"
        return None
    skip = 3 if kind == "callback" else 1  # self (trainer, pl_module)
    args = params[skip:]
    names = [n for n, _ in args]
    if OPTIMIZER_IDX_NAMES & set(names):
        return (f"Lightning 2.x no longer passes `optimizer_idx` to `{name}`; the other arguments shift "
                "into its place or the call fails (multiple optimizers need manual optimization)")
    if name == "training_step" and "hiddens" in names:
        return "Lightning 2.x removed truncated BPTT: `hiddens` is no longer passed (use manual optimization)"
    required = sum(1 for _, has_default in args if not has_default)
    passes = hooks[name]
    if name in DATALOADER_IDX_HOOKS and len(args) > passes:
        idx_name, idx_default = args[passes]
        if not idx_default:
            return (f"with a single dataloader Lightning 2.x calls `{name}` without `{idx_name}`; "
                    f"give it a default (`{idx_name}=0`)")
        required = min(required, passes)
    if required > passes:
        return (f"Lightning 2.x calls `{name}` with {passes} positional argument(s); this signature needs "
                f"{required}, so the call fails")
    return None


@functools.lru_cache(maxsize=4096)
def _misspelt(name: str, kind: str) -> bool:
    return likely_misspelling(name, kind) is not None


class _Marker(PrunedTransformer):
    def __init__(self, rule_ctx: RuleContext) -> None:
        self.ctx = rule_ctx
        self.stack: List[Optional[str]] = []

    def _kind(self, node: cst.ClassDef) -> Optional[str]:
        index = self.ctx.project
        info: Optional[ClassInfo] = index.resolve(node.name.value, self.ctx.path)
        if info is None or info.path != self.ctx.path:
            return None
        if index.in_lightning_hierarchy(info):
            return "module"
        if index.in_lightning_hierarchy(info, CALLBACK_NAMES):
            return "callback"
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.stack.append(self._kind(node))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        kind = self.stack.pop()
        if kind is None or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        items = list(updated.body.body)
        changed = False
        called = frozenset(_self_calls(updated))
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef) or _has_any_marker(item):
                continue
            why = _diagnose(item, kind, called)
            if why:
                items[i] = add_marker(item, CODE, why)
                changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class DeadHooksRule(GatedRule):
    code = CODE
    gate_reads_hook_facts = True
    name = "dead-hooks"
    summary = "Marks methods that look like Lightning hooks but that Lightning 2.x never calls, or cannot call."
    spec_rows = ("M4", "M5", "M10", "M11", "M12", "M13", "M14", "M15", "M16", "M20", "M27", "C1", "C3", "A.8")
    coverage = {
        "M1": Handling.MARKED,
        "M2": Handling.MARKED,
        "M3": Handling.MARKED,
        "M4": Handling.MARKED,
        "M5": Handling.MARKED,
        "M7": Handling.MARKED,
        "M10": Handling.MARKED,
        "M11": Handling.MARKED,
        "M12": Handling.MARKED,
        "M13": Handling.MARKED,
        "M14": Handling.MARKED,
        "M15": Handling.MARKED,
        "M16": Handling.MARKED,
        "M17": Handling.MARKED,
        "M20": Handling.MARKED,
        "M27": Handling.MARKED,
        "C1": Handling.MARKED,
        "C3": Handling.MARKED,
        "A8-hooks": Handling.MARKED,
        "A8-module": Handling.MARKED,
    }
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (rows on removed hooks, "
             "`optimizer_idx` in hook signatures, `dataloader_idx` defaults; PRs 16791, 16539, 16753)")
    safety = Safety.REVIEW
    triggers = ("def on_", "_step_end", "optimizer_idx", "opt_idx", "dataloader_idx", "tbptt_split_batch",
                "log_grad_norm", "get_progress_bar_dict", "hiddens", "_epoch_end")
    description = (
        "Lightning 2.x does not warn about a hook it no longer calls. A removed hook such as "
        "`training_step_end` or `on_epoch_end`, a misspelt one such as `on_training_epoch_end`, and a "
        "hook whose signature 2.x cannot call (an extra required argument, `optimizer_idx`, a "
        "`dataloader_idx` without default) all silently stop running or fail at the first call. "
        "This rule changes no code: it marks each such method with "
        "`# TODO(lightmigrate): LM002 <why and what to use instead>` so `rewrite --check` reports it. "
        "It runs after the rules that migrate these hooks, so it only marks what they left."
    )
    examples = (
        Example(
            title="a misspelt hook",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_training_epoch_end(self):
        self.log("x", 1.0)
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    # TODO(lightmigrate): LM002 `on_training_epoch_end` is not a Lightning hook and never runs; did you mean `on_train_epoch_end`?
    def on_training_epoch_end(self):
        self.log("x", 1.0)
''',
        ),
        Example(
            title="a removed callback hook",
            before='''\
from pytorch_lightning import Callback


class Printer(Callback):
    def on_epoch_end(self, trainer, pl_module):
        print(trainer.current_epoch)
''',
            after='''\
from pytorch_lightning import Callback


class Printer(Callback):
    # TODO(lightmigrate): LM002 `on_epoch_end` is never called by Lightning 2.x, so this code silently stops running; instead: on_train_epoch_end / on_validation_epoch_end / on_test_epoch_end
    def on_epoch_end(self, trainer, pl_module):
        print(trainer.current_epoch)
''',
        ),
        Example(
            title="dataloader_idx without a default",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    # TODO(lightmigrate): LM002 with a single dataloader Lightning 2.x calls `on_validation_batch_end` without `dataloader_idx`; give it a default (`dataloader_idx=0`)
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
''',
        ),
        Example(
            title="valid 2.x hooks and plain methods are left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_train_epoch_end(self):
        pass

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        pass

    def on_step_finished(self):
        pass
''',
            after=None,
        ),
    )

    def gate_kinds(self, text: str) -> Optional[FrozenSet[str]]:
        return HOOK_KINDS  # only hooks of LightningModules and Callbacks are marked

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # Only methods of classes the index knows to be LightningModules or Callbacks are
        # marked, and only when `diagnose` finds something wrong with their name or signature.
        facts = hooks_gate_facts(text, ctx)
        if facts is None:
            return True
        kinds = hooks_path_kinds(ctx)
        if kinds is None:
            return True
        kinds = kinds & {"module", "callback"}
        if not any(name in removed_table(kind) or name in hook_table(kind) or _misspelt(name, kind)
                   for kind in kinds for name in facts.defs):
            return False
        methods = hooks_kind_methods(text, ctx, kinds)
        if methods is None:
            return True
        return any(
            (name in removed_table(kind) or name in hook_table(kind) or _misspelt(name, kind))
            and diagnose(name, tuple(zip(sig.positional, sig.defaults)), kind) is not None
            for kind, name, sig in methods
        )

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        if not ctx.project.has_path(ctx.path):
            ctx.project.add_source(module_text(module), ctx.path)
        return transform(module, _Marker(ctx))
