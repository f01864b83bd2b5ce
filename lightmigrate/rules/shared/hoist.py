"""Where an expression can be read once into a local variable just before its statement
(``find`` side, on Python's ``ast``): a rewrite that would otherwise repeat a long expression
inside a line (``(x if isinstance(x, (list, tuple)) else [x])[0]``) writes
``loaders = x`` and a plain statement or two before it instead, as a person would.

The read moves earlier only where that cannot change what the statement does: the expression
is evaluated exactly once, unconditionally, by the statement itself (not in a lambda, a
comprehension (but the iterable of its first ``for``), a branch of ``a if c else b``, the right side of ``and``/``or``, a ``while`` or
``elif`` test, nor after a call the statement makes before reaching it), and the statement
starts its line in an indented block or the module.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional

from lightmigrate.rules.shared.trainer_calls import Text
from lightmigrate.analysis.ast_nodes import ast_nodes

# calls that cannot change what a Trainer attribute holds, so reading it before them is the same
PURE_CALLS = frozenset({"len", "str", "int", "float", "bool", "repr", "print", "isinstance", "type", "range",
                        "list", "tuple", "enumerate", "zip", "min", "max", "sum", "sorted", "format", "round",
                        "abs", "id", "hasattr", "getattr"})
# methods that, whatever they are called on, do not run a Trainer (list and dict updates, logging)
PURE_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "log", "log_dict", "info",
                          "debug", "warning", "format", "item", "detach", "cpu", "size", "numel", "keys", "values",
                          "items", "get"})
_DEFERRED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.IfExp)
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)


def hoist_statement(node: ast.expr, up: Dict[ast.AST, ast.AST], text: Text) -> Optional[ast.stmt]:
    """The statement before which ``node`` can be read into a local with the same result, or
    None. ``up``: the parent of each node; ``text``: the file's (the statement must start its
    line: not in a one-line suite such as ``if c: return x``)."""
    if not _plain(node):
        return None
    child: ast.AST = node
    parent = up.get(node)
    eager = False  # ``child`` is the first ``for``'s iterable of a comprehension, read at once
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.comprehension):
            eager = child is parent.iter
        elif isinstance(parent, _DEFERRED) and not (eager and not isinstance(parent, (ast.Lambda, ast.IfExp))
                                                      and child is parent.generators[0]):  # type: ignore[attr-defined]
            return None
        else:
            eager = False
        if isinstance(parent, ast.BoolOp) and child is not parent.values[0]:
            return None
        if isinstance(parent, ast.Compare) and child is not parent.left and child is not parent.comparators[0]:
            return None
        child, parent = parent, up.get(parent)
    if parent is None:
        return None
    stmt = parent
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        head: ast.AST = stmt.iter
    elif isinstance(stmt, ast.If):
        if text.segment(stmt).startswith("elif"):
            return None
        head = stmt.test
    elif isinstance(stmt, _SIMPLE):
        head = stmt
    else:
        return None
    if child is not head and not (isinstance(stmt, _SIMPLE) and _holds(stmt, child)):
        return None
    if text.segment_before(stmt).strip():
        return None
    ancestors = set()
    walk = up.get(node)
    while walk is not None and walk is not stmt:
        ancestors.add(id(walk))
        walk = up.get(walk)
    where = (node.lineno, node.col_offset)
    for sub in ast_nodes(head):
        if isinstance(sub, ast.Call) and id(sub) not in ancestors and (sub.lineno, sub.col_offset) < where and \
                not pure_call(sub):
            return None
        if isinstance(sub, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)) and \
                (sub.lineno, sub.col_offset) < where:
            return None
    return stmt


def pure_call(call: ast.Call) -> bool:
    """A call of a builtin of ``PURE_CALLS`` or a method of ``PURE_METHODS``: it cannot run a
    Trainer, so what a Trainer property gives is the same before and after it."""
    func = call.func
    return (isinstance(func, ast.Name) and func.id in PURE_CALLS) or \
        (isinstance(func, ast.Attribute) and func.attr in PURE_METHODS)


def _plain(node: ast.expr) -> bool:
    """``name.attr...`` on one line: reading it again gives the same object."""
    if node.lineno != node.end_lineno:
        return False
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _holds(stmt: ast.stmt, child: ast.AST) -> bool:
    """Whether ``child`` is a part of the simple statement ``stmt`` it evaluates (not a target)."""
    return child is getattr(stmt, "value", None)
