"""Private import helpers for the LM3xx rules: which Lightning import root a file uses, and
adding ``from X import name`` once.

The "trainer" branch adds ``lightning_root``/``ensure_import`` to ``cst_helpers``; these are
stand-ins with the same meaning until that lands (then this module can re-export those).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m


def _dotted(node: cst.BaseExpression) -> str:
    return cst.Module([]).code_for_node(node)


def lightning_root(module: cst.Module) -> str:
    """``lightning.pytorch`` when the file imports from ``lightning`` (and not from
    ``pytorch_lightning``), else ``pytorch_lightning``."""
    roots = set()
    for node in m.findall(module, m.Import() | m.ImportFrom()):
        if isinstance(node, cst.Import):
            names = [_dotted(a.name) for a in node.names]
        elif node.module is not None and not node.relative:
            names = [_dotted(node.module)]
        else:
            names = []
        for name in names:
            top = name.split(".")[0]
            if top in ("pytorch_lightning", "lightning"):
                roots.add(top)
    return "lightning.pytorch" if roots == {"lightning"} else "pytorch_lightning"


def has_import(module: cst.Module, from_: str, name: str) -> bool:
    for node in m.findall(module, m.ImportFrom()):
        if node.module is None or node.relative or _dotted(node.module) != from_:  # type: ignore[attr-defined]
            continue
        if isinstance(node.names, cst.ImportStar):  # type: ignore[attr-defined]
            return True
        if any(_dotted(a.name) == name and a.asname is None for a in node.names):  # type: ignore[attr-defined]
            return True
    return False


def ensure_import(module: cst.Module, from_: str, name: str) -> cst.Module:
    """``module`` with ``from from_ import name`` after its last top-level import (once)."""
    if has_import(module, from_, name):
        return module
    stmt = cst.parse_statement(f"from {from_} import {name}")
    body = list(module.body)
    last = -1
    for i, st in enumerate(body):
        if isinstance(st, cst.SimpleStatementLine) and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in st.body):
            last = i
        elif i == 0 and isinstance(st, cst.SimpleStatementLine) and m.matches(
                st, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())])):
            last = max(last, 0) if last >= 0 else last
    if last == -1:
        # after a module docstring and __future__ imports, else at the top
        insert_at = 1 if body and m.matches(body[0], m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())])) else 0
        body.insert(insert_at, stmt)
    else:
        body.insert(last + 1, stmt)
    return module.with_changes(body=body)
