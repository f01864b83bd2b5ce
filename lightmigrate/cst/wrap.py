"""Wrapping the lines a rule wrote to the project's line length, black style (issue 23).

A rule that rewrote a call keeps it on one line when it fits; when the statement's line would
exceed the project's line length (``lightmigrate.config.line_length``) the call gets one argument
per line, indented one level under the statement, with a trailing comma and the closing
parenthesis at the statement's indentation, as black writes it. Only the statements a rule
hands in change; the rest of the file stays as the user wrote it.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

_EMPTY = cst.Module(body=[])


def statement_call(stmt: cst.SimpleStatementLine) -> Optional[cst.Call]:
    """The call that is the whole value of this one-statement line (``x = f(...)``,
    ``return f(...)``, ``f(...)``), or None."""
    if len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    value = getattr(small, "value", None) if isinstance(small, (cst.Assign, cst.AnnAssign, cst.Return, cst.Expr)) \
        else None
    return value if isinstance(value, cst.Call) else None


def too_long(stmt: cst.SimpleStatementLine, indent: int, limit: int) -> bool:
    """Whether the one-line statement ``stmt``, at ``indent`` columns, is longer than ``limit``
    (False for a statement that already spans several lines: its layout is the user's)."""
    text = _EMPTY.code_for_node(stmt.with_changes(leading_lines=[])).rstrip("\n")
    return "\n" not in text and indent + len(text) > limit


def explode_call(call: cst.Call, unit: str = "    ") -> cst.Call:
    """``call`` with one argument per line (``unit``: one level of indentation), a trailing
    comma, and its closing parenthesis on a line of its own."""
    if not call.args:
        return call
    inner = cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
                                        last_line=cst.SimpleWhitespace(unit))
    close = inner.with_changes(last_line=cst.SimpleWhitespace(""))
    args = [a.with_changes(comma=cst.Comma(whitespace_before=cst.SimpleWhitespace(""),
                                           whitespace_after=inner if i < len(call.args) - 1 else close))
            for i, a in enumerate(call.args)]
    return call.with_changes(whitespace_before_args=inner, args=args)


def wrap_statement(stmt: cst.SimpleStatementLine, indent: int, limit: int, unit: str = "    ") \
        -> cst.SimpleStatementLine:
    """``stmt`` (a one-line statement whose value is a call, at ``indent`` columns) with that call
    exploded when the line is longer than ``limit``; else ``stmt`` as it is."""
    call = statement_call(stmt)
    if call is None or not call.args or not too_long(stmt, indent, limit):
        return stmt
    small = stmt.body[0]
    return stmt.with_changes(body=[small.with_changes(value=explode_call(call, unit))])
