"""LM004: optimizer hooks lose ``optimizer_idx`` (and friends); hand-written manual steps get a closure.

Lightning 2.0 removed ``optimizer_idx`` from every optimizer-related hook and dropped the
``on_tpu`` / ``using_native_amp`` / ``using_lbfgs`` flags of ``optimizer_step`` (spec M9-M15,
C1, C4). 2.x calls these hooks positionally with the new, shorter argument lists, so an old
signature either fails (``optimizer_zero_grad``) or, worse, binds the arguments to the wrong
names (``optimizer_step`` gets its closure in ``optimizer_idx`` and ``None`` as closure). The
rule rewrites each signature to the 2.x one and replaces what the dropped parameters meant
in the body with the 2.x way of asking for it:

- the optimizer index: ``0`` for a class with one optimizer under automatic optimization,
  otherwise ``self.trainer.optimizers.index(...)`` of the optimizer the hook received;
- ``using_lbfgs``: ``isinstance(getattr(optimizer, "optimizer", optimizer), torch.optim.LBFGS)``;
- ``using_native_amp``: ``self.trainer.precision in ("16-mixed", "bf16-mixed")``;
- ``on_tpu``: ``isinstance(self.trainer.accelerator, XLAAccelerator)``.

A parameter that is only read is substituted; one the body reassigns is bound to its value at
the top of the body instead. ``super()`` calls of the hook with the old arguments, and
``toggle_optimizer(opt, idx)`` / ``untoggle_optimizer(idx)``, get the same treatment.

Hand-written manual optimization that calls ``opt.step()`` without a closure works for every
optimizer except LBFGS, which must re-evaluate the loss (spec B.8). When the step follows the
clear straight-line pattern (``zero_grad``, forward, ``manual_backward``, ``step``), the code
from the forward to the step moves into a closure that the step evaluates: for any other
optimizer it runs exactly once, at the same point, so nothing changes; names it assigns are
shared with the step through ``nonlocal``. Any other shape is marked.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate.cst.helpers import (
    code_of,
    BodyFacts,
    Statement,
    add_marker,
    body_of,
    fresh_name,
    param_names,
    parse_statements,
    positional_params,
    prepend_statements,
    self_name,
    split_docstring,
    with_body,
)
from lightmigrate.analysis.project import CALLBACK_NAMES, ClassInfo
from lightmigrate.output.findings import Kind
from lightmigrate.analysis.text_patterns import DEF, one_of
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import ClassEditor, ast_class_defs, hook_classes, migrate_classes
from lightmigrate.rules.shared.import_root import class_lightning_root
from lightmigrate.rules.shared.optim_ast import (
    FUNCTIONS,
    Function,
    class_items,
    has_marker,
    in_statement_lines,
    last_def,
    positional,
    segment,
    self_name as ast_self_name,
    stmt_text,
    text_lines,
)
from lightmigrate.cst.walk import transform, PrunedTransformer, walk
from lightmigrate.analysis.ast_nodes import ast_nodes

CODE = "LM004"
GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"
IDX_NAMES = frozenset({"optimizer_idx", "opt_idx"})
STEP_FLAGS = ("optimizer_idx", "optimizer_closure", "on_tpu", "using_native_amp", "using_lbfgs")
MODULE_HOOKS = frozenset({"optimizer_step", "optimizer_zero_grad", "lr_scheduler_step",
                          "configure_gradient_clipping", "on_before_optimizer_step", "backward"})
CALLBACK_HOOKS = frozenset({"on_before_optimizer_step", "finetune_function"})
# The text prefilter's searches (``OptimizerHooksRule.may_apply``): a def of a hook, and the
# parameter list of a ``def backward`` (up to its first ")").
_HOOK_DEF = re.compile(DEF + "(" + one_of(MODULE_HOOKS | CALLBACK_HOOKS | {"training_step"}) + r")\b")
_BACKWARD_DEF = re.compile(DEF + r"backward\s*\(")


def _backward_may_be_old(text: str, start: int) -> bool:
    """Whether the ``def backward(`` parameters starting at ``start`` may name an optimizer or
    an index (a list with a nested bracket or no ")" may name anything)."""
    end = text.find(")", start)
    params = text[start:end] if end >= 0 else ""
    if end < 0 or "(" in params or "[" in params:
        return True
    return "optim" in params or any(name in params for name in IDX_NAMES)
UNKNOWN_CLASS = ("looks like a Lightning 1.x optimizer hook with `optimizer_idx`, but the class is not "
                 "recognisably a LightningModule; migrate it by hand if it is one")
AMP_EXPR = 'self.trainer.precision in ("16-mixed", "bf16-mixed")'
LBFGS_WHY = "LBFGS needs a closure"


# ---------------------------------------------------------------------------------------------
# Signature plans


@dataclass
class Plan:
    """How one old-signature hook becomes the 2.x one."""

    drop: List[int]  # positional parameter indices (self = 0) to remove
    values: Dict[str, Optional[str]]  # dropped name -> 2.x expression (None: unknown)
    super_drop: List[int]  # positional argument indices of a super() call to remove
    super_drop_kw: Tuple[str, ...] = ()
    add_closure: bool = False  # optimizer_step had no closure parameter
    drop_kwonly: Tuple[str, ...] = ()
    why_unknown: str = ""
    imports: Set[str] = field(default_factory=set)


def _index_expr(trainer: str, optimizer: str, unwrap: bool) -> str:
    opt = f'getattr({optimizer}, "optimizer", {optimizer})' if unwrap else optimizer
    return f"{trainer}.optimizers.index({opt})"


def plans_module_hook(name: str, names: Sequence[str], kwonly: Sequence[str], sure: bool = False) -> bool:
    """Whether a module hook called ``name`` with these positional and keyword-only parameter
    names has a 1.x signature that :func:`_plan_module_hook` rewrites (find asks it from
    Python's ``ast``)."""
    n = len(names)
    if name == "optimizer_step":
        old_kw = [k for k in kwonly if k in STEP_FLAGS and k != "optimizer_closure"]
        return n >= 4 and (n > 5 or bool(set(names[4:]) & (set(STEP_FLAGS) - {"optimizer_closure"})) or bool(old_kw))
    if name == "optimizer_zero_grad":
        return n >= 5
    if name == "lr_scheduler_step":
        return n >= 4
    if name == "configure_gradient_clipping":
        return n >= 3 and (names[2] in IDX_NAMES or n >= 5)
    if name == "on_before_optimizer_step":
        return n >= 3
    if name == "backward":
        return n >= 3 and ((sure and "optim" in names[2]) or (n >= 4 and names[3] in IDX_NAMES))
    return False


def plans_callback_hook(name: str, names: Sequence[str]) -> bool:
    """Whether :func:`_plan_callback_hook` rewrites a callback hook with these positional
    parameter names."""
    return name in CALLBACK_HOOKS and len(names) >= 5


def _plan_module_hook(func: cst.FunctionDef, single_auto: bool, manual: bool, sure: bool = False) -> Optional[Plan]:
    """``sure``: the class is known to be a LightningModule (``backward`` is a common name)."""
    name = func.name.value
    ps = positional_params(func)
    names = [p.name.value for p in ps]
    if not plans_module_hook(name, names, [p.name.value for p in func.params.kwonly_params], sure):
        return None
    s = names[0] if names else "self"
    trainer = f"{s}.trainer"

    def idx_for(optimizer: str, unwrap: bool = True) -> str:
        return "0" if single_auto else _index_expr(trainer, optimizer, unwrap)

    if name == "optimizer_step":
        kwonly = [p.name.value for p in func.params.kwonly_params]
        old_kw = tuple(n for n in kwonly if n in STEP_FLAGS and n != "optimizer_closure")
        roles = dict(zip(names[4:9], STEP_FLAGS))  # the 1.x order
        for n in kwonly:
            if n in STEP_FLAGS:
                roles[n] = n
        optimizer = names[3]
        values: Dict[str, Optional[str]] = {}
        imports: Set[str] = set()
        for pname, role in roles.items():
            if role == "optimizer_idx":
                values[pname] = idx_for(optimizer)
            elif role == "on_tpu":
                values[pname] = f"isinstance({trainer}.accelerator, XLAAccelerator)"
                imports.add("XLAAccelerator")
            elif role == "using_native_amp":
                values[pname] = AMP_EXPR.replace("self.", f"{s}.")
            elif role == "using_lbfgs":
                values[pname] = f'isinstance(getattr({optimizer}, "optimizer", {optimizer}), torch.optim.LBFGS)'
                imports.add("torch")
        closure_pos = [i for i, n in enumerate(names) if i >= 4 and roles.get(n) == "optimizer_closure"]
        drop = [i for i in range(4, len(ps)) if i not in closure_pos]
        return Plan(drop=drop, values={k: v for k, v in values.items() if k in names[4:] or k in old_kw},
                    super_drop=[3, 5, 6, 7], super_drop_kw=("optimizer_idx", "on_tpu", "using_native_amp", "using_lbfgs"),
                    add_closure=not closure_pos and "optimizer_closure" not in kwonly, drop_kwonly=old_kw,
                    imports=imports)
    if name == "optimizer_zero_grad":
        return Plan(drop=[4], values={names[4]: idx_for(names[3])}, super_drop=[3])
    if name == "lr_scheduler_step":
        return Plan(drop=[2], values={names[2]: "0" if single_auto else f"{trainer}.optimizers.index({names[1]}.optimizer)"},
                    super_drop=[1])
    if name == "configure_gradient_clipping":
        return Plan(drop=[2], values={names[2]: idx_for(names[1])}, super_drop=[1])
    if name == "on_before_optimizer_step":
        return Plan(drop=[2], values={names[2]: _index_expr(trainer, names[1], False)}, super_drop=[1])
    if name == "backward":
        dropped = names[2:4]
        if manual:
            values = {n: None for n in dropped}
            why = ("under manual optimization 1.9 passed None here (the current optimizer when a multi-optimizer "
                   "model was converted to manual optimization); `backward` no longer receives "
                   f"`{'`/`'.join(dropped)}`, so check what the body needs")
        else:
            values = {dropped[0]: f"{trainer}.optimizers[0]"}
            if len(dropped) > 1:
                values[dropped[1]] = "0" if single_auto else None
            why = ("`backward` no longer receives the optimizer index; with several optimizers it depends on which "
                   "one is being stepped")
        return Plan(drop=list(range(2, 2 + len(dropped))), values=values, super_drop=[1, 2][:len(dropped)],
                    why_unknown=why)
    return None


def _plan_callback_hook(func: cst.FunctionDef) -> Optional[Plan]:
    name = func.name.value
    names = param_names(func)
    if not plans_callback_hook(name, names):
        return None
    if name == "on_before_optimizer_step":
        return Plan(drop=[4], values={names[4]: _index_expr(names[1], names[3], False)}, super_drop=[3])
    if name == "finetune_function":
        return Plan(drop=[4], values={names[4]: _index_expr(f"{names[1]}.trainer", names[3], False)}, super_drop=[3])
    return None


# ---------------------------------------------------------------------------------------------
# Applying a plan


class _Substitute(PrunedTransformer):
    """Replace every read of the given names by an expression (parenthesized where needed)."""

    SAFE_PARENTS = (cst.If, cst.While, cst.Arg, cst.Assign, cst.Return, cst.Expr, cst.Element,
                    cst.DictElement, cst.BooleanOperation, cst.IfExp, cst.AnnAssign, cst.AugAssign,
                    cst.Assert)

    def __init__(self, values: Dict[str, str]) -> None:
        self.values = {k: cst.parse_expression(v) for k, v in values.items()}
        self.stack: List[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        return super().on_visit(node)

    def on_leave(self, original, updated):
        result = super().on_leave(original, updated)
        self.stack.pop()
        return result

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if original.value not in self.values or len(self.stack) < 2:
            return updated
        parent = self.stack[-2]
        if isinstance(parent, cst.Attribute) and parent.attr is original:
            return updated
        if isinstance(parent, cst.Arg) and parent.keyword is original:
            return updated
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName)):
            return updated
        expr = self.values[original.value].deep_clone()
        if isinstance(expr, cst.Comparison) and not isinstance(parent, self.SAFE_PARENTS):
            expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return expr


class _SuperArgs(PrunedTransformer):
    def __init__(self, hook: str, drop: Sequence[int], drop_kw: Sequence[str], dropped_names: Set[str],
                 min_old: int) -> None:
        self.hook = hook
        self.drop = set(drop)
        self.drop_kw = set(drop_kw) | dropped_names
        self.dropped_names = dropped_names
        self.min_old = min_old
        self.changed = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == self.hook
                and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name)
                and func.value.func.value == "super"):
            return updated
        positional = [a for a in updated.args if a.keyword is None and not a.star]
        by_name = any(isinstance(positional[i].value, cst.Name) and positional[i].value.value in self.dropped_names
                      for i in self.drop if i < len(positional))
        old = len(positional) >= self.min_old or by_name
        args, pos_i = [], 0
        for a in updated.args:
            if a.keyword is None and not a.star:
                keep = not (old and pos_i in self.drop)
                pos_i += 1
            else:
                keep = not (a.keyword is not None and a.keyword.value in self.drop_kw)
            if keep:
                args.append(a)
        if len(args) == len(updated.args):
            return updated
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        self.changed = True
        return updated.with_changes(args=args)


