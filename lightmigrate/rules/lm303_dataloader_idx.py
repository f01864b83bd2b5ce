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

from typing import List, Sequence

import libcst as cst

from lightmigrate.cst.helpers import positional_params, set_param_default
from lightmigrate.catalog.hooks import hook_table
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import HOOK_KINDS, KindTransformer, kind_classes
from lightmigrate.rules.shared.hooksa_ast import index_source, methods, positional_defaults, positional_names
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
    and whether each positional parameter has a default (for find, from Python's ``ast``)."""
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
    """Gives the parameter each site names (``data``) the default 0, in the methods at the
    sites' positions."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target.split(".")[0] for s in sites))
        self.todo = {(s.line, s.col + 1): s.data for s in sites}

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            param = self.todo.get(self.ctx.position(self.module, original.body.body[i]))
            if param is None:
                continue
            items[i] = set_param_default(item, param, "0")
            self.report(CODE, original.body.body[i],
                        f"{self.class_name}.{item.name.value}: `{param}` defaults to 0 "
                        "(Lightning 2.x passes it only with several dataloaders)")
            changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class DataloaderIdxRule(Rule):
    code = CODE
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

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        """One site per batch hook of a LightningModule or Callback class whose signature
        ``needs_default``; ``data`` is the name of the parameter that gets ``=0``."""
        index_source(source, ctx)
        sites = []
        for cls, kind in kind_classes(source, ctx, HOOK_KINDS):
            for func in methods(cls):
                posonly = bool(func.args.posonlyargs)  # type: ignore[attr-defined]
                if not signature_needs_default(func.name, posonly, positional_defaults(func), kind):  # type: ignore[attr-defined]
                    continue
                skip = 3 if kind == "callback" else 1
                param = positional_names(func)[skip + hook_table(kind)[func.name]]  # type: ignore[attr-defined]
                sites.append(Site(func.lineno, func.col_offset, f"{cls.name}.{func.name}", "default-0", param))  # type: ignore[attr-defined]
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        return transform(module, _Fix(ctx, module, sites))
