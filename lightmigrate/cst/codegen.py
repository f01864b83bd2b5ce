"""Code generation from libcst trees, cheaper than libcst's own entry points.

libcst generates code by calling each node's ``_codegen`` with a ``CodegenState``, and many
node types wrap their syntactic part in ``state.record_syntactic_position(...)``. In the plain
state that is a generator-based context manager that does nothing, and building it costs more
than most nodes' own work. ``module_code`` and ``code_for`` use a state whose
``record_syntactic_position`` returns one shared do-nothing context manager: the same tokens,
so the same code.

After a rule, ``module_code`` copies what the rule kept from the text before it: the top-level
statements it did not touch, and, in a top-level class or function it changed, the body
statements it did not touch (the code generated around those shows where they are). Only
the changed statements are generated.

``node_starts`` gives what ``PositionProvider`` gives as ``.start`` for every node (the
syntactic start where the node records one, else the start of its code with its whitespace),
from one generation pass that tracks only the line and column, without the metadata
machinery. Tests compare both with libcst's own results.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from lightmigrate.cst.compat import CodegenState, fast_paths_ok
from lightmigrate.cst.walk import children, known_mask, type_bit


class _Nothing:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


_NOTHING = _Nothing()


class _PlainState(CodegenState or object):  # type: ignore[misc]
    def record_syntactic_position(self, node, *, start_node=None, end_node=None):  # type: ignore[override]
        return _NOTHING


def _tokens(node: cst.CSTNode, module: Optional[cst.Module] = None) -> List[str]:
    """The tokens of ``node``'s code (``module``: whose indentation and newline to use; a
    default module's when None)."""
    if module is None:
        state = _PlainState(default_indent=" " * 4, default_newline="\n")
    else:
        state = _PlainState(default_indent=module.default_indent, default_newline=module.default_newline)
    node._codegen(state)
    return state.tokens


def fast_code_for(node: cst.CSTNode, module: Optional[cst.Module] = None) -> str:
    """``code_for`` through the private fast path (``compat`` checks it against the public one)."""
    return "".join(_tokens(node, module))


def code_for(node: cst.CSTNode, module: Optional[cst.Module] = None) -> str:
    """``module.code_for_node(node)`` (``module``: whose indentation and newline to use; a
    default module's when None)."""
    if not fast_paths_ok():
        return (module or cst.Module(body=[])).code_for_node(node)
    return "".join(_tokens(node, module))


# The code of top-level nodes generated so far, by identity (each held, so its id stays its
# own): a rule's transform keeps the statements it did not change, so after each rule only the
# changed statements are generated again. Dropped between files (``forget_code``).
_PIECES: Dict[int, Tuple[cst.CSTNode, str, str, str]] = {}
_MAX_PIECES = 100_000


def forget_code() -> None:
    """Drop the kept code and positions of top-level nodes (and the trees they keep alive)."""
    _PIECES.clear()
    _PIECE_STARTS.clear()


def _kept(cache: Dict[int, tuple], node: cst.CSTNode, module: cst.Module) -> Optional[tuple]:
    """What ``cache`` (``_PIECES`` or ``_PIECE_STARTS``) holds for ``node`` generated in
    ``module``'s style, or None."""
    hit = cache.get(id(node))
    if hit is not None and hit[0] is node and hit[1] == module.default_indent and hit[2] == module.default_newline:
        return hit
    return None


def _only_place(text: str, code: str) -> Optional[int]:
    """Where ``code`` occurs in ``text``, when it occurs there exactly once; else None."""
    at = text.find(code)
    return at if at >= 0 and text.find(code, at + 1) < 0 else None


def _keep(cache: Dict[int, tuple], node: cst.CSTNode, module: cst.Module, *found: object) -> None:
    """Make ``found`` what ``_kept(cache, node, module)`` gives back (after the node, indent
    and newline)."""
    if len(cache) >= _MAX_PIECES:
        cache.clear()
    cache[id(node)] = (node, module.default_indent, module.default_newline, *found)


