"""Read-only traversal of a libcst tree, without rebuilding it.

``node.visit(visitor)`` in libcst rebuilds every node it passes, even for a ``CSTVisitor``
that changes nothing, and calls two attribute hooks per field: on a large module a read-only
visit costs about as much as a transform. The rules run many read-only visits (collect the
imports, find the Trainer calls, look for a name), so this module walks the tree by reading
the nodes' fields instead, in exactly the order libcst visits them, calling the same
``on_visit`` / ``on_leave`` hooks: the visitor sees the same nodes in the same order, and
``visit_X`` returning False skips the children as it does in libcst.

The order of each node type's fields is read once per process from libcst's own
``_visit_and_replace_children`` methods (the fields they visit, in the order they visit
them), so it follows the installed libcst. A visitor that defines attribute hooks
(``visit_Call_func`` and the like), or overrides ``on_visit_attribute``, is visited by libcst
itself.
"""

from __future__ import annotations

import ast
import inspect
import re
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst
import libcst.matchers as m

_VISIT_FUNCTIONS = frozenset({"visit_required", "visit_optional", "visit_sentinel", "visit_sequence",
                              "visit_body_sequence", "visit_iterable", "visit_body_iterable"})
_ATTRIBUTE_HOOK = re.compile(r"^(visit|leave)_[A-Z][A-Za-z]*_[a-z_]+$")

# libcst class name -> the fields its _visit_and_replace_children visits, in order.
_ORDERS: Optional[Dict[str, Tuple[str, ...]]] = None
# node type -> field order (resolved through the MRO), or None when unknown.
_BY_TYPE: Dict[type, Optional[Tuple[str, ...]]] = {}


def _read_orders() -> Dict[str, Tuple[str, ...]]:
    from libcst._nodes import base, expression, module, op, statement, whitespace

    orders: Dict[str, Tuple[str, ...]] = {}
    for source_module in (base, expression, module, op, statement, whitespace):
        tree = ast.parse(inspect.getsource(source_module))
        for cls in tree.body:
            if not isinstance(cls, ast.ClassDef):
                continue
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "_visit_and_replace_children":
                    calls = sorted(
                        (n for n in ast.walk(fn)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                         and n.func.id in _VISIT_FUNCTIONS and len(n.args) >= 2
                         and isinstance(n.args[1], ast.Constant) and isinstance(n.args[1].value, str)),
                        key=lambda n: (n.lineno, n.col_offset),
                    )
                    orders[cls.name] = tuple(dict.fromkeys(c.args[1].value for c in calls))  # type: ignore[attr-defined]
    return orders


def _order(kind: type) -> Optional[Tuple[str, ...]]:
    global _ORDERS
    if kind in _BY_TYPE:
        return _BY_TYPE[kind]
    if _ORDERS is None:
        _ORDERS = _read_orders()
    found = None
    for klass in kind.__mro__:
        if "_visit_and_replace_children" in vars(klass):
            found = _ORDERS.get(klass.__name__) if klass.__module__.startswith("libcst._nodes") else None
            break
    _BY_TYPE[kind] = found
    return found


_IS_NODE: Dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    found = _IS_NODE.get(kind)
    if found is None:
        found = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return found


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """``node.children``, without rebuilding ``node``."""
    order = _order(type(node))
    if order is None:
        return list(node.children)
    out: List[cst.CSTNode] = []
    for name in order:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(v for v in value if _is_node(type(v)))
        elif _is_node(kind):
            out.append(value)
    return out


# Node types that hold only whitespace, comments and punctuation: a visitor without hooks for
# any of them has nothing to see inside, so the walk does not enter them.
_TRIVIA_MODULES = ("libcst._nodes.op", "libcst._nodes.whitespace")
_BRACKETS = frozenset({"LeftParen", "RightParen", "LeftSquareBracket", "RightSquareBracket",
                       "LeftCurlyBrace", "RightCurlyBrace"})
_TRIVIA: Dict[type, bool] = {}


def _is_trivia(kind: type) -> bool:
    found = _TRIVIA.get(kind)
    if found is None:
        found = _TRIVIA[kind] = kind.__module__ in _TRIVIA_MODULES or kind.__name__ in _BRACKETS
    return found


_TRIVIA_NAMES: Optional[frozenset] = None


def _trivia_names() -> frozenset:
    global _TRIVIA_NAMES
    if _TRIVIA_NAMES is None:
        _TRIVIA_NAMES = _read_trivia_names()
    return _TRIVIA_NAMES


def _read_trivia_names() -> frozenset:
    from libcst._nodes import op, whitespace

    names = {n for mod in (op, whitespace) for n, o in vars(mod).items()
             if isinstance(o, type) and issubclass(o, cst.CSTNode)}
    return frozenset(names | _BRACKETS)


