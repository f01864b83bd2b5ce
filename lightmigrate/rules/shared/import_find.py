"""The ``find`` side of the import rules (LM090, LM201, LM202, LM203, LM210), on Python's ``ast``.

The libcst side (``import_rewrite.py``, the rules' transformers) puts a marker on the
statement around the node it marks and binds local names to the paths the file's imports give
them. This module answers the same questions on the ``ast`` tree and the text:

- :func:`statement_nodes` walks the tree and says, for every node, which statement a marker
  for it goes above (libcst's innermost ``SimpleStatementLine`` or compound statement: a
  statement in a one-line suite such as ``if x: y`` belongs to its compound statement) and
  whether the node is at module level (not inside an indented block);
- :class:`Comments` reads the comment lines right above a statement (its libcst leading
  lines) and the module header, so that a rule can leave out a marker that is already there;
- :func:`import_bindings` lists the file's imports as ``_Collect`` in ``import_rewrite`` does;
- :func:`dotted_uses` yields the outermost dotted chains (``a.b.c``) outside imports, the
  only chains the import rules look at.
"""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Set, Tuple

from lightmigrate.analysis.ast_nodes import ast_dotted, ast_nodes
from lightmigrate.catalog.imports import Entry
from lightmigrate.cst.helpers import marker_text
from lightmigrate.rules.base import Site
from lightmigrate.rules.shared.import_rewrite import caveat_why, marker_why, new_path, to_relative

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# Compound statements (libcst's ``BaseCompoundStatement``); a marker for a node in their
# header goes above them.
_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith, ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
             *((ast.Match,) if hasattr(ast, "Match") else ()))

# The fields of compound statements that hold a list of statements (a block or a suite).
_BODIES = ("body", "orelse", "finalbody")


def first_line(stmt: ast.stmt) -> int:
    """The line a statement starts on, its decorators included."""
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno, *(d.lineno for d in decorators)]) if decorators else stmt.lineno


class Lines:
    """The text's lines, as Python numbers them (``\\r\\n``, ``\\r`` and ``\\n`` break lines)."""

    def __init__(self, text: str) -> None:
        self.lines = _LINE_BREAK.split(text)

    def line(self, number: int) -> str:
        return self.lines[number - 1] if 0 < number <= len(self.lines) else ""

    def starts_line(self, node: ast.AST) -> bool:
        """Nothing but white space comes before ``node`` on its line (``col_offset`` counts
        UTF-8 bytes)."""
        line = self.line(node.lineno)  # type: ignore[attr-defined]
        col = node.col_offset  # type: ignore[attr-defined]
        if not line.isascii():
            line = line.encode("utf-8")[:col].decode("utf-8", "ignore")
        return not line[:col].strip()


@dataclass(frozen=True)
class Place:
    """Where a node sits: the statement a marker for it goes above (an ``except`` clause when
    ``statement_nodes`` is asked to count them as statements), and whether the node is bound
    at module level (no indented block around it)."""

    statement: ast.AST
    top: bool


def statement_nodes(tree: ast.Module, lines: Lines, handlers: bool = False) -> Iterator[Tuple[ast.AST, Place]]:
    """Every node of ``tree`` with its :class:`Place`, a statement before its nodes, in source
    order. With ``handlers``, an ``except`` clause (not ``except*``, which libcst keeps in its
    ``try``) is a statement of its own, as LM090 has it."""
    yield from _body(tree.body, None, True, lines, handlers)


def _body(stmts: List[ast.stmt], owner: Optional[ast.AST], top: bool, lines: Lines,
          handlers: bool) -> Iterator[Tuple[ast.AST, Place]]:
    previous: Optional[Tuple[ast.stmt, ast.AST]] = None  # (statement, its marking statement)
    for stmt in stmts:
        if lines.starts_line(stmt):
            marking: ast.AST = stmt
        elif previous is not None and previous[0].end_lineno == stmt.lineno:  # type: ignore[attr-defined]
            marking = previous[1]  # ``a; b``: one libcst line
        else:
            marking = owner if owner is not None else stmt  # ``if x: y``: the ``if``
        previous = (stmt, marking)
        yield from _statement(stmt, Place(marking, top), lines, handlers)


