"""LM308: LightningModule API calls that changed after 1.9 (spec M21, M23, M24).

- M21 ``LightningModule.from_compiled(m)`` / ``to_uncompiled(m)`` (classmethods in 1.9, which
  ignored the class) -> the functions ``from_compiled`` / ``to_uncompiled`` of
  ``<root>.utilities.compile``.
- M23 ``model.load_from_checkpoint(path)`` on an instance raises from 2.1; 1.9 built a new model
  from the instance's class and returned it. ``type(model).load_from_checkpoint(path)`` does the
  same. Rewritten where the name is known to hold an instance (``self`` in a Lightning class, a
  name only ever assigned ``SomeClass(...)``; in a function, a name bound only by calls and
  parameters that are annotated to give a LightningModule or that the function uses as only an
  instance can be used: ``trainer.fit(model=name)``, ``name.state_dict()``). A name that may
  hold a class (``cls = registry.get(...)``) is left alone. When the result is thrown away (a bare
  statement) the 1.x code was most likely a bug (``model`` is not changed): marked.
- M24 ``training_step(self, dataloader_iter, batch_idx)``: from 2.1 the step takes only
  ``dataloader_iter`` and ``next()`` yields ``(batch, batch_idx, dataloader_idx)``. When the body
  does not read ``batch_idx``, the parameter goes and each ``next(dataloader_iter)`` becomes
  ``next(dataloader_iter)[0]``; otherwise the step is marked.
- B-9 a LightningModule that puts itself or a sub-module in eval mode in ``__init__`` or
  ``setup`` (``X.eval()``, ``X.train(False)``): 1.9 called ``model.train()`` when fit started
  (after the sanity check, before ``on_train_start``) and after every validation, so that code
  trained in train mode; 2.2+ keeps the mode. An ``on_fit_start`` that ends with
  ``self.train()`` does what 1.9 did (the evaluation loops of 2.x restore the train mode it
  sets); an existing ``on_fit_start`` gets the call as its last statement, or a marker when an
  early ``return`` could skip it.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst
from lightmigrate.analysis.ast_nodes import NodeVisitor, ast_nodes
from lightmigrate.cst.helpers import is_name

from lightmigrate.cst.helpers import (
    add_marker, append_statements, keep_only_params, parse_method, parse_statements, self_name,
)
from lightmigrate.output.findings import Kind
from lightmigrate.analysis.project import LIGHTNING_MODULE_NAMES
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import KindTransformer, class_kind, kind_classes
from lightmigrate.rules.shared.method_sites import (
    has_marker_above, has_star_params, identifiers, imports_lightning, index_source, methods, physical_lines, positional,
    statement_lines,
)
from lightmigrate.cst.helpers import ensure_import, lightning_root
from lightmigrate.cst.walk import transform, PrunedTransformer

CODE = "LM308"
STEPS = ("training_step", "validation_step", "test_step", "predict_step")
_COMPILED = frozenset({"from_compiled", "to_uncompiled"})
_MODULE_KIND = frozenset({"module"})
WHY_DISCARDED = ("`load_from_checkpoint` returns a new model and never changed `{name}` (1.x did the same): "
                 "write `{name} = <ModelClass>.load_from_checkpoint(...)` if that was meant (called on an instance "
                 "it raises from Lightning 2.1)")
WHY_TRAIN_MODE = ("Lightning 1.x put the whole model in train mode when `fit` started, undoing the `.eval()` of "
                  "`{where}`; 2.2+ keeps it: end this hook with `self.train()` on every path to keep 1.x training")
_EVAL_SETUP = ("__init__", "setup")
WHY_ITER = ("Lightning 2.1+ passes only `dataloader_iter` and `next(dataloader_iter)` yields `(batch, batch_idx, "
            "dataloader_idx)`: drop `{idx}` and take it from `next()`")


_CALL_ATTRS = _COMPILED | {"load_from_checkpoint"}


def _bound_names(nodes: List[ast.AST]) -> Set[str]:
    """Names bound by imports, classes and functions anywhere in the file (``nodes``: its
    ``SourceFile.nodes``): not instances."""
    names: Set[str] = set()
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name.split(".")[0] for a in node.names if a.name != "*")
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
    return names


def _target_names(target: ast.AST) -> Set[str]:
    """The identifiers of an assignment target (attribute names too, as libcst's ``Name`` nodes)."""
    return set(identifiers([target]))


def _binds(node: ast.AST) -> Set[str]:
    """The names an augmented assignment, loop, ``with ... as``, ``except ... as``, ``global``,
    ``nonlocal`` or ``del`` binds (or declares)."""
    if isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor)):
        return _bound(node.target)
    if isinstance(node, ast.withitem):
        return _bound(node.optional_vars) if node.optional_vars is not None else set()
    if isinstance(node, ast.ExceptHandler):
        return {node.name} if node.name else set()
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return set(node.names)
    if isinstance(node, ast.Delete):
        return {n for t in node.targets for n in _bound(t)}
    return set()


