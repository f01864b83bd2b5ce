"""LM302: ``Trainer(track_grad_norm=p)`` (and the ``log_grad_norm`` hook) become grad-norm
logging in ``on_before_optimizer_step``.

2.x removed ``track_grad_norm`` and the ``log_grad_norm`` hook (spec M17, T10). 1.9
(``PrecisionPlugin._after_closure``/``_track_grad_norm``, spec T13) did this after the
``on_before_optimizer_step`` hooks and before clipping, only for optimizer 0, only on batches
that step: ``grad_norm(module, p)`` with every value rounded to 4 digits, then, when not empty,
``module.log_grad_norm(norms)``, whose default is ``self.log_dict(norms, on_step=True,
on_epoch=True, prog_bar=False, logger=True)``. The rewrite appends exactly that to the module's
``on_before_optimizer_step`` (created when missing, calling an inherited one first), calling a
user-defined ``log_grad_norm`` where there is one, and removes the Trainer argument.

The Trainer argument is found in ``Trainer(...)`` calls and Trainer-kwargs dicts of the same
file (``trainer_args``). The module must be the one LightningModule of that file; otherwise,
or when the value is not a literal, the argument is marked.
"""

from __future__ import annotations

from typing import List, Optional

import libcst as cst
from lightmigrate.cst.matchers import m

from lightmigrate.cst.helpers import (
    BodyFacts,
    add_marker,
    append_statements,
    body_of,
    parse_method,
    parse_statements,
    positional_params,
)
from lightmigrate.analysis.facts import file_facts
from lightmigrate.output.findings import Kind
from lightmigrate.rules.shared import trainer_kwargs
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import Hierarchy, class_kind, ensure_indexed
from lightmigrate.rules.shared.gates import string_key
from lightmigrate.cst.helpers import ensure_import, lightning_root
from lightmigrate.cst.walk import transform, PrunedTransformer, find_all

CODE = "LM302"
ARG = "track_grad_norm"
HOOK = "on_before_optimizer_step"
_OFF = ("-1", "-1.0")


