"""Small questions about statements on Python's ``ast``, asked the way the libcst side of the
optimizer rules (LM004, LM006) answers them: a class's statements, a function's parameters,
the text of a statement with the comment lines above it, and whether it carries a marker.

libcst keeps the comment lines directly above a statement with the statement (its leading
lines), and writes a ``# TODO(lightmigrate)`` marker there; ``ast`` drops comments, so these
helpers read them from the text."""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Sequence, Tuple, Union

from lightmigrate import MARKER_PREFIX

Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
            ast.With, ast.AsyncWith, ast.Try) + ((ast.Match,) if hasattr(ast, "Match") else ())
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def text_lines(text: str) -> List[str]:
    """The lines of ``text`` as ``ast`` numbers them (line ``n`` is ``lines[n - 1]``)."""
    return _LINE_BREAK.split(text)


def class_items(lines: Sequence[str], node: ast.ClassDef) -> List[ast.stmt]:
    """The statements of a class body as libcst lists them: none for a body on the header's
    line (``class A: pass``, which libcst does not give an indented block)."""
    first = node.body[0]
    if not _starts_line(lines, first):
        return []
    return list(node.body)


def _starts_line(lines: Sequence[str], node: ast.stmt) -> bool:
    line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
    return not line[:node.col_offset].strip()


def last_def(items: Sequence[ast.stmt], name: str) -> Optional[Function]:
    """The last ``def name`` among ``items`` (the one Python keeps)."""
    found = None
    for item in items:
        if isinstance(item, FUNCTIONS) and item.name == name:
            found = item
    return found


def positional(func: Function) -> List[str]:
    """The names of the positional-only and ordinary parameters, in order."""
    return [a.arg for a in (*func.args.posonlyargs, *func.args.args)]


def has_star(func: Function) -> bool:
    """``*args``, ``**kwargs`` or keyword-only parameters."""
    a = func.args
    return a.vararg is not None or a.kwarg is not None or bool(a.kwonlyargs)


def self_name(func: Function) -> str:
    names = positional(func)
    return names[0] if names else "self"


def _head_line(node: ast.stmt) -> int:
    """The first line of a statement, its decorators included."""
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _leading_lines(lines: Sequence[str], node: ast.stmt) -> List[str]:
    """The comment lines (and blank lines) directly above ``node``: libcst's leading lines.
    After an indented block, the comment lines indented deeper than ``node`` that follow it
    belong to that block (its footer), not to ``node``."""
    out: List[str] = []
    i = _head_line(node) - 2
    while i >= 0:
        stripped = lines[i].strip()
        if stripped and not stripped.startswith("#"):
            break
        out.append(lines[i])
        i -= 1
    out.reverse()
    if i >= 0 and _indent(lines[i]) > node.col_offset:  # the line above ends a deeper block
        while out and (not out[0].strip() or _indent(out[0]) > node.col_offset):
            out.pop(0)
    return out


def has_marker(lines: Sequence[str], node: ast.stmt, code: str) -> bool:
    """Whether a ``# TODO(lightmigrate): CODE`` comment sits directly above ``node``."""
    needle = f"{MARKER_PREFIX} {code}"
    return any(needle in line for line in _leading_lines(lines, node))


def stmt_text(lines: Sequence[str], node: ast.stmt) -> str:
    """The text of a statement as libcst's ``code_of`` has it: the comment lines above it, its
    decorators, and the statement itself."""
    end = node.end_lineno or node.lineno
    return "\n".join([*_leading_lines(lines, node), *lines[_head_line(node) - 1:end]])


def segment(lines: Sequence[str], node: ast.AST) -> str:
    """The source text of an expression (``ast.get_source_segment`` on the split lines)."""
    first, last = node.lineno, node.end_lineno  # type: ignore[attr-defined]
    start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    if first == last:
        return lines[first - 1].encode()[start:end].decode()
    parts = [lines[first - 1].encode()[start:].decode(), *lines[first:last - 1],
             lines[last - 1].encode()[:end].decode()]
    return "\n".join(parts)


def in_statement_lines(lines: Sequence[str], body: Sequence[ast.stmt]) -> List[Tuple[ast.stmt, ast.stmt]]:
    """Every simple statement of ``body`` (at any depth, nested functions included) that libcst
    holds in a statement line of its own (not after a compound header, ``if x: y``), with the
    first statement of that line (``a = 1; b = 2``: ``a = 1`` for both), which carries the
    line's comments."""
    out: List[Tuple[ast.stmt, ast.stmt]] = []

    def visit(stmts: Sequence[ast.stmt]) -> None:
        line_head: Optional[ast.stmt] = None
        for st in stmts:
            if isinstance(st, COMPOUND):
                line_head = None
                for field in ("body", "orelse", "finalbody"):
                    visit(getattr(st, field, ()))
                for handler in getattr(st, "handlers", ()):
                    visit(handler.body)
                for case in getattr(st, "cases", ()):
                    visit(case.body)
                continue
            if line_head is None or st.lineno != line_head.end_lineno or _starts_line(lines, st):
                line_head = st
            if _starts_line(lines, line_head):
                out.append((st, line_head))

    visit(body)
    return out
