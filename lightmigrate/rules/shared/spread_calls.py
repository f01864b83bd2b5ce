"""The calls, across the project, of a function that spreads a parameter into a Trainer
(``analysis/trainer_spreaders.py``), on Python's ``ast`` (for LM101's ``find``).

A call names the function as its file imports it (``from pkg.run import train``, ``... import
train as t``, ``import pkg.run as run; run.train(...)``, a star import), as the function's own
file defines it, or, for a method, as ``self.method(...)`` in its class. What the call gives the
parameter is *followed* when it is a dict literal, a ``dict(...)`` call, ``None``, nothing, or a
name the calling scope binds only to such dicts (:func:`calls_in`): the rule migrates those dicts
where they are written. Anything else (a parameter of the caller, a call's result, ``**kw``
spread into the call) is not, and the function's Trainer call keeps a marker naming those calls
(:func:`unfollowed`), which the function's file works out by reading every file of the project
that holds the function's name.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass, field, replace
from typing import Dict, List, Optional, Tuple

from lightmigrate.analysis.ast_nodes import ast_dotted, ast_nodes
from lightmigrate.analysis.trainer_feeds import from_module, module_patterns
from lightmigrate.analysis.trainer_spreaders import Spreader
from lightmigrate.rules.shared.trainer_dicts import (Builders, block_statements, builders, fresh_opaque, is_dict_call,
                                                    value_builders)


@dataclass
class Given:
    """A call of ``spreader`` and what it gives the spread parameter: ``found``, the dicts that
    build it when ``followed`` (in ``body``, the calling scope's statements)."""

    spreader: Spreader
    call: ast.Call
    followed: bool
    found: Builders = field(default_factory=Builders)
    body: List[ast.stmt] = field(default_factory=list)
    why: str = ""  # when not followed: what the call gives, in the file's words
    scope: Optional[ast.AST] = None  # the function around the call (None: the module)


def _is_dictish(value: ast.expr) -> bool:
    return isinstance(value, ast.Dict) or is_dict_call(value)


def _params(func: ast.AST) -> set:
    a = func.args  # type: ignore[attr-defined]
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}


def _assigned_values(body: List[ast.stmt], name: str) -> Optional[List[ast.expr]]:
    """The values ``body`` assigns ``name`` (None when it binds it otherwise: a loop, a ``with``,
    an augmented or unpacking assignment, an import)."""
    out = []
    for stmt in block_statements(body):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id == name and stmt.value is not None:
                    out.append(stmt.value)
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name:
                    if not (isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)):
                        return None  # name[key] = value: a key that cannot be read
                    continue  # name["key"] = value: a key of the dict (``builders`` reads it)
                elif any(isinstance(n, ast.Name) and n.id == name for n in ast_nodes(t)):
                    return None
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.AugAssign, ast.Global,
                               ast.Nonlocal, ast.Import, ast.ImportFrom)):
            if any(isinstance(n, ast.Name) and n.id == name for n in ast_nodes(getattr(stmt, "target", stmt))) or \
                    any(getattr(a, "asname", None) == name or getattr(a, "name", None) == name
                        for a in getattr(stmt, "names", ()) if not isinstance(a, str)) or \
                    name in [n for n in getattr(stmt, "names", ()) if isinstance(n, str)]:
                return None
    return out


def _named_dict(name: str, scope: Optional[ast.AST], tree: ast.Module) -> Optional[Tuple[Builders, List[ast.stmt]]]:
    """The dicts the name ``name`` holds where it is used in ``scope`` (a function, or None for
    the module), when every value the scope (or, when the function does not bind it, the
    module) gives it is a dict literal or ``dict(...)``."""
    for body, func in ((scope.body, scope), (tree.body, None)) if scope is not None else ((tree.body, None),):  # type: ignore[attr-defined]
        if func is not None and name in _params(func):
            return None
        values = _assigned_values(body, name)
        if values is None:
            return None
        if not values:
            continue
        if not all(_is_dictish(v) for v in values) or fresh_opaque(body, name):
            return None  # (fresh_opaque: an update from something whose keys cannot be read)
        return builders(body, name), body
    return None


def _given_value(call: ast.Call, sp: Spreader) -> Tuple[Optional[ast.expr], str]:
    """What ``call`` gives ``sp.param``: (the value or None, "" when it gives nothing, or why it
    cannot be told)."""
    for k in call.keywords:
        if k.arg == sp.param:
            return k.value, ""
    if sp.position is not None:
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                return None, "`*` arguments"
            if i == sp.position:
                return a, ""
    if any(k.arg is None for k in call.keywords):
        return None, "`**` arguments"
    return None, ""


