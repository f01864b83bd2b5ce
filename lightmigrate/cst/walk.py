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
import json
import os
import re
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst


def _matcher_decoratable(kind: type) -> bool:
    """Whether ``kind`` is one of libcst's matcher-decorated visitors (which only libcst's own
    visit runs). A class can be one only once ``libcst.matchers`` is imported; lightmigrate's
    rules never import it (it costs a quarter of a second)."""
    matchers = sys.modules.get("libcst.matchers")
    return matchers is not None and issubclass(
        kind, (matchers.MatcherDecoratableVisitor, matchers.MatcherDecoratableTransformer))

_VISIT_FUNCTIONS = frozenset({"visit_required", "visit_optional", "visit_sentinel", "visit_sequence",
                              "visit_body_sequence", "visit_iterable", "visit_body_iterable"})
_ATTRIBUTE_HOOK = re.compile(r"^(visit|leave)_[A-Z][A-Za-z]*_[a-z_]+$")

# libcst class name -> (field, visit function) for the fields its _visit_and_replace_children
# visits, in order.
_ORDERS: Optional[Dict[str, Tuple[Tuple[str, str], ...]]] = None
# node type -> its (field, visit function) pairs (resolved through the MRO), or None when unknown.
_BY_TYPE: Dict[type, Optional[Tuple[Tuple[str, str], ...]]] = {}


def _read_orders() -> Dict[str, Tuple[Tuple[str, str], ...]]:
    """libcst class name -> ``(field, visit function)`` for each field its
    ``_visit_and_replace_children`` visits, in the order it visits them."""
    from libcst._nodes import base, expression, module, op, statement, whitespace

    orders: Dict[str, Tuple[Tuple[str, str], ...]] = {}
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
                    fields: Dict[str, str] = {}
                    for c in calls:  # ImportFrom.names: visit_required or visit_sequence, by its type
                        fields.setdefault(c.args[1].value, c.func.id)  # type: ignore[attr-defined]
                    orders[cls.name] = tuple(fields.items())
    return orders


# ``_read_orders()`` of a libcst version, written by scripts/field_orders.py.
SHIPPED_ORDERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "field_orders.json")


def installed_libcst() -> Optional[str]:
    """The version of the libcst installed here, as libcst records it (None if it does not)."""
    try:
        from libcst._version import __version__
    except ImportError:
        return None
    return str(__version__)


