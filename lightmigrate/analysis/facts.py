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
from dataclasses import dataclass, field
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
    reached: FrozenSet[str] = frozenset()
    """Every dotted name the file reaches through an absolute import from a Lightning package
    (``pytorch_lightning``, ``lightning``, ``lightning_fabric``), as the import rules resolve
    them: each module an ``import`` names, ``module.name`` of each ``from`` import, and each
    dotted use ``local.a.b`` of a name such an import binds, with the import's path in place of
    ``local`` (every import of that name, and every chain inside a longer one, counts)."""
    lightning_bindings: Dict[str, FrozenSet[str]] = field(default_factory=dict)
    """Local name -> the dotted paths the absolute imports from a Lightning package that bind
    it give it (``import lightning.pytorch as pl``: ``pl`` -> ``lightning.pytorch``;
    ``import lightning.pytorch``: ``lightning`` -> ``lightning``)."""
    bases: FrozenSet[str] = frozenset()
    """Every base of every class defined, at any depth, that is a dotted name (``Base``,
    ``pl.LightningModule``), as written."""


def _parents(dotted: str) -> list:
    parts = dotted.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def ast_dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain of ``ast`` nodes, else None."""
    parts = []
    while type(node) is ast.Attribute:
        parts.append(node.attr)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
    if type(node) is not ast.Name:
        return None
    parts.append(node.id)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


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


_LIGHTNING_HEADS = frozenset({"pytorch_lightning", "lightning", "lightning_fabric"})


def _reached(nodes: list, bound: Dict[str, set], reached: set) -> None:
    """Add to ``reached`` the dotted uses of the names in ``bound`` (local name -> the paths
    imports bind it to), expanded to those paths."""
    for node in nodes:
        if type(node) is not ast.Attribute:
            continue
        parts = [node.attr]  # type: ignore[attr-defined]
        value = node.value  # type: ignore[attr-defined]
        while type(value) is ast.Attribute:
            parts.append(value.attr)  # type: ignore[attr-defined]
            value = value.value  # type: ignore[attr-defined]
        if type(value) is ast.Name and value.id in bound:  # type: ignore[attr-defined]
            rest = ".".join(reversed(parts))
            reached.update(f"{path}.{rest}" for path in bound[value.id])  # type: ignore[attr-defined]


def _from_tree(tree: ast.AST, nodes: Optional[list] = None) -> FileFacts:
    names, attributes, calls, keywords, defs, params, classes, modules, imported = (set() for _ in range(9))
    call_keywords: Dict[str, set] = {}
    bound: Dict[str, set] = {}  # local name -> the Lightning paths imports bind it to
    bases: set = set()
    reached: set = set()
    if nodes is None:
        nodes = ast_nodes(tree)
    for node in nodes:
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
            for base in node.bases:  # type: ignore[attr-defined]
                name = ast_dotted(base)
                if name is not None:
                    bases.add(name)
        elif kind is ast.Import:
            for alias in node.names:  # type: ignore[attr-defined]
                modules.update(_parents(alias.name))
                head = alias.name.split(".")[0]
                imported.update(alias.name.split("."))
                if alias.asname:
                    imported.add(alias.asname)
                if head in _LIGHTNING_HEADS:
                    reached.add(alias.name)
                    local, path = (alias.asname, alias.name) if alias.asname else (head, head)
                    bound.setdefault(local, set()).add(path)
        elif kind is ast.ImportFrom:
            base = node.module or ""  # type: ignore[attr-defined]
            if base:
                modules.update(_parents(base))
            lightning = not node.level and base.split(".")[0] in _LIGHTNING_HEADS  # type: ignore[attr-defined]
            for alias in node.names:  # type: ignore[attr-defined]
                imported.add(alias.name)
                if alias.asname:
                    imported.add(alias.asname)
                if base:
                    modules.add(f"{base}.{alias.name}")
                if lightning and alias.name != "*":
                    reached.add(f"{base}.{alias.name}")
                    bound.setdefault(alias.asname or alias.name, set()).add(f"{base}.{alias.name}")
    if bound:
        _reached(nodes, bound, reached)
    return FileFacts(
        True, frozenset(names), frozenset(attributes), frozenset(calls), frozenset(keywords),
        {k: frozenset(v) for k, v in call_keywords.items()}, frozenset(defs), frozenset(params),
        frozenset(classes), frozenset(modules), frozenset(imported), frozenset(reached),
        {k: frozenset(v) for k, v in bound.items()}, frozenset(bases),
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
