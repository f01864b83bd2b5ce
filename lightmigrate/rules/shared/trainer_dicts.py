"""Where a dict of Trainer arguments is built, on Python's ``ast`` (for LM101's ``find``).

A dict that reaches ``Trainer(**name)`` is built by statements of one block: ``name = {...}``,
``name = dict(gpus=1, ...)``, ``name["auto_lr_find"] = True``, ``name.update(precision=16)``.
:func:`builders` finds them for a name in a block (not inside the functions and classes it
defines); :func:`returned` follows what a function returns to them.
"""

from __future__ import annotations

import ast
from lightmigrate.analysis.ast_nodes import ast_nodes
from dataclasses import dataclass, field
from typing import Iterator, List, Optional, Tuple


@dataclass
class Builders:
    dicts: List[ast.Dict] = field(default_factory=list)  # literals
    calls: List[ast.Call] = field(default_factory=list)  # dict(k=v) and name.update(k=v)
    keys: List[ast.Assign] = field(default_factory=list)  # name["k"] = v, with a string key
    names: List[str] = field(default_factory=list)  # other names spread into it: {**base}, dict(base)

    def extend(self, other: "Builders") -> None:
        self.dicts += other.dicts
        self.calls += other.calls
        self.keys += other.keys
        self.names += other.names

    def __bool__(self) -> bool:
        return bool(self.dicts or self.calls or self.keys)


def block_statements(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``body`` and of the blocks inside it, but not of the functions and
    classes it defines."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if inner:
                yield from block_statements(inner)
        for part in getattr(stmt, "handlers", ()) or getattr(stmt, "cases", ()):
            yield from block_statements(part.body)


def is_dict_call(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict"
            and all(not isinstance(a, ast.Starred) for a in node.args))


def value_builders(value: ast.expr, out: Builders) -> bool:
    """Add ``value`` to ``out`` when it is a dict literal or a ``dict(...)`` call (and the names
    it copies); whether it was."""
    if isinstance(value, ast.Dict):
        out.dicts.append(value)
        out.names += [v.id for k, v in zip(value.keys, value.values) if k is None and isinstance(v, ast.Name)]
        return True
    if is_dict_call(value):
        out.calls.append(value)  # type: ignore[arg-type]
        out.names += [a.id for a in value.args if isinstance(a, ast.Name)]  # type: ignore[attr-defined]
        out.names += [k.value.id for k in value.keywords  # type: ignore[attr-defined]
                      if k.arg is None and isinstance(k.value, ast.Name)]
        return True
    return False


def builders(body: List[ast.stmt], name: str) -> Builders:
    """The statements of ``body`` that build the dict ``name``."""
    out = Builders()
    for stmt in block_statements(body):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = stmt.value
            if value is None:
                continue
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                value_builders(value, out)
            elif (isinstance(stmt, ast.Assign) and len(targets) == 1 and isinstance(targets[0], ast.Subscript)
                  and isinstance(targets[0].value, ast.Name) and targets[0].value.id == name
                  and isinstance(targets[0].slice, ast.Constant) and isinstance(targets[0].slice.value, str)):
                out.keys.append(stmt)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            f = call.func
            if (isinstance(f, ast.Attribute) and f.attr == "update" and isinstance(f.value, ast.Name)
                    and f.value.id == name):
                if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Dict):
                    out.dicts.append(call.args[0])
                elif not call.args and call.keywords:
                    out.calls.append(call)
    return out


def returned(func: ast.AST) -> Builders:
    """The statements of the function ``func`` that build the dict it returns."""
    out = Builders()
    for stmt in block_statements(func.body):  # type: ignore[attr-defined]
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            if not value_builders(stmt.value, out) and isinstance(stmt.value, ast.Name):
                out.extend(builders(func.body, stmt.value.id))  # type: ignore[attr-defined]
    return out


def module_function(tree: ast.Module, name: str) -> Optional[ast.AST]:
    return next((s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name),
                None)


# --- a dict of Trainer arguments whose values are only known at run time --------------------

def _assigned(body: List[ast.stmt], name: str) -> List[ast.expr]:
    return [s.value for s in block_statements(body)
            if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None
            and any(isinstance(t, ast.Name) and t.id == name
                    for t in (s.targets if isinstance(s, ast.Assign) else [s.target]))]


