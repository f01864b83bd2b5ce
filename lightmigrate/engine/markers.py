"""``# TODO(lightmigrate): LMnnn ...`` markers: finding them in text and reporting them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, List, Sequence, Tuple

from lightmigrate import MARKER_PREFIX
from lightmigrate.output.findings import Finding, Kind

MARKER_RE = re.compile(re.escape(MARKER_PREFIX) + r"\s*(LM\d+)\b[\s:\-]*(.*)")


@dataclass(frozen=True)
class Marker:
    code: str
    message: str
    line: int
    col: int  # 1-based column of "TODO(lightmigrate)"


# A comment, or a string literal (whose text may look like a comment): the tokens of Python's
# tokenizer that matter here, found by one regular expression (``tokenize`` itself costs about
# twenty times as much). Prefixes (r, b, f, ...) need no pattern: in every kind of string a
# backslash keeps the next character from ending it.
_COMMENT_OR_STRING = re.compile(
    r"#[^\r\n]*"
    r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"'
    r"|'[^'\\\r\n]*(?:\\.[^'\\\r\n]*)*'",
    re.DOTALL,
)


def _comments(text: str) -> Iterator[Tuple[int, int, str]]:
    """(line, 0-based column, text) of every comment, lines counted at each ``\\n`` as
    ``tokenize`` counts them (markers are best effort, never an error: an unterminated
    string ends the search)."""
    line, counted = 1, 0
    for m in _COMMENT_OR_STRING.finditer(text):
        start = m.start()
        if text[start] == "#":
            line += text.count("\n", counted, start)
            counted = start
            yield line, start - (text.rfind("\n", 0, start) + 1), m.group()


def find_markers(text: str) -> List[Marker]:
    if MARKER_PREFIX not in text:
        return []
    found = []
    seen = set()
    for line, col, comment in _comments(text):
        for m in MARKER_RE.finditer(comment):
            key = (line, col + m.start())
            if key not in seen:
                seen.add(key)
                found.append(Marker(m.group(1), m.group(2).strip(), line, col + m.start() + 1))
    return found


def merge_marker_findings(
    findings: Sequence[Finding], markers: Sequence[Marker], path: str
) -> List[Finding]:
    """``findings`` plus one MARKER finding per marker the rules did not already report.

    A rule's MARKER finding for the same code counts as reported when it is on the same line;
    one without a position (line 0) is matched to the first such marker and gets its position.
    """
    out = list(findings)

    def rule_marker(f: Finding, marker: Marker) -> bool:
        return f.kind is Kind.MARKER and f.code == marker.code

    for marker in markers:
        if any(rule_marker(f, marker) and f.line == marker.line for f in out):
            continue
        unplaced = next((i for i, f in enumerate(out) if rule_marker(f, marker) and not f.line), None)
        if unplaced is not None:
            f = out[unplaced]
            out[unplaced] = Finding(f.code, f.message, f.kind, marker.line, marker.col, path)
        else:
            out.append(
                Finding(marker.code, marker.message, Kind.MARKER, marker.line, marker.col, path)
            )
    return out