class _Plan:
    """How to walk with one visitor class: whether libcst must do it, whether trivia can be
    skipped, and which node types have hooks."""

    def __init__(self, kind: type) -> None:
        plain_dispatch = kind.on_visit is cst.CSTVisitor.on_visit and kind.on_leave is cst.CSTVisitor.on_leave
        # libcst's CSTVisitor defines a do-nothing visit_X / leave_X (and attribute hooks) for
        # every node type; only the ones this class overrides count.
        own = [name for name in dir(kind) if name.startswith(("visit_", "leave_"))
               and getattr(kind, name) is not getattr(cst.CSTVisitor, name, None)]
        self.hooked = frozenset(name[6:] for name in own if name[6:7].isupper())
        self.plain_dispatch = plain_dispatch
        self.fast = (
            isinstance(kind, type) and issubclass(kind, cst.CSTVisitor)
            and not issubclass(kind, (cst.CSTTransformer, m.MatcherDecoratableVisitor))
            and kind.on_visit_attribute is cst.CSTVisitor.on_visit_attribute
            and kind.on_leave_attribute is cst.CSTVisitor.on_leave_attribute
            and not any(_ATTRIBUTE_HOOK.match(name) for name in own)
        )
        self.skip_trivia = self.fast and plain_dispatch and not (self.hooked & _trivia_names())


_PLANS: Dict[type, _Plan] = {}


