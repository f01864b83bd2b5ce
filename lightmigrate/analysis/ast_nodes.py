"""Reading Python's ``ast`` trees fast: every node of a tree as a list, and dotted names.

``ast.walk`` is a generator over ``iter_child_nodes``; the rules' ``find`` and the project
index read many trees, so ``ast_nodes`` lists the nodes with one precomputed field getter per
node type instead, skipping the expression contexts and operators (a quarter of all nodes)."""

from __future__ import annotations

import ast
from operator import attrgetter
from typing import Dict, Optional


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


_LEAF = object()  # NodeVisitor: a node type whose visit does nothing


class NodeVisitor(ast.NodeVisitor):
    """``ast.NodeVisitor``, with the same visits in the same order (depth first, fields in
    order), but faster: each node's children come from the field getter ``ast_nodes`` uses
    (expression contexts and operators are skipped: no visitor here looks at them), and each
    ``visit_<Type>`` method is looked up once per visitor class and node type. A constant goes
    to ``generic_visit`` unless the class has a ``visit_Constant`` of its own (``ast``'s looks
    for the ``visit_Num``/``visit_Str`` methods that Python 3.8 deprecated, which none has)."""

    _methods: Dict[type, object]  # node type -> the unbound method (or _LEAF), per subclass

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if cls.visit is not NodeVisitor.visit:  # (generic_visit calls the children's methods itself)
            raise TypeError(f"{cls.__name__}: define visit_<Type> methods or generic_visit, not visit")
        cls._methods = {}

    @classmethod
    def _method(cls, kind: type) -> object:
        """The method that visits a node of type ``kind``, or ``_LEAF`` when that would be the
        base ``generic_visit`` of a node with no child nodes (a ``Name``, a ``Constant``...),
        which does nothing: the walk then skips the call (a third of the calls of a walk)."""
        method = getattr(cls, "visit_" + kind.__name__, cls.generic_visit)
        if method is ast.NodeVisitor.visit_Constant:  # (only looks for the visit_Num... of old)
            method = cls.generic_visit
        if method is NodeVisitor.generic_visit:
            plan = _PLANS.get(kind, _UNPLANNED)
            if (_plan(kind) if plan is _UNPLANNED else plan) is None:
                method = _LEAF
        cls._methods[kind] = method
        return method

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        method = self._methods.get(kind)
        if method is None:
            method = self._method(kind)
        if method is not _LEAF:
            method(self, node)  # type: ignore[operator]

    def generic_visit(self, node: ast.AST) -> None:
        plan = _PLANS.get(type(node), _UNPLANNED)
        if plan is _UNPLANNED:
            plan = _plan(type(node))
        if plan is None:
            return
        getter, single, _ = plan
        methods = self._methods
        for value in ((getter(node),) if single else getter(node)):
            for child in (value if type(value) is list else (value,)):
                if child is None:
                    continue
                method = methods.get(type(child))
                if method is None:
                    method = self._method(type(child))
                if method is not _LEAF:
                    method(self, child)  # type: ignore[operator]
