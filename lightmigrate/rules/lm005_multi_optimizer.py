"""LM005: several optimizers with ``optimizer_idx`` become an explicit manual-optimization loop.

Lightning 2.0 dropped automatic optimization with several optimizers: a ``training_step`` with
an ``optimizer_idx`` parameter raises (spec M7), and ``"frequency"`` in optimizer dicts is
ignored (M8). The rewrite turns the class to manual optimization and writes out, in plain 2.x
code, the loop 1.9 ran for it (spec B.5):

- per batch, for each active optimizer (all of them, or the one the frequencies pick from the
  batch index within the epoch): toggle it, run the old step body (and ``training_step_end``)
  in a closure that calls ``zero_grad`` *after* the forward pass (first batch of an
  accumulation window only) and ``manual_backward(loss / N)``, give the closure to the
  optimizer (or to the user's ``optimizer_step`` override, in its 2.x signature), untoggle;
  a step that returned None still steps the optimizer;
- the closure returns the loss, so LBFGS can evaluate it again and again;
- LR schedulers are stepped where 1.9 stepped them (step interval after the batch's optimizer
  steps, epoch interval after the last batch, ``ReduceLROnPlateau`` at the end of
  ``on_train_epoch_end`` with its monitor, after an epoch that reached its last batch only),
  since 2.x steps none under manual optimization;
- ``Trainer(gradient_clip_val=..., accumulate_grad_batches=...)`` raise under manual
  optimization: the values move into the module (clipping in ``on_before_optimizer_step``, or
  through the user's ``configure_gradient_clipping``) and leave the Trainer call or dict;
- ``training_epoch_end(outputs)`` gets 1.9's ``outputs[batch][optimizer]`` from a buffer the
  loop fills, in ``on_train_epoch_end``;
- a user ``optimizer_step`` that only ran the closure still counted a step in 1.9 (global_step,
  max_steps): the loop adds that count, which 2.x manual optimization does not make;
- when a Callback of the project defines ``on_before_zero_grad``, the closure calls the
  callbacks' hook before zeroing, as 1.9 did; when one defines ``on_train_batch_end``, the loop
  keeps 1.9's per-optimizer list on the module (``_v1_optimizer_outputs``) and a callback hook
  that reads ``outputs`` takes it from there (``getattr`` with the hook's own value as fallback,
  so other modules are unaffected).

The old step body moves verbatim to ``_training_step(self, batch, batch_idx, optimizer_idx)``.
User hooks with 1.x signatures (``optimizer_step``, ``optimizer_zero_grad``,
``configure_gradient_clipping``, ``lr_scheduler_step``, ...) are called in their 2.x signatures;
LM004, which runs later, rewrites their definitions.

``find`` decides all of it on Python's ``ast`` (which classes, migrated or marked and why, what
configure_optimizers and the Trainer arguments say); ``fix`` writes it out on libcst.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import os
import re
import tokenize
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate.cst.helpers import (
    module_text,
    code_of,
    add_marker,
    append_statements,
    body_of,
    fresh_name,
    has_star_params,
    param_names,
    parse_method,
    parse_statements,
    prepend_statements,
    self_name,
    split_docstring,
    super_call_attr,
)
from lightmigrate import MARKER_PREFIX
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.analysis.project import ClassInfo, ProjectIndex, lightning_trainer_names
from lightmigrate.analysis.project import CALLBACK_NAMES
from lightmigrate.rules.shared.class_edit import (
    ClassEditor, Hierarchy, KindTransformer, ast_class_defs, hook_classes, kind_classes, migrate_classes, taken_names,
)
from lightmigrate.rules.shared.trainer_kwargs import TRAINER_ARGS
from lightmigrate.cst.walk import transform, PrunedTransformer, walk
from lightmigrate.analysis.ast_nodes import ast_nodes

CODE = "LM005"
GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"
UNKNOWN_CLASS = ("training_step takes optimizer_idx, but the class is not recognisably a LightningModule; "
                 "switch it to manual optimization by hand if it is one")

# Trainer arguments that raise under manual optimization and move into the module.
MOVED_ARGS = ("accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm")
TRAINER_DICT_ANCHORS = frozenset({"max_epochs", "max_steps", "gradient_clip_val", "accumulate_grad_batches",
                                  "callbacks", "limit_train_batches", "devices", "accelerator"})
NOT_LITERAL = object()


def _literal(node: cst.BaseExpression):
    """The value of a literal number / string / None / bool, else NOT_LITERAL."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    if isinstance(node, cst.Name) and node.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[node.value]
    return NOT_LITERAL


# ---------------------------------------------------------------------------------------------
# Trainer arguments in one file


def _is_trainer_call(node: cst.Call, aliases: FrozenSet[str] = frozenset()) -> bool:
    """``...Trainer(...)``, or a call of a name Lightning's Trainer is imported as (``aliases``:
    ``PLT`` for ``from pytorch_lightning import Trainer as PLT``)."""
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "Trainer" or func.value in aliases
    return isinstance(func, cst.Attribute) and func.attr.value == "Trainer"


def _dict_key(el: cst.BaseDictElement) -> Optional[str]:
    if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString):
        value = el.key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _is_trainer_dict(node: cst.Dict) -> bool:
    keys = [_dict_key(el) for el in node.elements]
    return (bool(keys) and all(k is not None and k in TRAINER_ARGS for k in keys)
            and bool(TRAINER_DICT_ANCHORS & set(keys)))  # type: ignore[arg-type]


def _without_commas(kept: List, original: Sequence) -> List:
    if kept and original and kept[-1] is not original[-1]:
        kept[-1] = kept[-1].with_changes(comma=original[-1].comma)
    return kept


class _StripTrainerArgs(PrunedTransformer):
    """Drop the moved arguments from Trainer calls and Trainer dicts (literal values only):
    everywhere, or only inside the module-level functions or top-level classes' methods named
    in ``scopes`` (``"test_x"``, ``"TestSuite.test_x"``); ``aliases``: the other names Lightning's
    Trainer is imported as."""

    def __init__(self, scopes: Optional[Sequence[str]] = None, aliases: FrozenSet[str] = frozenset()) -> None:
        super().__init__()
        self.scopes = None if scopes is None else frozenset(scopes)
        self.aliases = aliases
        self.path: List[str] = []  # the names of the definitions around the node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.path.append(node.name.value)

    def leave_FunctionDef(self, original, updated):
        self.path.pop()
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.path.append(node.name.value)

    def leave_ClassDef(self, original, updated):
        self.path.pop()
        return updated

    def _here(self, node: cst.CSTNode) -> bool:
        if self.scopes is None:
            return True
        return any(".".join(self.path[:n]) in self.scopes for n in (1, 2) if len(self.path) >= n)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not _is_trainer_call(original, self.aliases) or not self._here(original):
            return updated
        kept = [a for a in updated.args
                if not (a.keyword is not None and a.keyword.value in MOVED_ARGS and _literal(a.value) is not NOT_LITERAL)]
        if len(kept) == len(updated.args):
            return updated
        return updated.with_changes(args=_without_commas(kept, updated.args))

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.Dict:
        if not _is_trainer_dict(original) or not self._here(original):
            return updated
        kept = [el for el in updated.elements
                if not (_dict_key(el) in MOVED_ARGS and _literal(el.value) is not NOT_LITERAL)]  # type: ignore[union-attr]
        if len(kept) == len(updated.elements) or not kept:
            return updated
        return updated.with_changes(elements=_without_commas(kept, updated.elements))


class _MarkTrainerArgs(PrunedTransformer):
    """Put a marker above the statements on the sites' lines (line -> why)."""

    def __init__(self, ctx: RuleContext, module: cst.Module, whys: Dict[int, str]) -> None:
        self.ctx, self.module, self.whys = ctx, module, whys

    def leave_SimpleStatementLine(self, original, updated):
        why = self.whys.get(self.ctx.position(self.module, original)[0])
        return updated if why is None else add_marker(updated, CODE, why)


# ---------------------------------------------------------------------------------------------
# The source as ``find`` reads it: Python's ast, and the text for what ast leaves out (comments,
# implicitly concatenated strings)

_NEWLINE = re.compile(r"\r\n|\r|\n")  # the line breaks ast counts
# compound statements (``match``: Python 3.10, ``try``/``except*``: 3.11)
_MATCH = tuple(getattr(ast, name) for name in ("Match",) if hasattr(ast, name))
_TRY = tuple(getattr(ast, name) for name in ("Try", "TryStar") if hasattr(ast, name))
_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith) + _MATCH + _TRY