def _piece(node: cst.CSTNode, module: cst.Module) -> str:
    """The code of a top-level node of ``module`` (header line, statement or footer line):
    at the top level the state is always the same (no indentation), so it is the node's own."""
    hit = _kept(_PIECES, node, module)
    if hit is not None:
        return hit[3]
    code = code_for(node, module)
    _keep(_PIECES, node, module, code)
    return code


def _pieces(module: cst.Module) -> tuple:
    return (*module.header, *module.body, *module.footer)


def module_code(module: cst.Module, before: Optional[cst.Module] = None, before_text: Optional[str] = None) -> str:
    """``module.code``, put together from the code of its top-level nodes. With ``before``
    (a module ``module`` was made from, e.g. by a rule) and ``before_text`` (its code), the
    top-level nodes the two share are copied from ``before_text`` instead of generated, and so
    are the body statements shared by a top-level class or function and the one it was made
    from."""
    if not module.has_trailing_newline:  # libcst then drops the last token: do it its way
        return code_for(module, module)
    pieces = _pieces(module)
    if not pieces:
        return module.default_newline
    if before is not None and before_text is not None:
        spliced = _splice(module, pieces, before, before_text)
        if spliced is not None:
            return spliced
    return "".join(_piece(node, module) for node in pieces)


class _Bounds:
    """Where the top-level nodes of ``before`` start in ``text`` (its code), found only as far
    as asked. Top-level nodes' codes follow one another, so a node whose code is found exactly
    once in the text starts there; otherwise a start is the end of the node before."""

    def __init__(self, before: cst.Module, pieces: tuple, text: str) -> None:
        self.before, self.pieces, self.text = before, pieces, text
        self.starts: Dict[int, int] = {0: 0, len(pieces): len(text)}  # piece index -> offset

    def _locate(self, k: int) -> bool:
        try:
            code = _piece(self.pieces[k], self.before)
        except RecursionError:  # too deep to generate: the other side may tell
            return False
        at = _only_place(self.text, code)
        if at is None:
            return False  # not there, or not only there: it says nothing
        self.starts[k], self.starts[k + 1] = at, at + len(code)
        return True

    def _cost(self, k: int) -> int:
        """How much generating piece ``k``'s code may cost, roughly: nothing when it is known,
        little for a simple statement line, more for a compound statement."""
        node = self.pieces[k]
        return 0 if _kept(_PIECES, node, self.before) is not None else 1 if isinstance(node, cst.SimpleStatementLine) else 2

    def _sides(self, k: int, avoid: int = -1) -> Optional[int]:
        """The start of piece ``k`` found from the code of the piece before it or its own
        (cheaper first; never ``avoid``'s), or None."""
        for i in sorted((i for i in (k - 1, k) if i != avoid), key=self._cost):
            if self._locate(i):
                return self.starts[k]
        return None

    def start(self, k: int) -> int:
        if k in self.starts:
            return self.starts[k]
        found = self._sides(k)
        if found is not None:
            return found
        # add up the codes from the nearest start known before
        known = max(i for i in self.starts if i < k)
        offset = self.starts[known]
        for i in range(known, k):
            offset += len(_piece(self.pieces[i], self.before))
            self.starts[i + 1] = offset
        return offset

    def code_of(self, k: int) -> Optional[str]:
        """Piece ``k``'s code, cut from the text when the pieces around it say where it is
        (without generating it), else None."""
        start = self.starts[k] if k in self.starts else self._sides(k, avoid=k)
        end = self.starts[k + 1] if k + 1 in self.starts else self._sides(k + 1, avoid=k)
        return None if start is None or end is None or end < start else self.text[start:end]


