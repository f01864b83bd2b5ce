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

Parameters a hook lost before 1.9 (``on_train_batch_start/end``'s ``dataloader_idx``, removed in
1.7, and ``on_train_epoch_end``'s ``outputs``, removed in 1.6: spec A.8 "Hooks") are dropped when
the method never reads them and the file never calls the hook with them: 1.9 and 2.x call it
without them, so the parameter without a default only made that call fail. Read, they keep
LM002's marker (``outputs``) or get the default 0 (``dataloader_idx``, as above).
"""

from __future__ import annotations

import ast
from typing import Dict, List, Sequence, Set

import libcst as cst

from lightmigrate.cst.helpers import positional_params, set_param_default
from lightmigrate.catalog.hooks import hook_table
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import HOOK_KINDS, KindTransformer, kind_classes
from lightmigrate.rules.shared.hooksa_ast import index_source, methods, positional_defaults, positional_names
from lightmigrate.rules.shared.method_sites import names_variable
from lightmigrate.cst.walk import transform
from lightmigrate.analysis.ast_nodes import ast_nodes

CODE = "LM303"
EVAL_HOOKS = frozenset(
    {"validation_step", "test_step", "predict_step", "on_validation_batch_start", "on_validation_batch_end",
     "on_test_batch_start", "on_test_batch_end", "on_predict_batch_start", "on_predict_batch_end"}
)
TRAIN_HOOKS = frozenset({"on_train_batch_start", "on_train_batch_end"})
CALLBACK_STEPS = frozenset({"validation_step", "test_step", "predict_step"})  # not callback hooks
# hooks that lost trailing positional parameters before 1.9 (1.9 and 2.x call them without)
LOST_PARAMS_HOOKS = TRAIN_HOOKS | {"on_train_epoch_end"}
_DYNAMIC = ("locals", "vars", "eval", "exec")  # a body that may read a parameter by its name's text


def unused_lost_params(func, kind: str, calls: Sequence[int]) -> List[str]:
    """The parameters of hook ``func`` (an ``ast`` def) beyond those 1.9 and 2.x pass that the
    hook lost before 1.9, have no default and are never read in its body, when all of them are
    unread; none when the file calls the hook with them (``calls``: the positional argument
    counts of the file's calls ``x.<name>(...)``, -1 for a starred one)."""
    if func.name not in LOST_PARAMS_HOOKS or func.args.posonlyargs:
        return []
    skip = 3 if kind == "callback" else 1
    passes = hook_table(kind)[func.name]
    names = positional_names(func)[skip + passes:]
    defaults = positional_defaults(func)[skip + passes:]
    if not names or all(defaults) or any(c < 0 or c > skip - 1 + passes for c in calls):
        return []
    body = [node for stmt in func.body for node in ast_nodes(stmt)]
    if any(names_variable(body, name) for name in _DYNAMIC):
        return []
    fresh = _bound_first(func.body, names)  # rebound before any read: the value passed is never used
    if any(name not in fresh and names_variable(body, name) for name in names):
        return []
    return [name for name, has_default in zip(names, defaults) if not has_default]


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


def drop_params(func: cst.FunctionDef, names: Sequence[str]) -> cst.FunctionDef:
    """``func`` without the positional parameters ``names`` (the last one kept takes the comma
    of the last one dropped when that ended the list)."""
    params = list(func.params.params)
    kept = [p for p in params if p.name.value not in names]
    if kept and params[-1] is not kept[-1]:
        kept[-1] = kept[-1].with_changes(comma=params[-1].comma)
    return func.with_changes(params=func.params.with_changes(params=kept))


def _bound_first(body: Sequence[ast.stmt], names: Sequence[str]) -> Set[str]:
    """The ``names`` that the statements at the top of ``body`` (after a docstring) assign
    (``outputs = self.training_step_outputs``, as LM001 writes) from values that do not read them."""
    found: Set[str] = set()
    for i, stmt in enumerate(body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id in names and not names_variable(ast_nodes(stmt.value), stmt.targets[0].id)):
            break
        found.add(stmt.targets[0].id)
    return found


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
            if isinstance(param, tuple):  # parameters the hook lost, unread: dropped
                items[i] = drop_params(item, param)
                self.report(CODE, original.body.body[i],
                            f"{self.class_name}.{item.name.value}: unused {', '.join(f'`{p}`' for p in param)} "
                            "dropped (Lightning 1.9 and 2.x call the hook without it)")
            else:
                items[i] = set_param_default(item, param, "0")
                self.report(CODE, original.body.body[i],
                            f"{self.class_name}.{item.name.value}: `{param}` defaults to 0 "
                            "(Lightning 2.x passes it only with several dataloaders)")
            changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class DataloaderIdxRule(Rule):
    code = CODE
    name = "dataloader-idx-default"
    summary = ("Gives `dataloader_idx` parameters of batch hooks the default 0 that Lightning 2.x needs; drops unused "
               "parameters hooks lost before 1.9.")
    spec_rows = ("M20", "C3", "A8-hooks")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (row 'used dataloader_idx "
             "in on_{validation,test,predict}_batch_{start,end} without a default'; PR 16753)")
    safety = Safety.PRESERVING
    triggers = ("_batch_start", "_batch_end", "on_train_epoch_end", "validation_step", "test_step", "predict_step")
    description = (
        "With a single dataloader Lightning 2.x calls the evaluation batch hooks and steps without "
        "`dataloader_idx`, so a parameter without default makes the first call fail (a RuntimeError for "
        "module hooks, a TypeError for callbacks). 1.9 passed 0 there. The rule adds `=0`, which gives "
        "the hook exactly what 1.9 passed; with several dataloaders 2.x still passes the index. "
        "`on_train_batch_start/end(..., dataloader_idx)` (removed in 1.7) get the same default, the value "
        "1.6 passed, or are dropped when the hook never reads them, as is `on_train_epoch_end`'s `outputs` (removed "
        "in 1.6; read, it stays marked by LM002). Classes are recognised through their bases; others are left alone."
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
            title="parameters the hook lost before 1.9, never read",
            before='''\
import pytorch_lightning as pl


class Printer(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module, outputs):
        print(trainer.current_epoch)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        print(batch_idx)
''',
            after='''\
import pytorch_lightning as pl


class Printer(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        print(trainer.current_epoch)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        print(batch_idx)
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
        calls: Dict[str, List[int]] = {}  # hook -> positional argument counts of the file's calls of it
        if any(name in source.text for name in LOST_PARAMS_HOOKS):
            for node in source.nodes:
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                        node.func.attr in LOST_PARAMS_HOOKS:
                    starred = any(isinstance(a, ast.Starred) for a in node.args) or \
                        any(k.arg is None for k in node.keywords)
                    calls.setdefault(node.func.attr, []).append(-1 if starred else len(node.args))
        for cls, kind in kind_classes(source, ctx, HOOK_KINDS):
            for func in methods(cls):
                lost = unused_lost_params(func, kind, calls.get(func.name, ()))  # type: ignore[attr-defined]
                if lost:
                    sites.append(Site(func.lineno, func.col_offset, f"{cls.name}.{func.name}", "drop",  # type: ignore[attr-defined]
                                      tuple(lost)))
                    continue
                posonly = bool(func.args.posonlyargs)  # type: ignore[attr-defined]
                if not signature_needs_default(func.name, posonly, positional_defaults(func), kind):  # type: ignore[attr-defined]
                    continue
                skip = 3 if kind == "callback" else 1
                param = positional_names(func)[skip + hook_table(kind)[func.name]]  # type: ignore[attr-defined]
                sites.append(Site(func.lineno, func.col_offset, f"{cls.name}.{func.name}", "default-0", param))  # type: ignore[attr-defined]
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        return transform(module, _Fix(ctx, module, sites))