def _statement(stmt: ast.stmt, place: Place, lines: Lines, handlers: bool) -> Iterator[Tuple[ast.AST, Place]]:
    yield stmt, place
    blocks: List[Tuple[List[ast.stmt], Place]] = [(getattr(stmt, f), place) for f in _BODIES if getattr(stmt, f, None)]
    own = handlers and isinstance(stmt, ast.Try)
    for handler in getattr(stmt, "handlers", ()):
        here = Place(handler, place.top) if own else place
        for node in _expressions(handler):
            yield node, here
        blocks.append((handler.body, here))
    for case in getattr(stmt, "cases", ()):  # ``match``
        for node in _expressions(case):
            yield node, place
        blocks.append((case.body, place))
    for name, value in ast.iter_fields(stmt):
        if name in _BODIES or name in ("handlers", "cases"):
            continue
        for node in _walk_field(value):
            yield node, place
    for block, around in blocks:
        indented = bool(block) and lines.starts_line(block[0])
        yield from _body(block, around.statement, place.top and not indented, lines, handlers)


def _expressions(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``node`` outside its body (an ``except`` clause's type, a ``case`` pattern)."""
    for name, value in ast.iter_fields(node):
        if name != "body":
            yield from _walk_field(value)


def _walk_field(value) -> Iterator[ast.AST]:
    if isinstance(value, ast.AST):
        yield from ast_nodes(value)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, ast.AST):
                yield from ast_nodes(item)


def _elif(stmt: ast.If, lines: Lines) -> bool:
    """Whether the ``else`` of ``stmt`` is an ``elif``."""
    return len(stmt.orelse) == 1 and isinstance(stmt.orelse[0], ast.If) \
        and lines.line(stmt.orelse[0].lineno).lstrip().startswith("elif")


def _last_block(stmt: ast.AST, lines: Lines) -> Optional[List[ast.stmt]]:
    """The block that ends a compound statement (its last body, ``else``, ``finally``,
    ``except`` clause or ``case``), or None for a simple statement (an ``elif`` chain ends
    with the inner ``if``)."""
    if isinstance(stmt, ast.If) and _elif(stmt, lines):
        return _last_block(stmt.orelse[0], lines)
    for name in ("finalbody", "orelse"):
        if getattr(stmt, name, None):
            return getattr(stmt, name)
    if getattr(stmt, "handlers", None):
        return stmt.handlers[-1].body  # type: ignore[attr-defined]
    if getattr(stmt, "cases", None):
        return stmt.cases[-1].body  # type: ignore[attr-defined]
    return getattr(stmt, "body", None) if isinstance(stmt, (ast.stmt, ast.ExceptHandler)) else None


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t\f"))


class Comments:
    """The comment lines libcst keeps above a statement (its leading lines) and in the module
    header (above the first statement), read from the text.

    Between two statements there are only blank and comment lines. libcst gives the first of
    them to the blocks that end there (each block's footer, the innermost first, runs up to
    its last comment line indented at least as deep as the block) and the rest to the next
    statement."""

    def __init__(self, tree: ast.Module, lines: Lines) -> None:
        self.lines = lines
        nodes = ast_nodes(tree)  # (``ast.walk``'s nodes less the contexts and operators, faster)
        self.ends = sorted({n.end_lineno for n in nodes if isinstance(n, ast.stmt)})  # type: ignore[attr-defined]
        self.previous: Dict[int, ast.AST] = {}  # id(statement or except clause) -> the one before it
        for node in nodes:
            for name in (*_BODIES, "handlers"):
                items = getattr(node, name, None)
                if isinstance(items, list):
                    for before, after in zip(items, items[1:]):
                        self.previous[id(after)] = before
            handlers = getattr(node, "handlers", None)
            if handlers:  # the block before the first ``except`` is the ``try`` body
                self.previous[id(handlers[0])] = node
            if isinstance(node, ast.If) and _elif(node, lines):  # (libcst: an ``elif`` is a statement)
                self.previous[id(node.orelse[0])] = node
        first = tree.body[0] if tree.body else None
        self.first = first
        self.header: List[str] = self._run(first_line(first)) if first is not None else []

    def _run(self, line: int) -> List[str]:
        """The blank ("") and comment lines right above ``line``, top to bottom."""
        bound = bisect.bisect_left(self.ends, line)
        stop = self.ends[bound - 1] if bound else 0
        found: List[str] = []
        number = line - 1
        while number > stop:
            text = self.lines.line(number)
            stripped = text.lstrip(" \t\f")
            if stripped and not stripped.startswith("#"):
                break
            found.append(text)
            number -= 1
        found.reverse()
        return found

    def _ended(self, node: ast.AST) -> List[int]:
        """The indentation of every block that ends right before ``node``, innermost first."""
        before = self.previous.get(id(node))
        if before is None:
            return []
        if isinstance(node, ast.ExceptHandler) and not isinstance(before, ast.ExceptHandler):
            block: Optional[List[ast.stmt]] = before.body  # type: ignore[attr-defined]  # the ``try`` body
        elif isinstance(before, ast.If) and before.orelse and before.orelse[0] is node:
            block = before.body  # the ``if`` body before an ``elif``
        else:
            block = _last_block(before, self.lines)
        out: List[int] = []  # outermost first
        while block and self.lines.starts_line(block[0]):  # (a one-line suite has no footer)
            out.append(_indent(self.lines.line(block[0].lineno)))
            block = _last_block(block[-1], self.lines)
        out.reverse()
        return out

    def leading(self, node: ast.AST) -> List[str]:
        """The lines (blank "" or comment) libcst puts in the leading lines of ``node`` (a
        statement or an ``except`` clause); for the first statement, the header's."""
        if node is self.first:
            return self.header
        run = self._run(first_line(node))  # type: ignore[arg-type]
        for indent in self._ended(node):
            last = -1
            for i, text in enumerate(run):
                if text.strip() and _indent(text) >= indent:
                    last = i
            run = run[last + 1:]
        return run

    def above(self, stmt: ast.AST) -> List[str]:
        """The comments libcst puts in ``stmt``'s leading lines (none for the first statement:
        libcst puts those in the module header)."""
        if stmt is self.first:
            return []
        return [text.lstrip(" \t\f") for text in self.leading(stmt) if text.strip()]

    def has(self, stmt: ast.AST, comment: str) -> bool:
        """Whether the marker line ``comment`` is already above ``stmt`` or in the header."""
        return any(text.lstrip(" \t\f") == comment for text in self.header) or comment in self.above(stmt)


@dataclass
class Binding:
    """One import alias, as ``import_rewrite._Collect`` records it."""

    name: str  # the local name
    path: str  # the dotted path it stands for
    node: ast.alias
    statement: ast.stmt  # the Import / ImportFrom
    is_module_import: bool
    top: bool  # at module level (in no indented block)


class Imports:
    """The file's imports: every alias in order, and for each local name its binding (the
    first at module level, else the last), as ``import_rewrite._Collect`` has them."""

    def __init__(self) -> None:
        self.all: List[Binding] = []
        self.by_name: Dict[str, Binding] = {}
        self.explicit_modules: Set[str] = set()

    def _bind(self, b: Binding) -> None:
        self.all.append(b)
        current = self.by_name.get(b.name)
        if current is None or not current.top:
            self.by_name[b.name] = b

    def add(self, node: ast.stmt, top: bool) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                self.explicit_modules.add(a.name)
                if a.asname:
                    self._bind(Binding(a.asname, a.name, a, node, True, top))
                else:
                    head = a.name.split(".")[0]
                    b = Binding(head, head, a, node, True, top)
                    if head not in self.by_name:
                        self._bind(b)
                    else:
                        self.all.append(b)
        elif isinstance(node, ast.ImportFrom):
            if node.level or not node.module or any(a.name == "*" for a in node.names):
                return
            for a in node.names:
                self._bind(Binding(a.asname or a.name, f"{node.module}.{a.name}", a, node, False, top))
                self.explicit_modules.add(f"{node.module}.{a.name}")

    def paths(self) -> Dict[str, str]:
        """Local name -> the path of its binding (``ImportRewriter.original_paths``)."""
        return {name: b.path for name, b in self.by_name.items()}


def module_level(tree: ast.Module, lines: Lines) -> Set[int]:
    """The ids of the statements in no indented block: those of the module's body and of the
    one-line suites of its compound statements (``if x: import y``)."""
    found = {id(stmt) for stmt in tree.body}
    for stmt in tree.body:
        blocks = [getattr(stmt, f, None) or [] for f in _BODIES]
        blocks += [h.body for h in getattr(stmt, "handlers", ())] + [c.body for c in getattr(stmt, "cases", ())]
        for block in blocks:
            if block and not lines.starts_line(block[0]):
                found.update(id(s) for s in block)
    return found


def import_bindings(nodes: List[ast.AST], top: Set[int]) -> Imports:
    """The imports among ``nodes``, bound in source order (``top``: the module-level ids)."""
    imports = Imports()
    found = [n for n in nodes if type(n) is ast.Import or type(n) is ast.ImportFrom]
    found.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    for node in found:
        imports.add(node, id(node) in top)  # type: ignore[arg-type]
    return imports


def dotted_uses(nodes: List[ast.AST]) -> Tuple[List[Tuple[ast.Attribute, str]], Set[int]]:
    """The outermost dotted chains (``a.b.c``, not the ``a.b`` inside it; imports hold
    none in ``ast``) among ``nodes`` (a chain before the nodes inside it, as ``ast.walk``
    gives them), with their dotted names: the chains libcst's import transformers handle
    whole; and the ids of the nodes inside them (the ``a`` and ``a.b`` of ``a.b.c``)."""
    inner: Set[int] = set()
    uses = []
    for node in nodes:
        if type(node) is not ast.Attribute:
            continue
        if id(node) in inner:
            inner.add(id(node.value))  # type: ignore[attr-defined]
            continue
        path = ast_dotted(node)
        if path is None:
            continue
        inner.add(id(node.value))  # type: ignore[attr-defined]
        uses.append((node, path))
    return uses, inner  # type: ignore[return-value]


def _parameter_uses(nodes: List[ast.AST]) -> Set[int]:
    """The ids of the names, in a function's or lambda's body, that name one of its
    parameters (or of an enclosing function's)."""
    found: Set[int] = set()
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            names = {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs,
                                     *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]}
            if not names:
                continue
            body = node.body if isinstance(node.body, list) else [node.body]
            for stmt in body:
                for inner in ast_nodes(stmt):
                    if type(inner) is ast.Name and inner.id in names:  # type: ignore[attr-defined]
                        found.add(id(inner))
    return found