def _apply_plan(func: cst.FunctionDef, plan: Plan, code: str) -> cst.FunctionDef:
    ps = positional_params(func)
    names = [p.name.value for p in ps]
    dropped = {names[i] for i in plan.drop if i < len(names)} | set(plan.drop_kwonly)
    # super().hook(old arguments) first, while the old names still identify them
    min_old = {"optimizer_step": 5, "optimizer_zero_grad": 4, "lr_scheduler_step": 3,
               "configure_gradient_clipping": 4, "on_before_optimizer_step": 2, "backward": 3,
               "finetune_function": 4}.get(func.name.value, 99)
    if func.name.value == "on_before_optimizer_step" and len(names) >= 5:
        min_old = 4  # the callback hook
    func = transform(func, _SuperArgs(func.name.value, plan.super_drop, plan.super_drop_kw, dropped, min_old))
    # the new parameter list
    kept = [p for i, p in enumerate(ps) if i not in plan.drop]
    if plan.add_closure:
        kept.append(cst.Param(cst.Name("optimizer_closure"), default=cst.Name("None"),
                              equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
    kwonly = [p for p in func.params.kwonly_params if p.name.value not in plan.drop_kwonly]
    params = func.params.with_changes(posonly_params=(), params=kept, posonly_ind=cst.MaybeSentinel.DEFAULT,
                                      kwonly_params=kwonly)
    if not kwonly and isinstance(params.star_arg, cst.ParamStar):
        params = params.with_changes(star_arg=cst.MaybeSentinel.DEFAULT)
    has_more = isinstance(params.star_arg, cst.Param) or kwonly or params.star_kwarg is not None
    if kept:
        last = kept[-1]
        if not has_more:  # keep a trailing comma (one parameter a line) as the old last one had it
            kept[-1] = last.with_changes(comma=ps[-1].comma if ps else cst.MaybeSentinel.DEFAULT)
        elif last.comma is cst.MaybeSentinel.DEFAULT:
            kept[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        params = params.with_changes(params=kept)
    func = func.with_changes(params=params)
    # the body: substitute reads, bind reassigned or unknown ones at the top
    body = body_of(func)
    facts = BodyFacts(body)
    substitute: Dict[str, str] = {}
    bind: List[Tuple[str, str]] = []
    unknown_used: List[str] = []
    for name in sorted(dropped, key=lambda n: names.index(n) if n in names else len(names)):
        if not facts.uses(name):
            continue
        value = plan.values.get(name)
        if value is None:
            unknown_used.append(name)
            bind.append((name, "None"))
        elif name in facts.bound or facts.has_scope_decl:
            bind.append((name, value))
        else:
            substitute[name] = value
    used = " ".join([*substitute.values(), *(v for _, v in bind)])
    plan.imports = {imp for imp, mark in (("torch", "torch."), ("XLAAccelerator", "XLAAccelerator")) if mark in used}
    if substitute:
        func = func.with_changes(body=transform(func.body, _Substitute(substitute)))
    if bind:
        func = prepend_statements(func, [parse_statements(f"{n} = {v}")[0] for n, v in bind])
    if unknown_used:
        func = add_marker(func, code, plan.why_unknown or f"`{'`, `'.join(unknown_used)}` has no 2.x equivalent here")
    return func


# ---------------------------------------------------------------------------------------------
# toggle_optimizer / untoggle_optimizer


class _Toggles(PrunedTransformer):
    def __init__(self, s: str, toggled: Dict[str, cst.BaseExpression]) -> None:
        self.s = s
        self.toggled = toggled
        self.changed = False

    def _self_call(self, call: cst.Call, name: str) -> bool:
        f = call.func
        return (isinstance(f, cst.Attribute) and f.attr.value == name
                and isinstance(f.value, cst.Name) and f.value.value == self.s)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if self._self_call(updated, "toggle_optimizer") and len(updated.args) == 2:
            self.changed = True
            return updated.with_changes(args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        if self._self_call(updated, "untoggle_optimizer") and len(updated.args) == 1:
            arg = updated.args[0].value
            key = code_of(arg)
            if key in self.toggled:
                new = self.toggled[key].deep_clone()
            elif isinstance(arg, cst.Integer) or (isinstance(arg, cst.Name) and arg.value.endswith("idx")):
                new = cst.parse_expression(f"{self.s}.trainer.optimizers[{key}]")
            else:
                return updated
            self.changed = True
            return updated.with_changes(args=[updated.args[0].with_changes(value=new)])
        return updated


def _toggled(func: cst.FunctionDef, s: str) -> Dict[str, cst.BaseExpression]:
    found: Dict[str, cst.BaseExpression] = {}

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if (isinstance(f, cst.Attribute) and f.attr.value == "toggle_optimizer" and len(node.args) == 2
                    and isinstance(f.value, cst.Name) and f.value.value == s):
                found.setdefault(code_of(node.args[1].value), node.args[0].value)

    walk(func, V())
    return found


# ---------------------------------------------------------------------------------------------
# The LBFGS-safe closure for hand-written manual optimization


def _is_method_call(stmt: cst.CSTNode, method: str) -> Optional[cst.Call]:
    """The call when ``stmt`` is the statement line ``<expr>.method(...)``."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == method:
        return call
    return None


def _receiver(call: cst.Call) -> Optional[str]:
    value = call.func.value  # type: ignore[attr-defined]
    return value.value if isinstance(value, cst.Name) else None


def _calls(node: cst.CSTNode) -> List[cst.Call]:
    found: List[cst.Call] = []

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            found.append(n)

    walk(node, V())
    return found


def _optimizer_names(stmts: Sequence[Statement]) -> Set[str]:
    """Names the step binds to optimizers, or calls ``zero_grad`` on."""
    names: Set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if "optimizers" in code_of(node.value):
                for t in node.targets:
                    names.update(BodyFacts([cst.Expr(t.target)]).loaded)

        def visit_For(self, node: cst.For) -> None:
            if "optimizers" in code_of(node.iter):
                names.update(BodyFacts([cst.Expr(node.target)]).loaded)

        def visit_Call(self, node: cst.Call) -> None:
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value == "zero_grad" and isinstance(f.value, cst.Name):
                names.add(f.value.value)

    for s in stmts:
        walk(s, V())
    return names


def _bare_step(call: cst.Call, optimizers: Set[str]) -> bool:
    f = call.func
    if not (isinstance(f, cst.Attribute) and f.attr.value == "step" and not call.args):
        return False
    if isinstance(f.value, cst.Name):
        return f.value.value in optimizers
    return "optimizers" in code_of(f.value)


class _MarkBareSteps(PrunedTransformer):
    def __init__(self, optimizers: Set[str], why: str) -> None:
        self.optimizers = optimizers
        self.why = why
        self.count = 0

    def leave_SimpleStatementLine(self, original, updated):
        if any(_bare_step(c, self.optimizers) for c in _calls(updated)):
            self.count += 1
            return add_marker(updated, CODE, self.why)
        return updated


@dataclass
class ClosureResult:
    func: cst.FunctionDef
    rewritten: bool = False
    marked: int = 0


def _pure_fetch(stmt: Statement, name: str) -> bool:
    """``name = self.optimizers(...)`` (possibly indexed): safe to move earlier."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return False
    assign = stmt.body[0]
    calls = _calls(assign.value)
    return (len(assign.targets) == 1 and name in BodyFacts([stmt]).bound
            and len(calls) == 1 and code_of(calls[0].func).endswith(".optimizers"))


def _closure_shape(stmts: List[Statement], s: str, optimizers: Set[str]) -> Tuple[Optional[str], Optional[tuple]]:
    """Why the body is not the clear pattern, or the pieces to rewrite it."""
    steps = [i for i, st in enumerate(stmts) if any(_bare_step(c, optimizers) for c in _calls(st))]
    if len(steps) != 1:
        return "several optimizer steps in one training_step", None
    p = steps[0]
    call = _is_method_call(stmts[p], "step")
    if call is None or _receiver(call) is None:
        return "the step is inside a branch, a loop or an expression", None
    opt = _receiver(call)
    zeros = [i for i, st in enumerate(stmts) for c in _calls(st)
             if isinstance(c.func, cst.Attribute) and c.func.attr.value == "zero_grad"]
    backs = [i for i, st in enumerate(stmts) for c in _calls(st)
             if isinstance(c.func, cst.Attribute) and c.func.attr.value == "manual_backward"]
    if len(zeros) != 1 or len(backs) != 1:
        return "zero_grad/manual_backward are missing, repeated or not where the step is", None
    z, b = zeros[0], backs[0]
    zcall, bcall = _is_method_call(stmts[z], "zero_grad"), _is_method_call(stmts[b], "manual_backward")
    if zcall is None or bcall is None or _receiver(zcall) != opt or _receiver(bcall) != s:
        return "zero_grad/manual_backward are inside a branch or not on this optimizer", None
    if not (z < b < p):
        return "zero_grad does not come before manual_backward and the step", None
    if len(bcall.args) < 1 or bcall.args[0].keyword is not None or bcall.args[0].star:
        return "unusual manual_backward call", None
    loss = bcall.args[0].value
    if _calls(loss):
        return "the backward argument is computed in the call", None
    # where the optimizer is bound, and the statements the loss depends on
    binds = [i for i in range(p) if opt in BodyFacts([stmts[i]]).bound]
    xb = binds[-1] if binds else -1
    needed = set(BodyFacts([cst.Expr(loss)]).loaded)
    slice_ = []
    for i in range(b - 1, -1, -1):
        facts = BodyFacts([stmts[i]])
        if facts.bound & needed:
            slice_.append(i)
            needed |= facts.loaded
    # plain statements the loss needs (``x, y = batch``) can stay outside: they run once either way
    start = min([z, *(i for i in slice_ if _calls(stmts[i]) or not isinstance(stmts[i], cst.SimpleStatementLine))])
    hoist = None
    if start <= xb:
        if xb < z and _pure_fetch(stmts[xb], opt) and not (BodyFacts(stmts[start:xb]).uses(opt)):
            hoist = xb
        else:
            return "the optimizer is bound between the forward and the step", None
    outside = [i for i in slice_ if i < start and _calls(stmts[i])]
    if outside:
        return "part of the loss is computed before the optimizer is fetched", None
    region = [st for i, st in enumerate(stmts[start:p], start) if i != hoist]
    facts = BodyFacts(region)
    if facts.has_return or facts.has_yield or facts.has_scope_decl:
        return "the code before the step returns or declares global/nonlocal names", None
    after_b = BodyFacts(stmts[b + 1:p])
    if after_b.bound & BodyFacts([cst.Expr(loss)]).loaded:
        return "the loss is reassigned after manual_backward", None
    return None, (start, p, hoist, loss, opt)


def _closure_rewrite(func: cst.FunctionDef, is_training_step: bool) -> ClosureResult:
    s = self_name(func)
    doc, stmts = split_docstring(body_of(func))
    optimizers = _optimizer_names(stmts)
    if not any(_bare_step(c, optimizers) for c in _calls(func.body)):
        return ClosureResult(func)
    why, shape = _closure_shape(stmts, s, optimizers) if is_training_step else ("not a training_step", None)
    if shape is None:
        marker = _MarkBareSteps(optimizers, f"{why}: {LBFGS_WHY} (zero_grad, forward, manual_backward, return the "
                                f"loss; `opt.step(closure=closure)`), so only non-LBFGS optimizers work as written")
        new = func.with_changes(body=transform(func.body, marker))
        return ClosureResult(new, marked=marker.count)
    start, p, hoist, loss, opt = shape
    region = [st for i, st in enumerate(stmts[start:p], start) if i != hoist]
    before = [st for i, st in enumerate(stmts[:start]) if i != hoist]
    if hoist is not None:
        before.append(stmts[hoist])
    after = stmts[p + 1:]
    params = set(param_names(func)) | {p.name.value for p in func.params.kwonly_params}
    bound_before = BodyFacts(before).bound | params
    region_facts = BodyFacts(region)
    later = BodyFacts(after)
    shared = sorted(region_facts.bound & (later.loaded | later.bound | bound_before))
    taken = BodyFacts(body_of(func)).loaded | BodyFacts(body_of(func)).bound | params
    name = fresh_name("closure", taken)
    first = region[0]
    comments = [ln for ln in first.leading_lines if ln.comment is not None]
    region[0] = first.with_changes(leading_lines=comments)
    inner: List[Statement] = []
    if shared:
        inner.append(parse_statements(f"nonlocal {', '.join(shared)}")[0])
    inner += region
    inner.append(cst.SimpleStatementLine([cst.Return(loss.deep_clone())]))
    closure = cst.FunctionDef(name=cst.Name(name), params=cst.Parameters(), body=cst.IndentedBlock(inner),
                              leading_lines=[cst.EmptyLine(indent=False)])
    prebind = [parse_statements(f"{n} = None")[0] for n in shared if n not in bound_before]
    step_line: cst.SimpleStatementLine = stmts[p]  # type: ignore[assignment]
    call = step_line.body[0].value  # type: ignore[attr-defined]
    new_call = call.with_changes(args=[cst.Arg(cst.Name(name), keyword=cst.Name("closure"),
                                               equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])
    step_line = step_line.with_changes(body=[step_line.body[0].with_changes(value=new_call)],
                                       leading_lines=[cst.EmptyLine(indent=False),
                                                      *(ln for ln in step_line.leading_lines if ln.comment is not None)])
    new = with_body(func, [*doc, *before, *prebind, closure, step_line, *after])
    return ClosureResult(new, rewritten=True)


def _manual(cls: cst.ClassDef) -> bool:
    text = code_of(cls)
    return "automatic_optimization = False" in text or "def automatic_optimization" in text


# ---------------------------------------------------------------------------------------------
# The editors


class _ModuleEditor(ClassEditor):
    code = CODE

    def __init__(self, *args, needs: Dict[str, List[str]], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.needs = needs  # import -> the classes whose rewritten bodies use it

    def _single_auto(self, manual: bool) -> bool:
        if manual:
            return False
        for c in [self.info, *self.h.ancestors]:
            if IDX_NAMES & set(c.params.get("training_step", ())):
                return False
        return True

    def migrate(self) -> None:
        if self.index.in_lightning_hierarchy(self.info, CALLBACK_NAMES):
            return  # a callback: see _Callbacks
        manual = _manual(self.original)
        single_auto = self._single_auto(manual)
        for hook in sorted(MODULE_HOOKS):
            func = self.get(hook)
            if func is None:
                continue
            plan = _plan_module_hook(func, single_auto, manual, self.index.in_lightning_hierarchy(self.info) is True)
            if plan is None:
                continue
            self.set(hook, _apply_plan(func, plan, CODE))
            for name in sorted(plan.imports):  # what the rewritten body actually uses
                self.needs.setdefault(name, []).append(self.info.name)
            self.fixed(f"`{hook}` takes its 2.x arguments (no optimizer_idx)", hook)
        for i, item in enumerate(self.items):
            if not isinstance(item, cst.FunctionDef):
                continue
            s = self_name(item)
            t = _Toggles(s, _toggled(item, s))
            new = transform(item, t)
            if t.changed:
                self.items[i] = new
                self.fixed("toggle_optimizer/untoggle_optimizer take the optimizer, not its index",
                           item.name.value)
        if manual:
            for i, item in enumerate(self.items):
                if not isinstance(item, cst.FunctionDef):
                    continue
                res = _closure_rewrite(item, item.name.value == "training_step")
                if res.rewritten:
                    self.items[i] = res.func
                    self.fixed("the manual optimizer step evaluates a closure (LBFGS-safe)", item.name.value)
                elif res.marked:
                    self.items[i] = res.func
                    self.changed = True


class _Callbacks(PrunedTransformer):
    """Rewrites the hooks of the callback classes named in ``only``."""

    def __init__(self, ctx: RuleContext, module: cst.Module, only: FrozenSet[str]) -> None:
        self.ctx = ctx
        self.module = module
        self.only = only

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        if original.name.value not in self.only:
            return updated
        index = self.ctx.project
        info: Optional[ClassInfo] = index.resolve(original.name.value, self.ctx.path)
        if info is None or info.path != self.ctx.path or not (CALLBACK_HOOKS & info.methods):
            return updated
        if not index.in_lightning_hierarchy(info, CALLBACK_NAMES) or index.in_lightning_hierarchy(info):
            return updated
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if isinstance(item, cst.FunctionDef) and item.name.value in CALLBACK_HOOKS:
                plan = _plan_callback_hook(item)
                if plan is not None:
                    items[i] = _apply_plan(item, plan, CODE)
                    line, col = self.ctx.position(self.module, original)
                    self.ctx.report(CODE, f"{info.name}: `{item.name.value}` takes its 2.x arguments (no opt_idx)",
                                    Kind.FIXED, line, col)
                    changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


# ---------------------------------------------------------------------------------------------
# Imports


def _binds_at_top(module: cst.Module, name: str) -> bool:
    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not (
                        isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar)):
                    if name in BodyFacts([cst.SimpleStatementLine([small])]).bound | {
                            code_of(a.asname.name) if a.asname else code_of(a.name).split(".")[0]
                            for a in small.names}:  # type: ignore[union-attr]
                        return True
    return False


def _add_import(module: cst.Module, line: str) -> cst.Module:
    body = list(module.body)
    last = -1
    for i, st in enumerate(body):
        if isinstance(st, cst.SimpleStatementLine) and all(isinstance(x, (cst.Import, cst.ImportFrom)) for x in st.body):
            last = i
    new = parse_statements(line)[0]
    if last == -1 and body and isinstance(body[0], cst.SimpleStatementLine) and all(
            isinstance(x, cst.Expr) and isinstance(x.value, (cst.SimpleString, cst.ConcatenatedString))
            for x in body[0].body):
        last = 0  # after a module docstring
    body.insert(last + 1, new)
    return module.with_changes(body=body)


# ---------------------------------------------------------------------------------------------
# The rule


class OptimizerHooksRule(Rule):
    code = CODE
    name = "optimizer-hooks"
    summary = ("Rewrites optimizer hooks to their 2.x signatures (no optimizer_idx, no optimizer_step flags) "
               "and gives hand-written manual steps an LBFGS-safe closure.")
    spec_rows = ("M9", "M10", "M11", "M12", "M13", "M14", "M15", "C1", "C4")
    coverage = {
        "M9": Handling.REWRITTEN,
        "M10": Handling.REWRITTEN,
        "M11": Handling.REWRITTEN,
        "M12": Handling.REWRITTEN,
        "M13": Handling.REWRITTEN,
        "M14": Handling.REWRITTEN,
        "M15": Handling.REWRITTEN,
        "C1": Handling.REWRITTEN,
        "C4": Handling.REWRITTEN,
    }
    guide = (f"{GUIDE} (rows on `optimizer_idx` in `optimizer_step`, `optimizer_zero_grad`, `lr_scheduler_step`, "
             "`configure_gradient_clipping`, `on_before_optimizer_step`, `backward`, `toggle_optimizer`, "
             "`Callback.on_before_optimizer_step`, `BaseFinetuning.finetune_function`; spec M9-M15, C1, C4)")
    safety = Safety.PRESERVING
    triggers = ("optimizer_idx", "opt_idx", "on_tpu", "using_lbfgs", "using_native_amp", "toggle_optimizer",
                "def optimizer_step", "def optimizer_zero_grad", "def lr_scheduler_step",
                "def configure_gradient_clipping", "def on_before_optimizer_step", "def backward",
                "def finetune_function", "automatic_optimization")
    description = (
        "Lightning 2.0 removed `optimizer_idx` from the optimizer hooks and the `on_tpu`, `using_native_amp` "
        "and `using_lbfgs` flags from `optimizer_step`, and calls the hooks positionally with the shorter "
        "argument lists, so an old signature fails or (for `optimizer_step`) silently binds the closure to "
        "`optimizer_idx`. This rule rewrites `optimizer_step`, `optimizer_zero_grad`, `lr_scheduler_step`, "
        "`configure_gradient_clipping`, `on_before_optimizer_step` and `backward` of LightningModules, and "
        "`on_before_optimizer_step` / `finetune_function` of callbacks, to their 2.x signatures; reads of a "
        "dropped parameter become the 2.x expression for it (the index: `0` with one optimizer under "
        "automatic optimization, else `trainer.optimizers.index(optimizer)`; `using_lbfgs`: an isinstance "
        "check on the optimizer; `using_native_amp`: `trainer.precision`; `on_tpu`: an isinstance check on "
        "the accelerator). `super()` calls with the old arguments, `toggle_optimizer(opt, idx)` and "
        "`untoggle_optimizer(idx)` follow. Under manual optimization, a `training_step` that calls "
        "`opt.step()` without a closure after `zero_grad` / forward / `manual_backward` moves that code into "
        "a closure passed to `opt.step(closure=...)`, which LBFGS needs and every other optimizer runs once, "
        "exactly as before; any other shape gets `# TODO(lightmigrate): LM004`."
    )
    examples = (
        Example(
            title="optimizer_step warm-up with the 1.x flags",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None,
                       on_tpu=False, using_native_amp=False, using_lbfgs=False):
        if not using_lbfgs and self.trainer.global_step < 100:
            for group in optimizer.param_groups:
                group["lr"] = 0.01 * (optimizer_idx + 1)
        optimizer.step(closure=optimizer_closure)
''',
            after='''\
import pytorch_lightning as pl
import torch


class Model(pl.LightningModule):
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
        if not isinstance(getattr(optimizer, "optimizer", optimizer), torch.optim.LBFGS) and self.trainer.global_step < 100:
            for group in optimizer.param_groups:
                group["lr"] = 0.01 * (0 + 1)
        optimizer.step(closure=optimizer_closure)
''',
        ),
        Example(
            title="callback on_before_optimizer_step",
            before='''\
import pytorch_lightning as pl


class GradNorm(pl.Callback):
    def on_before_optimizer_step(self, trainer, pl_module, optimizer, opt_idx):
        if opt_idx == 0:
            pl_module.log("g", 1.0)
''',
            after='''\
import pytorch_lightning as pl


class GradNorm(pl.Callback):
    def on_before_optimizer_step(self, trainer, pl_module, optimizer):
        if trainer.optimizers.index(optimizer) == 0:
            pl_module.log("g", 1.0)
''',
        ),
        Example(
            title="manual step without a closure",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        opt.zero_grad()
        loss = self(batch).sum()
        self.manual_backward(loss)
        opt.step()
        self.log("loss", loss)
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        loss = None

        def closure():
            nonlocal loss
            opt.zero_grad()
            loss = self(batch).sum()
            self.manual_backward(loss)
            return loss

        opt.step(closure=closure)
        self.log("loss", loss)
''',
        ),
        Example(
            title="2.x signatures and closures are left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None):
        optimizer.step(closure=optimizer_closure)

    def on_before_optimizer_step(self, optimizer):
        pass

    def backward(self, loss, *args, **kwargs):
        loss.backward(*args, **kwargs)
''',
            after=None,
        ),
    )

    def may_apply(self, text: str) -> bool:
        """The text prefilter: a toggle, manual optimization, or a def of one of the hooks (a
        ``backward`` counts only with "optim" or an index name among its parameters:
        autograd functions define ``backward`` too)."""
        if not any(t in text for t in self.triggers):
            return False
        if "toggle_optimizer" in text or "automatic_optimization" in text:
            return True
        hooks = {m.group(1) for m in _HOOK_DEF.finditer(text)}
        if hooks - {"backward"}:
            return True
        return "backward" in hooks and any(_backward_may_be_old(text, m.end()) for m in _BACKWARD_DEF.finditer(text))

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        """A site for each class whose hooks, toggles or manual steps the editors change or
        mark ("module": a LightningModule, "mark": a class that is not recognisably one,
        "callback": a callback), with the hooks ``migrate_classes`` looks for and the import
        root of the class's Lightning base (for an added ``XLAAccelerator`` import)."""
        tree = source.tree
        lines = text_lines(source.text)
        functions = [n for n in source.nodes if isinstance(n, FUNCTIONS)]
        # the hooks migrate_classes looks for (a class defines or inherits one of them)
        hooks = {f.name for f in functions if f.name in MODULE_HOOKS and plans_module_hook(
            f.name, positional(f), [a.arg for a in f.args.kwonlyargs], True)} | {"training_step"}
        if "toggle_optimizer" in source.text:
            hooks |= {f.name for f in functions if "toggle_optimizer" in stmt_text(lines, f)}
        frozen = frozenset(hooks)
        sites: List[Site] = []
        for c in hook_classes(source, ctx, frozen):
            items = class_items(lines, c.node)
            if c.known:
                if _module_class_changes(c.info, ctx, items, lines, c.node):
                    sites.append(c.site("module", (frozen, class_lightning_root(tree, c.node))))
            elif any(isinstance(item, FUNCTIONS) and item.name in frozen and not has_marker(lines, item, CODE)
                     for item in items):
                sites.append(c.site("mark", (frozen, "")))
        index = ctx.project
        for node in ast_class_defs(tree):
            info = index.resolve(node.name, ctx.path)
            if info is None or info.path != ctx.path or not (CALLBACK_HOOKS & info.methods):
                continue
            if not index.in_lightning_hierarchy(info, CALLBACK_NAMES) or index.in_lightning_hierarchy(info):
                continue
            if any(isinstance(item, FUNCTIONS) and plans_callback_hook(item.name, positional(item))
                   for item in class_items(lines, node)):
                sites.append(Site(node.lineno, node.col_offset, node.name, "callback", (frozen, "")))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        classes = frozenset(s.target for s in sites if s.action in ("module", "mark"))
        callbacks = frozenset(s.target for s in sites if s.action == "callback")
        needs: Dict[str, List[str]] = {}  # an import the rewritten bodies use -> the classes using it
        if classes:
            hooks = next(s.data[0] for s in sites if s.target in classes)
            module = migrate_classes(module, ctx, CODE, hooks,
                                     lambda *a, **k: _ModuleEditor(*a, needs=needs, **k), UNKNOWN_CLASS,
                                     only=classes)
        if callbacks:
            module = transform(module, _Callbacks(ctx, module, callbacks))
        if "torch" in needs and not _binds_at_top(module, "torch"):
            module = _add_import(module, "import torch")
        if "XLAAccelerator" in needs and not _binds_at_top(module, "XLAAccelerator"):
            # from the package of the (first) class that tests the accelerator
            root = next(s.data[1] for s in sites if s.target in needs["XLAAccelerator"])
            module = _add_import(module, f"from {root}.accelerators import XLAAccelerator")
        return module


# ---------------------------------------------------------------------------------------------
# What the module editor changes, on Python's ``ast`` (see _ModuleEditor.migrate)


def _module_class_changes(info: ClassInfo, ctx: RuleContext, items: Sequence[ast.stmt], lines: Sequence[str],
                          node: ast.ClassDef) -> bool:
    """Whether ``_ModuleEditor`` changes or marks something in this class."""
    index = ctx.project
    if index.in_lightning_hierarchy(info, CALLBACK_NAMES):
        return False  # a callback: see _Callbacks
    sure = index.in_lightning_hierarchy(info) is True
    methods = [item for item in items if isinstance(item, FUNCTIONS)]
    for hook in MODULE_HOOKS:
        func = last_def(items, hook)
        if func is not None and plans_module_hook(hook, positional(func), [a.arg for a in func.args.kwonlyargs], sure):
            return True
    if any(_toggles_change(func, lines) for func in methods):
        return True
    text = stmt_text(lines, node)
    if "automatic_optimization = False" in text or "def automatic_optimization" in text:
        return any(_manual_step_changes(func, lines) for func in methods)
    return False


def _toggles_change(func: Function, lines: Sequence[str]) -> bool:
    """Whether ``_Toggles`` rewrites a ``toggle_optimizer`` / ``untoggle_optimizer`` call of
    ``func``. (Its ``untoggle_optimizer(KEY)`` with a key from a two-argument toggle only
    matters when that toggle is there, and that toggle is rewritten anyway.)"""
    s = ast_self_name(func)
    for node in ast_nodes(func):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == s):
            continue
        count = len(node.args) + len(node.keywords)
        if node.func.attr == "toggle_optimizer" and count == 2:
            return True
        if node.func.attr == "untoggle_optimizer" and count == 1:
            arg = node.args[0] if node.args else node.keywords[0].value
            if isinstance(arg, ast.Starred):
                arg = arg.value
            if isinstance(arg, ast.Constant) and type(arg.value) is int:
                return True
            if isinstance(arg, ast.Name) and arg.id.endswith("idx"):
                return True
    return False


def _cst_names(node: ast.AST) -> Set[str]:
    """The names libcst visits as ``Name`` nodes in an expression: names, attribute names,
    keyword names and lambda parameters (``BodyFacts(...).loaded``)."""
    out: Set[str] = set()
    for n in ast_nodes(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.keyword) and n.arg:
            out.add(n.arg)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
    return out


def _ast_optimizer_names(body: Sequence[ast.stmt], lines: Sequence[str]) -> Set[str]:
    """``_optimizer_names`` on ``ast``."""
    names: Set[str] = set()
    for st in body:
        for n in ast_nodes(st):
            if isinstance(n, ast.Assign) and "optimizers" in segment(lines, n.value):
                for t in n.targets:
                    names |= _cst_names(t)
            elif isinstance(n, (ast.For, ast.AsyncFor)) and "optimizers" in segment(lines, n.iter):
                names |= _cst_names(n.target)
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "zero_grad"
                  and isinstance(n.func.value, ast.Name)):
                names.add(n.func.value.id)
    return names


def _ast_bare_step(node: ast.AST, optimizers: Set[str], lines: Sequence[str]) -> bool:
    """``_bare_step`` on ``ast``: ``opt.step()`` without arguments on an optimizer."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step"
            and not node.args and not node.keywords):
        return False
    if isinstance(node.func.value, ast.Name):
        return node.func.value.id in optimizers
    return "optimizers" in segment(lines, node.func.value)


def _manual_step_changes(func: Function, lines: Sequence[str]) -> bool:
    """Whether ``_closure_rewrite`` rewrites or marks a step in ``func`` (a method of a class
    under manual optimization). A ``training_step`` with a bare step counts even when every
    such step is marked already: its clear shape would be rewritten (not worked out here)."""
    optimizers = _ast_optimizer_names(func.body, lines)
    if not any(_ast_bare_step(n, optimizers, lines) for st in func.body for n in ast_nodes(st)):
        return False
    if func.name == "training_step":
        return True
    # marked: each statement line with a bare step, when it has no LM004 marker yet
    return any(not has_marker(lines, head, CODE) for st, head in in_statement_lines(lines, func.body)
               if any(_ast_bare_step(n, optimizers, lines) for n in ast_nodes(st)))
