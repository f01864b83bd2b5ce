"""Small helpers shared by the rules LM002, LM301-LM304 for their ``find`` (on Python's
``ast``) and for matching their sites again on libcst in ``fix``."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import List, Optional, Tuple

from lightmigrate.rules.base import RuleContext, SourceFile


def index_source(source: SourceFile, ctx: RuleContext) -> None:
    """Add the file to the project index when the index has not seen it (as ``ensure_indexed``
    does on the libcst side)."""
    if not ctx.project.has_path(ctx.path):
        ctx.project.add_source(source.text, ctx.path, tree=source.tree)


def methods(cls: ast.ClassDef) -> List[ast.AST]:
    """The ``def`` and ``async def`` statements directly in the class body (libcst's
    ``FunctionDef`` covers both)."""
    return [item for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]


def positional_names(func: ast.AST) -> List[str]:
    """The names of the positional parameters (positional-only ones first), as
    ``cst.helpers.param_names``."""
    args = func.args  # type: ignore[attr-defined]
    return [a.arg for a in (*args.posonlyargs, *args.args)]


def positional_defaults(func: ast.AST) -> List[bool]:
    """For each positional parameter, whether it has a default."""
    args = func.args  # type: ignore[attr-defined]
    count = len(args.posonlyargs) + len(args.args)
    return [False] * (count - len(args.defaults)) + [True] * len(args.defaults)


def char_col(source: SourceFile, line: int, col: int) -> int:
    """The 0-based column, in characters, of the ``ast`` position (``line``, ``col``): ``ast``
    counts columns in UTF-8 bytes, ``RuleContext.position`` in characters. (A ``def`` or
    ``class`` statement starts after its indentation, so its two columns are always equal.)"""
    if source.text.isascii():
        return col
    text = re.split(r"\r\n|\r|\n", source.text)[line - 1]  # (str.splitlines also splits at \x0c, \u2028 ...)
    return len(text.encode("utf-8")[:col].decode("utf-8", errors="replace"))


def simple_string(source: SourceFile, node: ast.AST) -> Optional[str]:
    """The value of ``node`` when it is what libcst parses as a ``SimpleString`` holding a
    ``str``: one string literal, not an f-string, not bytes, not adjacent literals joined."""
    if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
        return None
    segment = ast.get_source_segment(source.text, node)
    if segment is None:
        return None
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(segment).readline)
                  if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError):
        return None
    return node.value if len(tokens) == 1 and tokens[0].type == tokenize.STRING else None


def returns_or_yields(func: ast.AST) -> Tuple[bool, bool]:
    """Whether the body of ``func`` returns, and whether it yields, itself (not in a nested
    function, class or lambda): ``BodyFacts(body_of(func)).has_return / has_yield``."""
    found = [False, False]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Return):
            found[0] = True
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            found[1] = True
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                visit(child)

    for stmt in func.body:  # type: ignore[attr-defined]
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            visit(stmt)
    return found[0], found[1]
