"""Cheap facts about one file, for the rules' gates (``Rule.needed``).

A rule's walk over the libcst tree is the expensive part of a run; most files that pass a
rule's text triggers turn out to need nothing from it. Before the engine parses a file with
libcst it asks each rule whether it is needed, and a rule answers from the text itself and
from these facts: what Python's own ``ast`` (C speed, about ten times faster than libcst)
says the code names, calls, defines and imports. A gate must be conservative: it may say
"needed" for nothing, never "not needed" when ``apply`` would change or report something.

When the text does not parse with ``ast`` (``parsed`` is False) the sets are empty and gates
must answer "needed"; the engine reports the syntax error anyway.
"""

from __future__ import annotations

import ast
import warnings
from operator import attrgetter
from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional


@dataclass(frozen=True)
class FileFacts:
    parsed: bool
    names: FrozenSet[str]
    """Every bare name the code reads or binds (``ast.Name``)."""
    attributes: FrozenSet[str]
    """Every attribute name used as ``<expr>.NAME``."""
    calls: FrozenSet[str]
    """The last component of every called expression: ``f()`` and ``a.b.f()`` give ``f``."""
    keywords: FrozenSet[str]
    """Every keyword argument name of every call (``f(x=1)`` gives ``x``)."""
    call_keywords: Dict[str, FrozenSet[str]]
    """Called name (last component) -> the keyword names passed to it anywhere."""
    defs: FrozenSet[str]
    """Names of every function and method (``def`` / ``async def``) at any depth."""
    params: FrozenSet[str]
    """Every parameter name of every function, method and lambda."""
    classes: FrozenSet[str]
    """Names of every class defined, at any depth."""
    modules: FrozenSet[str]
    """Every module an import names, with its parents: ``import a.b`` and ``from a.b import c``
    give ``a`` and ``a.b``; ``from a.b import c`` also gives ``a.b.c`` (it may be a module)."""
    imported: FrozenSet[str]
    """Every name an import binds or fetches: the imported name and its alias."""


