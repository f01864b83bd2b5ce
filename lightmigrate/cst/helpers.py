"""libcst helpers shared by the rules: building code from templates, reading and editing
function signatures and bodies, scope checks, and TODO markers.

Generated nodes leave indentation and newlines unset, so libcst renders them with the
user's own indentation and line endings.
"""

from __future__ import annotations

import textwrap
from typing import Iterable, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from lightmigrate import MARKER_PREFIX
from lightmigrate.cst.codegen import code_for, known_text, module_code, remember_text
from lightmigrate.cst.walk import walk

Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]


# ---------------------------------------------------------------------------------------------
# Building code


def parse_statements(code: str) -> List[Statement]:
    """Statements from a snippet (dedented first)."""
    return list(cst.parse_module(textwrap.dedent(code).strip("\n") + "\n").body)


def parse_method(code: str) -> cst.FunctionDef:
    """A method from its source, as if written inside a class (indentation left to the module)."""
    wrapped = "class _Template:\n" + textwrap.indent(textwrap.dedent(code).strip("\n"), "    ") + "\n"
    cls = cst.parse_module(wrapped).body[0]
    assert isinstance(cls, cst.ClassDef)
    func = cls.body.body[0]
    assert isinstance(func, cst.FunctionDef)
    return func


def blank_lines(count: int) -> List[cst.EmptyLine]:
    return [cst.EmptyLine(indent=False) for _ in range(count)]


def leading_blank_count(node: cst.CSTNode) -> int:
    n = 0
    for line in getattr(node, "leading_lines", ()):
        if line.comment is not None:
            break
        n += 1
    return n


def insert_before(items: List, index: int, new_items: Sequence) -> None:
    """Insert statements before ``items[index]`` so they look like hand-written neighbours:
    the first takes the blank-line spacing the old item had, the rest and the old item get one."""
    if not new_items:
        return
    old = items[index]
    spacing = leading_blank_count(old)
    prepared = []
    for i, node in enumerate(new_items):
        lines = blank_lines(spacing if i == 0 else 1)
        prepared.append(node.with_changes(leading_lines=lines))
    if leading_blank_count(old) == 0:
        old = old.with_changes(leading_lines=[*blank_lines(1), *old.leading_lines])
    items[index:index + 1] = [*prepared, old]


def insert_top_level(body: List, at: int, new_items: Sequence) -> None:
    """Insert module-level statements (functions, classes) before ``body[at]``, each with the
    two blank lines PEP 8 puts around them, and at least two before the statement that follows."""
    if at < len(body) and leading_blank_count(body[at]) < 2:
        nxt = body[at]
        body[at] = nxt.with_changes(leading_lines=[*blank_lines(2 - leading_blank_count(nxt)), *nxt.leading_lines])
    body[at:at] = [node.with_changes(leading_lines=blank_lines(2)) for node in new_items]


# ---------------------------------------------------------------------------------------------
# Signatures


def positional_params(func: cst.FunctionDef) -> List[cst.Param]:
    return [*func.params.posonly_params, *func.params.params]


def param_names(func: cst.FunctionDef) -> List[str]:
    return [p.name.value for p in positional_params(func)]


def has_star_params(func: cst.FunctionDef) -> bool:
    p = func.params
    return isinstance(p.star_arg, cst.Param) or p.star_kwarg is not None or bool(p.kwonly_params)


def self_name(func: cst.FunctionDef) -> str:
    names = param_names(func)
    return names[0] if names else "self"


def keep_only_params(func: cst.FunctionDef, count: int) -> cst.FunctionDef:
    """Keep the first ``count`` positional parameters and drop the rest (no star params)."""
    kept = positional_params(func)[:count]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return func.with_changes(
        params=func.params.with_changes(posonly_params=(), params=kept, posonly_ind=cst.MaybeSentinel.DEFAULT)
    )


def set_param_default(func: cst.FunctionDef, name: str, default: str) -> cst.FunctionDef:
    """Give parameter ``name`` a default value when it has none."""
    new_params = []
    for p in func.params.params:
        if p.name.value == name and p.default is None:
            space = cst.SimpleWhitespace(" " if p.annotation is not None else "")  # `x: int = 0`, `x=0`
            p = p.with_changes(default=cst.parse_expression(default), equal=cst.AssignEqual(space, space))
        new_params.append(p)
    return func.with_changes(params=func.params.with_changes(params=new_params))


# ---------------------------------------------------------------------------------------------
# Bodies


def body_of(func: cst.FunctionDef) -> List[Statement]:
    body = func.body
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    return list(body.body)  # a one-line ``def f(): x`` has a SimpleStatementSuite


def is_name(node: object, value: str) -> bool:
    """``node`` is the name ``value``."""
    return isinstance(node, cst.Name) and node.value == value


def is_attribute(node: object, attr: str, receiver: Optional[str] = None) -> bool:
    """``node`` is ``X.attr`` (``receiver.attr`` when ``receiver`` is given)."""
    return (isinstance(node, cst.Attribute) and node.attr.value == attr
            and (receiver is None or is_name(node.value, receiver)))