def _classify(call: ast.Call, sp: Spreader, scope: Optional[ast.AST], tree: ast.Module, segment) -> Given:
    if sp.kwarg:
        spreads = [k for k in call.keywords if k.arg is None and not isinstance(k.value, ast.Dict)]
        if spreads or any(isinstance(a, ast.Starred) for a in call.args):
            return Given(sp, call, False, why="`**`/`*` arguments")
        return Given(sp, call, True)
    value, why = _given_value(call, sp)
    if value is None:
        return Given(sp, call, not why, why=why)
    if isinstance(value, ast.Constant) and value.value is None:
        return Given(sp, call, True)
    body = scope.body if scope is not None else tree.body  # type: ignore[attr-defined]
    found = Builders()
    if value_builders(value, found):
        for name in found.names:  # {**base, ...}, dict(base, ...)
            more = _named_dict(name, scope, tree)
            if more is None:
                return Given(sp, call, False, why=f"`{segment(value)}`")
        return Given(sp, call, True, found, body)
    if isinstance(value, ast.Name):
        named = _named_dict(value.id, scope, tree)
        if named is not None:
            return Given(sp, call, True, named[0], named[1])
    return Given(sp, call, False, why=f"`{segment(value)}`")


def _receiver(value: ast.expr, sp: Spreader, scope: Optional[ast.AST], tree: ast.Module, names: "_Names") -> str:
    """What ``value.method(...)`` calls the method of: "self"; "instance" (a new object of the
    method's class, made there or bound to a name of the scope once); "other" (an object of
    another class made there, a Trainer); "unknown"."""
    owner = replace(sp, name=sp.owner)

    def made_by(call: ast.Call) -> str:
        if names.calls(call.func, owner):
            return "instance"
        return "other" if (ast_dotted(call.func) or "").endswith("Trainer") else "unknown"

    if isinstance(value, ast.Name) and value.id == "self":
        return "self"
    if isinstance(value, ast.Call):
        return made_by(value)
    if (ast_dotted(value) or "").lower().endswith("trainer"):
        return "other"  # a Trainer's own fit, validate, ...
    if isinstance(value, ast.Name):
        body = scope.body if scope is not None else tree.body  # type: ignore[attr-defined]
        values = _assigned_values(body, value.id)
        if values and len(values) == 1 and isinstance(values[0], ast.Call):
            return made_by(values[0])
    return "unknown"


class _Names:
    """How one file names the spreaders: imported names and modules."""

    def __init__(self, tree: ast.Module, path: str) -> None:
        self.path = path
        self.names: Dict[str, Tuple[Tuple[str, ...], str]] = {}  # local -> (module patterns, its name there)
        self.modules: Dict[str, Tuple[str, ...]] = {}  # local -> module patterns
        self.stars: List[Tuple[str, ...]] = []  # ``from M import *``
        self.dotted_imports: set = set()  # ``import a.b``: a.b
        for node in ast_nodes(tree):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                for alias in node.names:
                    if alias.name == "*":
                        self.stars.append(module_patterns(mod, node.level, path))
                        continue
                    local = alias.asname or alias.name
                    self.names[local] = (module_patterns(mod, node.level, path), alias.name)
                    self.modules[local] = module_patterns((mod + "." if mod else "") + alias.name, node.level, path)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.modules[alias.asname] = module_patterns(alias.name, 0, path)
                    else:
                        self.dotted_imports.add(alias.name)

    def calls(self, func: ast.expr, sp: Spreader) -> bool:
        """Whether ``func`` (a call's callee) names ``sp`` (a module-level function, or the class
        whose ``__init__`` it is)."""
        if isinstance(func, ast.Name):
            local = func.id
            if local in self.names:
                patterns, name = self.names[local]
                return name == sp.name and from_module(sp.path, patterns)
            if local != sp.name:
                return False
            return self.path == sp.path or any(from_module(sp.path, p) for p in self.stars)
        if isinstance(func, ast.Attribute) and func.attr == sp.name:
            head = ast_dotted(func.value)
            if head is None:
                return False
            patterns = self.modules.get(head)
            if patterns is None and head in self.dotted_imports:
                patterns = module_patterns(head, 0, self.path)
            return patterns is not None and from_module(sp.path, patterns)
        return False