def called(nodes: List[ast.AST]) -> Set[int]:
    """The ids of the expressions the file calls (``f`` of ``f(...)``)."""
    return {id(node.func) for node in nodes if type(node) is ast.Call}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# The sites of the table rules (LM201, LM202): what ``ImportRewriter`` rewrites or marks


class FileView:
    """One file's tree as the import rules read it: its nodes, imports and dotted chains, and
    (worked out on first use, for a file with something to mark) the places of its nodes and
    its comments."""

    def __init__(self, tree: ast.Module, text: str, nodes: Optional[list] = None) -> None:
        self.tree = tree
        self.text = text
        self.lines = Lines(text)
        self.nodes = ast_nodes(tree) if nodes is None else nodes  # (breadth first: a node before those inside it)
        self.imports = import_bindings(self.nodes, module_level(tree, self.lines))
        self.paths = self.imports.paths()
        self.uses, self.in_chains = dotted_uses(self.nodes)
        self.calls = called(self.nodes)
        self._places: Optional[Dict[int, Place]] = None
        self._comments: Optional[Comments] = None

    @classmethod
    def of(cls, source) -> "FileView":
        """The view of a ``SourceFile``, built once for the rules that read it."""
        return source.shared(cls, lambda s: cls(s.tree, s.text, s.nodes))

    def place(self, node: ast.AST) -> Place:
        if self._places is None:
            self._places = {id(n): place for n, place in statement_nodes(self.tree, self.lines)}
        return self._places[id(node)]

    @property
    def comments(self) -> Comments:
        if self._comments is None:
            self._comments = Comments(self.tree, self.lines)
        return self._comments

    def resolve(self, path: str) -> Optional[str]:
        """The full path a dotted name ``local.rest`` stands for through the file's imports."""
        head, _, rest = path.partition(".")
        if head not in self.paths:
            return None
        return self.paths[head] + ("." + rest if rest else "")