def _splice(module: cst.Module, pieces: tuple, before: cst.Module, before_text: str) -> Optional[str]:
    if not before.has_trailing_newline or (before.default_indent, before.default_newline) != \
            (module.default_indent, module.default_newline):
        return None
    old = _pieces(before)
    where = {id(node): k for k, node in enumerate(old)}  # both trees are alive: ids are their own
    bounds = _Bounds(before, old, before_text)
    out: List[str] = []
    j = 0
    after = 0  # the old piece after the last one kept: what a changed piece may have been
    while j < len(pieces):
        first = where.get(id(pieces[j]))
        if first is None or old[first] is not pieces[j]:
            out.append(_changed_piece(pieces[j], module, old, after, bounds))
            if after < len(old) and type(old[after]) is type(pieces[j]):
                after += 1
            j += 1
            continue
        last = first  # the longest run of nodes kept in their order, copied in one slice
        while j + 1 < len(pieces) and last + 1 < len(old) and pieces[j + 1] is old[last + 1]:
            last += 1
            j += 1
        out.append(before_text[bounds.start(first):bounds.start(last + 1)])
        after = last + 1
        j += 1
    return "".join(out)


_BLOCK_OWNERS = (cst.ClassDef, cst.FunctionDef)


def _changed_piece(node: cst.CSTNode, module: cst.Module, old: tuple, k: int, bounds: _Bounds) -> str:
    """The code of ``node``, a top-level piece that is not one of ``old``: when it is a class or
    function made from ``old[k]`` by changing some statements of its body, the statements the
    two share are copied from ``old[k]``'s code; otherwise (or when that code is not known
    without generating it) it is generated."""
    if _kept(_PIECES, node, module) is None and k < len(old) and type(old[k]) is type(node) \
            and isinstance(node, _BLOCK_OWNERS):
        try:
            old_code = bounds.code_of(k)
            code = None if old_code is None else _block_code(node, old[k], old_code, module)
        except RecursionError:  # some statement too deep to generate: as a whole, or not at all
            code = None
        if code is not None:
            _keep(_PIECES, node, module, code)
            return code
    return _piece(node, module)


class _Copy:
    """Stands in for a run of statements of an indented block while the code around it is
    generated: it writes their code, copied from the text they came from."""

    __slots__ = ("code",)

    def __init__(self, code: str) -> None:
        self.code = code

    def _codegen(self, state: CodegenState) -> None:
        state.add_token(self.code)