def calls_in(tree: ast.Module, path: str, spreaders: List[Spreader], segment
             ) -> Tuple[List[Given], List[Tuple[Spreader, ast.AST, Optional[ast.AST]]]]:
    """The calls of ``spreaders`` in the file ``path`` (its ``tree``; ``segment`` gives a node's
    source), and the other places that may call one: a method's name called on something other
    than ``self`` in its class, the function handed on as a value."""
    names = _Names(tree, path)
    given: List[Given] = []
    maybe: List[Tuple[Spreader, ast.AST, Optional[ast.AST]]] = []
    plain = [sp for sp in spreaders if not sp.is_method]
    methods = [sp for sp in spreaders if sp.is_method]

    def inherits(cls: Optional[ast.ClassDef], sp: Spreader) -> bool:
        """Whether ``self.method(...)`` in ``cls`` calls ``sp``: ``cls`` is its class, or names it
        as a base (as this file imports it) and does not define the method itself."""
        if cls is None:
            return False
        if cls.name == sp.owner and path == sp.path:
            return True
        owner = replace(sp, name=sp.owner)
        return any(names.calls(b, owner) for b in cls.bases) and not any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == sp.name for n in cls.body)

    def visit(node: ast.AST, scope: Optional[ast.AST], cls: Optional[ast.ClassDef]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child, cls)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, scope, child)
                continue
            if isinstance(child, (ast.Assign, ast.Return)) and child.value is not None:
                for sp in plain:
                    if names.calls(child.value, sp):
                        maybe.append((sp, child.value, scope))  # bound to another name, returned: called elsewhere
            if isinstance(child, ast.Call):
                func = child.func
                for sp in plain:
                    if names.calls(func, sp):
                        given.append(_classify(child, sp, scope, tree, segment))
                        given[-1].scope = scope
                if isinstance(func, ast.Attribute):
                    for sp in methods:
                        if func.attr != sp.name:
                            continue
                        receiver = _receiver(func.value, sp, scope, tree, names)
                        if receiver == "self" and not inherits(cls, sp):
                            receiver = "unknown"  # (another class's method of that name, or an override)
                        if receiver in ("self", "instance"):
                            given.append(_classify(child, sp, scope, tree, segment))
                            given[-1].scope = scope
                        elif receiver == "unknown" and not _classify(child, sp, scope, tree, segment).followed:
                            maybe.append((sp, child, scope))  # a call of a method of that name on something else
                for arg in (*child.args, *(k.value for k in child.keywords)):
                    for sp in plain:
                        if names.calls(arg, sp):
                            maybe.append((sp, arg, scope))  # handed on: called elsewhere
            visit(child, scope, cls)

    if plain or methods:
        visit(tree, None, None)
    return given, maybe


def where(path: str, scope: Optional[ast.AST], home: str) -> str:
    """Where a call is, as the marker in the file ``home`` names it: the file (relative to the
    folder of ``home``) and the function around it. Not its line: a migration of that file
    (a key dropped above the call) moves it, and the marker must read the same the next run."""
    rel = "this file" if path == home else \
        posixpath.relpath(path.replace("\\", "/"), posixpath.dirname(home.replace("\\", "/")) or ".")
    inside = f"`{scope.name}()`" if scope is not None else "module level"  # type: ignore[attr-defined]
    return f"{rel}, {inside}"


def unfollowed(project, sp: Spreader, current: Optional[Tuple[str, ast.Module]] = None) -> Optional[List[str]]:
    """The calls of ``sp`` anywhere in the project whose argument for the parameter cannot be
    followed, and the places that may call it unseen, each as "where (what it gives)"; None
    when the project has no call of it at all (``current``: the path and tree of the file being
    migrated, read as it is)."""
    out: List[str] = []
    calls = 0
    for path in project.paths():
        if path.endswith((".yaml", ".yml")):
            continue
        text = project.text_of(path)
        if text is None or not sp.may_be_called_in(text):
            continue
        tree = current[1] if current is not None and current[0] == path else project.tree_of(path)
        if tree is None:
            out.append(f"{where(path, None, sp.path).rsplit(', ', 1)[0]} (a file lightmigrate cannot parse)")
            calls += 1
            continue
        def segment(node: ast.AST) -> str:
            got = ast.get_source_segment(text, node)
            return got if got is not None else "?"

        given, maybe = calls_in(tree, path, [sp], segment)
        calls += len(given) + len(maybe)
        for g in given:
            if not g.followed:
                out.append(f"{where(path, g.scope, sp.path)} (gives {g.why})")
        for _, node, scope in maybe:
            out.append(f"{where(path, scope, sp.path)} (may call it: `{segment(node)[:60]}`)")
    return list(dict.fromkeys(out)) if calls else None