def _plan(visitor: cst.CSTVisitor) -> _Plan:
    kind = type(visitor)
    plan = _PLANS.get(kind)
    if plan is None:
        plan = _PLANS[kind] = _Plan(kind)
    return plan


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a read-only visitor, without rebuilding the tree."""
    plan = _plan(visitor)
    if not plan.fast:
        node.visit(visitor)
        return
    skip_trivia = plan.skip_trivia
    if plan.plain_dispatch:
        # CSTVisitor.on_visit / on_leave, with the visit_X / leave_X lookups cached per type.
        hooks: Dict[type, Tuple] = {}

        def lookup(kind: type) -> Tuple:
            found = hooks.get(kind)
            if found is None:
                name = kind.__name__
                found = hooks[kind] = (
                    getattr(visitor, "visit_" + name) if name in plan.hooked else None,
                    getattr(visitor, "leave_" + name) if name in plan.hooked else None,
                )
            return found

        def on_visit(n: cst.CSTNode) -> bool:
            fn = lookup(type(n))[0]
            return fn is None or fn(n) is not False

        def on_leave(n: cst.CSTNode) -> None:
            fn = lookup(type(n))[1]
            if fn is not None:
                fn(n)
    else:
        on_visit, on_leave = visitor.on_visit, visitor.on_leave  # type: ignore[assignment]
    # An explicit stack (no recursion limit): (node, its children, index of the next child).
    stack: List[Tuple[cst.CSTNode, Sequence[cst.CSTNode], int]] = []
    if not on_visit(node):
        on_leave(node)
        return
    stack.append((node, children(node), 0))
    while stack:
        current, kids, i = stack[-1]
        if i < len(kids):
            stack[-1] = (current, kids, i + 1)
            child = kids[i]
            if skip_trivia and _is_trivia(type(child)):
                continue
            if on_visit(child):
                stack.append((child, children(child), 0))
            else:
                on_leave(child)
            continue
        stack.pop()
        on_leave(current)


def _matcher_types(matcher) -> Optional[frozenset]:
    """The node type names ``matcher`` can match (libcst compares class names first), or
    None when that is not known (a predicate, a metadata matcher, an inverse...)."""
    if isinstance(matcher, m.OneOf):
        parts = [_matcher_types(option) for option in matcher.options]
        return None if any(p is None for p in parts) else frozenset().union(*parts)  # type: ignore[arg-type]
    name = type(matcher).__name__
    if (isinstance(matcher, m.BaseMatcherNode) and type(matcher).__module__.startswith("libcst.matchers")
            and isinstance(getattr(cst, name, None), type) and issubclass(getattr(cst, name), cst.CSTNode)):
        return frozenset({name})
    return None


def find_all(node: cst.CSTNode, matcher) -> List[cst.CSTNode]:
    """``libcst.matchers.findall(node, matcher)`` (no metadata): the matching nodes of the
    tree in visiting order, without rebuilding the tree."""
    types = _matcher_types(matcher)
    if types is None:  # a predicate or metadata matcher: libcst does it
        return list(m.findall(node, matcher))
    skip_trivia = not (types & _trivia_names())
    found: List[cst.CSTNode] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current).__name__ in types:
            if m.matches(current, matcher):
                found.append(current)
        kids = children(current)
        if skip_trivia:
            kids = [k for k in kids if not _is_trivia(type(k))]
        stack.extend(reversed(kids))
    return found


# --- transformers that skip subtrees they cannot change ----------------------------------------

_BITS: Dict[type, int] = {}


def _bit(kind: type) -> int:
    found = _BITS.get(kind)
    if found is None:
        found = _BITS[kind] = 1 << len(_BITS)
    return found


# The masks of the last few roots, with the roots themselves (kept alive, so their ids stay
# theirs): several transformers in a row often walk the same tree.
_MASK_CACHE: Dict[int, Tuple[cst.CSTNode, Dict[int, int]]] = {}
_MASK_CACHE_SIZE = 8


def type_masks(root: cst.CSTNode) -> Dict[int, int]:
    """id(node) -> bitmask of the node types in its subtree (itself included), for every node
    under ``root``."""
    hit = _MASK_CACHE.get(id(root))
    if hit is not None and hit[0] is root:
        return hit[1]
    masks = _type_masks(root)
    if len(_MASK_CACHE) >= _MASK_CACHE_SIZE:
        _MASK_CACHE.pop(next(iter(_MASK_CACHE)))
    _MASK_CACHE[id(root)] = (root, masks)
    return masks


def _type_masks(root: cst.CSTNode) -> Dict[int, int]:
    masks: Dict[int, int] = {}
    stack: List[Tuple[cst.CSTNode, Optional[List[cst.CSTNode]]]] = [(root, None)]
    while stack:
        node, kids = stack.pop()
        if kids is None:
            kids = children(node)
            stack.append((node, kids))
            stack.extend((k, None) for k in kids)
            continue
        mask = _bit(type(node))
        for k in kids:
            mask |= masks[id(k)]
        masks[id(node)] = mask
    return masks


class PrunedTransformer(cst.CSTTransformer):
    """A ``CSTTransformer`` that does not enter a subtree holding no node type it has a
    ``visit_X`` / ``leave_X`` hook for: nothing there could change, and libcst would rebuild
    all of it anyway. The output is the same; only the time differs.

    Subclasses that override ``on_visit`` / ``on_leave`` (they may act on any node) and
    subclasses with attribute hooks are never pruned."""


    def on_visit(self, node: cst.CSTNode) -> bool:
        hooked = _prune_mask(type(self))
        if hooked:
            # (root, masks) of every tree this transformer was asked to visit, kept alive so
            # no id in them is reused while it exists; a node in none of them is a new root.
            state = self.__dict__.setdefault("_lm_prune", [])
            mask = None
            for _, masks in state:
                mask = masks.get(id(node))
                if mask is not None:
                    break
            if mask is None:
                masks = type_masks(node)
                state.append((node, masks))
                mask = masks[id(node)]
            if not mask & hooked:
                return False
        return super().on_visit(node)


_PRUNE: Dict[type, int] = {}


def _prune_mask(kind: type) -> int:
    found = _PRUNE.get(kind)
    if found is None:
        own = [name for name in dir(kind) if name.startswith(("visit_", "leave_"))
               and getattr(kind, name) is not getattr(cst.CSTTransformer, name, None)]
        custom = (kind.on_visit is not PrunedTransformer.on_visit
                  or kind.on_leave is not cst.CSTTransformer.on_leave
                  or kind.on_visit_attribute is not cst.CSTTransformer.on_visit_attribute
                  or kind.on_leave_attribute is not cst.CSTTransformer.on_leave_attribute
                  or any(_ATTRIBUTE_HOOK.match(name) for name in own))
        found = 0
        if not custom:
            names = {name[6:] for name in own if name[6:7].isupper()}
            node_types = {getattr(cst, n) for n in names if isinstance(getattr(cst, n, None), type)}
            if len(node_types) == len(names):
                for t in node_types:
                    found |= _bit(t)
                    for sub in _all_subclasses(t):
                        found |= _bit(sub)
        _PRUNE[kind] = found
    return found


def _all_subclasses(kind: type) -> List[type]:
    out, todo = [], list(kind.__subclasses__())
    while todo:
        k = todo.pop()
        out.append(k)
        todo.extend(k.__subclasses__())
    return out


# --- did a transform change anything? -----------------------------------------------------------

_COMPARED: Dict[type, Tuple[str, ...]] = {}


def _compared_fields(kind: type) -> Tuple[str, ...]:
    found = _COMPARED.get(kind)
    if found is None:
        import dataclasses

        found = _COMPARED[kind] = tuple(f.name for f in dataclasses.fields(kind) if f.compare)
    return found


def same_tree(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """``a.deep_equals(b)``, faster: shared subtrees (a transform that left them alone keeps
    the very same objects) are not compared node by node."""
    stack: List[Tuple[object, object]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        kind = type(x)
        if kind is not type(y):
            return False
        if kind is tuple or kind is list:
            if len(x) != len(y):  # type: ignore[arg-type]
                return False
            stack.extend(zip(x, y))  # type: ignore[call-overload]
        elif _is_node(kind):
            for name in _compared_fields(kind):
                stack.append((getattr(x, name), getattr(y, name)))
        elif x != y:
            return False
    return True