# An ast-side check of a call's arguments: given the call and the callee's old path, None
# when the libcst fix leaves the call as it is, else ("rewrite", None) or ("mark", why).
CallCheck = Callable[[ast.Call, str, str], Optional[Tuple[str, Optional[str]]]]


def table_sites(view: FileView, code: str, handles: Callable[[Entry], bool],
                call_checks: Optional[Dict[str, CallCheck]] = None,
                non_call_whys: Optional[Dict[str, str]] = None) -> List[Site]:
    """The sites of ``ImportRewriter(code, module, handles, call_fixes, non_call_whys)``:
    ``target`` is the old full path the rewriter acts on (``only``), ``action`` "rewrite" or
    "mark" (``data`` the marker's text, left out when the statement already carries it)."""
    sites: List[Site] = []
    call_checks = call_checks or {}
    non_call_whys = non_call_whys or {}

    def mark(node: ast.AST, target: str, why: str) -> None:
        if not view.comments.has(view.place(node).statement, marker_text(code, why)):
            sites.append(Site(node.lineno, node.col_offset, target, "mark", why))  # type: ignore[attr-defined]

    def rewrite(node: ast.AST, target: str) -> None:
        sites.append(Site(node.lineno, node.col_offset, target, "rewrite"))  # type: ignore[attr-defined]

    # the imports (only those on a statement line of their own: libcst leaves the imports of a
    # one-line suite, ``if x: import y``, to the uses)
    for b in view.imports.all:
        full = b.node.name if b.is_module_import else b.path
        found = new_path(full)
        if found is None or not handles(found[1]):
            continue
        new, entry = found
        if new is None:
            if not isinstance(view.place(b.statement).statement, _COMPOUND):
                mark(b.statement, full, marker_why(full, entry))
        elif not (b.is_module_import and b.node.asname is None and new.split(".")[0] != full.split(".")[0]):
            rewrite(b.statement, full)
    # the dotted uses
    for node, path in view.uses:
        full = view.resolve(path)
        if full is None:
            continue
        why = non_call_whys.get(full.rsplit(".", 1)[-1])
        if why and id(node) not in view.calls and to_relative(full) is not None:
            mark(node, full, why)
        found = new_path(full)
        head_found = new_path(view.paths[path.partition(".")[0]])
        if found is None or not handles(found[1]) or (head_found is not None and head_found[1] is found[1]):
            continue  # (a use through a renamed import changes with the import)
        new, entry = found
        if new is None:
            mark(node, full, marker_why(full, entry))
            continue
        if entry.why:
            mark(node, full, caveat_why(full, entry))
        if new != full:
            rewrite(node, full)
    # the bare names (not a chain's head) of a marked kind, used other than by a call (a
    # function's parameter of that name is another variable)
    if non_call_whys:
        shadowed: Optional[Set[int]] = None
        for node in view.nodes:
            if type(node) is ast.Name and id(node) not in view.in_chains and id(node) not in view.calls:
                full = view.paths.get(node.id)  # type: ignore[attr-defined]
                if full is None or to_relative(full) is None:
                    continue
                why = non_call_whys.get(full.rsplit(".", 1)[-1])
                if not why:
                    continue
                if shadowed is None:  # (worked out once, for a file with such a name)
                    shadowed = _parameter_uses(view.nodes)
                if id(node) not in shadowed:
                    mark(node, full, why)
    # the calls whose arguments are fixed
    if call_checks:
        for node in view.nodes:
            if type(node) is not ast.Call:
                continue
            path = ast_dotted(node.func)  # type: ignore[attr-defined]
            old = view.resolve(path) if path is not None else None
            check = call_checks.get(old.rsplit(".", 1)[-1]) if old is not None else None
            if check is None:
                continue
            verdict = check(node, old, view.text)  # type: ignore[arg-type]
            if verdict is not None:
                action, why = verdict
                if why is not None:
                    mark(node, old, why)  # type: ignore[arg-type]
                else:
                    rewrite(node, old)  # type: ignore[arg-type]
    return sites