class _Gap:
    """Stands in for a run of statements of an indented block while the code around it is
    generated: it records where in the tokens their code would be."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at = -1

    def _codegen(self, state: CodegenState) -> None:
        self.at = len(state.tokens)


def _shared_runs(new_body: Sequence[cst.CSTNode], old_body: Sequence[cst.CSTNode]) -> List[Tuple[int, int, int]]:
    """``(start in new_body, start in old_body, length)`` of the runs of statements the two
    share in the same order, each old statement in one run at most, and no two runs next to
    each other in ``old_body`` (the code between two runs is what shows where one ends)."""
    where = {id(s): k for k, s in enumerate(old_body)}
    runs: List[Tuple[int, int, int]] = []
    used = set()
    i = 0
    while i < len(new_body):
        k = where.get(id(new_body[i]))
        if k is None or old_body[k] is not new_body[i] or k in used:
            i += 1
            continue
        n = 1
        while i + n < len(new_body) and k + n < len(old_body) and new_body[i + n] is old_body[k + n] \
                and k + n not in used:
            n += 1
        used.update(range(k, k + n))
        runs.append((i, k, n))
        i += n
    ends = {k + n for _, k, n in runs}
    return [r for r in runs if r[1] not in ends]


def _block_code(new: cst.CSTNode, old: cst.CSTNode, old_code: str, module: cst.Module) -> Optional[str]:
    """The code of ``new``, a top-level class or function made from ``old`` (whose code is
    ``old_code``): the runs of body statements the two share are copied from ``old_code``, the
    rest is generated. The code around the runs in ``old`` (generated, with the statements of
    the runs left out) must match ``old_code`` exactly, and tell where each run is; else None."""
    new_block, old_block = new.body, old.body  # type: ignore[attr-defined]
    if not isinstance(new_block, cst.IndentedBlock) or not isinstance(old_block, cst.IndentedBlock) \
            or new_block.indent != old_block.indent:
        return None
    runs = _shared_runs(new_block.body, old_block.body)
    if not runs:
        return None
    # ``old`` with a gap for each run: the code around the gaps, and where the runs are
    by_old = {k: n for _, k, n in runs}
    skeleton: list = []
    gaps: List[_Gap] = []
    k = 0
    while k < len(old_block.body):
        if k in by_old:
            gaps.append(_Gap())
            skeleton.append(gaps[-1])
            k += by_old[k]
        else:
            skeleton.append(old_block.body[k])
            k += 1
    tokens = _tokens(old.with_changes(body=old_block.with_changes(body=tuple(skeleton))), module)
    cuts = [0, *(g.at for g in gaps), len(tokens)]
    around = ["".join(tokens[a:b]) for a, b in zip(cuts, cuts[1:])]  # len(gaps) + 1 pieces
    if not old_code.startswith(around[0]) or not old_code.endswith(around[-1]):
        return None
    copied: List[str] = []
    at = len(around[0])
    for i in range(1, len(around)):
        if i == len(around) - 1:
            end = len(old_code) - len(around[-1])
        else:
            found = _only_place(old_code, around[i])
            if found is None or not around[i]:
                return None
            end = found
        if end < at:
            return None
        copied.append(old_code[at:end])
        at = end + len(around[i])
    if at != len(old_code):
        return None
    # ``new`` with the runs copied
    by_new = {i: (n, code) for (i, _, n), code in zip(sorted(runs, key=lambda r: r[1]), copied)}
    body: list = []
    i = 0
    while i < len(new_block.body):
        if i in by_new:
            n, code = by_new[i]
            body.append(_Copy(code))
            i += n
        else:
            body.append(new_block.body[i])
            i += 1
    return code_for(new.with_changes(body=new_block.with_changes(body=tuple(body))), module)


# --- positions ----------------------------------------------------------------------------------


class _Syntactic:
    """The ``with`` block of one ``record_syntactic_position`` call: the node starts where the
    block starts, or where ``start_node`` (a child generated inside it) starts."""

    __slots__ = ("state", "node", "start_node", "start")

    def __init__(self, state: "_PositionState", node: cst.CSTNode, start_node: Optional[cst.CSTNode]) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)
        state = self.state
        if self.node is state.target:  # its start is known now, or once start_node's is
            if self.start_node is None:
                state.starts[id(self.node)] = self.start
                state.found()
            else:
                state.aliases.append((self.node, self.start_node))
                state.target = self.start_node

    def __exit__(self, kind: object, *exc: object) -> bool:
        if kind is not None:  # on the way out of an early stop: the block did not finish
            return False
        starts = self.state.starts
        start = starts[id(self.start_node)] if self.start_node is not None else self.start
        starts[id(self.node)] = start
        return False


class _Found(Exception):
    """Raised by a ``_PositionState`` with a ``target`` at the end of the line where the
    target's start became known."""


class _PositionState(CodegenState or object):  # type: ignore[misc]
    """Generates nothing useful but the line (1-based) and column (0-based) where each node
    starts. ``\\r\\n``, ``\\r`` and ``\\n`` each end a line, as in libcst's position provider."""

    def __init__(self, default_indent: str, default_newline: str) -> None:
        super().__init__(default_indent=default_indent, default_newline=default_newline)
        self.line = 1
        self.column = 0
        self.starts: Dict[int, Tuple[int, int]] = {}  # id(node) -> start (the tree is alive meanwhile)
        self.stack: List[Tuple[int, int]] = []
        # With a target: stop (raise _Found) at the end of the line where its start is known
        self.target: Optional[cst.CSTNode] = None
        self.aliases: List[Tuple[cst.CSTNode, cst.CSTNode]] = []  # (node, the node it starts with)
        self.stop_line: Optional[int] = None

    def found(self) -> None:
        self.target = None
        self.stop_line = self.line

    def _advance(self, value: str) -> None:
        if "\n" not in value and "\r" not in value:
            self.column += len(value)
            return
        # count line ends, a "\r\n" pair being one
        ends = value.count("\n") + value.count("\r") - value.count("\r\n")
        self.line += ends
        last = max(value.rfind("\n"), value.rfind("\r"))
        self.column = len(value) - last - 1
        if self.stop_line is not None and self.line > self.stop_line:
            raise _Found

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.tokens.append(token)
            self._advance(token)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.stack.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.stack.pop()
        key = id(node)
        if key not in self.starts:  # a syntactic start recorded inside wins
            self.starts[key] = start
        if node is self.target:
            self.found()

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):  # type: ignore[override]
        return _Syntactic(self, node, start_node)