def one_statement(stmt: object, kind: type) -> Optional[cst.CSTNode]:
    """The small statement of a line that holds one, of type ``kind`` (else None)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], kind):
        return stmt.body[0]
    return None


def is_docstring(stmt: Statement) -> bool:
    expr = one_statement(stmt, cst.Expr)
    return expr is not None and isinstance(expr.value, (cst.SimpleString, cst.ConcatenatedString))


def split_docstring(stmts: Sequence[Statement]) -> Tuple[List[Statement], List[Statement]]:
    if stmts and is_docstring(stmts[0]):
        return [stmts[0]], list(stmts[1:])
    return [], list(stmts)


def _as_statement_lines(stmts: Sequence) -> List[Statement]:
    """A one-line body holds small statements; wrap each as a line of its own."""
    out: List[Statement] = []
    for s in stmts:
        if isinstance(s, cst.BaseSmallStatement):
            out.append(cst.SimpleStatementLine(body=[s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)]))
        else:
            out.append(s)
    return out


def with_body(func: cst.FunctionDef, stmts: Sequence[Statement]) -> cst.FunctionDef:
    stmts = _as_statement_lines(stmts) or [cst.SimpleStatementLine(body=[cst.Pass()])]
    if isinstance(func.body, cst.IndentedBlock):
        return func.with_changes(body=func.body.with_changes(body=stmts))
    return func.with_changes(body=cst.IndentedBlock(body=stmts))


def prepend_statements(func: cst.FunctionDef, stmts: Sequence[Statement]) -> cst.FunctionDef:
    """Insert ``stmts`` at the start of the body, after a docstring."""
    doc, rest = split_docstring(_as_statement_lines(body_of(func)))
    return with_body(func, [*doc, *stmts, *rest])


def append_statements(func: cst.FunctionDef, stmts: Sequence[Statement]) -> cst.FunctionDef:
    return with_body(func, [*_as_statement_lines(body_of(func)), *stmts])


def drop_docstring(stmts: Sequence[Statement]) -> List[Statement]:
    return split_docstring(list(stmts))[1]


# ---------------------------------------------------------------------------------------------
# Scope questions


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.loaded: Set[str] = set()
        self.bound: Set[str] = set()
        self.has_return = False
        self.has_yield = False
        self.has_scope_decl = False
        self._depth = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.loaded.add(node.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.bound |= _target_names(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.bound |= _target_names(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bound |= _target_names(node.target)

    def visit_For(self, node: cst.For) -> None:
        self.bound |= _target_names(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self.bound |= _target_names(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bound |= _target_names(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            name = node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name):
                self.bound.add(name.value)

    def visit_Global(self, node: cst.Global) -> None:
        self.has_scope_decl = True

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.has_scope_decl = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bound.add(node.name.value)
        self._depth += 1

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bound.add(node.name.value)
        self._depth += 1

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._depth -= 1

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._depth += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self._depth -= 1

    def visit_Return(self, node: cst.Return) -> None:
        if self._depth == 0:
            self.has_return = True

    def visit_Yield(self, node: cst.Yield) -> None:
        if self._depth == 0:
            self.has_yield = True


def _target_names(node: cst.CSTNode) -> Set[str]:
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Tuple, cst.List)):
        out: Set[str] = set()
        for el in node.elements:
            out |= _target_names(el.value)
        return out
    if isinstance(node, cst.StarredElement):
        return _target_names(node.value)
    return set()


class BodyFacts:
    """Names a sequence of statements reads and binds, and whether it returns or yields."""

    def __init__(self, stmts: Iterable[cst.CSTNode]) -> None:
        v = _Names()
        for s in stmts:
            walk(s, v)
        self.loaded = v.loaded
        self.bound = v.bound
        self.has_return = v.has_return
        self.has_yield = v.has_yield
        self.has_scope_decl = v.has_scope_decl

    def uses(self, name: str) -> bool:
        return name in self.loaded or name in self.bound


def fresh_name(base: str, taken: Iterable[str]) -> str:
    taken = set(taken)
    if base not in taken:
        return base
    i = 1
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"


def super_call_attr(node: cst.CSTNode) -> Optional[str]:
    """``NAME`` when ``node`` is a call ``super().NAME(...)``."""
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and isinstance(node.func.value, cst.Call)
        and is_name(node.func.value.func, "super")
    ):
        return node.func.attr.value
    return None


# ---------------------------------------------------------------------------------------------
# Markers


def marker_text(code: str, why: str) -> str:
    return f"# {MARKER_PREFIX} {code} {why}"


def has_marker(node: Union[Statement, cst.FunctionDef], code: str) -> bool:
    return any(
        line.comment is not None and f"{MARKER_PREFIX} {code}" in line.comment.value
        for line in getattr(node, "leading_lines", ())
    )


def add_marker(node, code: str, why: str):
    """Put ``# TODO(lightmigrate): CODE why`` on the line above a statement (once)."""
    if has_marker(node, code):
        return node
    comment = cst.EmptyLine(comment=cst.Comment(marker_text(code, why)))
    return node.with_changes(leading_lines=[*node.leading_lines, comment])


