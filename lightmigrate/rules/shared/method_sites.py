"""Small ``ast`` and libcst helpers shared by the rules that act on the methods of Lightning
classes (LM305-LM309): the ``find`` side reads method definitions on Python's ``ast``, the
``fix`` side finds the class statements its sites name."""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from lightmigrate import MARKER_PREFIX
from lightmigrate.analysis.ast_nodes import ast_nodes
from lightmigrate.analysis.project import LIGHTNING_IMPORT_ROOTS
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.shared.hooksa_ast import index_source, methods  # noqa: F401 (shared with LM305-LM310)

FuncDef = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def positional(func: FuncDef) -> List[ast.arg]:
    """The positional parameters of ``func`` (positional-only ones first)."""
    return [*func.args.posonlyargs, *func.args.args]


def has_star_params(func: FuncDef) -> bool:
    """``*args``, ``**kwargs`` or keyword-only parameters (``cst.helpers.has_star_params``)."""
    args = func.args
    return args.vararg is not None or args.kwarg is not None or bool(args.kwonlyargs)


def calls_super(func: ast.AST, name: str) -> bool:
    """Whether ``func`` holds a call ``super().name(...)`` (``class_edit.calls_super``)."""
    for node in ast_nodes(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name:
            value = node.func.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
                return True
    return False


def class_line(ctx: RuleContext, module: cst.Module, cls: cst.ClassDef) -> int:
    """The line of the ``class`` keyword of ``cls`` in ``module`` (the ``lineno`` Python's ``ast``
    gives the class statement, so it matches the line a site carries)."""
    return ctx.position(module, cls)[0]


def lines_of(sites: Iterable) -> frozenset:
    """The lines of ``sites``."""
    return frozenset(s.line for s in sites)


def identifiers(nodes: Iterable[ast.AST]) -> FrozenSet[str]:
    """Every identifier written in ``nodes`` (names, attribute names, keywords, parameters,
    imported names, defined names): the ``Name`` nodes libcst would hold there, which is what
    ``cst.helpers.BodyFacts(...).uses`` looks for."""
    found: Set[str] = set()
    for top in nodes:
        for node in ast_nodes(top):
            found.update(_written(node))
    return frozenset(found)


def imports_lightning(tree: ast.Module) -> bool:
    """A top-level import whose module's first part is a Lightning root (a relative ``from
    .lightning import x`` counts, as it does in ``class_edit.imports_lightning``)."""
    return any(_imports_lightning(st) for st in tree.body)


def imports_lightning_anywhere(source: SourceFile) -> bool:
    """An import of a Lightning root anywhere in ``source`` (a script's ``main`` often imports
    inside the function). Read without parsing a text that does not hold the word."""
    return "ightning" in source.text and any(_imports_lightning(node) for node in source.nodes)


def _imports_lightning(node: ast.AST) -> bool:
    if type(node) is ast.Import:
        names = [alias.name for alias in node.names]  # type: ignore[attr-defined]
    elif type(node) is ast.ImportFrom and node.module is not None:  # type: ignore[attr-defined]
        names = [node.module]  # type: ignore[attr-defined]
    else:
        return False
    return any(n.split(".")[0] in LIGHTNING_IMPORT_ROOTS for n in names)


def statement_lines(tree: ast.Module, text: str) -> List[Tuple[ast.stmt, Optional[int]]]:
    """Every simple statement of ``tree`` in source order, each with the line of the libcst
    ``SimpleStatementLine`` that holds it, or None when it is in a one-line suite
    (``if x: f()``). A statement with only blanks before it on its line starts a statement
    line; one after a ``;`` belongs where the statement before it does; one after a ``:`` is in
    a suite. (A suite continued with a backslash onto the next line counts as a line.)"""
    lines = physical_lines(text)
    simple = [n for n in ast_nodes(tree) if isinstance(n, ast.stmt) and not _COMPOUND_FIELDS & set(n._fields)]
    simple.sort(key=lambda n: (n.lineno, n.col_offset))
    out: List[Tuple[ast.stmt, Optional[int]]] = []
    for node in simple:
        line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
        before = line.encode("utf-8")[:node.col_offset].decode("utf-8", "replace").strip()
        if not before:
            out.append((node, node.lineno))
        elif before.endswith(";") and out:
            out.append((node, out[-1][1]))
        else:
            out.append((node, None))
    return out


_COMPOUND_FIELDS = frozenset({"body", "cases"})  # the fields only compound statements have


def parents(tree: ast.AST) -> Dict[ast.AST, ast.AST]:
    """Each node of ``tree`` -> the node that holds it."""
    out: Dict[ast.AST, ast.AST] = {}
    for node in ast_nodes(tree):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


def marked_statement(node: ast.AST, up: Dict[ast.AST, ast.AST], in_suite: Set[ast.stmt]) -> Optional[ast.stmt]:
    """The statement ``marking.StatementMarker`` marks for a reason found at ``node``: the
    innermost statement around it, or, for one in a one-line suite (``in_suite``), the compound
    statement of the suite."""
    while node is not None and not isinstance(node, ast.stmt):
        node = up.get(node)
    while node is not None and node in in_suite:
        node = up.get(node)
        while node is not None and not isinstance(node, ast.stmt):
            node = up.get(node)
    return node


def first_line(stmt: ast.stmt) -> int:
    """The line a statement's code starts on (its first decorator, for a decorated one)."""
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno, *(d.lineno for d in decorators)]) if decorators else stmt.lineno