def _bound(target: ast.AST) -> Set[str]:
    """The names an assignment target binds (not the attributes or items it sets)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {n for t in target.elts for n in _bound(t)}
    if isinstance(target, ast.Starred):
        return _bound(target.value)
    return set()


def _instance_names(nodes: List[ast.AST]) -> Set[str]:
    """Names only ever assigned an instantiation, ``name = SomeClass(...)`` (a capitalised
    callee), among ``nodes`` (the file's ``SourceFile.nodes``)."""
    good: Set[str] = set()
    other: Set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign):
            callee = node.value.func if isinstance(node.value, ast.Call) else None
            last = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else ""
            for target in node.targets:
                if isinstance(target, ast.Name):
                    (good if last[:1].isupper() else other).add(target.id)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            other |= _target_names(node.target)
    return good - other


# Calls only an instance answers: a class raises (``Net.state_dict()`` has no ``self``), so a
# name they are called on, or passed to a Trainer's run as the model, holds an instance.
_INSTANCE_METHODS = frozenset({
    "load_state_dict", "state_dict", "parameters", "named_parameters", "modules", "children", "eval", "train",
    "to", "cpu", "cuda", "freeze", "unfreeze", "zero_grad", "requires_grad_", "save_hyperparameters",
})
_TRAINER_RUNS = frozenset({"fit", "validate", "test", "predict", "tune"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _scope_nodes(scope: ast.AST) -> List[ast.AST]:
    """The nodes of a function's (or the module's) own scope: not those of the functions,
    classes and lambdas defined in it (their defaults and decorators are left out too)."""
    out: List[ast.AST] = []
    todo = list(scope.body) if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) else []
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _last_name(node: Optional[ast.AST]) -> str:
    """``C`` for an annotation or callee ``C``, ``a.b.C`` or ``"C"``; empty otherwise."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
        return node.value
    return ""


def _looks_like_trainer(node: ast.AST) -> bool:
    """``trainer``, ``self.trainer``, ``pl_trainer``, ``Trainer(...)``: a receiver of ``fit``
    that is a Lightning Trainer by its name."""
    if isinstance(node, ast.Call):
        return _last_name(node.func) == "Trainer"
    return "trainer" in _last_name(node).lower()


def _receiver_name(text: str, func: ast.Attribute) -> str:
    """The last dotted part of the code before ``.from_compiled`` (what ``code_of(value)``
    ends with in libcst): empty when the receiver is in parentheses (its code ends with one)."""
    value = func.value
    if (value.lineno, value.col_offset) != (func.lineno, func.col_offset):
        return ""  # the attribute starts at an opening parenthesis of its receiver
    return (ast.get_source_segment(text, value) or "").rsplit(".", 1)[-1]


class _Finder(NodeVisitor):
    """The M21/M23 call sites: ``<LightningModule class>.from_compiled(...)`` and
    ``<instance>.load_from_checkpoint(...)``, with the first parameter of each method directly
    in a LightningModule or DataModule class (``self``) counting as an instance."""

    def __init__(self, source: SourceFile, ctx: RuleContext, lightning_file: bool) -> None:
        self.text = source.text
        self.ctx = ctx
        self.lightning_file = lightning_file
        self.module_classes = set(LIGHTNING_MODULE_NAMES) | {c.name for c in ctx.project.kind_classes()}
        self.bound = _bound_names(source.nodes)
        self.instances = _instance_names(source.nodes)
        self.classes: List[bool] = []
        self.seen: Dict[str, int] = {}
        self.self_names: List[str] = []
        self.depth = 0
        self.calls: List[Tuple[ast.Call, str, str]] = []  # (call, action, receiver)
        self.tree = source.tree
        self.class_nodes: List[ast.ClassDef] = []
        self.scopes: List[ast.AST] = [source.tree]  # the enclosing functions (the module first)
        self.held: Dict[Tuple[int, str], bool] = {}  # (id of a scope, name) -> _holds_instance
        # each enclosing function: (its class, its first parameter) for a method, else (None, "")
        self.method_of: List[Tuple[Optional[ast.ClassDef], str]] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        ordinal = self.seen.get(node.name, 0)  # (pre-order: source order, as ClassInfo.ordinal)
        self.seen[node.name] = ordinal + 1
        self.classes.append(class_kind(self.ctx, node.name, ordinal) in ("module", "datamodule"))
        self.class_nodes.append(node)
        self.generic_visit(node)
        self.class_nodes.pop()
        self.classes.pop()

    def visit_FunctionDef(self, node) -> None:
        params = [a.arg for a in positional(node)]
        direct = bool(self.classes) and self.classes[-1] and self.depth == len(self.classes) - 1
        self.self_names.append(params[0] if direct and params else "")
        self.depth += 1
        self.scopes.append(node)
        in_class = self.class_nodes and self.depth == len(self.class_nodes) and params
        self.method_of.append((self.class_nodes[-1], params[0]) if in_class else (None, ""))
        self.generic_visit(node)
        self.method_of.pop()
        self.scopes.pop()
        self.depth -= 1
        self.self_names.pop()

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.scopes.append(node)
        self.generic_visit(node)
        self.scopes.pop()

    # --- whether a name of the current function holds an instance ---------------------------

    def holds_instance(self, name: str) -> bool:
        scope = self.scopes[-1]
        key = (id(scope), name)
        if key not in self.held:
            self.held[key] = self._holds_instance(scope, name)
        return self.held[key]

    def _holds_instance(self, scope: ast.AST, name: str) -> bool:
        """Whether ``name`` holds a LightningModule (or DataModule) instance wherever it is read
        in ``scope`` (a function, or the module), from how the scope binds it and uses it:
        every binding must be a call or a parameter (another value may be a class); then either
        every binding is known to give an instance (``Net(...)``, a function or method of the
        file annotated to return a LightningModule class, a parameter so annotated), or the
        scope uses it as only an instance can be used (``trainer.fit(name)``,
        ``name.state_dict()``)."""
        if isinstance(scope, ast.Lambda):
            return False
        nodes = _scope_nodes(scope)
        known = True
        bindings = 0
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = scope.args
            for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                if arg.arg == name:
                    bindings += 1
                    known = known and self._instance_type(arg.annotation)
            if name in {x.arg for x in (a.vararg, a.kwarg) if x is not None}:
                return False
        for node in nodes:
            if isinstance(node, ast.Assign):
                if not any(name in _bound(t) for t in node.targets):
                    continue
                if not all(isinstance(t, ast.Name) for t in node.targets) or not isinstance(node.value, ast.Call):
                    return False
                value: Optional[ast.AST] = node.value
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
                if not isinstance(node.target, ast.Name) or node.target.id != name:
                    continue
                value = node.value
                if isinstance(node, ast.AnnAssign) and value is None:
                    continue  # a declaration binds nothing
                if not isinstance(value, ast.Call):
                    return False
            elif isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.withitem, ast.ExceptHandler,
                                   ast.Global, ast.Nonlocal, ast.Delete)):
                if name in _binds(node):
                    return False
                continue
            else:
                continue
            bindings += 1
            known = known and self._instance_call(value)
        if bindings and known:
            return True
        return self._used_as_instance(nodes, name)

    def _instance_type(self, annotation: Optional[ast.AST]) -> bool:
        return bool(annotation is not None and _last_name(annotation) in self.module_classes)

    def _instance_call(self, call: ast.Call) -> bool:
        """Whether ``call`` gives an instance: ``Net(...)``, ``x.load_from_checkpoint(...)``,
        or a call of a function of the file, or of a method of the enclosing class on its first
        parameter (``self.create_model()``), annotated to return a LightningModule class."""
        f = call.func
        callee = _last_name(f)
        if callee[:1].isupper() or callee == "load_from_checkpoint":
            return True
        body: List[ast.stmt] = []
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            owner, first = self.method_of[-1] if self.method_of else (None, "")
            if owner is not None and f.value.id == first:
                body = owner.body
        elif isinstance(f, ast.Name):
            body = self.tree.body
        func = next((item for item in body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and item.name == callee), None)
        return func is not None and self._instance_type(func.returns)

    @staticmethod
    def _used_as_instance(nodes: List[ast.AST], name: str) -> bool:
        for node in nodes:
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            f = node.func
            if f.attr in _INSTANCE_METHODS and isinstance(f.value, ast.Name) and f.value.id == name:
                return True
            if f.attr in _TRAINER_RUNS and _looks_like_trainer(f.value):
                model = node.args[0] if node.args else next(
                    (k.value for k in node.keywords if k.arg == "model"), None)
                if isinstance(model, ast.Name) and model.id == name:
                    return True
        return False

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Attribute):
            if f.attr in _COMPILED:
                target = _receiver_name(self.text, f)
                if target in self.module_classes:
                    self.calls.append((node, "function", target))
            elif f.attr == "load_from_checkpoint" and isinstance(f.value, ast.Name) and self.lightning_file:
                name = f.value.id
                if name not in self.bound and (name in self.instances or self.holds_instance(name)) or (
                        bool(self.self_names) and name == self.self_names[-1]):
                    self.calls.append((node, "type", name))
        self.generic_visit(node)


def _call_order(tree: ast.AST) -> Dict[ast.Call, int]:
    """The place of each call of ``from_compiled``/``to_uncompiled``/``load_from_checkpoint``
    among those of its line, in libcst's visiting order (by column, an enclosing call first):
    the sites name calls by line and place, which earlier fixes on the line cannot shift."""
    by_line: Dict[int, List[ast.Call]] = {}
    for node in ast_nodes(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CALL_ATTRS:
            by_line.setdefault(node.lineno, []).append(node)
    order = {}
    for calls in by_line.values():
        calls.sort(key=lambda c: (c.col_offset, -c.end_lineno, -c.end_col_offset))
        order.update((c, i) for i, c in enumerate(calls))
    return order


def _discarded(tree: ast.Module, text: str, bound: Set[str]) -> List[Tuple[int, str]]:
    """(line, name) of each statement line to mark for ``name.load_from_checkpoint(...)`` whose
    result is thrown away. As in libcst, the mark goes on the statement line that holds the
    call, or for a call in a one-line suite (``if x: m.load_from_checkpoint(p)``) on the next
    statement line that ends after it; the last such call before it names it. A line that
    has an LM308 mark already is left out (marking it again changes nothing)."""
    lines = physical_lines(text)
    out: List[Tuple[int, str]] = []
    pending = ""
    open_line: Optional[int] = None  # the statement line being read
    first: Optional[ast.stmt] = None  # its first statement

    def close() -> None:
        nonlocal pending, open_line
        if open_line is not None and pending:
            if not has_marker_above(lines, first, CODE):
                out.append((open_line, pending))
            pending = ""
        open_line = None

    for stmt, line in statement_lines(tree, text):
        if line is None or line != open_line:
            close()
            open_line, first = line, stmt
        value = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr == "load_from_checkpoint" and isinstance(value.func.value, ast.Name):
            name = value.func.value.id
            if name[:1].islower() and name not in bound and name != "cls":
                pending = name
    close()
    return out


class _Calls(PrunedTransformer):
    """Carries out the call sites (keyed by line and place on the line, see ``_call_order``) and
    marks the statement lines of the "mark" sites."""

    def __init__(self, ctx: RuleContext, source: cst.Module, sites: Sequence[Site]) -> None:
        self.ctx = ctx
        self.source = source
        self.calls = {(s.line, s.data[0]): s for s in sites if s.action in ("function", "type")}
        self.marks = {s.line: s.data for s in sites if s.action == "mark"}
        self.needs: Set[str] = set()
        self.seen: Dict[int, int] = {}  # line -> calls of the three names visited there
        self.places: Dict[int, Tuple[int, int]] = {}  # id of a call -> (line, place)

    def visit_Call(self, node: cst.Call) -> None:
        if self.calls and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CALL_ATTRS:
            line = self.ctx.position(self.source, node)[0]
            place = self.seen.get(line, 0)
            self.seen[line] = place + 1
            self.places[id(node)] = (line, place)

    def leave_Call(self, original, updated):
        place = self.places.get(id(original))
        site = self.calls.get(place) if place is not None else None
        if site is None:
            return updated
        f = updated.func
        attr = f.attr.value
        if site.action == "function":
            self.needs.add(attr)
            self._report(original, f"LightningModule.{attr}(...) -> {attr}(...) from utilities.compile")
            return updated.with_changes(func=cst.Name(attr))
        name = site.target
        self._report(original, f"{name}.load_from_checkpoint(...) -> type({name}).load_from_checkpoint(...)")
        return updated.with_changes(func=f.with_changes(value=cst.parse_expression(f"type({name})")))

    def _report(self, node: cst.CSTNode, message: str) -> None:
        line, col = self.ctx.position(self.source, node)
        self.ctx.report(CODE, message, Kind.FIXED, line, col)

    def leave_SimpleStatementLine(self, original, updated):
        if self.marks:
            name = self.marks.get(self.ctx.position(self.source, original)[0])
            if name:
                return add_marker(updated, CODE, WHY_DISCARDED.format(name=name))
        return updated


class _NextFix(PrunedTransformer):
    def __init__(self, it: str) -> None:
        self.it = it

    def leave_Call(self, original, updated):
        if is_name(updated.func, "next") and len(updated.args) == 1 and is_name(updated.args[0].value, self.it):
            return cst.Subscript(value=updated, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        return updated


def _puts_in_eval(node: ast.AST) -> bool:
    """``X.eval()`` or ``X.train(False)``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr == "eval":
        return not node.args and not node.keywords
    return node.func.attr == "train" and len(node.args) == 1 and not node.keywords and \
        isinstance(node.args[0], ast.Constant) and node.args[0].value is False


def _ends_with_self_train(func: ast.AST) -> bool:
    """Whether the last statement of ``func`` is ``<self>.train()``."""
    params = positional(func)
    last = func.body[-1] if func.body else None
    return bool(params) and isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and \
        not last.value.args and not last.value.keywords and \
        m_attr(last.value.func, params[0].arg, "train")


def m_attr(node: ast.AST, owner: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) and \
        node.value.id == owner


def _train_mode(cls: ast.ClassDef, lines: List[str]) -> Optional[Tuple[ast.AST, str, str]]:
    """The B-9 site of a LightningModule class statement: (node, action, where) when its
    ``__init__`` or ``setup`` puts the model or a sub-module in eval mode and the class does not
    end ``on_fit_start`` with ``self.train()`` already: action "add" (no ``on_fit_start``),
    "append" (one without ``return``) or "mark"; ``where`` names the method."""
    found = {f.name: f for f in methods(cls)}
    where = next((name for name in _EVAL_SETUP if name in found
                  and any(_puts_in_eval(n) for st in found[name].body for n in ast_nodes(st))), None)
    if where is None:
        return None
    start = found.get("on_fit_start")
    if start is None:
        return cls, "add", where
    if _ends_with_self_train(start):
        return None
    if has_star_params(start) or not positional(start) or \
            any(isinstance(n, ast.Return) for st in start.body for n in ast_nodes(st)):
        return None if has_marker_above(lines, start, CODE) else (start, "mark", where)
    return start, "append", where


def _may_inherit(ctx: RuleContext, name: str, method: str) -> bool:
    """Whether ``super().method`` of class ``name`` may reach user code."""
    info = ctx.project.resolve(name, ctx.path)
    if info is None:
        return True
    ancestors, complete = ctx.project.ancestors(info)
    return not complete or any(method in a.methods for a in ancestors)


def _steps(cls: ast.ClassDef, lines: List[str]) -> List[Tuple[ast.AST, str, str]]:
    """The M24 steps of a LightningModule class statement: (def node, action, index parameter)
    for each ``STEP(self, dataloader_iter, IDX)``: "drop" for a ``training_step`` whose body
    does not name ``IDX``, else "mark" (unless marked already: ``lines`` are the file's)."""
    out = []
    for func in methods(cls):
        if func.name not in STEPS:
            continue
        names = [a.arg for a in positional(func)]
        if len(names) != 3 or names[1] != "dataloader_iter" or has_star_params(func):
            continue
        idx = names[2]
        if idx in identifiers(func.body) or func.name != "training_step":
            if not has_marker_above(lines, func, CODE):
                out.append((func, "mark", idx))
        else:
            out.append((func, "drop", idx))
    return out


class _Steps(KindTransformer):
    """Carries out the step sites (keyed by the line of the ``def``)."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target for s in sites))
        self.by_line = {s.line: s for s in sites}

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef) or item.name.value not in STEPS:
                continue
            site = self.by_line.get(self.ctx.position(self.module, original.body.body[i])[0])
            if site is None:
                continue
            idx = site.data
            if site.action == "step-mark":
                items[i] = add_marker(item, CODE, WHY_ITER.format(idx=idx))
            else:
                items[i] = transform(keep_only_params(item, 2), _NextFix("dataloader_iter"))  # type: ignore[assignment]
                self.report(CODE, original.body.body[i], f"{self.class_name}.{item.name.value}: dropped `{idx}`, "
                            "next(dataloader_iter)[0] is the batch")
            changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class _TrainMode(KindTransformer):
    """Carries out the B-9 sites (one per class, keyed by the class name)."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target for s in sites))
        self.by_class = {s.target: s for s in sites}

    def edit_class(self, kind, original, updated):
        site = self.by_class[original.name.value]
        where, inherits = site.data
        items = list(updated.body.body)
        index = next((i for i, item in enumerate(items)
                      if isinstance(item, cst.FunctionDef) and item.name.value == "on_fit_start"), None)
        if site.action == "train-add":
            init = next((i for i, item in enumerate(items)
                         if isinstance(item, cst.FunctionDef) and item.name.value == where), len(items) - 1)
            me = self_name(items[init]) if isinstance(items[init], cst.FunctionDef) else "self"
            body = f"super().on_fit_start()\n    {me}.train()" if inherits else f"{me}.train()"
            new = parse_method(
                f"def on_fit_start({me}):\n"
                f"    # Lightning 1.x put the whole model in train mode when fit started\n"
                f"    {body}")
            new = new.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            items.insert(init + 1, new)
            self.report(CODE, original, f"{self.class_name}: the eval mode set in {where} was undone by 1.x's fit: "
                        "on_fit_start() calls self.train()")
        elif index is not None:
            func = items[index]
            if site.action == "train-append":
                items[index] = append_statements(func, parse_statements(f"{self_name(func)}.train()"))
                self.report(CODE, original.body.body[index], f"{self.class_name}.on_fit_start: ends with "
                            f"self.train(), as 1.x's fit did after it (undoing the eval mode set in {where})")
            else:
                items[index] = add_marker(func, CODE, WHY_TRAIN_MODE.format(where=where))
        return updated.with_changes(body=updated.body.with_changes(body=items))


class ModuleApiRule(Rule):
    code = CODE
    name = "module-api"
    summary = "`from_compiled` classmethods, `load_from_checkpoint` on an instance and `dataloader_iter` steps, ported to 2.x."
    spec_rows = ("M21", "M23", "M24", "B-9")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (LightningModule.from_compiled; "
             "2.1 changelog: load_from_checkpoint on an instance (18432), dataloader_iter steps (18390))")
    safety = Safety.PRESERVING
    triggers = ("from_compiled", "to_uncompiled", "load_from_checkpoint", "dataloader_iter", ".eval()", "train(False)")
    description = (
        "`LightningModule.from_compiled(m)` / `to_uncompiled(m)` become the functions of `utilities.compile` "
        "(imported from the file's Lightning root). `instance.load_from_checkpoint(path)` (a TypeError from "
        "2.1) becomes `type(instance).load_from_checkpoint(path)`, which is what 1.9 did; a call whose result "
        "is thrown away is marked, since `instance` was never changed. `training_step(self, dataloader_iter, "
        "batch_idx)` loses `batch_idx` and takes the batch as `next(dataloader_iter)[0]` (2.1 yields "
        "`(batch, batch_idx, dataloader_idx)`) when the body does not read `batch_idx`; otherwise (and for "
        "evaluation steps) it is marked. A LightningModule that puts itself or a sub-module in eval mode in "
        "`__init__` or `setup` gets an `on_fit_start` ending with `self.train()`: 1.9's fit put the whole "
        "model in train mode, 2.2+ keeps the eval mode (B-9)."
    )
    coverage = {"M21": Handling.REWRITTEN, "M23": Handling.REWRITTEN, "M24": Handling.REWRITTEN,
                "B-9": Handling.REWRITTEN}
    examples = (
        Example(
            title="instance checkpoint loading and compiled modules",
            before='''\
import torch
import pytorch_lightning as pl
from model import Net

net = Net()
best = net.load_from_checkpoint("best.ckpt")
plain = pl.LightningModule.from_compiled(torch.compile(best))
''',
            after='''\
import torch
import pytorch_lightning as pl
from model import Net
from pytorch_lightning.utilities.compile import from_compiled

net = Net()
best = type(net).load_from_checkpoint("best.ckpt")
plain = from_compiled(torch.compile(best))
''',
        ),
        Example(
            title="a dataloader_iter step",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, dataloader_iter, batch_idx):
        batch = next(dataloader_iter)
        return self.layer(batch).sum()
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, dataloader_iter):
        batch = next(dataloader_iter)[0]
        return self.layer(batch).sum()
''',
        ),
        Example(
            title="class calls are already right",
            before='''\
from model import Net

best = Net.load_from_checkpoint("best.ckpt")
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        index_source(source, ctx)
        sites: List[Site] = []
        # M24: steps taking dataloader_iter, in LightningModule classes
        if "dataloader_iter" in source.text:
            lines = physical_lines(source.text)
            for cls, _ in kind_classes(source, ctx, _MODULE_KIND):
                for func, action, idx in _steps(cls, lines):
                    sites.append(Site(func.lineno, func.col_offset, cls.name, f"step-{action}", idx))
        # B-9: eval mode set in __init__ / setup, which 1.9's fit undid
        if "eval" in source.text or "train(False)" in source.text:
            lines = physical_lines(source.text)
            for cls, _ in kind_classes(source, ctx, _MODULE_KIND):
                found = _train_mode(cls, lines)
                if found is not None:
                    node, action, where = found
                    sites.append(Site(node.lineno, node.col_offset, cls.name, f"train-{action}",
                                      (where, _may_inherit(ctx, cls.name, "on_fit_start"))))
        # M21, M23: the calls, and the statements throwing a loaded model away
        if not any(name in source.text for name in _CALL_ATTRS):
            return sites
        tree = source.tree
        lightning_file = imports_lightning(tree)
        finder = _Finder(source, ctx, lightning_file)
        finder.visit(tree)
        if finder.calls:
            order = _call_order(tree)
            for call, action, receiver in finder.calls:
                sites.append(Site(call.lineno, call.col_offset, receiver, action, (order[call], call.func.attr)))
        if lightning_file and "load_from_checkpoint" in source.text:
            for line, name in _discarded(tree, source.text, finder.bound):
                sites.append(Site(line, 0, name, "mark", name))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        out = module
        steps = [s for s in sites if s.action.startswith("step-")]
        if steps:
            out = transform(out, _Steps(ctx, module, steps))
        modes = [s for s in sites if s.action.startswith("train-")]
        if modes:
            out = transform(out, _TrainMode(ctx, out, modes))
        calls = _Calls(ctx, out, [s for s in sites if not s.action.startswith(("step-", "train-"))])
        out = transform(out, calls)
        for name in sorted(calls.needs):
            out = ensure_import(out, f"{lightning_root(out)}.utilities.compile", name)
        return out