class _Source:
    """A file's lines, numbered as ast numbers them (ast columns are UTF-8 byte offsets)."""

    def __init__(self, text: str, tree: Optional[ast.AST] = None) -> None:
        self.lines = _NEWLINE.split(text)
        # the other names Lightning's Trainer is imported as (``from pytorch_lightning import
        # Trainer as PLT``): calls of them make a Trainer too
        self.trainer_aliases: FrozenSet[str] = frozenset(
            lightning_trainer_names(tree)[0] - {"Trainer"}) if tree is not None and " as " in text else frozenset()

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def before(self, node: ast.AST) -> str:
        """The text of ``node``'s first line in front of it."""
        return self.line(node.lineno).encode()[:node.col_offset].decode(errors="replace")  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str:
        first, last = node.lineno, node.end_lineno  # type: ignore[attr-defined]
        start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        if first == last:
            return self.line(first).encode()[start:end].decode(errors="replace")
        middle = self.lines[first:last - 1]
        return "\n".join([self.line(first).encode()[start:].decode(errors="replace"), *middle,
                          self.line(last).encode()[:end].decode(errors="replace")])

    def span(self, first: int, last: int) -> str:
        return "\n".join(self.lines[first - 1:last])


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _is_blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _one_string(src: _Source, node: ast.Constant) -> bool:
    """Whether a string constant is one string literal (libcst's SimpleString), not several
    written side by side (a ConcatenatedString)."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO("(" + src.segment(node) + ")").readline)
        return sum(t.type == tokenize.STRING for t in tokens) == 1
    except (tokenize.TokenError, SyntaxError):
        return False


def _ast_literal(src: _Source, node: Optional[ast.AST]):
    """``_literal`` on ast: a number, one string literal, None, True or False; else NOT_LITERAL."""
    if not isinstance(node, ast.Constant) or node.value is Ellipsis or isinstance(node.value, complex):
        return NOT_LITERAL
    if isinstance(node.value, (str, bytes)) and not _one_string(src, node):
        return NOT_LITERAL
    return node.value


def _ast_key(src: _Source, node: Optional[ast.AST]) -> Optional[str]:
    """``_dict_key`` on ast: the key when it is one string literal (None for ``**mapping``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and _one_string(src, node):
        return node.value
    return None


def _ast_is_trainer_call(node: ast.Call, aliases: FrozenSet[str] = frozenset()) -> bool:
    """``_is_trainer_call`` on ast."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id == "Trainer" or func.id in aliases
    return isinstance(func, ast.Attribute) and func.attr == "Trainer"


def _ast_is_trainer_dict(src: _Source, node: ast.Dict) -> bool:
    # the cheap test first: every key a string constant among the Trainer's arguments
    if not node.keys or not all(isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in TRAINER_ARGS
                                for k in node.keys):
        return False
    keys = {k.value for k in node.keys}  # type: ignore[union-attr]
    return bool(TRAINER_DICT_ANCHORS & keys) and all(_ast_key(src, k) is not None for k in node.keys)


def _moved_args(src: _Source, node: ast.AST) -> List[Tuple[str, ast.expr]]:
    """The moved arguments ``node`` gives when it is a Trainer call or a Trainer dict, in order."""
    if isinstance(node, ast.Call) and _ast_is_trainer_call(node, src.trainer_aliases):
        return [(kw.arg, kw.value) for kw in node.keywords if kw.arg in MOVED_ARGS]
    if isinstance(node, ast.Dict) and _ast_is_trainer_dict(src, node):
        return [(k.value, v) for k, v in zip(node.keys, node.values) if k.value in MOVED_ARGS]  # type: ignore[union-attr]
    return []


def _trainer_functions(tree: ast.Module, aliases: FrozenSet[str] = frozenset()) -> List[Tuple[str, ast.AST]]:
    """The module's functions and its classes' methods (tests, outermost only) that build a
    Trainer (``Trainer(...)``), with their names (``"test_x"``, ``"TestSuite.test_x"``)."""
    candidates: List[Tuple[str, ast.AST]] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            candidates.append((stmt.name, stmt))
        elif isinstance(stmt, ast.ClassDef):
            candidates.extend((f"{stmt.name}.{m.name}", m) for m in stmt.body
                              if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return [(name, f) for name, f in candidates
            if any(isinstance(n, ast.Call) and _ast_is_trainer_call(n, aliases) for n in ast_nodes(f))]


def _raising_args(src: _Source, node: ast.AST) -> List[Tuple[str, ast.expr]]:
    """The moved arguments of ``node`` (``_moved_args``) that raise under manual optimization."""
    out = []
    for name, value in _moved_args(src, node):
        literal = value.value if isinstance(value, ast.Constant) else NOT_LITERAL
        if raises_under_manual(name, literal):
            out.append((name, value))
    return out


def trainer_settings(src: _Source, tree: ast.AST) -> Dict[str, object]:
    """``accumulate_grad_batches`` / ``gradient_clip_*`` given to a Trainer in this file: name ->
    literal value (NOT_LITERAL when it is an expression). The first occurrence in the source
    wins (a call or dict before those inside it)."""
    hits = []
    for node in ast_nodes(tree):
        if isinstance(node, (ast.Call, ast.Dict)):
            for i, (name, value) in enumerate(_moved_args(src, node)):
                where = (node.lineno, node.col_offset, -node.end_lineno, -node.end_col_offset)  # type: ignore[operator]
                hits.append((where, i, name, value))
    hits.sort(key=lambda hit: hit[:2])
    found: Dict[str, object] = {}
    for _, _, name, value in hits:
        if name not in found:
            found[name] = _ast_literal(src, value)
    return found


def _statement_lists(tree: ast.AST) -> Iterator[List[ast.stmt]]:
    for node in ast_nodes(tree):
        for name in ("body", "orelse", "finalbody"):
            stmts = getattr(node, name, None)
            if isinstance(stmts, list) and stmts:
                yield stmts


def _statement_lines(src: _Source, tree: ast.AST) -> Iterator[Tuple[List[ast.stmt], int]]:
    """The statements of each line libcst reads as a SimpleStatementLine: simple statements
    (joined by ``;``) that start their line (not the body of ``if x: ...``); with the last line
    of the statement before them in their block (0 for the first)."""
    for stmts in _statement_lists(tree):
        group: List[ast.stmt] = []
        lower = previous = 0
        for st in [*stmts, None]:
            if group and (st is None or isinstance(st, _COMPOUND) or st.lineno != group[-1].end_lineno):
                if not src.before(group[0]).strip():
                    yield group, lower
                group = []
            if st is not None and not isinstance(st, _COMPOUND):
                if not group:
                    lower = previous
                group.append(st)
            previous = st.end_lineno if st is not None else 0  # type: ignore[attr-defined]


def _marked(src: _Source, first_line: int, indent: int, lower: int) -> bool:
    """Whether an LM005 marker surely stands among the comments right above the statement whose
    first line (its first decorator's) is ``first_line`` (and after line ``lower``, the end of
    the statement before it). A comment indented deeper than the statement may close the block
    before it (libcst gives it to that block), so the search stops there."""
    number = first_line - 1
    while number > lower and _is_blank_or_comment(src.line(number)):
        line = src.line(number)
        if _is_comment(line):
            if _indent(line) > indent:
                return False
            if f"{MARKER_PREFIX} {CODE}" in line:
                return True
        number -= 1
    return False


def _method_marked(src: _Source, cls: ast.ClassDef, func: ast.stmt) -> bool:
    """``_marked`` for method ``func`` of ``cls``."""
    first = _first_line(func)
    above = [item.end_lineno for item in cls.body if item.end_lineno < first]  # type: ignore[operator]
    return _marked(src, first, func.col_offset, above[-1] if above else cls.lineno)


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None)
    return decorators[0].lineno if decorators else node.lineno


def _last_block(node: ast.stmt, src: _Source) -> Optional[List[ast.stmt]]:
    """The statements of the block that ends compound statement ``node``."""
    if isinstance(node, ast.If) and node.orelse:
        nested = node.orelse[0]
        if len(node.orelse) == 1 and isinstance(nested, ast.If) and src.line(nested.lineno).lstrip().startswith("elif"):
            return _last_block(nested, src)
        return node.orelse
    if isinstance(node, _MATCH):
        return node.cases[-1].body  # type: ignore[attr-defined]
    if isinstance(node, _TRY):
        return node.finalbody or node.orelse or (node.handlers[-1].body if node.handlers else node.body)  # type: ignore[attr-defined]
    for name in ("orelse", "body"):  # loops (with their else), with, def, class
        stmts = getattr(node, name, None)
        if isinstance(stmts, list) and stmts:
            return stmts
    return None


def _footer_indent(node: ast.stmt, src: _Source) -> Optional[int]:
    """The indentation of the indented block that ends ``node`` (None for a simple statement or
    a block on its header's line): libcst gives that block the comments after it, up to the
    last one indented at least as deep."""
    if not isinstance(node, _COMPOUND):
        return None
    block = _last_block(node, src)
    if not block or src.before(block[0]).strip():
        return None
    return _indent(src.line(block[0].lineno))


def _libcst_code(src: _Source, cls: ast.ClassDef, func: ast.stmt) -> str:
    """The text ``code_of`` gives for method ``func`` of ``cls``: with the comments libcst puts
    above it (those the statement before does not take) and after it (its body's)."""
    items = cls.body
    i = next(k for k, item in enumerate(items) if item is func)
    first = _first_line(func)
    lower = items[i - 1].end_lineno if i else cls.lineno  # type: ignore[attr-defined]
    start = first
    while start - 1 > lower and _is_blank_or_comment(src.line(start - 1)):
        start -= 1
    previous = _footer_indent(items[i - 1], src) if i else None
    if previous is not None:
        for number in range(start, first):
            line = src.line(number)
            if _is_comment(line) and _indent(line) >= previous:
                start = number + 1  # still the block before
    end = func.end_lineno  # type: ignore[attr-defined]
    own = _footer_indent(func, src)
    if own is not None:
        number = end + 1
        while number <= len(src.lines) and _is_blank_or_comment(src.line(number)):
            line = src.line(number)
            if _is_comment(line) and _indent(line) >= own:
                end = number
            number += 1
    return src.span(start, end)


def _last_def(cls: ast.ClassDef, name: str) -> Optional[ast.stmt]:
    """The method ``name`` of ``cls`` (``ClassEditor.get``: the last ``def`` of the body wins)."""
    found = None
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
            found = item
    return found


def _positional(func: ast.stmt) -> List[str]:
    args = func.args  # type: ignore[attr-defined]
    return [a.arg for a in (*args.posonlyargs, *args.args)]


def _optimizer_idx_default(func: ast.stmt) -> Optional[ast.expr]:
    """The default value of ``func``'s ``optimizer_idx`` parameter (None without one)."""
    args = func.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    return next((d for a, d in zip(positional, defaults) if a.arg == "optimizer_idx"), None)


def _has_star(func: ast.stmt) -> bool:
    args = func.args  # type: ignore[attr-defined]
    return bool(args.vararg or args.kwarg or args.kwonlyargs)


def _own_nodes(nodes: Sequence[ast.AST]) -> Iterator[ast.AST]:
    """The nodes under ``nodes``, not entering nested functions, lambdas or classes."""
    todo = list(nodes)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


def _has_yield(func: ast.stmt) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(func.body))  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# What configure_optimizers tells statically


@dataclass(frozen=True)
class OptimizerConfig:
    frequencies: Optional[Tuple[int, ...]] = None
    may_have_schedulers: bool = True
    monitor: Optional[str] = None
    problem: Optional[str] = None  # why the configuration cannot be migrated
    several: bool = False  # every return gives two or more optimizers (optimizers() is then a list)


def read_optimizers(src: _Source, cls: ast.ClassDef, func: Optional[ast.stmt]) -> OptimizerConfig:
    """What the method ``func`` (``configure_optimizers`` of ``cls``) says about schedulers,
    plateau monitors and optimizer frequencies."""
    if func is None:
        return OptimizerConfig()
    conf = _read_optimizers(src, cls, func)
    returns = [n for n in _own_nodes(func.body) if isinstance(n, ast.Return)]  # type: ignore[attr-defined]
    if returns and all(_optimizer_count(r.value) >= 2 for r in returns):
        conf = dataclasses.replace(conf, several=True)
    return conf


def _optimizer_count(value: Optional[ast.expr]) -> int:
    """How many optimizers ``return value`` gives (0 when not known): ``[a, b]``, ``a, b``,
    ``[a, b], [schedulers]``, a list of optimizer dicts."""
    if not isinstance(value, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in value.elts):
        return 0
    elts = value.elts
    if elts and isinstance(elts[0], (ast.List, ast.Tuple)):  # ([optimizers], [schedulers])
        first = elts[0]
        return 0 if any(isinstance(e, ast.Starred) for e in first.elts) else len(first.elts)
    if any(isinstance(e, (ast.List, ast.Tuple)) for e in elts):
        return 0
    return len(elts)


def _read_optimizers(src: _Source, cls: ast.ClassDef, func: ast.stmt) -> OptimizerConfig:
    problem: Optional[str] = None
    dicts = [n for n in ast_nodes(func) if isinstance(n, ast.Dict)]
    keys = {id(d): [_ast_key(src, k) for k in d.keys] for d in dicts}
    monitors = set()
    for d in dicts:
        for key, value in zip(keys[id(d)], d.values):
            if key == "monitor":
                literal = _ast_literal(src, value)
                monitors.add(literal if isinstance(literal, str) else NOT_LITERAL)
            if key == "strict":
                problem = "a scheduler config sets \"strict\"; step it by hand"
        if "monitor" in keys[id(d)] and "interval" in keys[id(d)]:
            interval = _ast_literal(src, d.values[keys[id(d)].index("interval")])
            if interval != "epoch":  # (ledger fact L5, read from 1.9.5's TrainingEpochLoop.on_advance_end)
                problem = ("a ReduceLROnPlateau config with interval \"step\": 1.x stepped it after every "
                           "stepping batch's validation check, which the loop does not reproduce; step it by hand")
    monitor = None
    if len(monitors) == 1 and NOT_LITERAL not in monitors:
        monitor = monitors.pop()
    elif monitors:
        problem = "ReduceLROnPlateau monitors that are not one literal name"
    text = _libcst_code(src, cls, func)
    if "ReduceLROnPlateau" in text and monitor is None and not problem:
        problem = "a ReduceLROnPlateau scheduler whose monitor cannot be read"
    may_have_schedulers = "scheduler" in text.lower() or "LR(" in text
    opt_dicts = [d for d in dicts if "optimizer" in keys[id(d)]]
    if not any("frequency" in keys[id(d)] for d in opt_dicts):
        return OptimizerConfig(None, may_have_schedulers, monitor, problem)  # type: ignore[arg-type]
    returns = [n for n in _own_nodes(func.body) if isinstance(n, ast.Return)]  # type: ignore[attr-defined]
    ok = len(returns) == 1 and isinstance(returns[0].value, (ast.List, ast.Tuple))
    freqs: List[int] = []
    if ok:
        for el in returns[0].value.elts:  # type: ignore[union-attr]
            el = el.value if isinstance(el, ast.Starred) else el
            if not any(el is d for d in opt_dicts):
                ok = False
                break
            values = [_ast_literal(src, v) for k, v in zip(keys[id(el)], el.values) if k == "frequency"]  # type: ignore[attr-defined]
            if len(values) != 1 or not isinstance(values[0], int) or isinstance(values[0], bool) or values[0] < 1:
                ok = False
                break
            freqs.append(values[0])
    if not ok or len(freqs) < 2:
        problem = ("optimizer \"frequency\" values that cannot be read statically (return one list of "
                   "optimizer dicts with literal frequencies)")
        return OptimizerConfig(None, may_have_schedulers, monitor, problem)  # type: ignore[arg-type]
    return OptimizerConfig(tuple(freqs), may_have_schedulers, monitor, problem)  # type: ignore[arg-type]


class _DropFrequencies(PrunedTransformer):
    """Remove ``"frequency"`` from the optimizer dicts (2.x warns about it and ignores it)."""

    def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.Dict:
        keys = [_dict_key(el) for el in updated.elements]
        if "optimizer" not in keys or "frequency" not in keys:
            return updated
        kept = [el for el in updated.elements if _dict_key(el) != "frequency"]
        return updated.with_changes(elements=_without_commas(kept, updated.elements))


# ---------------------------------------------------------------------------------------------
# Generated code


@dataclass
class Plan:
    s: str  # the self parameter name
    step_helper: str
    optimize: str
    end_helper: Optional[str]
    buffer: Optional[str]  # the epoch-end buffer attribute
    step_schedulers: Optional[str]  # helper name when schedulers may exist
    accumulate: int
    clip_val: object
    clip_algo: object
    frequencies: Optional[Tuple[int, ...]]
    overrides_optimizer_step: bool
    zero_grad_hooks: List[str] = field(default_factory=list)
    batch_end_outputs: Optional[str] = None  # attribute holding 1.x's on_train_batch_end outputs
    several: bool = False  # configure_optimizers always returns two or more optimizers
    epoch_end_helper: Optional[str] = None  # the old training_epoch_end kept as a method (it returns early)
    callback_zero_grad: bool = False  # a callback of the project defines on_before_zero_grad
    callback_outputs: bool = False  # a callback of the project defines on_train_batch_end


def _training_step(p: Plan) -> cst.FunctionDef:
    s = p.s
    lines = []
    if p.accumulate > 1 or p.step_schedulers:
        lines.append(f"last_batch = {s}.trainer.is_last_batch or batch_idx + 1 == {s}.trainer.num_training_batches")
    if p.accumulate > 1:
        lines.append(f"# Trainer(accumulate_grad_batches={p.accumulate}) in 1.x: step every {p.accumulate} "
                     "batches and after the last one")
        lines.append(f"should_step = (batch_idx + 1) % {p.accumulate} == 0 or last_batch")
    step_arg = ", should_step" if p.accumulate > 1 else ""
    if p.frequencies:
        total = sum(p.frequencies)
        ends = tuple(sum(p.frequencies[:i + 1]) for i in range(len(p.frequencies)))
        lines.append(f"# optimizer frequencies {p.frequencies} in 1.x: one optimizer per batch, taking turns "
                     "by the batch index within the epoch")
        lines.append(f"active = [next(i for i, end in enumerate({ends}) if batch_idx % {total} < end)]")
        loop_head = ["optimizers = " + f"{s}.optimizers()", "for optimizer_idx in active:",
                     "    optimizer = optimizers[optimizer_idx]"]
    elif p.several:
        loop_head = [f"for optimizer_idx, optimizer in enumerate({s}.optimizers()):"]
    else:
        # configure_optimizers may return one optimizer (a class shared by one- and two-optimizer
        # subclasses, or a computed list): 2.x's optimizers() then returns it alone, not in a list
        loop_head = [f"optimizers = {s}.optimizers()",
                     "optimizers = optimizers if isinstance(optimizers, list) else [optimizers]",
                     "for optimizer_idx, optimizer in enumerate(optimizers):"]
    collect = p.buffer is not None or p.batch_end_outputs is not None or p.callback_outputs
    if collect:
        lines.append("outputs = []")
    lines.extend(loop_head)
    call = f"{s}.{p.optimize}(batch, batch_idx, optimizer_idx, optimizer{step_arg})"
    if collect:
        call = f"output = {call}"
    if p.accumulate > 1:
        # toggle_model toggles and untoggles the optimizer as below and, on a batch that does
        # not step, blocks DDP's gradient sync, as 1.x ran an accumulating batch (spec B.5)
        lines.append("    # 1.x: no DDP gradient sync on a batch that accumulates")
        lines.append("    with optimizer.toggle_model(sync_grad=should_step):")
        lines.append(f"        {call}")
    else:
        lines.append(f"    {s}.toggle_optimizer(optimizer)")
        lines.append(f"    {call}")
        lines.append(f"    {s}.untoggle_optimizer(optimizer)")
    if collect:
        lines.append("    if output is not None:")
        lines.append("        outputs.append(output)")
    if p.step_schedulers:
        if p.frequencies:
            total = sum(p.frequencies)
            ends = tuple(sum(p.frequencies[:i + 1]) for i in range(len(p.frequencies)))
            lines.append("# 1.x chose the schedulers to step by the batch index counted across epochs")
            lines.append(f"total_idx = {s}.trainer.fit_loop.epoch_loop.total_batch_idx")
            lines.append(f"active = [next(i for i, end in enumerate({ends}) if total_idx % {total} < end)]")
        else:
            lines.append(f"active = range(len({s}.optimizers()))" if p.several else "active = range(len(optimizers))")
        if p.accumulate > 1:
            lines.append("if should_step:")
            lines.append(f"    {s}.{p.step_schedulers}(\"step\", active)")
        else:
            lines.append(f"{s}.{p.step_schedulers}(\"step\", active)")
        lines.append("if last_batch:")
        lines.append(f"    {s}.{p.step_schedulers}(\"epoch\", active)")
    batch_outputs = "outputs"
    if (p.batch_end_outputs or p.callback_outputs) and not p.several and not p.frequencies:
        # one optimizer at run time: 1.x squeezed the optimizer dimension of on_train_batch_end's
        # outputs away (the step's output itself, [] when it returned None: spec B.4)
        lines.append("# with one optimizer 1.x passed on_train_batch_end the step's output itself ([] after None)")
        lines.append("batch_outputs = outputs if len(optimizers) > 1 else (outputs[0] if outputs else [])")
        batch_outputs = "batch_outputs"
    if p.batch_end_outputs:
        lines.append(f"{s}.{p.batch_end_outputs} = {batch_outputs}")
    if p.callback_outputs:
        lines.append(f"{s}.{CALLBACK_OUTPUTS} = {batch_outputs}  # what 1.x passed to callbacks' on_train_batch_end")
    if p.buffer:
        lines.append(f"{s}.{p.buffer}.append(outputs)")
    body = "\n".join("    " + line for line in lines)
    doc = ('"""Lightning 1.x ran this loop itself (automatic optimization with several optimizers):\n'
           '    each optimizer in turn, with only its own parameters trainable."""')
    return parse_method(f"def training_step({s}, batch, batch_idx):\n    {doc}\n{body}\n")


def _is_loop(func: cst.FunctionDef) -> bool:
    """Whether ``func`` is a ``training_step`` that ``_training_step`` wrote (it toggles each
    optimizer: ``toggle_optimizer``, or ``toggle_model`` with accumulation)."""
    code = code_of(func)
    return "toggle_optimizer(" in code or ".toggle_model(sync_grad=" in code


def _optimize(p: Plan) -> cst.FunctionDef:
    s = p.s
    n = p.accumulate
    sig = f"def {p.optimize}({s}, batch, batch_idx, optimizer_idx, optimizer" + (", should_step" if n > 1 else "") + "):"
    collect = bool(p.buffer or p.batch_end_outputs or p.callback_outputs)
    doc = ('    """One optimizer\'s part of a batch as 1.x ran it: the step in a closure (forward, then\n'
           '    zero_grad, then backward) handed to the optimizer.'
           + (' Returns the step\'s output as 1.x\n    collected it (None when the step returned None)."""'
              if collect else '"""'))
    lines = (["output = None", "", "def closure():", "    nonlocal output"] if collect else ["def closure():"])
    lines.append(f"    output = {s}.{p.step_helper}(batch, batch_idx, optimizer_idx)")
    if p.end_helper:
        lines += [f"    result = {s}.{p.end_helper}(output)", "    if result is not None:", "        output = result"]
    lines.append("    loss = output[\"loss\"] if isinstance(output, dict) else output")
    zero = []
    if p.callback_zero_grad:  # 1.x called the callbacks' hook first, with the torch optimizer
        zero += [f"for callback in {s}.trainer.callbacks:",
                 f"    callback.on_before_zero_grad({s}.trainer, {s}, optimizer.optimizer)"]
    for hook in p.zero_grad_hooks:
        if hook == "on_before_zero_grad":
            zero.append(f"{s}.on_before_zero_grad(optimizer)")
        else:
            zero.append(f"{s}.optimizer_zero_grad({s}.current_epoch, batch_idx, optimizer)")
    if "optimizer_zero_grad" not in p.zero_grad_hooks:
        zero.append("optimizer.zero_grad()")
    if n > 1:
        lines.append(f"    if batch_idx % {n} == 0:  # 1.x zeroed the gradients after the forward pass, "
                     "once per accumulation window")
        lines += ["        " + z for z in zero]
    else:
        lines.append("    # 1.x zeroed the gradients after the forward pass")
        lines += ["    " + z for z in zero]
    lines.append("    if loss is not None:")
    if n > 1:
        lines.append(f"        loss = loss / {n}")
    lines.append(f"        {s}.manual_backward(loss)")
    lines.append("    return loss")
    lines += [""]
    if p.overrides_optimizer_step:
        # 1.x counted a step per optimizer_step call, also one that only ran the closure; 2.x
        # manual optimization counts the optimizer's real steps (global_step, max_steps)
        do_step = [f"steps = {s}.trainer.fit_loop.epoch_loop.manual_optimization.optim_step_progress",
                   "stepped = steps.total.completed",
                   f"{s}.optimizer_step({s}.current_epoch, batch_idx, optimizer, closure)",
                   "if steps.total.completed == stepped:  # 1.x counted this call as a step too",
                   "    steps.increment_ready()",
                   "    steps.increment_completed()"]
    else:
        do_step = ["optimizer.step(closure=closure)"]
    if n > 1:
        lines += ["if should_step:", *("    " + d for d in do_step), "else:", "    closure()"]
    else:
        lines += do_step
    if collect:
        lines += ["if output is None:", "    return None",
                  "if isinstance(output, dict):",
                  f"    return {{**output, \"loss\": output[\"loss\"].detach(){' / ' + str(n) if n > 1 else ''}}}",
                  f"return {{\"loss\": output.detach(){' / ' + str(n) if n > 1 else ''}}}"]
    body = "\n".join(("    " + line) if line else "" for line in lines)
    return parse_method(f"{sig}\n{doc}\n{body}\n")


def _scheduler_helper(p: Plan, name: str) -> cst.FunctionDef:
    s = p.s
    return parse_method(f'''
        def {name}({s}, interval, optimizer_indices):
            """Step the LR schedulers of these optimizers as 1.x did (2.x steps none under manual
            optimization). ReduceLROnPlateau is stepped in on_train_epoch_end."""
            for config in {s}.trainer.lr_scheduler_configs:
                if config.interval != interval or isinstance(config.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
                    continue
                if {s}.trainer.optimizers.index(config.scheduler.optimizer) not in optimizer_indices:
                    continue
                count = {s}.trainer.fit_loop.epoch_loop.batch_idx if interval == "step" else {s}.current_epoch
                if (count + 1) % config.frequency == 0:
                    {s}.lr_scheduler_step(config.scheduler, None)
    ''')


# ---------------------------------------------------------------------------------------------
# The class editor


def _blocked(src: _Source, node: ast.ClassDef, info: ClassInfo, h: Hierarchy, settings: Dict[str, object],
             where: str) -> Tuple[Optional[str], OptimizerConfig]:
    """Why the top class ``node`` (``info``) cannot be migrated (None when it can), and what its
    configure_optimizers says."""
    conf = OptimizerConfig()
    step = _last_def(node, "training_step")
    assert step is not None
    names = _positional(step)
    if _has_star(step) or names[1:] != ["batch", "batch_idx", "optimizer_idx"][:len(names) - 1] and len(names) != 4:
        return "unusual training_step signature; switch to manual optimization by hand", conf
    if "hiddens" in names or "truncated_bptt_steps" in info.attributes | info.methods:
        return "TBPTT together with several optimizers; switch to manual optimization by hand (spec B.5, B.6)", conf
    if h.descendants and any("training_step" in d.methods and "optimizer_idx" not in d.params.get("training_step", ())
                             for d in h.descendants):
        return "a subclass overrides training_step without optimizer_idx; migrate the hierarchy by hand", conf
    for key, value in settings.items():
        if value is NOT_LITERAL:
            return (f"Trainer argument {key} {where}is not a literal; it raises under manual "
                    "optimization: move it into this module by hand"), conf
    acc = settings.get("accumulate_grad_batches", 1)
    if acc is None:
        acc = 1
    if not isinstance(acc, int) or isinstance(acc, bool) or acc < 1:
        return "accumulate_grad_batches is not a positive int; migrate by hand", conf
    if "configure_optimizers" not in info.methods and h.may_inherit("configure_optimizers"):
        return "configure_optimizers is inherited; its frequencies and schedulers cannot be read here", conf
    conf = read_optimizers(src, node, _last_def(node, "configure_optimizers"))
    if conf.problem:
        return conf.problem, conf
    default = _optimizer_idx_default(step)
    if not conf.several and default is not None and not (isinstance(default, ast.Constant) and default.value == 0
                                                         and type(default.value) is int):
        return ("configure_optimizers may return one optimizer, and then 1.9 called training_step without "
                "optimizer_idx (its default, not 0); migrate by hand"), conf
    end = _last_def(node, "training_step_end")
    if end is not None and (_has_star(end) or len(_positional(end)) != 2):
        return "unusual training_step_end signature; migrate by hand", conf
    old_end = _last_def(node, "training_epoch_end")
    if old_end is not None and (_has_star(old_end) or len(_positional(old_end)) != 2):
        return "unusual training_epoch_end signature; migrate by hand", conf
    if old_end is not None and _has_yield(old_end):
        return "training_epoch_end is a generator; migrate by hand", conf
    if h.may_inherit("training_epoch_end") or h.may_inherit("training_step_end"):
        if h.ancestor_defines("training_epoch_end") or h.ancestor_defines("training_step_end"):
            return "training_epoch_end / training_step_end come from a base class; migrate by hand", conf
    for d in h.descendants:
        if {"training_epoch_end", "on_train_epoch_end"} & d.methods:
            return "subclasses override training_epoch_end or on_train_epoch_end; migrate by hand", conf
    return None, conf


def _class_site(src: _Source, node: ast.ClassDef, info: ClassInfo, project: ProjectIndex,
                settings: Dict[str, object], where: str) -> Optional[Site]:
    """What LM005 does to the class statement ``node`` (``info``), None when nothing:

    - "rename" (data: the step helper's and the step_end helper's names): a subclass's
      ``training_step(..., optimizer_idx)`` overrides the helper its parent's loop calls;
    - "mark" (data: why): the top class cannot be migrated;
    - "migrate" (data: helper names, Trainer settings, OptimizerConfig): the loop is written."""
    step = _last_def(node, "training_step")
    if step is None or "optimizer_idx" not in _positional(step):
        return None
    h = Hierarchy.of(project, info)
    top = h.top_definer("training_step")
    taken = taken_names(project, top)
    step_helper = fresh_name("_training_step", taken)
    end_helper = fresh_name("_training_step_end", taken | {step_helper})
    here = (node.lineno, node.col_offset, info.name)
    if top is not info:
        # The override follows the top class's fate, decided as that class's own file decides
        # it (maybe another file): renamed under a loop the top writes, marked with it otherwise.
        why = _top_blocked(project, top)
        if why is None:
            return Site(*here, "rename", (step_helper, end_helper))
        if _method_marked(src, node, step):
            return None  # marked by an earlier run already
        return Site(*here, "mark", f"overrides training_step of {top.name} ({top.path}), which LM005 could not "
                                   f"switch to manual optimization ({why}); migrate them together by hand")
    why, conf = _blocked(src, node, info, h, settings, where)
    if why:
        if _method_marked(src, node, step):
            return None  # marked by an earlier run already
        return Site(*here, "mark", why)
    return Site(*here, "migrate", (step_helper, end_helper, tuple(settings.items()), conf))


def _settings_for(project: ProjectIndex, path: str, settings: Dict[str, object]
                  ) -> Tuple[Dict[str, object], str, Tuple[str, ...]]:
    """The Trainer settings that apply to the classes of ``path`` (``settings``: the file's own),
    where they come from ("" or "(in PATH) ") and, when they cannot be known, the scripts that
    may hold them."""
    where = ""
    ambiguous: Tuple[str, ...] = ()
    if not settings:
        candidates = sorted(p for p in _scripts(project) if p != path and same_project(p, path))
        if len(candidates) == 1:
            # the one training script of the project: its Trainer trains this module
            script = candidates[0]
            where = f"(in {_relative(script, path)}) "
            settings = {k: (NOT_LITERAL if v == "<expr>" else v) for k, v in project.trainer_settings[script].items()}
        else:
            # none, or several: never guess which one applies (those whose values raise
            # under manual optimization matter; nearest first)
            ambiguous = tuple(sorted((p for p in candidates if raising_settings(project.trainer_settings[p])),
                                     key=lambda p: (_relative(p, path).count("../"), _relative(p, path))))
    return settings, where, ambiguous


def _top_blocked(project: ProjectIndex, top: ClassInfo) -> Optional[str]:
    """Why the class ``top`` (whose training_step takes optimizer_idx) is marked instead of
    migrated, as the find of its own file decides (from the file's text as the run found it);
    None when its loop is written."""
    text = project.text_of(top.path)
    if text is None:
        return "its file is not part of this run"
    tree = project.tree_of(top.path)
    if tree is None:
        return "its file cannot be parsed"
    nodes = [n for n in ast_class_defs(tree) if n.name == top.name]
    if len(nodes) != 1:
        return "its class statement cannot be told apart from another of the same name"
    node = nodes[0]
    step = _last_def(node, "training_step")
    if step is None or "optimizer_idx" not in _positional(step):
        return "its training_step does not take optimizer_idx"
    src = _Source(text, tree)
    if _method_marked(src, node, step):
        return "its training_step is marked"
    settings, where, _ = _settings_for(project, top.path, trainer_settings(src, tree))
    why, _ = _blocked(src, node, top, Hierarchy.of(project, top), settings, where)
    return why


class _MultiOptimizerMigration(ClassEditor):
    """Carries out the class's site (see ``_class_site``)."""

    code = CODE
    site: Site = Site()
    settings: Dict[str, object] = {}
    conf: OptimizerConfig = OptimizerConfig()

    def migrate(self) -> None:
        action, data = self.site.action, self.site.data
        if action == "rename":
            # A subclass override: it now overrides the helper the parent's loop calls.
            step_helper, end_helper = data
            self.rename("training_step", step_helper)
            self.fixed(f"training_step kept as {step_helper}(), called from the inherited manual-optimization loop",
                       "training_step")
            if self.get("training_step_end") is not None:
                self.rename("training_step_end", end_helper)
        elif action == "mark":
            self.mark("training_step", data)
        elif action == "migrate":
            step_helper, end_helper, settings, conf = data
            self.settings, self.conf = dict(settings), conf
            step = self.get("training_step")
            assert step is not None
            self._migrate_top(step, taken_names(self.index, self.info), step_helper, end_helper)

    # -- the top class -----------------------------------------------------------------------

    def _migrate_top(self, step: cst.FunctionDef, taken: Set[str], step_helper: str, end_helper: str) -> None:
        s = self_name(step)
        conf: OptimizerConfig = self.conf
        acc = self.settings.get("accumulate_grad_batches") or 1
        clip_val = self.settings.get("gradient_clip_val")
        clip_algo = self.settings.get("gradient_clip_algorithm")
        used = set(taken) | {step_helper, end_helper}

        def new(base: str) -> str:
            name = fresh_name(base, used)
            used.add(name)
            return name

        has_end = self.get("training_step_end") is not None
        old_epoch_end = self.get("training_epoch_end")
        batch_end = self.get("on_train_batch_end")
        plan = Plan(
            s=s,
            step_helper=step_helper,
            optimize=new("_optimize"),
            end_helper=end_helper if has_end else None,
            buffer=new("_train_outputs") if old_epoch_end is not None else None,
            step_schedulers=new("_step_lr_schedulers") if conf.may_have_schedulers else None,
            accumulate=int(acc),  # type: ignore[arg-type]
            clip_val=clip_val,
            clip_algo=clip_algo,
            frequencies=conf.frequencies,
            overrides_optimizer_step="optimizer_step" in self.info.methods or self.h.ancestor_defines("optimizer_step"),
            zero_grad_hooks=[h for h in ("on_before_zero_grad", "optimizer_zero_grad")
                             if h in self.info.methods or self.h.ancestor_defines(h)],
            batch_end_outputs=new("_train_batch_outputs") if batch_end is not None else None,
            several=conf.several,
            epoch_end_helper=new("_training_epoch_end") if old_epoch_end is not None and _has_returns(
                split_docstring(body_of(old_epoch_end))[1]) else None,
            callback_zero_grad=_callbacks_define(self.index, "on_before_zero_grad"),
            callback_outputs=_callbacks_define(self.index, "on_train_batch_end"),
        )
        # the step: the old body moves to the helper, the loop takes its place
        self.rename("training_step", step_helper)
        new_funcs: List[cst.FunctionDef] = [_training_step(plan), _optimize(plan)]
        if plan.step_schedulers:
            new_funcs.append(_scheduler_helper(plan, plan.step_schedulers))
        self.insert_before(step_helper, new_funcs)
        if has_end:
            end = self.get("training_step_end")
            self.rename("training_step_end", end_helper)
            if not conf.frequencies and end is not None and _logs(end):
                self.mark(end_helper, STEP_END_LOGS)
        self._init(s)
        if plan.batch_end_outputs and batch_end is not None:
            out = param_names(batch_end)[1]
            self.set("on_train_batch_end", prepend_statements(batch_end, parse_statements(
                f"{out} = {self_name(batch_end)}.{plan.batch_end_outputs}  # 1.x passed a list with one dict per optimizer"
                + ("" if plan.several else " (the dict itself with one)"))))
        if plan.buffer:
            self._epoch_start(s, plan.buffer)
        self._epoch_end(s, plan, old_epoch_end, conf)
        self._clipping(s, plan)
        if conf.frequencies:
            i = self.find("configure_optimizers")
            assert i is not None
            self.items[i] = transform(self.items[i], _DropFrequencies())  # type: ignore[assignment]
        self.keep_calls.update({plan.optimize, step_helper})
        what = []
        if acc > 1:
            what.append(f"accumulate_grad_batches={acc}")
        if clip_val is not None:
            what.append(f"gradient_clip_val={clip_val!r}")
        if conf.frequencies:
            what.append(f"frequencies {conf.frequencies}")
        extra = f" (with {', '.join(what)})" if what else ""
        if acc > 1:
            self._note_accumulated_logging(int(acc))  # type: ignore[arg-type]
        self.fixed(f"several optimizers switched to manual optimization{extra}: training_step runs 1.9's loop, "
                   f"the old step body is {step_helper}()", "training_step")

    def _note_accumulated_logging(self, acc: int) -> None:
        """Training is kept, but the logger sees another cadence: 1.9's automatic optimization
        sent step metrics only on batches that stepped, with the logger step counting
        accumulation windows; 2.x manual optimization sends every batch, step counting batches."""
        line, col = self.pos("training_step")
        self.ctx.report(
            self.code,
            f"{self.info.name}: with accumulate_grad_batches={acc} under manual optimization, step-level metrics "
            f"reach the logger on every batch and the logger's step counts batches, where 1.x logged only the "
            f"batches that stepped and counted accumulation windows (every {acc} batches); training, global_step "
            "and the logged values are unchanged, only when metrics reach the logger and their step numbers differ",
            Kind.NOTE, line, col)

    def _init(self, s: str) -> None:
        line = parse_statements("self.automatic_optimization = False")[0]
        init = self.get("__init__")
        if init is None:
            new = parse_method(f"def __init__({s}, *args, **kwargs):\n"
                               f"    super().__init__(*args, **kwargs)\n"
                               f"    {s}.automatic_optimization = False\n")
            i = self.find("training_step")
            assert i is not None
            insert_at = 0
            for j, item in enumerate(self.items):
                if isinstance(item, cst.FunctionDef):
                    insert_at = j
                    break
            name = self.items[insert_at].name.value if isinstance(self.items[insert_at], cst.FunctionDef) else "training_step"
            self.insert_before(name, [new])
            return
        si = self_name(init)
        line = parse_statements(f"{si}.automatic_optimization = False")[0]
        doc, stmts = split_docstring(body_of(init))
        for k, st in enumerate(stmts):
            if isinstance(st, cst.SimpleStatementLine) and any(
                    isinstance(small, cst.Expr) and super_call_attr(small.value) == "__init__" for small in st.body):
                stmts.insert(k + 1, line)
                break
            if isinstance(st, cst.SimpleStatementLine) and "__init__(" in code_of(st) and "super" not in code_of(st):
                stmts.insert(k + 1, line)  # pl.LightningModule.__init__(self)
                break
        else:
            stmts.insert(0, line)
        self.set("__init__", init.with_changes(body=init.body.with_changes(body=[*doc, *stmts])))

    def _epoch_start(self, s: str, buffer: str) -> None:
        reset = parse_statements(f"{s}.{buffer} = []")
        existing = self.get("on_train_epoch_start")
        if existing is not None:
            reset = parse_statements(f"{self_name(existing)}.{buffer} = []")
            self.set("on_train_epoch_start", prepend_statements(existing, reset))
            return
        func = parse_method(f"def on_train_epoch_start({s}):\n    pass")
        func = func.with_changes(body=func.body.with_changes(body=reset))
        if self.h.may_inherit("on_train_epoch_start"):
            func = append_statements(func, parse_statements("super().on_train_epoch_start()"))
        anchor = "training_epoch_end" if self.get("training_epoch_end") is not None else "configure_optimizers"
        if self.get(anchor) is None:
            anchor = self.items[-1].name.value if isinstance(self.items[-1], cst.FunctionDef) else "training_step"
        self.insert_before(anchor, [func])

    def _epoch_end(self, s: str, plan: Plan, old: Optional[cst.FunctionDef], conf: OptimizerConfig) -> None:
        stmts: List = []
        if old is not None:
            so, out = param_names(old)
            doc, body = split_docstring(body_of(old))
            squeeze = "" if plan.several else f"""
                if {out} and all(len(per_batch) == 1 for per_batch in {out}):  # one optimizer: 1.x squeezed that dimension away
                    {out} = [per_batch[0] for per_batch in {out}]"""
            stmts += parse_statements(f"""
                {out} = [per_batch for per_batch in {so}.{plan.buffer} if per_batch]  # 1.x: [batch][optimizer]{squeeze}
                if len({so}.{plan.buffer}) == 1:  # 1.x squeezed away a batch dimension of size one
                    {out} = {so}.{plan.buffer}[0]
            """)
            if so != s:
                stmts = [transform(st, _RenameName(s, so)) for st in stmts]
            if plan.epoch_end_helper:
                # it returns early: the body stays a method of its own, which returns to the
                # schedulers' stepping as 1.x's hook returned to the loop
                stmts += parse_statements(f"{so}.{plan.epoch_end_helper}({out})")
            else:
                stmts += list(body)
        plateau = []
        if conf.monitor is not None:
            plateau = parse_statements(f"""
                # 1.x stepped ReduceLROnPlateau after on_train_epoch_end, with the monitored metric,
                # and only after an epoch that reached its last batch (not one max_steps cut short)
                if {s}.trainer.fit_loop.epoch_loop.batch_progress.is_last_batch or (
                    {s}.trainer.fit_loop.epoch_loop.batch_progress.current.ready == {s}.trainer.num_training_batches
                ):
                    for config in {s}.trainer.lr_scheduler_configs:
                        if isinstance(config.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau) and (
                            {s}.current_epoch + 1
                        ) % config.frequency == 0:
                            {s}.lr_scheduler_step(config.scheduler, {s}.trainer.callback_metrics[{conf.monitor!r}])
            """)
        if not stmts and not plateau:
            return
        existing = self.get("on_train_epoch_end")
        if existing is not None:
            se = self_name(existing)
            if se != s:
                stmts = [transform(st, _RenameName(s, se)) for st in stmts]
                plateau = [transform(st, _RenameName(s, se)) for st in plateau]
            if plateau and _has_returns(body_of(existing)):
                self.mark("on_train_epoch_end", "an early return here would skip stepping ReduceLROnPlateau")
                plateau = []
            merged = prepend_statements(existing, stmts)
            merged = append_statements(merged, plateau)
            self.set("on_train_epoch_end", merged)
            if old is not None and plan.epoch_end_helper:
                self.rename("training_epoch_end", plan.epoch_end_helper)
            elif old is not None:
                self.set("training_epoch_end", None)
            return
        func = parse_method(f"def on_train_epoch_end({s}):\n    pass")
        func = func.with_changes(body=func.body.with_changes(body=[*stmts, *plateau]))
        if self.h.may_inherit("on_train_epoch_end"):
            func = append_statements(func, parse_statements("super().on_train_epoch_end()"))
        if old is not None and plan.epoch_end_helper:
            self.insert_before("training_epoch_end", [func])
            self.rename("training_epoch_end", plan.epoch_end_helper)
        elif old is not None:
            i = self.find("training_epoch_end")
            assert i is not None
            self.items[i] = func.with_changes(leading_lines=old.leading_lines, decorators=old.decorators)
        else:
            anchor = "configure_optimizers" if self.get("configure_optimizers") is not None else plan.step_helper
            self.insert_before(anchor, [func])

    def _clipping(self, s: str, plan: Plan) -> None:
        user_clip = "configure_gradient_clipping" in self.info.methods or self.h.ancestor_defines("configure_gradient_clipping")
        if plan.clip_val is None and not user_clip:
            return
        algo = plan.clip_algo
        args = f"gradient_clip_val={plan.clip_val!r}, gradient_clip_algorithm={algo!r}"
        existing = self.get("on_before_optimizer_step")
        opt = param_names(existing)[1] if existing is not None and len(param_names(existing)) > 1 else "optimizer"
        se = self_name(existing) if existing is not None else s
        if user_clip:
            call = f"{se}.configure_gradient_clipping({opt}, {args})"
            note = "# 1.x called configure_gradient_clipping right after on_before_optimizer_step"
        else:
            call = f"{se}.clip_gradients({opt}, {args})"
            note = (f"# Trainer(gradient_clip_val={plan.clip_val!r}) clipped here in 1.x; "
                    "it raises under manual optimization")
        stmts = parse_statements(f"{note}\n{call}")
        if existing is not None:
            if _has_returns(body_of(existing)) or has_star_params(existing):
                self.mark("on_before_optimizer_step", f"add `{call}` at the end of this hook (1.x clipped there)")
                return
            self.set("on_before_optimizer_step", append_statements(existing, stmts))
            return
        func = parse_method(f"def on_before_optimizer_step({s}, optimizer):\n    pass")
        func = func.with_changes(body=func.body.with_changes(body=stmts))
        anchor = "configure_optimizers" if self.get("configure_optimizers") is not None else plan.step_helper
        self.insert_before(anchor, [func])


# ledger fact L18, read from 1.9.5's LightningModule.log and LoggerConnector.should_reset_tensors
STEP_END_LOGS = ("(ledger L18) with several optimizers 1.9.5 dropped what optimizer 0 logged, here and in "
                 "training_step, on each epoch's first batch (its logger reset a hook's logged values whenever the "
                 "hook name changed during that batch); this loop logs them: the logged metrics differ there")


def _logs(func: cst.FunctionDef) -> bool:
    """Whether ``func`` calls ``<self>.log(...)`` / ``<self>.log_dict(...)``."""
    return re.search(rf"\b{re.escape(self_name(func))}\.log(?:_dict)?\(", code_of(func)) is not None


def _has_returns(stmts) -> bool:
    found = []

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

        def visit_Return(self, node) -> None:
            found.append(node)

    for st in stmts:
        walk(st, V())
    return bool(found)


class _RenameName(PrunedTransformer):
    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.new) if updated.value == self.old else updated


# The module attribute that holds, after each batch, the per-optimizer list 1.x passed to the
# callbacks' on_train_batch_end (their hook reads it back, see CallbackOutputs).
CALLBACK_OUTPUTS = "_v1_optimizer_outputs"


def _callbacks_define(project: ProjectIndex, hook: str) -> bool:
    """Whether a Callback class of the project defines ``hook``."""
    return any(hook in c.methods for c in project.kind_classes(CALLBACK_NAMES))


def _callbacks_reading_outputs(source: SourceFile, ctx: RuleContext) -> List[Tuple[str, ast.FunctionDef, str]]:
    """(class, def, outputs parameter) of each ``on_train_batch_end(self, trainer, pl_module,
    outputs, ...)`` of a Callback class of the file whose body reads ``outputs`` and does not
    start by taking it from the module already (what ``_CallbackOutputs`` writes)."""
    found = []
    for cls, _ in kind_classes(source, ctx, frozenset({"callback"})):
        for f in cls.body:
            if not isinstance(f, ast.FunctionDef) or f.name != "on_train_batch_end" or f.args.vararg \
                    or f.args.kwarg or len(f.args.posonlyargs + f.args.args) < 4:
                continue
            names = [a.arg for a in f.args.posonlyargs + f.args.args]
            out, module = names[3], names[2]
            used = any(isinstance(n, ast.Name) and n.id == out for st in f.body for n in ast_nodes(st))
            first = f.body[0]
            taken = isinstance(first, ast.Assign) and isinstance(first.value, ast.Call) and \
                isinstance(first.value.func, ast.Name) and first.value.func.id == "getattr" and \
                any(isinstance(a, ast.Constant) and a.value == CALLBACK_OUTPUTS for a in first.value.args)
            if used and not taken:
                found.append((cls.name, f, f"{module}\t{out}"))
    return found


class _CallbackOutputs(KindTransformer):
    """Carries out the "callback-outputs" sites: the callback's ``on_train_batch_end`` takes
    1.x's per-optimizer list from the module LM005 migrated (unchanged for any other module)."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target for s in sites))
        self.data = {s.target: s.data for s in sites}

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        data = self.data[original.name.value]
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef) or item.name.value != "on_train_batch_end":
                continue
            module, out = data.split("\t")
            items[i] = prepend_statements(item, parse_statements(
                f"{out} = getattr({module}, \"{CALLBACK_OUTPUTS}\", {out})  # 1.x: one dict per optimizer"))
            self.report(CODE, original.body.body[i], f"{self.class_name}.on_train_batch_end: `{out}` is 1.x's list "
                        "with one dict per optimizer again, kept by the manual-optimization loop of a module "
                        "LM005 migrated (other modules pass theirs unchanged)")
        return updated.with_changes(body=updated.body.with_changes(body=items))


def _multi_classes(project: ProjectIndex) -> List:
    return [c for c in project.classes(mentioning="optimizer_idx") if "optimizer_idx" in c.params.get("training_step", ())]


def _scripts(project: ProjectIndex) -> List[str]:
    """Files that give a Trainer accumulation/clipping arguments and define no LightningModule
    of their own: training scripts (and LightningCLI YAML configs), whose Trainer may train a
    module from another file. A file with its own LightningModule(s) is taken to train those."""
    with_modules = {c.path for c in project.kind_classes()}
    return sorted(p for p, v in project.trainer_settings.items() if v and p not in with_modules)


def raises_under_manual(name: str, value: object) -> bool:
    """Whether ``Trainer(name=value)`` raises under manual optimization in 2.x: it does for
    ``accumulate_grad_batches`` other than 1 and ``gradient_clip_val`` above 0, never for
    ``gradient_clip_algorithm`` (a value that is not a literal may raise). None is 1.9's default
    (LM101 drops ``accumulate_grad_batches=None``)."""
    literal = value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))
    if name == "accumulate_grad_batches":
        return not (literal and value in (1, None))
    if name == "gradient_clip_val":
        return not (literal and (value is None or value <= 0))  # type: ignore[operator]
    return False


def raising_settings(settings: Optional[Dict[str, object]]) -> Dict[str, object]:
    """The accumulation/clipping ``settings`` (name -> literal value, "<expr>" or NOT_LITERAL)
    that raise under manual optimization."""
    return {k: v for k, v in (settings or {}).items()
            if raises_under_manual(k, v)}


_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
_ROOTS: Dict[str, Optional[str]] = {}


def _project_root(path: str) -> Optional[str]:
    """The nearest folder above ``path`` that holds a project file (``pyproject.toml``,
    ``setup.py``, ``setup.cfg``, ``.git``); None when there is none."""
    folder = os.path.dirname(os.path.abspath(path))
    if folder in _ROOTS:
        return _ROOTS[folder]
    here, found = folder, None
    while True:
        if any(os.path.exists(os.path.join(here, name)) for name in _PROJECT_FILES):
            found = here
            break
        up = os.path.dirname(here)
        if up == here:
            break
        here = up
    _ROOTS[folder] = found
    return found


def same_project(a: str, b: str) -> bool:
    """Whether two files may belong to one project: not when each lies under a different
    project file (a tree holding several projects: one's Trainer never trains another's module)."""
    ra, rb = _project_root(a), _project_root(b)
    return ra is None or rb is None or ra == rb


def script_marker(project: ProjectIndex, path: str) -> Optional[str]:
    """Why the accumulation/clipping Trainer arguments of the training script or config ``path``
    that raise under manual optimization must go, when LM005 moves a module of the project to
    manual optimization; None otherwise. Short: the values, and the module nearest to ``path``
    (and how many others)."""
    settings = raising_settings(project.trainer_settings.get(path))
    multi = [c for c in _multi_classes(project) if same_project(c.path, path)]
    scripts = _scripts(project)
    if not settings or not multi or path not in scripts:
        return None
    values = ", ".join(k if v == "<expr>" or v is NOT_LITERAL else f"{k}={v!r}" for k, v in sorted(settings.items()))
    verb = "raises" if len(settings) == 1 else "raise"
    takers = [c for c in multi if c.path not in project.trainer_settings
              and sorted(p for p in scripts if p != c.path and same_project(p, c.path)) == [path]]
    if takers:
        return (f"{values} {verb} under manual optimization, which {_modules(takers, path)} now uses; "
                "remove it here (LM005 moved the value into the module)")
    return (f"{values} {verb} under manual optimization if this Trainer trains {_modules(multi, path, 'or')}; "
            "LM005 wrote their loops without it (several Trainer files): move it into the right one by hand")


def _relative(path: str, start: str) -> str:
    """``path`` relative to the folder of the file ``start``, with ``/``."""
    here = os.path.dirname(os.path.abspath(start))
    return os.path.relpath(os.path.abspath(path), here).replace(os.sep, "/")


def _modules(classes: List[ClassInfo], path: str, joiner: str = "and") -> str:
    """The class nearest to ``path`` (most leading folders in common) with its file relative to
    ``path``'s folder, and how many others."""
    def rel(c: ClassInfo) -> str:
        return _relative(c.path, path)

    def distance(c: ClassInfo) -> Tuple[int, str, str]:
        return (rel(c).count("../"), rel(c), c.name)

    unique = sorted({(c.name, c.path): c for c in classes}.values(), key=distance)
    first = unique[0]
    others = len(unique) - 1
    tail = f" {joiner} {others} other module{'s' if others > 1 else ''} with several optimizers" if others else ""
    return f"{first.name} ({rel(first)}){tail}"


def _needs_torch_import(module: cst.Module) -> bool:
    text = module_text(module)
    return "torch.optim.lr_scheduler" in text and not any(
        isinstance(st, cst.SimpleStatementLine) and any(
            isinstance(sm, cst.Import) and any(code_of(a.name) == "torch" and a.asname is None for a in sm.names)
            for sm in st.body)
        for st in module.body)


class MultiOptimizerRule(Rule):
    code = CODE
    name = "multiple-optimizers"
    summary = ("`training_step(..., optimizer_idx)` with several optimizers becomes manual optimization that "
               "runs 1.9's loop (toggling, closures, accumulation, clipping, schedulers, frequencies).")
    spec_rows = ("M7", "M8", "M10", "M11", "M12", "M13", "M14", "M15", "T11")
    coverage = {
        "M7": Handling.REWRITTEN,
        "M8": Handling.REWRITTEN,
        "M10": Handling.REWRITTEN,
        "M11": Handling.REWRITTEN,
        "M12": Handling.REWRITTEN,
        "M13": Handling.REWRITTEN,
        "M14": Handling.REWRITTEN,
        "M15": Handling.REWRITTEN,
    }
    guide = (f"{GUIDE} (1.9 advanced rows: 'used training_step with optimizer_idx' / multiple optimizers in "
             "automatic optimization -> switch to manual optimization; 'used the frequency key of "
             "configure_optimizers'; PR 16539)")
    safety = Safety.PRESERVING
    # optimizer_idx as a training_step parameter, or the Trainer settings manual optimization
    # must take over (the index records settings only for a text with one of these words)
    triggers = ("optimizer_idx", "gradient_clip", "accumulate_grad_batches", "on_train_batch_end")
    description = (
        "Lightning 2.x raises for a training_step with optimizer_idx and no longer runs several optimizers "
        "automatically. The class switches to manual optimization, and a generated training_step runs the loop 1.9 "
        "ran: per active optimizer (all, or the one the \"frequency\" keys pick from the batch index within the "
        "epoch) toggle it, run the old step (moved verbatim to _training_step) and training_step_end in a closure "
        "that zeroes gradients after the forward pass and calls manual_backward(loss / accumulate_grad_batches), "
        "hand the closure to the optimizer (or to the user's optimizer_step, in its 2.x signature), untoggle. LR "
        "schedulers are stepped where 1.9 stepped them; ReduceLROnPlateau at the end of on_train_epoch_end. "
        "Trainer gradient_clip_val / gradient_clip_algorithm / accumulate_grad_batches (which raise under manual "
        "optimization) move from the Trainer call or Trainer dict of the same file into the module. "
        "training_epoch_end becomes on_train_epoch_end and receives 1.9's outputs[batch][optimizer]. A user "
        "optimizer_step that only runs the closure still counts a step, as in 1.9; callbacks' on_before_zero_grad "
        "is called in the closure and callbacks' on_train_batch_end gets 1.9's per-optimizer list back. What cannot "
        "be read statically (frequencies, plateau monitors, non-literal Trainer values, TBPTT) gets a marker, and "
        "so does a training_step_end that logs: 1.9.5 dropped what optimizer 0 logged on each epoch's first batch "
        "then (ledger L18), which the loop cannot reproduce."
    )
    examples = (
        Example(
            title="two optimizers: an explicit manual-optimization loop",
            before='''\
import pytorch_lightning as pl
import torch


class GAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.generator = torch.nn.Linear(2, 2)
        self.discriminator = torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        if optimizer_idx == 0:
            return self.discriminator(self.generator(batch)).mean()
        return -self.discriminator(batch).mean()

    def configure_optimizers(self):
        g = torch.optim.Adam(self.generator.parameters())
        d = torch.optim.Adam(self.discriminator.parameters())
        return [g, d], []
''',
            after='''\
import pytorch_lightning as pl
import torch


class GAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.generator = torch.nn.Linear(2, 2)
        self.discriminator = torch.nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        \"\"\"Lightning 1.x ran this loop itself (automatic optimization with several optimizers):
        each optimizer in turn, with only its own parameters trainable.\"\"\"
        for optimizer_idx, optimizer in enumerate(self.optimizers()):
            self.toggle_optimizer(optimizer)
            self._optimize(batch, batch_idx, optimizer_idx, optimizer)
            self.untoggle_optimizer(optimizer)

    def _optimize(self, batch, batch_idx, optimizer_idx, optimizer):
        \"\"\"One optimizer's part of a batch as 1.x ran it: the step in a closure (forward, then
        zero_grad, then backward) handed to the optimizer.\"\"\"
        def closure():
            output = self._training_step(batch, batch_idx, optimizer_idx)
            loss = output["loss"] if isinstance(output, dict) else output
            # 1.x zeroed the gradients after the forward pass
            optimizer.zero_grad()
            if loss is not None:
                self.manual_backward(loss)
            return loss

        optimizer.step(closure=closure)

    def _training_step(self, batch, batch_idx, optimizer_idx):
        if optimizer_idx == 0:
            return self.discriminator(self.generator(batch)).mean()
        return -self.discriminator(batch).mean()

    def configure_optimizers(self):
        g = torch.optim.Adam(self.generator.parameters())
        d = torch.optim.Adam(self.discriminator.parameters())
        return [g, d], []
''',
        ),
        Example(
            title="one optimizer, no optimizer_idx: left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self(batch).sum()
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        project = ctx.project
        if not project.has_path(ctx.path):
            project.add_source(source.text, ctx.path, tree=source.tree)
        here = any("optimizer_idx" in c.params.get("training_step", ()) for c in project.classes_in(ctx.path))
        batch_end = "on_train_batch_end" in source.text
        if not here and not batch_end and not project.trainer_settings.get(ctx.path):
            return []  # (asked first: the question below may parse other files)
        if not _multi_classes(project):
            return []
        reads = _callbacks_reading_outputs(source, ctx) if batch_end else []
        callback_sites = [Site(f.lineno, f.col_offset, cls, "callback-outputs", out) for cls, f, out in reads]
        if not here and not project.trainer_settings.get(ctx.path):
            return callback_sites
        src = _Source(source.text, source.tree)
        settings = trainer_settings(src, source.tree)
        if here:
            return callback_sites + self._find_classes(source, ctx, src, settings)
        if settings and ctx.path in _scripts(project):
            # a training script whose Trainer may train a migrated module of another file
            why = script_marker(project, ctx.path)
            if why is not None:
                return [Site(line[0].lineno, line[0].col_offset, "", "mark-trainer-args", why)
                        for line, lower in _statement_lines(src, source.tree)
                        if any(_raising_args(src, n) for st in line for n in ast_nodes(st))
                        and not _marked(src, line[0].lineno, _indent(src.line(line[0].lineno)), lower)]
        return []

    def _find_classes(self, source: SourceFile, ctx: RuleContext, src: _Source,
                      settings: Dict[str, object]) -> List[Site]:
        """The sites of a file that defines a class whose training_step takes optimizer_idx: one
        per class LM005 changes (see ``_class_site``), and one "after" site (data: what to do
        with the Trainer arguments, see ``fix``) when a class switches to manual optimization."""
        project = ctx.project
        settings, where, ambiguous = _settings_for(project, ctx.path, settings)
        sites = []
        functions = _trainer_functions(source.tree, src.trainer_aliases)
        whole_file = False  # some class takes the file's (or another file's) Trainer arguments
        scoped: List[str] = []  # the functions whose own Trainer trains a class defined in them
        applied: List[Dict[str, object]] = []
        for found in hook_classes(source, ctx, frozenset({"training_step"})):
            # (migrate_classes marks the training_step of a class it does not recognise, but a
            # class that defines one is recognised: training_step is a Lightning hook name)
            if not found.known:
                continue
            # A class defined in a function that builds a Trainer (a test) is trained by that
            # Trainer: it takes that function's arguments, not another test's.
            scope_name, scope = next(((name, f) for name, f in functions
                                      if f.lineno < found.node.lineno <= f.end_lineno), ("", None))  # type: ignore[operator]
            if scope is not None:
                own, own_where = trainer_settings(src, scope), ""
            else:
                own, own_where = settings, where
            site = _class_site(src, found.node, found.info, project, own, own_where)
            if site is not None:
                sites.append(site)
                if site.action == "migrate":
                    applied.append(own)
                    if scope is not None:
                        scoped.append(scope_name)
                    else:
                        whole_file = True
        # The old loop's Trainer arguments are dealt with once the file has a manual-optimization
        # class (a new one, or one it had) and something changed.
        if sites and (any(s.action == "migrate" for s in sites) or "automatic_optimization = False" in source.text):
            if not whole_file and scoped:
                # only the Trainers of those functions lose the arguments
                literal = any(applied) and all(v is not NOT_LITERAL for own in applied for v in own.values())
                after: Tuple[str, object] = ("strip", (tuple(sorted(set(scoped))), src.trainer_aliases)) \
                    if literal else ("", None)
            elif where:  # (the script's values that do not raise need not leave it)
                after = ("mark-model", where) if raising_settings(settings) else ("", None)
            elif ambiguous:
                after = ("mark-ambiguous", ambiguous)
            elif settings and all(v is not NOT_LITERAL for v in settings.values()) and not scoped:
                after = ("strip", (None, src.trainer_aliases))
            else:
                after = ("", None)
            sites.append(Site(0, 0, "", "after", after))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        callbacks = [s for s in sites if s.action == "callback-outputs"]
        by_place = {(s.line, s.col): s for s in sites if s.action in ("rename", "mark", "migrate")}
        after = next((s for s in sites if s.action == "after"), None)
        script_lines = {s.line: s.data for s in sites if s.action == "mark-trainer-args"}
        if by_place:
            def editor(*args):
                ed = _MultiOptimizerMigration(*args)
                line, col = ed.position
                ed.site = by_place.get((line, col - 1), Site())
                return ed

            before = module
            module = migrate_classes(module, ctx, CODE, frozenset({"training_step"}), editor, UNKNOWN_CLASS,
                                     only=frozenset(s.target for s in by_place.values()))
            # (the text did not change only when a marker find could not see was there already)
            if after is not None and module_text(module) != module_text(before):
                what, detail = after.data
                if what == "mark-model":
                    module = self._mark_model(module, detail)
                elif what == "mark-ambiguous":
                    module = self._mark_model_ambiguous(module, detail, ctx.path)
                elif what == "strip":
                    module = transform(module, _StripTrainerArgs(*detail))
                if _needs_torch_import(module):
                    module = module.with_changes(body=[*parse_statements("import torch"), *module.body])
        if script_lines:
            module = transform(module, _MarkTrainerArgs(ctx, module, script_lines))
        if callbacks:  # (found by class name: the changes above move lines)
            module = transform(module, _CallbackOutputs(ctx, module, callbacks))
        return module

    def _mark_model_ambiguous(self, module: cst.Module, paths: Sequence[str], self_path: str) -> cst.Module:
        others = len(paths) - 1
        where = _relative(paths[0], self_path) + (f" and {others} other file{'s' if others > 1 else ''}" if others else "")
        why = (f"the accumulation/clipping Trainer arguments in {where} raise under manual optimization and may apply "
               "to this module; this loop was written without them (LM005 does not guess which Trainer trains it): "
               "move the right values into the loop by hand")

        class M(PrunedTransformer):
            def leave_FunctionDef(self, original, updated):
                if updated.name.value == "training_step" and _is_loop(updated):
                    return add_marker(updated, CODE, why)
                return updated
        return transform(module, M())

    def _mark_model(self, module: cst.Module, where: str) -> cst.Module:
        class M(PrunedTransformer):
            def leave_FunctionDef(self, original, updated):
                if updated.name.value == "training_step" and _is_loop(updated):
                    return add_marker(updated, CODE, f"Trainer arguments read from the Trainer {where}were moved "
                                                     "into this module; remove them from that Trainer")
                return updated
        return transform(module, M())