def has_marker_above(lines: Sequence[str], stmt: ast.stmt, code: str) -> bool:
    """Whether a ``# TODO(lightmigrate): CODE`` comment is among the comment and blank lines
    right above ``stmt`` (``lines``: the file's), indented no deeper than it: what
    ``add_marker`` finds in the statement's leading lines, so a new mark would change nothing.
    (A deeper comment may close the block before, which libcst does not count.)"""
    wanted = f"{MARKER_PREFIX} {code}"
    i = first_line(stmt) - 2
    while i >= 0:
        stripped = lines[i].strip()
        if stripped and not stripped.startswith("#"):
            return False
        if wanted in stripped and len(lines[i]) - len(lines[i].lstrip()) <= stmt.col_offset:
            return True
        i -= 1
    return False


def physical_lines(text: str) -> List[str]:
    """The lines of ``text`` as Python counts them (``\\n``, ``\\r\\n`` and ``\\r`` end a line)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def writes_identifier(node: ast.AST, name: str) -> bool:
    """Whether ``node`` itself writes the identifier ``name`` where libcst has a ``Name`` node:
    a name, an attribute's name, a parameter, a keyword, an imported or defined name."""
    return name in _written(node)


def _written(node: ast.AST) -> Sequence[str]:
    """The identifiers ``node`` itself writes (not those of the nodes it holds)."""
    if isinstance(node, ast.Name):
        return (node.id,)
    if isinstance(node, ast.Attribute):
        return (node.attr,)
    if isinstance(node, (ast.arg, ast.keyword)):
        return (node.arg,) if node.arg else ()
    if isinstance(node, ast.alias):
        return (*node.name.split("."), *((node.asname,) if node.asname else ()))
    if isinstance(node, ast.ImportFrom):
        return tuple(node.module.split(".")) if node.module else ()
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (node.name,)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return (node.name,) if node.name else ()
    if isinstance(node, ast.MatchMapping):
        return (node.rest,) if node.rest else ()
    if isinstance(node, ast.MatchClass):
        return tuple(node.kwd_attrs)
    return ()


def names_variable(nodes: Iterable[ast.AST], name: str) -> bool:
    """Whether one of ``nodes`` binds or reads the variable ``name`` (a name, a defined class or
    function, a parameter, an imported name, ``global``/``nonlocal``, an ``except``/``match``
    capture), not an attribute or keyword of that spelling: whether a new import of ``name``
    would clash with the file's own names."""
    for node in nodes:
        if isinstance(node, ast.alias):
            if (node.asname or node.name.split(".")[0]) == name:
                return True
        elif not isinstance(node, (ast.Attribute, ast.keyword, ast.ImportFrom, ast.MatchClass)) and \
                name in _written(node):
            return True
    return False