def fresh_opaque(body: List[ast.stmt], name: str) -> bool:
    """Whether the block makes ``name`` a new dict of its own (every assignment of it is a dict
    display, a dict comprehension or ``dict(...)``), with entries whose keys cannot be read: a
    comprehension, or ``name.update(other)`` of something other than a literal or keywords.
    Such a dict may carry None for any Trainer argument, and changing its items before the
    Trainer call changes no one else's dict."""
    values = _assigned(body, name)
    if not values or not all(isinstance(v, (ast.Dict, ast.DictComp)) or is_dict_call(v) for v in values):
        return False
    if any(isinstance(v, ast.DictComp) for v in values):
        return True
    for stmt in block_statements(body):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            f = stmt.value.func
            if (isinstance(f, ast.Attribute) and f.attr == "update" and isinstance(f.value, ast.Name)
                    and f.value.id == name and stmt.value.args and not isinstance(stmt.value.args[0], ast.Dict)):
                return True
    return False


def none_defaults_loop(body: List[ast.stmt], name: str) -> bool:
    """Whether the block already has the loop LM101 writes before the Trainer call
    (``for key, default in (...): if name.get(key, default) is None: name[key] = default``)."""
    for stmt in block_statements(body):
        if not (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Tuple) and len(stmt.body) == 1
                and isinstance(stmt.body[0], ast.If)):
            continue
        test = stmt.body[0].test
        if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Call)
                and isinstance(test.left.func, ast.Attribute) and test.left.func.attr == "get"
                and isinstance(test.left.func.value, ast.Name) and test.left.func.value.id == name):
            return True
    return False


_DEFERRED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SIMPLE = (ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)


def statement_of(body: List[ast.stmt], call: ast.Call) -> Optional[ast.stmt]:
    """The simple statement of ``body`` (or of a block inside it) that evaluates ``call`` when it
    runs (not inside a lambda or comprehension of it), or None."""
    for stmt in block_statements(body):
        if not isinstance(stmt, _SIMPLE) or not (stmt.lineno <= call.lineno <= (stmt.end_lineno or stmt.lineno)):
            continue
        if not any(n is call for n in ast_nodes(stmt)):
            continue
        deferred = [n for n in ast_nodes(stmt) if isinstance(n, _DEFERRED)]
        if any(n is call for d in deferred for n in ast_nodes(d)):
            return None
        return stmt
    return None


def names_in(node: ast.AST) -> set:
    return {n.id for n in ast_nodes(node) if isinstance(n, ast.Name)} | {
        a.arg for a in ast_nodes(node) if isinstance(a, ast.arg)}


def opaque_how(body: List[ast.stmt], name: str, segment) -> str:
    """How the dict ``name`` (see :func:`fresh_opaque`) gets keys that cannot be read, in the
    user's spelling (``segment`` gives a node's source): "a comprehension over
    `self.config.items()`", "an update from `extra`"."""
    ways = []
    for value in _assigned(body, name):
        if isinstance(value, ast.DictComp):
            source = value.generators[0].iter
            ways.append(f"a comprehension over `{segment(source)}`")
    for stmt in block_statements(body):
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            f = stmt.value.func
            if (isinstance(f, ast.Attribute) and f.attr == "update" and isinstance(f.value, ast.Name)
                    and f.value.id == name and stmt.value.args and not isinstance(stmt.value.args[0], ast.Dict)):
                ways.append(f"an update from `{segment(stmt.value.args[0])}`")
    return " and ".join(dict.fromkeys(ways))


def self_attribute_origin(cls: ast.ClassDef, attr: str, is_trainer_call) -> Optional[Tuple[str, ast.Call, ast.AST]]:
    """Where the class's methods set ``self.<attr>`` to a Trainer: (the method that makes it,
    the Trainer call, that method's node), when every ``self.<attr> = ...`` of the class other
    than ``None`` is the same ``self.<method>(...)`` call of a method that returns a Trainer call
    (``is_trainer_call``) directly or through one name; else None."""
    methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    makers = set()
    for method in methods.values():
        for node in ast_nodes(method):
            if not isinstance(node, ast.Assign):
                continue
            if not any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                       and t.value.id == "self" for t in node.targets):
                continue
            value = node.value
            if isinstance(value, ast.Constant) and value.value is None:
                continue
            if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                    and isinstance(value.func.value, ast.Name) and value.func.value.id == "self"
                    and value.func.attr in methods):
                makers.add(value.func.attr)
            else:
                return None
    if len(makers) != 1:
        return None
    maker = methods[makers.pop()]
    found = None
    for stmt in block_statements(maker.body):  # type: ignore[attr-defined]
        if not isinstance(stmt, ast.Return) or stmt.value is None:
            continue
        value = stmt.value
        if isinstance(value, ast.Name):
            bound = [v for v in _assigned(maker.body, value.id)]  # type: ignore[attr-defined]
            value = bound[0] if len(bound) == 1 else None
        if not (isinstance(value, ast.Call) and is_trainer_call(value)) or found is not None:
            return None
        found = value
    return (maker.name, found, maker) if found is not None else None  # type: ignore[attr-defined]
