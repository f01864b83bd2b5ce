"""Marking the statement that holds a node: a transformer that remembers why while it walks an
expression and puts ``# TODO(lightmigrate): CODE why`` above the enclosing simple statement (or
the header of the enclosing compound statement when the node is in its test)."""

from __future__ import annotations

from typing import Callable, Iterable, List, Optional

import libcst as cst

from lightmigrate.cst.walk import PrunedTransformer, mask_of, node_types_mask

from lightmigrate.cst.helpers import add_marker

Why = Callable[[cst.CSTNode], Optional[str]]


class StatementMarker(PrunedTransformer):
    """Calls ``why(node)`` on every node; the first reason found inside a statement marks it.

    ``types``: when given, ``why`` gives a reason only for nodes of these types, and a subtree
    holding none of them is not entered (it could not be marked)."""

    def __init__(self, code: str, why: Why, types: Optional[Iterable[type]] = None) -> None:
        self.code = code
        self.why = why
        self.pending: List[Optional[str]] = []
        self.marked = 0
        self.types = node_types_mask(types) if types is not None else 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self.pending.append(None)  # popped by on_leave, which runs whatever this returns
        if self.types and not mask_of(node) & self.types:
            return False
        if self.pending and self.pending[-1] is None:
            reason = self.why(node)
            if reason:
                self.pending[-1] = reason
        return True

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        if isinstance(original, cst.BaseCompoundStatement):
            # compound statements: only a reason found in the header (test, iterator...) counts,
            # which is whatever is left once the body's own statements took theirs
            reason = self.pending.pop()
            if reason:
                self.marked += 1
                return add_marker(updated, self.code, reason)
            return updated
        if isinstance(original, cst.SimpleStatementLine):
            reason = self.pending.pop()
            if reason:
                self.marked += 1
                return add_marker(updated, self.code, reason)
        return updated