def node_starts(module: cst.Module) -> Dict[int, Tuple[int, int]]:
    """id(node) -> (line, column) where ``PositionProvider`` says it starts (line 1-based,
    column 0-based), for every node of ``module`` (look up only nodes of ``module``, and only
    while it is alive: ids are reused once objects go)."""
    if not fast_paths_ok():
        from libcst.metadata import MetadataWrapper, PositionProvider

        found = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        return {id(node): (pos.start.line, pos.start.column) for node, pos in found.items()}
    return fast_node_starts(module)


def fast_node_starts(module: cst.Module) -> Dict[int, Tuple[int, int]]:
    """``node_starts`` through the private fast path (``compat`` checks it)."""
    state = _PositionState(module.default_indent, module.default_newline)
    module._codegen(state)
    return state.starts


# Per top-level node: (the node, indent, newline, its nodes' starts relative to its own first
# line, the number of lines its code takes, its code). Kept like _PIECES, dropped with them.
_PIECE_STARTS: Dict[int, Tuple[cst.CSTNode, str, str, Dict[int, Tuple[int, int]], int, str]] = {}


def _piece_starts(node: cst.CSTNode, module: cst.Module) -> Tuple[Dict[int, Tuple[int, int]], int, str]:
    hit = _kept(_PIECE_STARTS, node, module)
    if hit is not None:
        return hit[3], hit[4], hit[5]
    state = _PositionState(module.default_indent, module.default_newline)
    node._codegen(state)
    # a top-level node's code ends with its line break
    found = (state.starts, state.line - 1, "".join(state.tokens))
    _keep(_PIECE_STARTS, node, module, *found)
    return found


def _starts_until(statement: cst.CSTNode, module: cst.Module, node: cst.CSTNode,
                  indents: Sequence[str] = ()) -> Tuple[Dict[int, Tuple[int, int]], str]:
    """The starts of the nodes of ``statement`` (a top-level node, or a statement of an
    indented block inside blocks indented by ``indents``) relative to its first line, and its
    code as it is in the module, both only as far as generating it goes until the end of the
    line where ``node``'s start is known (a class's header line, not its body)."""
    hit = None if indents else _kept(_PIECE_STARTS, statement, module)
    if hit is not None:
        return hit[3], hit[5]
    state = _PositionState(module.default_indent, module.default_newline)
    state.indent_tokens.extend(indents)  # as the blocks around it leave the state
    state.target = node
    try:
        statement._codegen(state)
    except _Found:
        pass
    for node_, via in reversed(state.aliases):  # a node that starts where a child does
        if id(via) in state.starts:
            state.starts[id(node_)] = state.starts[id(via)]
    return state.starts, "".join(state.tokens)


def _path(pieces: tuple, node: cst.CSTNode) -> Optional[List[cst.CSTNode]]:
    """The nodes from the first of ``pieces`` whose subtree holds ``node`` down to ``node``
    (None when none does). Subtrees whose type masks are known and lack ``node``'s type are
    not entered."""
    bit = type_bit(type(node))
    for piece in pieces:
        if piece is node:
            return [piece]
        mask = known_mask(piece)
        if mask is not None and not mask & bit:
            continue
        path = [piece]
        stack = [iter(children(piece))]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                path.pop()
                continue
            if child is node:
                return [*path, child]
            mask = known_mask(child)
            if mask is None or mask & bit:
                path.append(child)
                stack.append(iter(children(child)))
    return None


def _statements_around(path: List[cst.CSTNode], module: cst.Module) -> List[Tuple[cst.CSTNode, Tuple[str, ...]]]:
    """The statements of ``path`` that start a line of their own (the top-level one, and those
    of indented blocks), innermost first, each with the indents of the blocks around it."""
    found: List[Tuple[cst.CSTNode, Tuple[str, ...]]] = [(path[0], ())]
    indents: Tuple[str, ...] = ()
    for parent, child in zip(path, path[1:]):
        if type(parent) is cst.IndentedBlock:
            indents = (*indents, module.default_indent if parent.indent is None else parent.indent)
            if any(child is s for s in parent.body):
                found.append((child, indents))
    return found[::-1]


