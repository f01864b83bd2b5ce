"""Suppression comments: ``# lightmigrate: ignore[LM001]`` and friends.

Forms (codes are rule codes or prefixes, comma-separated; no brackets means every rule):

- ``x = 1  # lightmigrate: ignore[LM001]`` -- that line.
- a comment alone on its line -- the next line of code.
- when the line it covers is the header of a ``def`` or ``class`` (or one of its decorators),
  the whole ``def``/``class`` block.
- ``# lightmigrate: off[LM001]`` ... ``# lightmigrate: on`` -- every line in between
  (``on`` ends every open ``off``; ``on[LM001]`` ends only that code's).
- ``x = 1  # noqa: LM001`` (ruff's form; codes separated by commas or spaces) -- as
  ``# lightmigrate: ignore[LM001]`` at the end of that line. Only our ``LMnnn`` codes count:
  ``# noqa: E501`` (meant for the linters) switches no rule off, and a ``# noqa`` alone on its
  line covers nothing. A bare ``# noqa`` switches no rule off either, unless the project sets
  ``bare-noqa = true`` (``ProjectIndex.bare_noqa``): then, as in ruff, every rule is off on its
  line, and each change a rule would have made there is reported as a note (never silent).

What it means: a suppressed rule does not rewrite, mark or report on those lines. Rules often
rewrite a whole class at once (a buffer in ``__init__``, an append in the step, the renamed
hook), and half of such a rewrite would be wrong code, so the engine works at the level of
top-level statements: it runs the rule, compares its output with its input, and when a
change touches a suppressed line, the rule's changes to the whole top-level statement that
holds it (the class, the function) are dropped, together with its changes to classes of the
same file related by inheritance. The rule's changes elsewhere in the file stay. A
``TODO(lightmigrate)`` marker line is the exception: a comment is never half of a rewrite, so a
suppressed marker is dropped alone and the rule's other changes to that statement (its markers
on other methods of the class) stay. If the
combination would not parse, the rule's changes to the file are dropped altogether. Findings
the rule reports on those lines, and ``TODO(lightmigrate)`` markers on suppressed lines, are
not reported.
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate import MARKER_PREFIX
from lightmigrate.engine.markers import _comments
from lightmigrate.output.findings import Finding, Kind
from lightmigrate.analysis.ast_nodes import ast_nodes

_DIRECTIVE = re.compile(r"#\s*lightmigrate:\s*(ignore|off|on)\b(?:\[([^\]]*)\])?", re.IGNORECASE)
# ruff's form, "noqa: LM001" or "noqa: LM001, E501" after a "#" (commas and/or spaces between codes)
_NOQA = re.compile(r"#\s*noqa\s*:\s*([A-Z]+[0-9]+(?:(?:[ \t]*,[ \t]*|[ \t]+)[A-Z]+[0-9]+)*)", re.IGNORECASE)
_OUR_CODE = re.compile(r"LM[0-9]+", re.IGNORECASE)
# a noqa comment that names no code (no colon after the word)
_BARE_NOQA = re.compile(r"#\s*noqa\b(?!\s*:)", re.IGNORECASE)
ALL = ""  # the prefix every code starts with
BARE_NOQA_NOTE = ("not applied on this line: a bare `# noqa` switches every rule off here (`bare-noqa = true`); "
                  "name the codes it is meant for (`# noqa: E501`) to let lightmigrate migrate it")


def _noqa_codes(comment: str, bare: bool = False) -> Set[str]:
    """Our codes (``LMnnn``) named by the ``# noqa: ...`` comments in ``comment``; one naming
    other tools' codes only names none, and so does a bare ``# noqa`` unless ``bare`` (then it
    names every code)."""
    codes = {code.upper() for m in _NOQA.finditer(comment)
             for code in re.split(r"[\s,]+", m.group(1)) if _OUR_CODE.fullmatch(code)}
    if bare and _BARE_NOQA.search(comment):
        codes.add(ALL)
    return codes


def has_directives(text: str, bare: bool = False) -> bool:
    """Cheap test: could ``text`` hold a suppression comment? (``bare``: a bare ``# noqa`` counts)"""
    if "lightmigrate:" in text and _DIRECTIVE.search(text) is not None:
        return True
    return ("noqa" in text or "NOQA" in text or "Noqa" in text) and bool(_noqa_codes(text, bare))


def _codes(raw: Optional[str]) -> Set[str]:
    if raw is None:
        return {ALL}
    codes = {c.strip().upper() for c in raw.split(",") if c.strip()}
    return codes or {ALL}


def _blocks(tree: Optional[ast.AST]) -> Dict[int, int]:
    """Header line (each line from the first decorator to the line before the body) -> last
    line of that def/class block."""
    out: Dict[int, int] = {}
    if tree is None:
        return out
    for node in ast_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            body_start = node.body[0].lineno if node.body else node.lineno
            end = node.end_lineno or node.lineno
            for line in range(first, max(body_start, node.lineno + 1)):
                out.setdefault(line, end)
    return out


class SuppressionMap:
    """Which rule codes are suppressed on which lines of one text."""

    def __init__(self, text: str, tree: Optional[ast.AST] = None, bare: bool = False) -> None:
        self.by_line: Dict[int, Set[str]] = {}
        self.bare_lines: Set[int] = set()  # the lines a bare noqa comment switched off (``bare``)
        if not has_directives(text, bare):
            return
        lines = text.splitlines()
        if tree is None:
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                tree = None
        blocks = _blocks(tree)
        directives = []
        for line, col, comment in _comments(text):
            m = _DIRECTIVE.search(comment)
            own_line = not lines[line - 1][:col].strip() if line <= len(lines) else True
            if m:
                directives.append((line, m.group(1).lower(), _codes(m.group(2)), own_line))
            noqa = _noqa_codes(comment, bare)
            if noqa and not own_line:  # as in ruff, a noqa comment alone on its line covers nothing
                directives.append((line, "ignore", noqa, False))
                if ALL in noqa and not _noqa_codes(comment):
                    self.bare_lines.add(line)
        open_off: Dict[str, int] = {}  # code -> line where it was switched off
        for line, kind, codes, own_line in directives:
            if kind == "ignore":
                target = self._next_code_line(lines, line) if own_line else line
                if target:
                    self._add(range(target, blocks.get(target, target) + 1), codes)
            elif kind == "off":
                for code in codes:
                    open_off.setdefault(code, line)
            else:  # on
                ending = list(open_off) if ALL in codes else [c for c in codes if c in open_off]
                for code in ending:
                    self._add(range(open_off.pop(code), line + 1), {code})
        for code, start in open_off.items():
            self._add(range(start, len(lines) + 1), {code})

    @staticmethod
    def _next_code_line(lines: Sequence[str], line: int) -> int:
        for number in range(line + 1, len(lines) + 1):
            stripped = lines[number - 1].strip()
            if stripped and not stripped.startswith("#"):
                return number
        return 0

    def _add(self, lines: range, codes: Set[str]) -> None:
        for line in lines:
            self.by_line.setdefault(line, set()).update(codes)

    def __bool__(self) -> bool:
        return bool(self.by_line)

    def suppressed(self, line: int, code: str) -> bool:
        return any(code.startswith(c) for c in self.by_line.get(line, ()))

    def mentions(self, code: str) -> bool:
        return any(code.startswith(c) for codes in self.by_line.values() for c in codes)


def _statements(tree: ast.Module) -> Tuple[List[Tuple[int, int]], List[Set[int]]]:
    """Line spans of the top-level statements, and groups of statement indexes that must be
    kept or dropped together (classes related by inheritance)."""
    spans = []
    class_index: Dict[str, int] = {}
    bases: Dict[int, List[str]] = {}
    for i, node in enumerate(tree.body):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        spans.append((first, node.end_lineno or node.lineno))
        if isinstance(node, ast.ClassDef):
            class_index[node.name] = i
            names = []
            for b in node.bases:
                while isinstance(b, ast.Attribute):
                    names.append(b.attr)
                    b = b.value
                if isinstance(b, ast.Name):
                    names.append(b.id)
            bases[i] = names
    parent = list(range(len(spans)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, names in bases.items():
        for name in names:
            j = class_index.get(name)
            if j is not None:
                parent[find(i)] = find(j)
    groups: Dict[int, Set[int]] = {}
    for i in range(len(spans)):
        groups.setdefault(find(i), set()).add(i)
    return spans, [groups[find(i)] for i in range(len(spans))]


def _line_for_line(op: tuple) -> List[tuple]:
    tag, i1, i2, j1, j2 = op
    if tag == "replace" and i2 - i1 == j2 - j1 > 1:
        return [("replace", i1 + k, i1 + k + 1, j1 + k, j1 + k + 1) for k in range(i2 - i1)]
    return [op]


def merge_suppressed(before: str, after: str, smap: SuppressionMap, code: str) -> Tuple[str, List[Tuple[int, int]]]:
    """``after`` with the rule's changes to suppressed statements undone (see the module
    docstring). Returns the text and the line spans (of ``before``) whose changes were undone."""
    try:
        tree = ast.parse(before)
    except (SyntaxError, ValueError):
        return before, [(1, before.count("\n") + 1)]
    spans, group_of = _statements(tree)
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    # (a block of lines replaced line for line is one change per line: two rewritten imports in a
    # row belong to two statements)
    hunks = [piece for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
             if op[0] != "equal" for piece in _line_for_line(op)]

    def marker_only(op) -> bool:  # whole ``# TODO(lightmigrate)`` lines put above a statement
        tag, _, _, j1, j2 = op
        return tag == "insert" and all(line.lstrip().startswith("# " + MARKER_PREFIX) for line in new[j1:j2])

    def lines_of(op) -> List[int]:
        _, i1, i2, _, _ = op
        if i2 > i1:
            return list(range(i1 + 1, i2 + 1))
        return [i1 + 1] if marker_only(op) else [i1, i1 + 1]  # a marker concerns the line below it

    def owners(op) -> Set[int]:
        ls = lines_of(op)
        return {k for k, (a, b) in enumerate(spans) if any(a <= ln <= b for ln in ls)}

    hunk_owners = [owners(op) for op in hunks]
    reverted = [any(smap.suppressed(ln, code) for ln in lines_of(op)) for op in hunks]
    # A suppressed marker alone is dropped alone: a comment is never half of a rewrite, so the
    # rule's other changes to that statement (its markers on other methods) stay.
    blocked: Set[int] = set()
    for op, owned, rev in zip(hunks, hunk_owners, reverted):
        if rev and not marker_only(op):
            blocked |= owned
    while True:
        grown = set(blocked)
        for k in blocked:
            grown |= group_of[k]
        for h, owned in enumerate(hunk_owners):
            if owned & grown:
                reverted[h] = True
                grown |= owned
        if grown == blocked:
            break
        blocked = grown
    if not any(reverted):
        return after, []
    out: List[str] = []
    pos = 0
    for op, rev in zip(hunks, reverted):
        _, i1, i2, j1, j2 = op
        out.extend(old[pos:i1])
        out.extend(old[i1:i2] if rev else new[j1:j2])
        pos = i2
    out.extend(old[pos:])
    undone = [spans[k] for k in sorted(blocked)]
    undone += [(op[1] + 1, max(op[2], op[1] + 1)) for op, rev in zip(hunks, reverted) if rev]
    return "".join(out), undone


def apply_rule(rule, module: cst.Module, ctx, text: Optional[str] = None, sites: Sequence = ()) -> cst.Module:
    """``rule.fix(module, sites, ctx)`` with the suppression comments of ``module`` honoured
    (``text``: ``module.code``, when the caller has it)."""
    before = module.code if text is None else text
    bare = bare_noqa(ctx)
    if not has_directives(before, bare):
        return rule.fix(module, sites, ctx)
    smap = SuppressionMap(before, bare=bare)
    if not smap.mentions(rule.code):
        return rule.fix(module, sites, ctx)
    seen = len(ctx.findings)
    result = rule.fix(module, sites, ctx)
    if not isinstance(result, cst.Module):
        return result  # the engine reports the broken rule
    after = result.code
    merged, undone = merge_suppressed(before, after, smap, rule.code) if after != before else (after, [])

    def keep(f: Finding) -> bool:
        if f.code != rule.code:
            return True
        if smap.suppressed(f.line, rule.code):
            return False
        return not any(a <= f.line <= b for a, b in undone)

    # what a bare noqa comment held back is said (a finding it dropped, a change it undid)
    held = {f.line for f in ctx.findings[seen:] if f.code == rule.code and f.line in smap.bare_lines}
    held.update(line for line in smap.bare_lines for a, b in undone if a <= line <= b)
    ctx.findings[seen:] = [f for f in ctx.findings[seen:] if keep(f)]
    ctx.findings.extend(Finding(rule.code, BARE_NOQA_NOTE, Kind.NOTE, line, 1, ctx.path) for line in sorted(held))
    if merged == after:
        return result
    if merged != before:
        try:
            return cst.parse_module(merged)
        except cst.ParserSyntaxError:
            pass
    ctx.findings[seen:] = [f for f in ctx.findings[seen:] if f.code != rule.code or f.kind is Kind.NOTE]
    return module


def report_rule(rule, ctx, text: str, sites: Sequence) -> None:
    """``rule.report(sites, ctx)`` (a rule that does not edit code) with the suppression comments
    of ``text`` honoured: its findings on suppressed lines are dropped."""
    seen = len(ctx.findings)
    rule.report(sites, ctx)
    bare = bare_noqa(ctx)
    if not has_directives(text, bare):
        return
    smap = SuppressionMap(text, bare=bare)
    if smap.mentions(rule.code):
        ctx.findings[seen:] = [f for f in ctx.findings[seen:]
                               if f.code != rule.code or not smap.suppressed(f.line, rule.code)]


def bare_noqa(ctx) -> bool:
    """Whether the project of a rule's context honours a bare ``# noqa`` (``bare-noqa``)."""
    return bool(getattr(ctx.project, "bare_noqa", False))


def drop_suppressed_markers(items: Sequence, text: str, bare: bool = False) -> List:
    """``items`` (markers, or findings of which only MARKER ones are considered) less those on
    lines of ``text`` suppressed for their code."""
    if not has_directives(text, bare):
        return list(items)
    smap = SuppressionMap(text, bare=bare)

    def is_marker(item) -> bool:
        return getattr(item, "kind", Kind.MARKER) is Kind.MARKER

    return [m for m in items if not (is_marker(m) and smap.suppressed(m.line, m.code))]
