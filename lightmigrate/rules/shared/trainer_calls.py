"""What the Trainer rules (LM101, LM102) share: which names of a file refer to Lightning's
Trainer, literal values of expressions (on Python's ``ast`` for ``find``, on libcst for
``fix``), the arguments of an ``ast`` call in source order, source spellings, and the
positions of libcst nodes in the units ``ast`` uses (so ``fix`` finds the nodes of the sites).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

import libcst as cst

from lightmigrate.catalog import trainer_args as tam
from lightmigrate.cst.helpers import module_text
from lightmigrate.rules.base import RuleContext
from lightmigrate.analysis.ast_nodes import ast_nodes

NOT_LITERAL = tam.NOT_LITERAL
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def is_lightning_module_name(modname: str) -> bool:
    return modname.split(".")[0] in ("pytorch_lightning", "lightning")


Place = Tuple[int, int]  # (line, column) of an ast node


def statements(body: List[ast.stmt], scope: Place = (0, 0)) -> Iterator[Tuple[ast.stmt, Place]]:
    """Every statement of ``body`` and of the blocks inside it, in source order, with the place of
    the innermost function around it ((0, 0) outside functions). Cheaper than a walk over every
    node when only statements matter (imports, assignments)."""
    for stmt in body:
        yield stmt, scope
        inner = (stmt.lineno, stmt.col_offset) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) else scope
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if block:
                yield from statements(block, inner)
        for part in getattr(stmt, "handlers", ()) or getattr(stmt, "cases", ()):
            yield from statements(part.body, inner)


class LightningImports:
    """Which local names refer to Lightning's Trainer (``from pytorch_lightning import Trainer
    as T``) or to a Lightning package or module (``import pytorch_lightning as pl``), from the
    imports anywhere in a file."""

    def __init__(self, tree: ast.Module) -> None:
        self.trainer_names: Set[str] = set()
        self.package_names: Set[str] = set()
        for node, _ in statements(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if is_lightning_module_name(alias.name):
                        self.package_names.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                if node.module is None or node.level or not is_lightning_module_name(node.module):
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        continue
                    local = alias.asname or alias.name
                    if alias.name == "Trainer":
                        self.trainer_names.add(local)
                    else:
                        self.package_names.add(local)

    @classmethod
    def of(cls, source) -> "LightningImports":
        """Those of a ``SourceFile``, worked out once for the rules that read them."""
        return source.shared(cls, lambda s: cls(s.tree))

    def any(self) -> bool:
        """Whether the file imports anything from Lightning (the Trainer rules act only then)."""
        return bool(self.trainer_names or self.package_names)


def dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def last_name(node: ast.AST) -> str:
    """The name a call's function ends with: ``Trainer`` for ``pl.Trainer``, "" for others."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def cst_last_name(node: cst.CSTNode) -> str:
    """``last_name`` of a libcst expression."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


def is_lightning_trainer(func: ast.AST, imports: LightningImports) -> bool:
    """Whether a call of ``func`` makes a Lightning Trainer: ``Trainer`` imported from
    Lightning (under any alias), or ``<a Lightning package>.<...>.Trainer``."""
    if isinstance(func, ast.Name):
        return func.id in imports.trainer_names
    if isinstance(func, ast.Attribute) and func.attr == "Trainer":
        return (dotted(func.value) or "").split(".")[0] in imports.package_names
    return False


@dataclass(frozen=True)
class CallArg:
    """One argument of an ``ast`` call, as libcst lists them: in source order."""

    keyword: Optional[str]  # None for positional arguments and spreads
    star: str  # "", "*" or "**"
    value: ast.expr
    node: ast.AST  # the Starred, keyword or expression node


def call_args(call: ast.Call) -> List[CallArg]:
    """The arguments of ``call`` in the order they are written (``ast`` keeps keywords apart)."""
    out = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            out.append(CallArg(None, "*", a.value, a))
        else:
            out.append(CallArg(None, "", a, a))
    for k in call.keywords:
        out.append(CallArg(k.arg, "" if k.arg is not None else "**", k.value, k))
    if call.keywords and call.args:
        out.sort(key=lambda c: (c.node.lineno, c.node.col_offset))
    return out


class Text:
    """A file's text, to read source spellings and single-token strings by ``ast`` positions
    (line 1-based, column in UTF-8 bytes)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = _LINE_BREAK.split(text)
        self.ascii = text.isascii()

    def segment(self, node: ast.AST) -> str:
        """The source of ``node`` (without the parentheses around it), "" when unknown."""
        end_line = getattr(node, "end_lineno", None)
        if end_line is None:
            return ""
        first, last = node.lineno - 1, end_line - 1
        if first == last:
            return self._cut(first, node.col_offset, node.end_col_offset)
        parts = [self._cut(first, node.col_offset, None)]
        parts += [self.lines[i] for i in range(first + 1, last)]
        parts.append(self._cut(last, 0, node.end_col_offset))
        return "\n".join(parts)

    def _cut(self, line: int, start: int, end: Optional[int]) -> str:
        text = self.lines[line]
        if self.ascii:
            return text[start:end]
        data = text.encode("utf-8")
        return data[start:end].decode("utf-8", "replace")

    def segment_before(self, node: ast.AST) -> str:
        """The text of ``node``'s first line before it."""
        return self._cut(node.lineno - 1, 0, node.col_offset)

    def segment_before_attr(self, node: ast.Attribute) -> str:
        """The source of ``node`` (an attribute) up to its attribute name: its value, with the
        parentheses around it, and the dot."""
        seg = self.segment(node)
        return seg[:-len(node.attr)] if seg.endswith(node.attr) else seg

    def value_spelling(self, node: ast.Attribute) -> str:
        """The source of ``node.value`` as libcst spells it: with the parentheses around it
        (``(t)`` in ``(t).fit``), which ``ast`` leaves out of the value's own position."""
        value = node.value
        if (node.lineno, node.col_offset) == (value.lineno, value.col_offset):
            return self.segment(value)
        head = self.segment_before_attr(node)  # "(t) ." : the value ends at its last parenthesis
        return head[:head.rfind(")") + 1] or self.segment(value)

    def segment_with_decorators(self, node: ast.AST) -> str:
        """The lines of a function or class, its decorators included."""
        first = min([d.lineno for d in getattr(node, "decorator_list", ())] + [node.lineno])
        return "\n".join(self.lines[first - 1:node.end_lineno])

    def module_start(self, node: ast.ImportFrom) -> Tuple[int, int]:
        """Where the module name of ``from <module> import ...`` starts (line, byte column)."""
        seg = self.segment(node)
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(seg).readline) if t.type == tokenize.NAME]
        except (tokenize.TokenError, SyntaxError):
            return (0, -1)
        if len(tokens) < 2:
            return (0, -1)
        line, col = tokens[1].start  # the first name after ``from``
        if line == 1:
            return (node.lineno, node.col_offset + len(seg.split("\n", 1)[0][:col].encode("utf-8")))
        line = node.lineno + line - 1
        return (line, self.byte_col(line, col))

    def char_col(self, line: int, byte_col: int) -> int:
        if self.ascii:
            return byte_col
        return len(self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", "replace"))

    def byte_col(self, line: int, char_col: int) -> int:
        if self.ascii:
            return char_col
        return len(self.lines[line - 1][:char_col].encode("utf-8"))

    def one_string(self, node: ast.Constant) -> bool:
        """Whether the string constant ``node`` is written as one string literal (``ast`` joins
        ``"a" "b"``; libcst keeps the parts, and a joined string has no literal value there)."""
        seg = self.segment(node)
        strings = 0
        try:
            for tok in tokenize.generate_tokens(io.StringIO(seg).readline):
                if tok.type == tokenize.STRING:
                    strings += 1
                elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.COMMENT,
                                      tokenize.INDENT, tokenize.DEDENT):
                    return False
        except (tokenize.TokenError, SyntaxError):
            return False
        return strings == 1

    def string_literals(self, wanted: Tuple[str, ...]) -> Iterator[Tuple[int, int, str]]:
        """The string literals of the text (libcst's SimpleStrings: the string tokens, and the
        strings inside the replacement fields of f-strings) whose value is one of ``wanted``:
        (line, byte column, value)."""
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if tok.type != tokenize.STRING or not any(w in tok.string for w in wanted):
                    continue
                line, col = tok.start
                try:
                    value = ast.literal_eval(tok.string)
                except (ValueError, SyntaxError):  # an f-string
                    yield from self._nested_strings(tok.string, line, self.byte_col(line, col), wanted)
                    continue
                if isinstance(value, str) and value in wanted:
                    yield line, self.byte_col(line, col), value
        except (tokenize.TokenError, SyntaxError):
            return

    def _nested_strings(self, code: str, line: int, col: int, wanted) -> Iterator[Tuple[int, int, str]]:
        """The strings inside the replacement fields of the f-string ``code``, which starts at
        (``line``, byte ``col``) of the text."""
        try:
            tree = ast.parse(code, mode="eval")
        except SyntaxError:
            return
        parts = Text(code)
        literal_parts = {id(v) for n in ast_nodes(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in ast_nodes(tree):
            if (isinstance(node, ast.Constant) and id(node) not in literal_parts and isinstance(node.value, str)
                    and node.value in wanted and parts.one_string(node)):
                if node.lineno == 1:
                    yield line, col + node.col_offset, node.value
                else:
                    yield line + node.lineno - 1, node.col_offset, node.value


def literal(node: ast.AST, text: Text) -> Any:
    """The Python value of a literal expression, or ``NOT_LITERAL``: what :func:`cst_literal`
    gives for the same code."""
    if isinstance(node, ast.Constant):
        v = node.value
        if v is None or isinstance(v, bool):
            return v
        if type(v) in (int, float):
            return v
        if isinstance(v, str):
            return v if text.one_string(node) else NOT_LITERAL
        return NOT_LITERAL  # bytes, complex numbers, ``...``
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = literal(node.operand, text)
        return -inner if type(inner) in (int, float) else NOT_LITERAL
    if isinstance(node, ast.List):
        items = [NOT_LITERAL if isinstance(e, ast.Starred) else literal(e, text) for e in node.elts]
        return NOT_LITERAL if any(i is NOT_LITERAL for i in items) else items
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                return NOT_LITERAL
            key, value = literal(k, text), literal(v, text)
            if key is NOT_LITERAL or value is NOT_LITERAL:
                return NOT_LITERAL
            out[key] = value  # (a list as a key raises, as in cst_literal)
        return out
    return NOT_LITERAL


def cst_literal(node: cst.BaseExpression) -> Any:
    """The Python value of a literal libcst expression, or ``NOT_LITERAL``."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.Float):
        return float(node.evaluated_value)
    if isinstance(node, cst.SimpleString):
        v = node.evaluated_value
        return v if isinstance(v, str) else NOT_LITERAL
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = cst_literal(node.expression)
        return -inner if type(inner) in (int, float) else NOT_LITERAL
    if isinstance(node, cst.List):
        items = [cst_literal(e.value) if isinstance(e, cst.Element) else NOT_LITERAL for e in node.elements]
        return NOT_LITERAL if any(i is NOT_LITERAL for i in items) else items
    if isinstance(node, cst.Dict):
        out = {}
        for e in node.elements:
            if not isinstance(e, cst.DictElement):
                return NOT_LITERAL
            k, v = cst_literal(e.key), cst_literal(e.value)
            if k is NOT_LITERAL or v is NOT_LITERAL:
                return NOT_LITERAL
            out[k] = v
        return out
    return NOT_LITERAL


def hashable(value: Any) -> Any:
    """``value`` as site data: lists and dicts become tuples of their items."""
    if isinstance(value, list):
        return tuple(hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple((hashable(k), hashable(v)) for k, v in value.items())
    return value


class Locator:
    """Where libcst nodes of one module start, as ``ast`` counts: (line, UTF-8 byte column),
    the ``Site.line`` / ``Site.col`` of the sites ``find`` returned for the module's text."""

    def __init__(self, module: cst.Module, ctx: RuleContext) -> None:
        self.module = module
        self.ctx = ctx
        self._text: Optional[Text] = None

    def __call__(self, node: cst.CSTNode) -> Tuple[int, int]:
        line, col = self.ctx.position(self.module, node)
        if line == 0:
            return (0, -1)
        if self._text is None:
            self._text = Text(module_text(self.module))
        return (line, self._text.byte_col(line, col - 1))


def sites_by_place(sites, actions=None) -> Dict[Tuple[int, int, str], Any]:
    """(line, col, action) -> site, for the sites with one of ``actions`` (all when None)."""
    return {(s.line, s.col, s.action): s for s in sites if actions is None or s.action in actions}