def _lines_before(text: str, end: int) -> int:
    """How many line ends ``text[:end]`` holds (``\\r\\n``, ``\\r`` and ``\\n`` each one)."""
    head = text[:end]
    return head.count("\n") + head.count("\r") - head.count("\r\n")


class ModulePositions:
    """Where the nodes of one module start, as ``node_starts`` says, worked out per top-level
    node and only as far as a node asked about: a top-level node always starts a line, so its
    nodes' starts are its own, shifted by the lines before it; those of a top-level node an
    earlier version of the module had (a rule keeps the statements it does not change) are
    not worked out again. With the module's code known (``text``), a statement around the
    node asked about (the innermost that starts a line) is generated only up to the line
    where the node starts, and the lines before it are counted in the text, where that code
    occurs exactly once; otherwise the top-level nodes before it are worked out too."""

    def __init__(self, module: cst.Module, text: Optional[str] = None) -> None:
        self.module = module
        self.text = text
        self.pieces = _pieces(module)
        self.done: List[Tuple[Dict[int, Tuple[int, int]], int]] = []  # (starts, line offset) per piece
        self.placed: List[Tuple[Dict[int, Tuple[int, int]], int]] = []  # the same, of pieces found in text
        self.next_line = 0  # lines taken by the pieces done
        self.whole: Optional[Dict[int, Tuple[int, int]]] = None
        # (the last line break is dropped without a trailing newline; without the fast paths,
        # libcst's PositionProvider answers)
        if not module.has_trailing_newline or not self.pieces or not fast_paths_ok():
            self.whole = node_starts(module)

    def start(self, node: cst.CSTNode) -> Optional[Tuple[int, int]]:
        """(line, 0-based column) of ``node``, or None when it is not in the module."""
        if self.whole is not None:
            return self.whole.get(id(node))
        if node is self.module:
            return (1, 0)
        key = id(node)
        for starts, offset in (*self.done, *self.placed):
            found = starts.get(key)
            if found is not None:
                return (found[0] + offset, found[1])
        if self.text is not None:
            path = _path(self.pieces[len(self.done):], node)
            if path is None:
                return None
            # The code of a statement around the node, up to the end of the line where the
            # node starts, is enough when it occurs once in the text: the statement starts
            # there. The innermost such statement is tried first (a method, not its class).
            for statement, indents in _statements_around(path, self.module):
                starts, code = _starts_until(statement, self.module, node, indents)
                at = _only_place(self.text, code)
                if at is not None:
                    offset = _lines_before(self.text, at)
                    self.placed.append((starts, offset))
                    found = starts.get(key)
                    return None if found is None else (found[0] + offset, found[1])
        while len(self.done) < len(self.pieces):
            starts, lines, _ = _piece_starts(self.pieces[len(self.done)], self.module)
            offset = self.next_line
            self.done.append((starts, offset))
            self.next_line += lines
            found = starts.get(key)
            if found is not None:
                return (found[0] + offset, found[1])
        return None


# The code of the last few modules, by identity (each held, so its id stays its own): the
# engine knows the text of the module it hands a rule, and generating it again costs.
_TEXTS: Dict[int, Tuple[cst.Module, str]] = {}
_TEXTS_SIZE = 4


def remember_text(module: cst.Module, text: str) -> None:
    """Record that ``module.code`` is ``text``."""
    if id(module) not in _TEXTS and len(_TEXTS) >= _TEXTS_SIZE:
        _TEXTS.pop(next(iter(_TEXTS)))
    _TEXTS[id(module)] = (module, text)


def known_text(module: cst.Module) -> Optional[str]:
    """``module.code`` when it is known (``remember_text``), else None."""
    hit = _TEXTS.get(id(module))
    return hit[1] if hit is not None and hit[0] is module else None
