"""Wrapping the lines a rule wrote to the project's line length, black style (issue 23).

A rule that rewrote a call keeps it on one line when it fits; when the statement's line would
exceed the project's line length (``lightmigrate.config.line_length``) the call gets one argument
per line, indented one level under the statement, with a trailing comma and the closing
parenthesis at the statement's indentation, as black writes it (a dict display likewise). Only the statements a rule
hands in change; the rest of the file stays as the user wrote it.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

_EMPTY = cst.Module(body=[])


def statement_value(stmt: cst.SimpleStatementLine) -> Optional[cst.BaseExpression]:
    """The call or dict display that is the whole value of this one-statement line
    (``x = f(...)``, ``return f(...)``, ``f(...)``, ``x = {...}``), or None."""
    if len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    value = getattr(small, "value", None) if isinstance(small, (cst.Assign, cst.AnnAssign, cst.Return, cst.Expr)) \
        else None
    return value if isinstance(value, (cst.Call, cst.Dict)) else None


def too_long(stmt: cst.SimpleStatementLine, indent: int, limit: int) -> bool:
    """Whether the one-line statement ``stmt``, at ``indent`` columns, is longer than ``limit``
    (False for a statement that already spans several lines: its layout is the user's)."""
    text = _EMPTY.code_for_node(stmt.with_changes(leading_lines=[])).rstrip("\n")
    return "\n" not in text and indent + len(text) > limit


def _line_breaks(unit: str):
    inner = cst.ParenthesizedWhitespace(first_line=cst.TrailingWhitespace(), empty_lines=[], indent=True,
                                        last_line=cst.SimpleWhitespace(unit))
    return inner, inner.with_changes(last_line=cst.SimpleWhitespace(""))


def _one_per_line(items, unit: str) -> list:
    inner, close = _line_breaks(unit)
    return [it.with_changes(comma=cst.Comma(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=inner if i < len(items) - 1 else close))
            for i, it in enumerate(items)]


def explode_call(call: cst.Call, unit: str = "    ") -> cst.Call:
    """``call`` with one argument per line (``unit``: one level of indentation), a trailing
    comma, and its closing parenthesis on a line of its own."""
    if not call.args:
        return call
    return call.with_changes(whitespace_before_args=_line_breaks(unit)[0], args=_one_per_line(call.args, unit))


def explode_dict(display: cst.Dict, unit: str = "    ") -> cst.Dict:
    """``display`` with one entry per line, as :func:`explode_call` does for arguments."""
    if not display.elements:
        return display
    return display.with_changes(lbrace=cst.LeftCurlyBrace(whitespace_after=_line_breaks(unit)[0]),
                                rbrace=cst.RightCurlyBrace(whitespace_before=cst.SimpleWhitespace("")),
                                elements=_one_per_line(display.elements, unit))


def wrap_statement(stmt: cst.SimpleStatementLine, indent: int, limit: int, unit: str = "    ") \
        -> cst.SimpleStatementLine:
    """``stmt`` (a one-line statement whose value is a call or dict display, at ``indent``
    columns) with that value exploded when the line is longer than ``limit``; else ``stmt``."""
    value = statement_value(stmt)
    if value is None or not too_long(stmt, indent, limit):
        return stmt
    new = explode_call(value, unit) if isinstance(value, cst.Call) else explode_dict(value, unit)  # type: ignore[arg-type]
    return stmt.with_changes(body=[stmt.body[0].with_changes(value=new)])
