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

import ast
from typing import FrozenSet, List, Optional, Sequence

import libcst as cst
from lightmigrate.cst.helpers import one_statement

from lightmigrate.cst.helpers import (
    add_marker,
    append_statements,
    body_of,
    parse_method,
    parse_statements,
    positional_params,
)
from lightmigrate.output.findings import Kind
from lightmigrate.analysis.project import lightning_trainer_names
from lightmigrate.rules.shared import trainer_kwargs
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import Hierarchy, class_defs_with_ordinals, class_kind
from lightmigrate.rules.shared.hooksa_ast import (
    index_source,
    methods,
    positional_names,
    returns_or_yields,
    simple_string,
)
from lightmigrate.cst.helpers import ensure_import, lightning_root
from lightmigrate.cst.walk import transform, PrunedTransformer

CODE = "LM302"
ARG = "track_grad_norm"
HOOK = "on_before_optimizer_step"
_OFF = ("-1", "-1.0")


def _literal(source: SourceFile, node: ast.AST) -> Optional[str]:
    """The source of a literal norm type (``2``, ``2.0``, ``"inf"``, ``-1``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return ast.get_source_segment(source.text, node)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(
            node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return "-" + (ast.get_source_segment(source.text, node.operand) or "")
    value = simple_string(source, node)
    if value in ("inf", "-1"):
        return ast.get_source_segment(source.text, node) if value == "inf" else "-1"
    return None


def _is_trainer_call(node: ast.Call, aliases: FrozenSet[str]) -> bool:
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr == "Trainer") or (
        isinstance(func, ast.Name) and (func.id == "Trainer" or func.id in aliases))


def _trainer_dict_value(source: SourceFile, node: ast.Dict) -> Optional[ast.AST]:
    """The value of the first "track_grad_norm" key of a Trainer-kwargs dict (every key a
    Trainer argument name, as ``trainer_kwargs`` reads them), else None."""
    keys = node.keys
    if not keys or not any(isinstance(k, ast.Constant) and k.value == ARG for k in keys):
        return None
    names = [None if k is None else simple_string(source, k) for k in keys]
    if not all(n is not None and n in trainer_kwargs.TRAINER_ARGS for n in names):
        return None
    return node.values[names.index(ARG)]


def _found(source: SourceFile) -> Optional[ast.AST]:
    """The value ``trainer_kwargs.find(module, [ARG])`` reads: the first ``track_grad_norm=``
    of a ``Trainer(...)`` call or key of a Trainer-kwargs dict, in the order libcst visits
    them (by where the call or dict starts, an enclosing one first)."""
    found = []
    # ``from pytorch_lightning import Trainer as PLT``: ``PLT(...)`` too
    aliases = frozenset(lightning_trainer_names(source.tree, source.nodes)[0]) if " as " in source.text else frozenset()
    for node in source.nodes:
        value = None
        if isinstance(node, ast.Call) and _is_trainer_call(node, aliases):
            value = next((k.value for k in node.keywords if k.arg == ARG), None)
        elif isinstance(node, ast.Dict):
            value = _trainer_dict_value(source, node)
        if value is not None:
            found.append(((node.lineno, node.col_offset, -node.end_lineno, -node.end_col_offset), value))  # type: ignore[operator]
    return min(found, key=lambda f: f[0])[1] if found else None


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


class _AddLogging(PrunedTransformer):
    """Appends the logging to the hook of the class at ``position`` (line, 1-based column)."""

    def __init__(self, position, norm: str, ctx: RuleContext, module: cst.Module) -> None:
        self.position = position
        self.norm = norm
        self.ctx = ctx
        self.module = module

    def leave_ClassDef(self, original, updated):
        if self.ctx.position(self.module, original) != self.position:
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
            stmts = [s for s in body_of(func) if one_statement(s, cst.Pass) is None]
            func = func.with_changes(body=func.body.with_changes(body=[*stmts, *_statements(self.norm, logs, "optimizer", "self")]))
            spacing = [cst.EmptyLine(indent=False)]
            items.append(func.with_changes(leading_lines=spacing))
        line, col = self.ctx.position(self.module, original)
        self.ctx.report(CODE, f"{original.name.value}: Trainer(track_grad_norm={self.norm}) -> grad_norm logging in "
                        f"{HOOK}", Kind.FIXED, line, col)
        return updated.with_changes(body=updated.body.with_changes(body=items))


class GradNormRule(Rule):
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

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        """One site at the first ``track_grad_norm`` Trainer argument of the file: "remove" (it
        is off), "rewrite" (``target`` the one LightningModule class, ``data`` the norm) or
        "mark" (``data`` why)."""
        value = _found(source)
        if value is None:
            return []
        index_source(source, ctx)
        norm = _literal(source, value)
        at = (value.lineno, value.col_offset)  # type: ignore[attr-defined]
        if norm in _OFF:
            return [Site(*at, "", "remove")]
        classes = [c for c, ordinal in class_defs_with_ordinals(source.tree) if class_kind(ctx, c.name, ordinal) == "module"]
        if norm is None:
            return [Site(*at, "", "mark", "the value is not a literal")]
        if len(classes) != 1:
            return [Site(*at, "", "mark", "this file does not define exactly one LightningModule")]
        hooks = [f for f in methods(classes[0]) if f.name == HOOK]  # type: ignore[attr-defined]
        if hooks and (len(positional_names(hooks[-1])) < 2 or any(returns_or_yields(hooks[-1]))):
            return [Site(*at, "", "mark", f"cannot append the grad-norm logging to `{HOOK}` (it returns early "
                                           "or takes no optimizer)")]
        return [Site(classes[0].lineno, classes[0].col_offset, classes[0].name, "rewrite", norm)]

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        (site,) = sites
        if site.action == "remove":
            return trainer_kwargs.remove(module, [ARG])
        if site.action == "rewrite":
            out = transform(module, _AddLogging((site.line, site.col + 1), site.data, ctx, module))
            out = trainer_kwargs.remove(out, [ARG])
            return ensure_import(out, f"{lightning_root(out)}.utilities", "grad_norm")
        return transform(module, _StatementMarker(
            "`track_grad_norm` is gone in Lightning 2.x: log `grad_norm(self, norm_type=p)` (values rounded to 4 "
            "digits, optimizer 0 only, on_step and on_epoch) in the module's `on_before_optimizer_step`, then drop "
            "the argument"))