def add_markers(node, code: str, whys: Iterable[str]):
    """Put one ``# TODO(lightmigrate): CODE why`` line above a statement for every ``why`` whose
    exact text is not there yet (several distinct markers of one code on one statement)."""
    present = {line.comment.value for line in node.leading_lines if line.comment is not None}
    new = []
    for why in whys:
        text = marker_text(code, why)
        if text not in present:
            present.add(text)
            new.append(cst.EmptyLine(comment=cst.Comment(text)))
    if not new:
        return node
    return node.with_changes(leading_lines=[*node.leading_lines, *new])


# ---------------------------------------------------------------------------------------------
# Imports


def code_of(node: cst.CSTNode) -> str:
    """The source code of ``node`` on its own (``cst.Module([]).code_for_node(node)``)."""
    return code_for(node)


def module_text(module: cst.Module, before: Optional[cst.Module] = None) -> str:
    """``module.code``, without generating it again for a module whose code is known (or the
    top-level statements it shares with ``before``, a module it was made from whose code is
    known)."""
    text = known_text(module)
    if text is not None:
        return text
    known = known_text(before) if before is not None else None
    text = module_code(module, before, known) if known is not None else module_code(module)
    remember_text(module, text)
    return text


def dotted_name(node: cst.CSTNode) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def _dotted_name(node: cst.CSTNode) -> str:
    return dotted_name(node) or ""


def _imported_modules(module: cst.Module) -> List[str]:
    """Dotted names of the modules imported anywhere in ``module``, in source order."""
    found: List[str] = []

    class V(cst.CSTVisitor):
        def visit_Import(self, node: cst.Import) -> None:
            for alias in node.names:
                found.append(_dotted_name(alias.name))

        def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
            if node.module is not None and not node.relative:
                found.append(_dotted_name(node.module))

    walk(module, V())
    return found


def lightning_root(module: cst.Module) -> str:
    """The Lightning import root a file uses: ``"lightning.pytorch"`` when it imports
    ``lightning`` (the unified package) and not ``pytorch_lightning``, else ``"pytorch_lightning"``
    (also the default for a file that imports neither)."""
    names = _imported_modules(module)
    old = any(n == "pytorch_lightning" or n.startswith("pytorch_lightning.") for n in names)
    new = any(n == "lightning" or n.startswith("lightning.") for n in names)
    return "lightning.pytorch" if new and not old else "pytorch_lightning"


def _binds_from(stmt: cst.CSTNode, from_: str, name: str) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if (
            isinstance(small, cst.ImportFrom)
            and small.module is not None
            and not small.relative
            and _dotted_name(small.module) == from_
            and not isinstance(small.names, cst.ImportStar)
            and any(_dotted_name(a.name) == name and a.asname is None for a in small.names)
        ):
            return True
    return False


def _is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def ensure_import(module: cst.Module, from_: str, name: str) -> cst.Module:
    """``module`` with a top-level ``from FROM_ import NAME``: unchanged when that import is
    already there, else the line is added after the last top-level import at the head of the
    file (after a docstring and ``__future__`` imports when there are no other imports)."""
    body = list(module.body)
    if any(_binds_from(stmt, from_, name) for stmt in body):
        return module
    # An unparenthesised ``from FROM_ import a, b`` line takes the name too.
    for i, stmt in enumerate(body):
        if _is_import_line(stmt) and len(stmt.body) == 1:
            imp = stmt.body[0]
            if (
                isinstance(imp, cst.ImportFrom) and imp.module is not None and not imp.relative
                and _dotted_name(imp.module) == from_ and not isinstance(imp.names, cst.ImportStar)
                and imp.lpar is None
            ):
                names = list(imp.names)
                names[-1] = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                names.append(cst.ImportAlias(name=cst.Name(name)))
                body[i] = stmt.with_changes(body=[imp.with_changes(names=names)])
                return module.with_changes(body=body)
    new = cst.parse_statement(f"from {from_} import {name}\n")
    # The contiguous head of the file: docstring, then imports (possibly interleaved with
    # try/if blocks we do not look into).
    index = 0
    if body and is_docstring(body[0]):
        index = 1
    last_import = None
    for i in range(index, len(body)):
        if _is_import_line(body[i]):
            last_import = i
        elif last_import is not None or not isinstance(body[i], cst.SimpleStatementLine):
            break
    at = index if last_import is None else last_import + 1
    if last_import is None and at < len(body):
        new = new.with_changes(leading_lines=[])
        body.insert(at, new)
        # keep a blank line between the new import and the code that follows it
        nxt = body[at + 1]
        if leading_blank_count(nxt) == 0:
            body[at + 1] = nxt.with_changes(leading_lines=[*blank_lines(1), *nxt.leading_lines])
    else:
        body.insert(at, new)
    return module.with_changes(body=body)
