"""LM303: ``dataloader_idx`` parameters without a default get ``=0``.

1.9 always passed ``dataloader_idx`` to the evaluation batch hooks (0 with a single loader).
2.x passes it only when there are several dataloaders: a module hook whose ``dataloader_idx``
has no default raises ``RuntimeError`` at the first call, a callback hook a ``TypeError``
(spec M20, C3). With a default of 0 the hook receives exactly what 1.9 passed. The same holds
for ``validation_step``/``test_step``/``predict_step``.

``on_train_batch_start/end(..., dataloader_idx)`` lost the parameter in 1.7 (spec A.8 "Hooks");
1.6 passed 0 there, and a default of 0 gives the 1.6 meaning back while 2.x calls it with three
arguments.

Only the parameter right after the ones 2.x passes is given a default, and only when every
parameter after it already has one (otherwise LM002 marks the signature).
"""

from __future__ import annotations

from typing import FrozenSet, Optional, Sequence

import libcst as cst

from lightmigrate.cst.helpers import positional_params, set_param_default
from lightmigrate.catalog.hooks import hook_table
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import HOOK_KINDS, KindTransformer, ensure_indexed
from lightmigrate.rules.shared.gates import hooks_gate_facts, hooks_kind_methods, hooks_path_kinds
from lightmigrate.cst.walk import transform

CODE = "LM303"
EVAL_HOOKS = frozenset(
    {"validation_step", "test_step", "predict_step", "on_validation_batch_start", "on_validation_batch_end",
     "on_test_batch_start", "on_test_batch_end", "on_predict_batch_start", "on_predict_batch_end"}
)
TRAIN_HOOKS = frozenset({"on_train_batch_start", "on_train_batch_end"})
CALLBACK_STEPS = frozenset({"validation_step", "test_step", "predict_step"})  # not callback hooks


def needs_default(func: cst.FunctionDef, kind: str) -> bool:
    """Whether ``func`` is a batch hook whose first parameter beyond what 2.x passes has no
    default while every later one does."""
    defaults = [p.default is not None for p in positional_params(func)]
    return signature_needs_default(func.name.value, bool(func.params.posonly_params), defaults, kind)


def signature_needs_default(name: str, posonly: bool, defaults: Sequence[bool], kind: str) -> bool:
    """:func:`needs_default` from the method's name, whether it has positional-only parameters,
    and whether each positional parameter has a default (for the gate, from Python's ``ast``)."""
    if name not in EVAL_HOOKS | TRAIN_HOOKS or (kind == "callback" and name in CALLBACK_STEPS):
        return False
    if posonly:
        return False
    skip = 3 if kind == "callback" else 1
    args = defaults[skip:]
    passes = hook_table(kind)[name]
    if len(args) <= passes or args[passes]:
        return False
    return all(args[passes + 1:])


class _Fix(KindTransformer):
    def edit_class(self, kind, original, updated):
        if kind not in ("module", "callback"):
            return updated
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if isinstance(item, cst.FunctionDef) and needs_default(item, kind):
                skip = 3 if kind == "callback" else 1
                param = positional_params(item)[skip + hook_table(kind)[item.name.value]]
                items[i] = set_param_default(item, param.name.value, "0")
                self.report(CODE, original.body.body[i],
                            f"{self.class_name}.{item.name.value}: `{param.name.value}` defaults to 0 "
                            "(Lightning 2.x passes it only with several dataloaders)")
                changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class DataloaderIdxRule(GatedRule):
    code = CODE
    gate_reads_hook_facts = True
    name = "dataloader-idx-default"
    summary = "Gives `dataloader_idx` parameters of batch hooks the default 0 that Lightning 2.x needs."
    spec_rows = ("M20", "C3", "A8-hooks")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (row 'used dataloader_idx "
             "in on_{validation,test,predict}_batch_{start,end} without a default'; PR 16753)")
    safety = Safety.PRESERVING
    triggers = ("_batch_start", "_batch_end", "validation_step", "test_step", "predict_step")
    description = (
        "With a single dataloader Lightning 2.x calls the evaluation batch hooks and steps without "
        "`dataloader_idx`, so a parameter without default makes the first call fail (a RuntimeError for "
        "module hooks, a TypeError for callbacks). 1.9 passed 0 there. The rule adds `=0`, which gives "
        "the hook exactly what 1.9 passed; with several dataloaders 2.x still passes the index. "
        "`on_train_batch_start/end(..., dataloader_idx)` (removed in 1.7) get the same default, the value "
        "1.6 passed. Classes are recognised through their bases; others are left alone."
    )
    coverage = {"M20": Handling.REWRITTEN, "C3": Handling.REWRITTEN}
    examples = (
        Example(
            title="module and callback hooks",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx, dataloader_idx):
        return batch

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.last = dataloader_idx


class Watch(pl.Callback):
    def on_test_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx):
        print(dataloader_idx)
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        return batch

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.last = dataloader_idx


class Watch(pl.Callback):
    def on_test_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx=0):
        print(dataloader_idx)
''',
        ),
        Example(
            title="defaults already there, or a class that is not Lightning's",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        pass


class Other:
    def on_test_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
''',
            after=None,
        ),
    )

    def gate_kinds(self, text: str) -> Optional[FrozenSet[str]]:
        return HOOK_KINDS  # only hooks of LightningModules and Callbacks change

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # Only hooks of classes the index knows to be LightningModules or Callbacks whose
        # signature `needs_default` (read from Python's ast) are changed.
        facts = hooks_gate_facts(text, ctx)
        if facts is None:
            return True
        names = facts.defs & (EVAL_HOOKS | TRAIN_HOOKS)
        if not names:
            return False
        kinds = hooks_path_kinds(ctx)
        if kinds is None:
            return True
        kinds = kinds & {"module", "callback"}
        if not kinds:
            return False
        methods = hooks_kind_methods(text, ctx, kinds)
        if methods is None:
            return True
        return any(signature_needs_default(name, sig.posonly, sig.defaults, kind) for kind, name, sig in methods)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        ensure_indexed(module, ctx)
        return transform(module, _Fix(ctx, module))
