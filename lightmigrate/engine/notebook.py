"""Jupyter notebooks (``.ipynb``): migrate the code cells, leave everything else byte-identical.

How a notebook is migrated:

- Only code cells of a Python notebook take part (a notebook whose kernel language is not
  Python is left alone). A cell that starts with a cell magic (``%%bash``, ``%%time``...) is
  left as it is.
- IPython lines (``%magic``, ``!shell``, ``?help``/``name?``, ``x = !cmd``/``x = %magic``) are
  masked before parsing, as a placeholder statement with the same indentation, and put back
  afterwards, so rules never see or change them.
- All the code cells are joined, in order, into one module (separated by boundary comments),
  so the rules and the project class index see the notebook as one file: a subclass in a later
  cell of a class defined earlier is handled as within one ``.py`` file. The result is split
  back into the cells.
- Only the ``source`` values of cells whose code changed are replaced, in place, in the file's
  own text; every other byte (outputs, metadata, indentation, key order, the trailing newline,
  escaping of non-ASCII text) stays as it was. A changed source is written in the layout of
  the original value (a list of lines or one string) with the file's ``ensure_ascii``
  behaviour.
- Findings and markers in a notebook are reported as ``path:cell N:line:col``, N being the
  1-based position of the cell among all cells of the notebook, line the line inside the cell
  (as ruff does). ``--diff`` shows a diff of the ``.ipynb`` file itself, which ``git apply``
  accepts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from json.decoder import scanstring
from typing import Dict, List, Optional, Sequence, Tuple

from lightmigrate.engine.model import EngineError
from lightmigrate.output.findings import Finding, Kind
from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules.base import Rule

SUFFIX = ".ipynb"
BOUNDARY = "# lightmigrate-notebook-cell {}\n"
_BOUNDARY_RE = re.compile(r"^# lightmigrate-notebook-cell (\d+)\n", re.MULTILINE)
_PLACEHOLDER = "__lightmigrate_ipython_{}__"
_PLACEHOLDER_RE = re.compile(r"^([ \t]*)__lightmigrate_ipython_(\d+)__[ \t]*$", re.MULTILINE)
_HELP = re.compile(r"^(\?{1,2}[\w.*]+|[\w.*]+\?{1,2})$")  # ?name, name?, name??
_ASSIGN_MAGIC = re.compile(r"^[ \t]*[\w.]+(\s*,\s*[\w.]+)*\s*=\s*[!%]")
_WS = re.compile(r"[ \t\n\r]*")
_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


# --- reading the JSON with the position of every cell's "source" value ----------------------


def _scan(text: str, i: int, path: Tuple, spans: Dict[int, Tuple[int, int]]) -> int:
    """Skip the JSON value at ``text[i:]``; record spans of ``cells[k].source`` values."""
    i = _WS.match(text, i).end()
    start = i
    char = text[i : i + 1]
    if char == "{":
        i = _WS.match(text, i + 1).end()
        if text[i : i + 1] == "}":
            i += 1
        else:
            while True:
                if text[i : i + 1] != '"':
                    raise ValueError(f"expected a key at {i}")
                key, i = scanstring(text, i + 1)
                i = _WS.match(text, i).end()
                if text[i : i + 1] != ":":
                    raise ValueError(f"expected ':' at {i}")
                i = _scan(text, i + 1, path + (key,), spans)
                i = _WS.match(text, i).end()
                if text[i : i + 1] == ",":
                    i = _WS.match(text, i + 1).end()
                    continue
                if text[i : i + 1] == "}":
                    i += 1
                    break
                raise ValueError(f"expected ',' or '}}' at {i}")
    elif char == "[":
        i = _WS.match(text, i + 1).end()
        index = 0
        if text[i : i + 1] == "]":
            i += 1
        else:
            while True:
                i = _scan(text, i, path + (index,), spans)
                index += 1
                i = _WS.match(text, i).end()
                if text[i : i + 1] == ",":
                    i += 1
                    continue
                if text[i : i + 1] == "]":
                    i += 1
                    break
                raise ValueError(f"expected ',' or ']' at {i}")
    elif char == '"':
        _, i = scanstring(text, i + 1)
    else:
        m = _LITERAL.match(text, i)
        if not m:
            raise ValueError(f"unexpected character at {i}")
        i = m.end()
    if len(path) == 3 and path[0] == "cells" and path[2] == "source":
        spans[path[1]] = (start, i)
    return i


@dataclass
class _Cell:
    index: int  # position in the notebook's "cells" list (0-based)
    source: str  # the cell's code as in the file
    masked: str  # with IPython lines replaced by placeholders
    magics: List[str] = field(default_factory=list)  # placeholder number -> original line (stripped)
    added_newline: bool = False


@dataclass
class Notebook:
    raw: str
    data: dict
    cells: List[_Cell]
    spans: Dict[int, Tuple[int, int]]

    def module_text(self) -> str:
        """The code cells joined into one module, with boundary comments."""
        return "".join(BOUNDARY.format(c.index) + c.masked for c in self.cells)


def _is_ipython(line: str) -> bool:
    stripped = line.strip()
    if not stripped or stripped.startswith("#"):
        return False
    return stripped[0] in "%!" or bool(_HELP.match(stripped)) or bool(_ASSIGN_MAGIC.match(line))


def _mask(source: str) -> Optional[_Cell]:
    first = next((ln for ln in source.splitlines() if ln.strip()), "")
    if first.lstrip().startswith("%%"):
        return None  # a cell magic: the cell body is not (plain) Python
    magics: List[str] = []
    lines = []
    for line in source.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        if _is_ipython(body):
            indent = body[: len(body) - len(body.lstrip())]
            lines.append(indent + _PLACEHOLDER.format(len(magics)) + line[len(body):])
            magics.append(body.lstrip())
        else:
            lines.append(line)
    masked = "".join(lines)
    cell = _Cell(-1, source, masked, magics)
    if masked and not masked.endswith("\n"):
        cell.masked += "\n"
        cell.added_newline = True
    return cell


def _unmask(cell: _Cell, text: str) -> str:
    seen = set()

    def put_back(m: "re.Match[str]") -> str:
        number = int(m.group(2))
        seen.add(number)
        return m.group(1) + cell.magics[number]

    out = _PLACEHOLDER_RE.sub(put_back, text)
    if len(seen) != len(cell.magics):
        raise EngineError(f"cell {cell.index + 1}: a rule removed an IPython line; notebook left unchanged")
    return out


def _source_text(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def read_notebook(raw: str) -> Notebook:
    try:
        data = json.loads(raw)
        spans: Dict[int, Tuple[int, int]] = {}
        _scan(raw, 0, (), spans)
    except (ValueError, IndexError) as exc:
        raise EngineError(f"not a valid notebook (JSON): {exc}")
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise EngineError("not a notebook: no cells list")
    meta = data.get("metadata") or {}
    language = (meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get("name")
    cells: List[_Cell] = []
    if language in (None, "python"):
        for index, cell in enumerate(data["cells"]):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code" or index not in spans:
                continue
            masked = _mask(_source_text(cell.get("source", "")))
            if masked is not None:
                masked.index = index
                cells.append(masked)
    return Notebook(raw, data, cells, spans)


def indexable_text(path: str, text: str) -> str:
    """What the project class index should read for a file: for a notebook, its code cells as
    one module ("" if it cannot be read); any other file as it is."""
    if not is_notebook(path):
        return text
    try:
        return read_notebook(text).module_text()
    except EngineError:
        return ""


# --- writing changed sources back --------------------------------------------------------------


def _ensure_ascii(raw: str) -> bool:
    if any(ord(c) > 127 for c in raw):
        return False
    return any(int(h, 16) > 127 for h in re.findall(r"\\u([0-9a-fA-F]{4})", raw))


def _split_lines(text: str) -> List[str]:
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def _indent_unit(raw: str) -> str:
    m = re.search(r"\n([ \t]+)\S", raw)
    return m.group(1) if m else " "


def _render_source(raw: str, span: Tuple[int, int], original, text: str, ascii_only: bool) -> str:
    if not isinstance(original, list):
        return json.dumps(text, ensure_ascii=ascii_only)
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in _split_lines(text)]
    if not items:
        return "[]"
    old = raw[span[0] : span[1]]
    if original:
        open_ws = re.match(r"\[(\s*)", old).group(1)
        close_ws = re.search(r"(\s*)\]$", old).group(1)
    else:  # "source": [] -- indent one level deeper than the "source" key
        line_start = raw.rfind("\n", 0, span[0]) + 1
        key_indent = re.match(r"[ \t]*", raw[line_start:]).group(0)
        open_ws, close_ws = "\n" + key_indent + _indent_unit(raw), "\n" + key_indent
    separator = "," + (open_ws if "\n" in open_ws else (" " if ", " in old else ""))
    return "[" + open_ws + separator.join(items) + close_ws + "]"


# --- the transform ---------------------------------------------------------------------------


def _cell_positions(module: str) -> List[Tuple[int, int]]:
    """(first line of the cell's code in ``module``, cell index) for each boundary, in order."""
    out = []
    for m in _BOUNDARY_RE.finditer(module):
        out.append((module.count("\n", 0, m.start()) + 2, int(m.group(1))))
    return out


def _locate(finding: Finding, positions: Sequence[Tuple[int, int]]) -> Finding:
    cell_start, index = 0, -1
    for start, i in positions:
        if finding.line >= start:
            cell_start, index = start, i
    if index < 0 or not finding.line:
        return finding
    return replace(finding, line=finding.line - cell_start + 1, cell=index + 1)


def transform_notebook(raw: str, rules: Sequence[Rule], path: str, project: Optional[ProjectIndex] = None):
    """Like ``transform_text`` for the text of an ``.ipynb`` file: returns a TransformResult
    whose ``text`` is the new file text."""
    from lightmigrate.engine.transform import TransformResult, transform_text

    nb = read_notebook(raw)
    if not nb.cells:
        return TransformResult(raw)
    module = nb.module_text()
    before_pos = _cell_positions(module)
    try:
        out = transform_text(module, rules, path, project)
    except EngineError as exc:
        if not exc.line:
            raise
        where = _locate(Finding("", "", Kind.NOTE, exc.line, exc.col), before_pos)
        message = exc.message.split("\n", 1)[0]  # the caret excerpt shows the joined module: drop it
        raise EngineError(f"cell {where.cell}, line {where.line}: {message}") from exc
    after_pos = _cell_positions(out.text)
    findings = [_locate(f, after_pos if f.kind is Kind.MARKER else before_pos) for f in out.findings]
    changes = [_locate(f, before_pos) for f in out.changes]
    if not out.changed:
        return TransformResult(raw, findings, False, out.markers, changes, out.problems)
    if [i for _, i in after_pos] != [c.index for c in nb.cells] or not out.text.startswith(BOUNDARY.format(nb.cells[0].index)):
        raise EngineError("the rewrite moved code across notebook cells; notebook left unchanged")
    pieces = _BOUNDARY_RE.split(out.text)[1:]  # [index, code, index, code, ...]
    ascii_only = _ensure_ascii(raw)
    edits = []
    for cell, code in zip(nb.cells, pieces[1::2]):
        if code == cell.masked:
            continue
        if cell.added_newline and code.endswith("\n"):
            code = code[:-1]
        new_source = _unmask(cell, code)
        if new_source == cell.source:
            continue
        span = nb.spans[cell.index]
        original = nb.data["cells"][cell.index].get("source", "")
        edits.append((span, _render_source(raw, span, original, new_source, ascii_only)))
    text = raw
    for (start, end), value in sorted(edits, reverse=True):
        text = text[:start] + value + text[end:]
    return TransformResult(text, findings, text != raw, out.markers, changes, out.problems)
