"""Functions that spread one of their parameters into a Trainer: ``def train(model,
trainer_kwargs=None): pl.Trainer(**(trainer_kwargs or {}))``, a class whose ``__init__(self,
trainer_kwargs)`` builds the Trainer so, a method that does.

What reaches the Trainer there is what the function's callers give, in whatever file of the
project they are. The project index records each such function (:class:`Spreader`) for the
files that may spread something into a Trainer (``trainer_feeds.may_feed``); the rules then find
its calls across the project (``rules/shared/spread_calls.py``) and migrate the dicts the callers
write, where they write them.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from lightmigrate.analysis.trainer_feeds import TrainerSpreads
from lightmigrate.analysis.ast_nodes import ast_nodes


@dataclass(frozen=True)
class Spreader:
    """A function of the file ``path`` whose parameter ``param`` reaches a Trainer call as
    ``**param`` (or ``**(param or {})``)."""

    path: str
    name: str  # the name its callers call: the function's, or the class's for an ``__init__``
    owner: str  # the class of a method (for an ``__init__``: ``name``); "" for a module-level function
    param: str
    position: Optional[int]  # where a call gives it by position (``self`` not counted); None: by keyword only
    kwarg: bool  # ``param`` is the function's ``**kwargs``: the callers' keywords reach the Trainer
    params: Tuple[str, ...]  # the function's named parameters (``self`` not counted): a caller's keywords they take stay
    callee: str  # "lightning" or the class called, as ``Feed.callee``
    callee_patterns: Tuple[str, ...]
    has_tune: bool  # the file calls ``.tune(``: 1.9's tuner flags had an effect there
    line: int  # the Trainer call's line

    def named_in(self, text: str) -> bool:
        """Whether a file of ``text`` may hold a call of it that can be followed: its name as a
        word (for a method, its class's name too: the calls followed are ``self.method(...)``
        in the class and calls on an instance the scope makes)."""
        if self.is_method and self.owner not in text:
            return False
        return _word(self.name, text)

    def may_be_called_in(self, text: str) -> bool:
        """Whether a file of ``text`` may call it at all (for a method: ``.name(`` on anything)."""
        return f".{self.name}(" in text if self.is_method else _word(self.name, text)

    @property
    def is_init(self) -> bool:
        return bool(self.owner) and self.owner == self.name

    @property
    def is_method(self) -> bool:
        return bool(self.owner) and self.owner != self.name


def _word(name: str, text: str) -> bool:
    """Whether ``name`` stands in ``text`` as a word (not inside a longer name)."""
    if name not in text:
        return False
    return re.search(r"(?<![\w])" + re.escape(name) + r"(?![\w])", text) is not None


def _assigned_in(body: List[ast.stmt], name: str) -> bool:
    """Whether a statement of ``body`` (or of a block in it, not of a function or class it
    defines) assigns ``name``."""
    for stmt in body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return True
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if inner and _assigned_in(inner, name):
                return True
        for part in getattr(stmt, "handlers", ()) or getattr(stmt, "cases", ()):
            if _assigned_in(part.body, name):
                return True
    return False


def passed_parameter(func: Optional[ast.AST], value: ast.expr) -> Optional[Tuple[str, bool]]:
    """(the parameter, whether it is the function's ``**kwargs``) when ``value`` (``p``, ``p or
    {}``) is a parameter of the function ``func`` that the function does not rebind."""
    if func is None or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        value = value.values[0]
    if not isinstance(value, ast.Name):
        return None
    a = func.args
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    kwarg = a.kwarg.arg if a.kwarg is not None else None
    if value.id not in params and value.id != kwarg or _assigned_in(func.body, value.id):
        return None
    return value.id, value.id == kwarg


def position_of(func: ast.AST, param: str, method: bool) -> Optional[int]:
    """Where a call gives ``param`` of ``func`` by position (after ``self`` for a method)."""
    a = func.args  # type: ignore[attr-defined]
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    if method:
        positional = positional[1:]
    return positional.index(param) if param in positional else None


def _is_static(func: ast.AST) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
               for d in func.decorator_list)  # type: ignore[attr-defined]


def trainer_spreaders(tree: ast.Module, path: str, read: Optional[TrainerSpreads] = None) -> Tuple[Spreader, ...]:
    """The functions of the file ``path`` (module level, and the methods of its module-level
    classes) that spread a parameter into a ``...Trainer`` call."""
    r = read or TrainerSpreads(tree, path)
    if not r.spreads:
        return ()
    values = {id(value): dotted for value, dotted, _ in r.spreads}
    out: List[Spreader] = []

    def scan(func: ast.AST, owner: str) -> None:
        for node in ast_nodes(func):
            if type(node) is not ast.Call:
                continue
            for k in node.keywords:  # type: ignore[attr-defined]
                if k.arg is not None or id(k.value) not in values:
                    continue
                passed = passed_parameter(func, k.value)
                if passed is None:
                    continue
                param, kwarg = passed
                method = bool(owner) and not _is_static(func)
                init = bool(owner) and func.name == "__init__"  # type: ignore[attr-defined]
                if owner and not init and not method:
                    continue  # a static or class method: called through its class, not followed
                callee, patterns = r.callee_of(values[id(k.value)])
                a = func.args  # type: ignore[attr-defined]
                params = tuple(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs))[1 if method else 0:]
                out.append(Spreader(path, owner if init else func.name, owner, param,  # type: ignore[attr-defined]
                                    None if kwarg else position_of(func, param, method), kwarg, params, callee,
                                    patterns, r.has_tune, node.lineno))  # type: ignore[attr-defined]

    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scan(stmt, "")
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    scan(item, stmt.name)
    return tuple(dict.fromkeys(out))