def _literal(node: cst.BaseExpression) -> Optional[str]:
    """The source of a literal norm type (``2``, ``2.0``, ``"inf"``, ``-1``), else None."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(
            node.expression, (cst.Integer, cst.Float)):
        return "-" + node.expression.value
    if isinstance(node, cst.SimpleString) and node.evaluated_value in ("inf", "-1"):
        return node.value if node.evaluated_value == "inf" else "-1"
    return None


def _statements(norm: str, logs_with: str, opt: str, slf: str) -> List[cst.BaseStatement]:
    comment = f"# Lightning 1.x Trainer(track_grad_norm={norm}): optimizer 0, stepping batches, rounded to 4 digits"
    (stmt,) = parse_statements(f"""
        if {opt} is {slf}.trainer.optimizers[0]:
            norms = {{k: round(v.item(), 4) for k, v in grad_norm({slf}, norm_type={norm}).items()}}
            if norms:
                {logs_with}
    """)
    return [stmt.with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(comment))])]


class _StatementMarker(PrunedTransformer):
    """Marks each simple statement that holds a ``track_grad_norm`` Trainer argument."""

    def __init__(self, why: str) -> None:
        self.why = why
        self.hit = False

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == ARG:
            self.hit = True

    def visit_DictElement(self, node: cst.DictElement) -> None:
        if isinstance(node.key, cst.SimpleString) and node.key.evaluated_value == ARG:
            self.hit = True

    def leave_SimpleStatementLine(self, original, updated):
        if self.hit:
            self.hit = False
            return add_marker(updated, CODE, self.why)
        return updated


def _module_classes(module: cst.Module, ctx: RuleContext) -> List[cst.ClassDef]:
    return [c for c in find_all(module, m.ClassDef()) if class_kind(ctx, c.name.value) == "module"]  # type: ignore


class _AddLogging(PrunedTransformer):
    def __init__(self, target: cst.ClassDef, norm: str, ctx: RuleContext, module: cst.Module) -> None:
        self.target = target
        self.norm = norm
        self.ctx = ctx
        self.module = module
        self.problem: Optional[str] = None

    def leave_ClassDef(self, original, updated):
        if original is not self.target:
            return updated
        info = self.ctx.project.resolve(original.name.value, self.ctx.path)
        assert info is not None
        h = Hierarchy.of(self.ctx.project, info)
        items = list(updated.body.body)
        own_logger = any(isinstance(i, cst.FunctionDef) and i.name.value == "log_grad_norm" for i in items)
        existing = [n for n, i in enumerate(items) if isinstance(i, cst.FunctionDef) and i.name.value == HOOK]
        if existing:
            idx = existing[-1]
            func: cst.FunctionDef = items[idx]  # type: ignore[assignment]
            params = positional_params(func)
            if len(params) < 2 or BodyFacts(body_of(func)).has_return or BodyFacts(body_of(func)).has_yield:
                self.problem = (f"cannot append the grad-norm logging to `{HOOK}` (it returns early or takes "
                                "no optimizer)")
                return updated
            slf, opt = params[0].name.value, params[1].name.value
            logs = f"{slf}.log_grad_norm(norms)" if own_logger else \
                f"{slf}.log_dict(norms, on_step=True, on_epoch=True, prog_bar=False, logger=True)"
            items[idx] = append_statements(func, _statements(self.norm, logs, opt, slf))
        else:
            logs = "self.log_grad_norm(norms)" if own_logger else \
                "self.log_dict(norms, on_step=True, on_epoch=True, prog_bar=False, logger=True)"
            sup = "super().on_before_optimizer_step(optimizer)\n" if h.may_inherit(HOOK) else ""
            body = "\n".join("    " + line for line in (sup.rstrip("\n").split("\n") if sup else [])) + ("\n" if sup else "")
            src = f"def {HOOK}(self, optimizer):\n{body}    pass\n"
            func = parse_method(src)
            stmts = [s for s in body_of(func) if not m.matches(s, m.SimpleStatementLine(body=[m.Pass()]))]
            func = func.with_changes(body=func.body.with_changes(body=[*stmts, *_statements(self.norm, logs, "optimizer", "self")]))
            spacing = [cst.EmptyLine(indent=False)]
            items.append(func.with_changes(leading_lines=spacing))
        line, col = self.ctx.position(self.module, original)
        self.ctx.report(CODE, f"{original.name.value}: Trainer(track_grad_norm={self.norm}) -> grad_norm logging in "
                        f"{HOOK}", Kind.FIXED, line, col)
        return updated.with_changes(body=updated.body.with_changes(body=items))


class GradNormRule(GatedRule):
    code = CODE
    name = "track-grad-norm"
    summary = "`Trainer(track_grad_norm=p)` becomes 1.9's exact grad-norm logging in `on_before_optimizer_step`."
    spec_rows = ("M17", "T10", "T13")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (rows 'used Trainer(track_grad_norm=...)' "
             "and 'used the LightningModule.log_grad_norm hook'; PR 16745)")
    safety = Safety.PRESERVING
    triggers = (ARG,)
    description = (
        "Lightning 2.x removed `Trainer(track_grad_norm=p)` and the `log_grad_norm` hook. 1.9 computed "
        "`grad_norm(module, p)` after the `on_before_optimizer_step` hooks, only for optimizer 0 and only on "
        "batches that step, rounded every value to 4 digits and logged them with `on_step=True, "
        "on_epoch=True` (through `log_grad_norm`, which a module could override). The rule appends exactly "
        "that to the module's `on_before_optimizer_step` (adding the hook when missing, calling an "
        "overridden `log_grad_norm`), imports `grad_norm` from the file's Lightning root and removes the "
        "Trainer argument (`-1` just goes). When the Trainer's file does not define exactly one "
        "LightningModule, or the value is not a literal, the argument is marked. 1.9 used the single "
        "logger's `group_separator`; the rewrite uses \"/\", the separator of every built-in logger."
    )
    coverage = {"M17": Handling.REWRITTEN, "T10": Handling.REWRITTEN, "T13": Handling.REWRITTEN}
    examples = (
        Example(
            title="the Trainer and the module in one file",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.layer(batch).sum()


trainer = pl.Trainer(max_epochs=3, track_grad_norm=2)
''',
            after='''\
import pytorch_lightning as pl
from pytorch_lightning.utilities import grad_norm


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.layer(batch).sum()

    def on_before_optimizer_step(self, optimizer):
        # Lightning 1.x Trainer(track_grad_norm=2): optimizer 0, stepping batches, rounded to 4 digits
        if optimizer is self.trainer.optimizers[0]:
            norms = {k: round(v.item(), 4) for k, v in grad_norm(self, norm_type=2).items()}
            if norms:
                self.log_dict(norms, on_step=True, on_epoch=True, prog_bar=False, logger=True)


trainer = pl.Trainer(max_epochs=3)
''',
        ),
        Example(
            title="the module lives elsewhere: marked",
            before='''\
import pytorch_lightning as pl

trainer = pl.Trainer(max_epochs=3, track_grad_norm="inf")
''',
            after='''\
import pytorch_lightning as pl

# TODO(lightmigrate): LM302 `track_grad_norm` is gone in Lightning 2.x: log `grad_norm(self, norm_type=p)` (values rounded to 4 digits, optimizer 0 only, on_step and on_epoch) in the module's `on_before_optimizer_step`, then drop the argument
trainer = pl.Trainer(max_epochs=3, track_grad_norm="inf")
''',
        ),
        Example(
            title="no track_grad_norm: nothing to do",
            before='''\
import pytorch_lightning as pl

trainer = pl.Trainer(max_epochs=3)
''',
            after=None,
        ),
    )

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # apply acts only on `Trainer(track_grad_norm=...)` (called by that last name) and on
        # Trainer-kwargs dict literals with the key "track_grad_norm".
        facts = file_facts(text)
        if not facts.parsed:
            return True
        return ARG in facts.call_keywords.get("Trainer", ()) or string_key(text, frozenset({ARG}))

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        found = trainer_kwargs.find(module, [ARG])
        if ARG not in found:
            return module
        ensure_indexed(module, ctx)
        norm = _literal(found[ARG])
        if norm in _OFF:
            return trainer_kwargs.remove(module, [ARG])
        classes = _module_classes(module, ctx)
        why = None
        if norm is None:
            why = "the value is not a literal"
        elif len(classes) != 1:
            why = "this file does not define exactly one LightningModule"
        if why is None:
            adder = _AddLogging(classes[0], norm, ctx, module)
            out = transform(module, adder)
            if adder.problem:
                why = adder.problem
            else:
                out = trainer_kwargs.remove(out, [ARG])
                return ensure_import(out, f"{lightning_root(out)}.utilities", "grad_norm")
        return transform(module, _StatementMarker(
            "`track_grad_norm` is gone in Lightning 2.x: log `grad_norm(self, norm_type=p)` (values rounded to 4 "
            "digits, optimizer 0 only, on_step and on_epoch) in the module's `on_before_optimizer_step`, then drop "
            "the argument"))