def _parents(dotted: str) -> list:
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def _last(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


# Fields that never hold a node: names, numbers and strings, and the fields whose nodes are
# the expression contexts and operators (``Load()``, ``Add()``...), which no reader of a node
# list looks at and which are a quarter of all nodes.
_NOT_NODES = frozenset({
    "name", "type_comment", "module", "level", "simple", "conversion", "kind", "n", "s", "attr", "id",
    "is_async", "arg", "asname", "rest", "kwd_attrs", "lineno", "tag", "ctx", "op", "ops",
})
_NOT_NODES_OF = {"Global": {"names"}, "Nonlocal": {"names"}, "Constant": {"value"}, "NameConstant": {"value"},
                 "MatchSingleton": {"value"}}
# The two lists that may hold None: ``{**d}`` has a None key, a keyword-only parameter without
# a default a None default.
_MAY_HOLD_NONE = (ast.Dict, ast.arguments)

# node type -> (getter of its node fields, whether it has one field, whether a list may hold
# None), or None for a type with no node fields
_PLANS: Dict[type, Optional[tuple]] = {}
_UNPLANNED = object()


def _plan(kind: type) -> Optional[tuple]:
    skip = _NOT_NODES_OF.get(kind.__name__, ())
    fields = tuple(f for f in kind._fields if f not in _NOT_NODES and f not in skip)
    plan = (attrgetter(*fields), len(fields) == 1, kind in _MAY_HOLD_NONE) if fields else None
    _PLANS[kind] = plan
    return plan


def ast_nodes(tree: ast.AST) -> list:
    """Every node of ``tree`` but the expression contexts and operators, in ``ast.walk`` order
    (breadth first), as a list: several times faster than ``ast.walk``, which the survey of a
    big tree would spend most of its time in."""
    out = [tree]
    append, extend, plans = out.append, out.extend, _PLANS
    for node in out:  # the list grows as it is read: breadth first
        plan = plans.get(type(node), _UNPLANNED)
        if plan is _UNPLANNED:
            plan = _plan(type(node))
        if plan is None:
            continue
        getter, single, may_hold_none = plan
        for value in ((getter(node),) if single else getter(node)):
            if type(value) is list:
                extend([v for v in value if v is not None] if may_hold_none else value)
            elif value is not None:
                append(value)
    return out


# The node lists of the last few trees, by identity (each tree held, so its id stays its own).
_NODES: Dict[int, tuple] = {}
_NODES_SIZE = 4


def nodes_of(tree: ast.AST) -> list:
    """``ast_nodes(tree)``, computed once for each of the last few trees asked about (the
    gates of several rules read the same tree). The list must not be changed."""
    hit = _NODES.get(id(tree))
    if hit is not None and hit[0] is tree:
        return hit[1]
    nodes = ast_nodes(tree)
    if len(_NODES) >= _NODES_SIZE:
        _NODES.pop(next(iter(_NODES)))
    _NODES[id(tree)] = (tree, nodes)
    return nodes


def _from_tree(tree: ast.AST, nodes: Optional[list] = None) -> FileFacts:
    names, attributes, calls, keywords, defs, params, classes, modules, imported = (set() for _ in range(9))
    call_keywords: Dict[str, set] = {}
    for node in (ast_nodes(tree) if nodes is None else nodes):
        kind = type(node)
        if kind is ast.Name:
            names.add(node.id)  # type: ignore[attr-defined]
        elif kind is ast.Attribute:
            attributes.add(node.attr)  # type: ignore[attr-defined]
        elif kind is ast.Call:
            name = _last(node.func)  # type: ignore[attr-defined]
            kws = {k.arg for k in node.keywords if k.arg}  # type: ignore[attr-defined]
            keywords |= kws
            if name is not None:
                calls.add(name)
                call_keywords.setdefault(name, set()).update(kws)
        elif kind is ast.arg:
            params.add(node.arg)  # type: ignore[attr-defined]
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            defs.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.ClassDef:
            classes.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.Import:
            for alias in node.names:  # type: ignore[attr-defined]
                modules.update(_parents(alias.name))
                imported.update(alias.name.split("."))
                if alias.asname:
                    imported.add(alias.asname)
        elif kind is ast.ImportFrom:
            base = node.module or ""  # type: ignore[attr-defined]
            if base:
                modules.update(_parents(base))
            for alias in node.names:  # type: ignore[attr-defined]
                imported.add(alias.name)
                if alias.asname:
                    imported.add(alias.asname)
                if base:
                    modules.add(f"{base}.{alias.name}")
    return FileFacts(
        True, frozenset(names), frozenset(attributes), frozenset(calls), frozenset(keywords),
        {k: frozenset(v) for k, v in call_keywords.items()}, frozenset(defs), frozenset(params),
        frozenset(classes), frozenset(modules), frozenset(imported),
    )


_EMPTY: FrozenSet[str] = frozenset()


# The trees of the last few texts parsed: the facts, and the gates that look closer, read the
# same text. The trees must not be changed.
_TREES: Dict[str, Optional[ast.AST]] = {}
_TREES_SIZE = 4


def parse_tree(text: str) -> Optional[ast.AST]:
    """``ast.parse(text)``, or None when it does not parse (the last few texts' trees are
    kept: do not change them)."""
    if text in _TREES:
        return _TREES[text]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for invalid escapes and the like
        try:
            tree: Optional[ast.AST] = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None
    remember_tree(text, tree)
    return tree


def remember_tree(text: str, tree: Optional[ast.AST]) -> None:
    """Make ``tree`` (``ast.parse(text)``, parsed elsewhere) what ``parse_tree(text)`` returns."""
    if text not in _TREES and len(_TREES) >= _TREES_SIZE:
        _TREES.pop(next(iter(_TREES)))
    _TREES[text] = tree


# The facts of the last few texts asked about: every rule's gate asks about the same text.
_CACHE: Dict[str, FileFacts] = {}
_CACHE_SIZE = 4


def remember(text: str, facts: FileFacts) -> None:
    """Make ``facts`` (computed elsewhere, e.g. in a worker process) the cached facts of ``text``."""
    if text not in _CACHE and len(_CACHE) >= _CACHE_SIZE:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[text] = facts


def known_facts(text: str) -> Optional[FileFacts]:
    """The facts of ``text`` if they are at hand (worked out or remembered lately), else None."""
    return _CACHE.get(text)


def file_facts(text: str, tree: Optional[ast.AST] = None, nodes: Optional[list] = None) -> FileFacts:
    """The facts of ``text`` (``tree``: its ``ast`` tree, and ``nodes``: ``ast_nodes(tree)``,
    when the caller already has them)."""
    found = _CACHE.get(text)
    if found is not None:
        return found
    if tree is None:
        tree = parse_tree(text)
    if tree is None:
        facts = FileFacts(False, *([_EMPTY] * 4), {}, *([_EMPTY] * 5))
    else:
        facts = _from_tree(tree, nodes if nodes is not None else nodes_of(tree))
    remember(text, facts)
    return facts