def _shipped_orders() -> Optional[Dict[str, Tuple[Tuple[str, str], ...]]]:
    """The table in ``SHIPPED_ORDERS`` when it was read from the libcst version installed here;
    else None."""
    try:
        with open(SHIPPED_ORDERS, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    version = installed_libcst()
    if version is None or data.get("libcst") != version:
        return None
    return {name: tuple((field, visit) for field, visit in pairs) for name, pairs in data["orders"].items()}


def field_orders() -> Dict[str, Tuple[Tuple[str, str], ...]]:
    """``_read_orders()``, once per process: from ``SHIPPED_ORDERS`` when that was read from
    the libcst installed here, else from libcst's source (0.08 s). (A run on several processes
    gets them in its main process while the survey's processes work: the processes that
    migrate, forked after, have them from the start.)"""
    global _ORDERS
    if _ORDERS is None:
        _ORDERS = _shipped_orders() or _read_orders()
    return _ORDERS


def _fields(kind: type) -> Optional[Tuple[Tuple[str, str], ...]]:
    """``(field, visit function)`` pairs of ``kind`` in libcst's visiting order (resolved
    through the MRO), or None when unknown (not a libcst node class)."""
    if kind in _BY_TYPE:
        return _BY_TYPE[kind]
    orders = field_orders()
    found = None
    for klass in kind.__mro__:
        if "_visit_and_replace_children" in vars(klass):
            found = orders.get(klass.__name__) if klass.__module__.startswith("libcst._nodes") else None
            break
    _BY_TYPE[kind] = found
    return found


_NAMES: Dict[type, Optional[Tuple[str, ...]]] = {}


def _order(kind: type) -> Optional[Tuple[str, ...]]:
    """The fields of ``kind`` in libcst's visiting order, or None when unknown."""
    found = _NAMES.get(kind, False)
    if found is False:
        fields = _fields(kind)
        found = _NAMES[kind] = None if fields is None else tuple(name for name, _ in fields)
    return found  # type: ignore[return-value]


_IS_NODE: Dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    found = _IS_NODE.get(kind)
    if found is None:
        found = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return found


_MAYBE = cst.MaybeSentinel


# Whether the fast paths agree with libcst's public API (``cst/compat.py``); None until asked.
_FAST: Optional[bool] = None


def _fast_ok() -> bool:
    if _FAST is None:
        from lightmigrate.cst.compat import fast_paths_ok

        fast_paths_ok()  # sets _FAST through use_fast_paths
    return bool(_FAST)


def use_fast_paths(ok: bool) -> None:
    """Called by ``compat.fast_paths_ok``: with False, ``children``, ``walk`` and ``transform``
    use libcst's public API (``node.children``, ``node.visit``) from now on."""
    global _FAST, _ORDERS
    if ok != _FAST:
        _ORDERS = None if ok else {}  # no orders: every node type goes through libcst
        _BY_TYPE.clear()
        _NAMES.clear()
    _FAST = ok


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """``node.children``, without rebuilding ``node``."""
    order = _NAMES.get(type(node), False)
    if order is False:
        order = _order(type(node))
    if order is None:
        return list(node.children)
    out: List[cst.CSTNode] = []
    for name in order:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend(value)  # the sequences libcst visits hold only nodes
        elif value is not None and kind is not _MAYBE:
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


def own_hooks(kind: type, base: type) -> List[str]:
    """The ``visit_*`` / ``leave_*`` names of ``kind`` that are not ``base``'s own: libcst's
    visitor classes define a do-nothing hook for every node type, so only the classes of
    ``kind``'s MRO outside libcst are searched (cheap: visitor classes defined inside
    functions are new classes on every call)."""
    names = {name for klass in kind.__mro__ if not klass.__module__.startswith("libcst")
             for name in vars(klass) if name.startswith(("visit_", "leave_"))}
    return sorted(name for name in names if getattr(kind, name) is not getattr(base, name, None))


class _Plan:
    """How to walk with one visitor class: whether libcst must do it, whether trivia can be
    skipped, and which node types have hooks."""

    def __init__(self, kind: type) -> None:
        plain_dispatch = kind.on_visit is cst.CSTVisitor.on_visit and kind.on_leave is cst.CSTVisitor.on_leave
        # libcst's CSTVisitor defines a do-nothing visit_X / leave_X (and attribute hooks) for
        # every node type; only the ones this class overrides count.
        own = own_hooks(kind, cst.CSTVisitor)
        self.hooked = frozenset(name[6:] for name in own if name[6:7].isupper())
        self.plain_dispatch = plain_dispatch
        self.fast = (
            isinstance(kind, type) and issubclass(kind, cst.CSTVisitor)
            and not issubclass(kind, cst.CSTTransformer) and not _matcher_decoratable(kind)
            and kind.on_visit_attribute is cst.CSTVisitor.on_visit_attribute
            and kind.on_leave_attribute is cst.CSTVisitor.on_leave_attribute
            and not any(_ATTRIBUTE_HOOK.match(name) for name in own)
        )
        self.skip_trivia = self.fast and plain_dispatch and not (self.hooked & _trivia_names())
        # With the plain dispatch, a subtree holding no hooked node type has nothing to see.
        self.prune = _hooked_mask(self.hooked) if self.fast and plain_dispatch else 0


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
    if not plan.fast or not _fast_ok():
        node.visit(visitor)
        return
    # With CSTVisitor's own dispatch, the visit_X / leave_X hooks are looked up once per node
    # type, here, inline (walks are many and often small: rules walk single arguments). A
    # visitor that overrides on_visit / on_leave gets those for every node.
    custom = not plan.plain_dispatch
    every = (visitor.on_visit, visitor.on_leave)
    hooked = plan.hooked
    hooks: Dict[type, Tuple] = {}
    skip_trivia = plan.skip_trivia
    prune = plan.prune
    masks = type_masks(node) if prune else _MASKS
    if prune and not masks[id(node)] & prune:
        return
    # An explicit stack (no recursion limit): (node, its children, index of the next child).
    stack: List[Tuple[cst.CSTNode, Sequence[cst.CSTNode], int]] = []
    current = node
    while True:
        if current is not None:  # entering ``current``
            kind = type(current)
            pair = hooks.get(kind)
            if pair is None:
                name = kind.__name__
                pair = hooks[kind] = every if custom else (
                    getattr(visitor, "visit_" + name) if name in hooked else None,
                    getattr(visitor, "leave_" + name) if name in hooked else None)
            enter = pair[0]
            if enter is None or (bool(enter(current)) if custom else enter(current) is not False):
                stack.append((current, children(current), 0))
            elif pair[1] is not None:
                pair[1](current)
            current = None
        if not stack:
            return
        parent, kids, i = stack[-1]
        if i < len(kids):
            stack[-1] = (parent, kids, i + 1)
            child = kids[i]
            if skip_trivia and _is_trivia(type(child)):
                continue
            if prune:
                mask = masks.get(id(child))
                if mask is None:
                    mask = mask_of(child)
                if not mask & prune:
                    continue
            current = child
            continue
        stack.pop()
        leave = hooks[type(parent)][1]
        if leave is not None:
            leave(parent)


def _preorder(node: cst.CSTNode, trivia: bool = False) -> List[cst.CSTNode]:
    """Every node of ``node``'s tree, in visiting order; the trivia (``_is_trivia``) only when
    ``trivia`` is true."""
    out: List[cst.CSTNode] = []
    stack: List[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        out.append(current)
        kids = children(current)
        if not trivia:
            kids = [k for k in kids if not _is_trivia(type(k))]
        stack.extend(reversed(kids))
    return out


# The trees searched so far (a rule often runs several searches over one module): id(root) ->
# (root, its non-trivia nodes in visiting order, by type name, each with its position). A root
# is kept alive while it is here, so its id stays its own; libcst trees are immutable, so what
# was found under a root stays true. Emptied between files (``forget_masks``).
_SEARCHED: Dict[int, Tuple[cst.CSTNode, Dict[str, List[Tuple[int, cst.CSTNode]]]]] = {}
_MAX_SEARCHED = 64


def _by_type(root: cst.CSTNode) -> Dict[str, List[Tuple[int, cst.CSTNode]]]:
    """The nodes of ``root``'s tree by type name (worked out on its first search)."""
    entry = _SEARCHED.get(id(root))
    if entry is not None and entry[0] is root:
        return entry[1]
    if len(_SEARCHED) >= _MAX_SEARCHED:
        _SEARCHED.clear()
    index: Dict[str, List[Tuple[int, cst.CSTNode]]] = {}
    for position, found in enumerate(_preorder(root)):
        index.setdefault(type(found).__name__, []).append((position, found))
    _SEARCHED[id(root)] = (root, index)
    return index


def find_all(node: cst.CSTNode, *types: type) -> List[cst.CSTNode]:
    """The nodes of ``node``'s tree (``node`` included) that are instances of one of ``types``
    (libcst node classes), in visiting order, without rebuilding the tree. The tree is walked
    once: its nodes are kept by type, and later searches of it look up the nodes of the types
    asked for."""
    names = frozenset(t.__name__ for t in types)
    if names & _trivia_names():  # (the index leaves whitespace and punctuation out)
        return [n for n in _preorder(node, trivia=True) if isinstance(n, types)]
    by_type = _by_type(node)
    lists = [part for name, part in by_type.items() if part and isinstance(part[0][1], types)]
    candidates = lists[0] if len(lists) == 1 else sorted(pair for part in lists for pair in part)
    return [found for _, found in candidates]


# --- transformers that skip subtrees they cannot change ----------------------------------------

_BITS: Dict[type, int] = {}


def _bit(kind: type) -> int:
    found = _BITS.get(kind)
    if found is None:
        found = _BITS[kind] = 1 << len(_BITS)
    return found


# id(node) -> mask, for every node of the trees in _ROOTS. Those roots are kept alive, so an
# id found here is the very node it was recorded for. Trees that a transform rebuilt share
# most of their nodes with the tree it was given: those are not walked again.
_MASKS: Dict[int, int] = {}
_ROOTS: List[cst.CSTNode] = []
_MAX_ROOTS = 1024
_MAX_MASKS = 2_000_000


def type_masks(root: cst.CSTNode) -> Dict[int, int]:
    """id(node) -> bitmask of the node types in its subtree (itself included), for every node
    under ``root`` (and maybe others: look up only nodes of ``root``'s tree)."""
    if id(root) not in _MASKS:
        if len(_ROOTS) >= _MAX_ROOTS or len(_MASKS) >= _MAX_MASKS:
            _MASKS.clear()  # start over: the roots go, and with them their nodes' ids
            _ROOTS.clear()
        _add_masks(root)
        _ROOTS.append(root)
    return _MASKS


def forget_masks() -> None:
    """Drop every mask and search index (and the trees they keep alive): the engine calls it
    between files."""
    _MASKS.clear()
    _ROOTS.clear()
    _SEARCHED.clear()


def known_mask(node: cst.CSTNode) -> Optional[int]:
    """``mask_of(node)`` when it is known already (``node`` is in a tree whose masks were worked
    out), else None: no work is done."""
    return _MASKS.get(id(node))


def type_bit(kind: type) -> int:
    """The bit of node type ``kind`` in the masks (compare with ``mask_of`` / ``known_mask``)."""
    return _bit(kind)


def mask_of(node: cst.CSTNode) -> int:
    """The bitmask (``_bit``) of the node types in ``node``'s subtree, itself included."""
    found = _MASKS.get(id(node))
    return found if found is not None else type_masks(node)[id(node)]


def _add_masks(root: cst.CSTNode) -> None:
    masks, bits = _MASKS, _BITS
    # Every node not masked yet, parents before children (breadth first), then the masks
    # from the last node back: a node's children are done before it.
    order: List[Tuple[cst.CSTNode, List[cst.CSTNode]]] = []
    todo = [root]
    for node in todo:  # the list grows as it is read
        if id(node) not in masks:
            kids = children(node)
            order.append((node, kids))
            todo.extend(kids)
    for node, kids in reversed(order):
        mask = bits.get(type(node))
        if mask is None:
            mask = _bit(type(node))
        for k in kids:
            mask |= masks[id(k)]
        masks[id(node)] = mask


class PrunedTransformer(cst.CSTTransformer):
    """A ``CSTTransformer`` that does not enter a subtree holding no node type it has a
    ``visit_X`` / ``leave_X`` hook for: nothing there could change, and libcst would rebuild
    all of it anyway. The output is the same; only the time differs.

    Subclasses that override ``on_visit`` / ``on_leave`` (they may act on any node) and
    subclasses with attribute hooks are never pruned."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        hooked = _prune_mask(type(self))
        if hooked and not mask_of(node) & hooked:
            return False
        return super().on_visit(node)


_PRUNE: Dict[type, int] = {}


def _prune_mask(kind: type) -> int:
    found = _PRUNE.get(kind)
    if found is None:
        own = own_hooks(kind, cst.CSTTransformer)
        custom = (kind.on_visit is not PrunedTransformer.on_visit
                  or kind.on_leave is not cst.CSTTransformer.on_leave
                  or kind.on_visit_attribute is not cst.CSTTransformer.on_visit_attribute
                  or kind.on_leave_attribute is not cst.CSTTransformer.on_leave_attribute
                  or any(_ATTRIBUTE_HOOK.match(name) for name in own))
        found = 0 if custom else _hooked_mask({name[6:] for name in own if name[6:7].isupper()})
        _PRUNE[kind] = found
    return found


def node_types_mask(types) -> int:
    """The ``_bit`` mask of the libcst node classes ``types`` and of their subclasses (compare
    with ``mask_of(node)``)."""
    found = 0
    for t in types:
        found |= _bit(t)
        for sub in _all_subclasses(t):
            found |= _bit(sub)
    return found


def _hooked_mask(names) -> int:
    """The bits of the node types called ``names`` and of their subclasses; 0 (prune nothing)
    when some name is not a libcst node type."""
    node_types = {getattr(cst, n) for n in names if isinstance(getattr(cst, n, None), type)}
    if len(node_types) != len(names):
        return 0
    return node_types_mask(node_types)


def _all_subclasses(kind: type) -> List[type]:
    out, todo = [], list(kind.__subclasses__())
    while todo:
        k = todo.pop()
        out.append(k)
        todo.extend(k.__subclasses__())
    return out


# --- transforms that rebuild only what changed ---------------------------------------------------

_REQUIRED, _OPTIONAL, _SENTINEL, _BODY = "visit_required", "visit_optional", "visit_sentinel", "visit_body_sequence"


class _TransformPlan:
    """How ``transform`` runs one transformer class: libcst does it (attribute hooks), or our
    walk does, calling ``on_visit`` / ``on_leave`` itself; with the plain dispatch of
    ``CSTTransformer`` the hooks are looked up once per node type, and with pruning
    (``PrunedTransformer``) a subtree holding no hooked node type is not entered."""

    def __init__(self, kind: type) -> None:
        own = own_hooks(kind, cst.CSTTransformer)
        self.ours = (
            issubclass(kind, cst.CSTTransformer) and not _matcher_decoratable(kind)
            and kind.on_visit_attribute is cst.CSTTransformer.on_visit_attribute
            and kind.on_leave_attribute is cst.CSTTransformer.on_leave_attribute
            and not any(_ATTRIBUTE_HOOK.match(name) for name in own)
        )
        self.plain = kind.on_visit in (cst.CSTTransformer.on_visit, PrunedTransformer.on_visit) \
            and kind.on_leave is cst.CSTTransformer.on_leave
        self.hooked = frozenset(name[6:] for name in own if name[6:7].isupper())
        self.prune = _prune_mask(kind) if self.plain and kind.on_visit is PrunedTransformer.on_visit else 0


_TRANSFORM_PLANS: Dict[type, _TransformPlan] = {}


def transform(node: cst.CSTNode, transformer: cst.CSTTransformer):
    """``node.visit(transformer)``, rebuilding only the nodes on the way to a change.

    libcst's visit builds a new copy of every node it passes; this one calls the same hooks
    in the same order, but a node none of whose children changed is handed to ``on_leave``
    as it was (``updated_node is original_node``, as libcst does for a node whose children it
    did not visit). The code of the result is the same. Transformers with attribute hooks
    (``visit_Call_func``...) are run by libcst."""
    kind = type(transformer)
    plan = _TRANSFORM_PLANS.get(kind)
    if plan is None:
        plan = _TRANSFORM_PLANS[kind] = _TransformPlan(kind)
    if not plan.ours or not _fast_ok():
        return node.visit(transformer)
    if plan.prune:
        type_masks(node)
    result = _Transform(transformer, plan).visit(node)
    if isinstance(node, cst.Module) and isinstance(result, cst.RemovalSentinel):
        return node.with_changes(body=(), header=(), footer=())
    return result


class _Transform:
    def __init__(self, transformer: cst.CSTTransformer, plan: _TransformPlan) -> None:
        self.t = transformer
        self.prune = plan.prune
        if plan.plain:
            hooks: Dict[type, Tuple] = {}
            hooked = plan.hooked

            def lookup(kind: type) -> Tuple:
                name = kind.__name__
                found = hooks[kind] = (
                    getattr(transformer, "visit_" + name) if name in hooked else None,
                    getattr(transformer, "leave_" + name) if name in hooked else None,
                )
                return found

            def on_visit(n: cst.CSTNode) -> bool:
                fn = (hooks.get(type(n)) or lookup(type(n)))[0]
                return fn is None or fn(n) is not False

            def on_leave(original: cst.CSTNode, updated: cst.CSTNode):
                fn = (hooks.get(type(original)) or lookup(type(original)))[1]
                return updated if fn is None else fn(original, updated)

            self.on_visit, self.on_leave = on_visit, on_leave
        else:
            self.on_visit, self.on_leave = transformer.on_visit, transformer.on_leave

    def visit(self, node: cst.CSTNode):
        if self.prune:
            mask = _MASKS.get(id(node))
            if mask is None:
                mask = mask_of(node)
            if not mask & self.prune:
                return node  # on_visit would say no, and no leave_X hook exists for it
        if self.on_visit(node):
            updated = self.children(node)
        else:
            updated = node
        result = self.on_leave(node, updated)
        if not isinstance(result, (cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel)):
            raise cst.CSTValidationError(
                "Expected a node of type CSTNode or a RemovalSentinel, "
                + f"but got a return value of {type(result).__name__}"
            )
        return result

    def children(self, node: cst.CSTNode) -> cst.CSTNode:
        fields = _fields(type(node))
        if fields is None:
            return node._visit_and_replace_children(self.t)  # not a libcst node class
        changes = None
        for name, how in fields:
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                new = self.sequence(value, how == _BODY)
                if new is value and kind is list:
                    new = tuple(value)  # libcst's rebuilt nodes hold tuples
            elif _is_node(kind):
                new = self.visit(value)
                if new is not value:
                    new = self.single(value, new, how)
            else:  # None or MaybeSentinel: nothing to visit
                continue
            if new is not value:
                if changes is None:
                    changes = {}
                changes[name] = new
        return node if changes is None else node.with_changes(**changes)

    @staticmethod
    def single(old: cst.CSTNode, new, how: str):
        if isinstance(new, cst.FlattenSentinel):
            raise TypeError(
                f"We got a FlattenSentinel while visiting a {type(old).__name__}. This "
                + "node's parent does not allow for it to be it to be replaced with a sequence."
            )
        if isinstance(new, cst.RemovalSentinel):
            if how == _OPTIONAL:
                return None
            if how == _SENTINEL:
                return cst.MaybeSentinel.DEFAULT
            raise TypeError(
                f"We got a RemovalSentinel while visiting a {type(old).__name__}. This "
                + "node's parent does not allow it to be removed."
            )
        return new

    def sequence(self, items, body: bool):
        out = None
        for i, child in enumerate(items):
            new = self.visit(child)
            if new is child and out is None:
                continue
            if out is None:
                out = list(items[:i])
            if isinstance(new, cst.RemovalSentinel):
                continue
            if isinstance(new, cst.FlattenSentinel):
                for part in new:
                    # a body drops what became removable (an emptied line) when it was not
                    if not (body and not child._is_removable() and part._is_removable()):
                        out.append(part)
            elif not (body and new is not child and not child._is_removable() and new._is_removable()):
                out.append(new)
        return items if out is None else tuple(out)


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
