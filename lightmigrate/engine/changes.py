"""One entry per change a rule made: the hunks between a rule's input and its output.

Rules report markers and notes themselves, and some report their rewrites (FIXED findings);
for machine-readable output (``--output-format json|sarif``) every change should have an
entry, so the engine records, per rule that changed the text, one FIXED entry per changed
region, located in the rule's input (for the first rule that is the file as on disk).
"""

from __future__ import annotations

import difflib
import re
from typing import List, Sequence

from lightmigrate import MARKER_PREFIX
from lightmigrate.output.findings import Finding, Kind

_MARKER_COMMENT = re.compile(r"[ \t]*#[ \t]*" + re.escape(MARKER_PREFIX) + r".*$")


def _without_markers(lines: Sequence[str]) -> List[str]:
    """The lines with marker comments taken out (marker-only lines dropped): a rule that only
    adds markers made no change, the markers are reported on their own."""
    out = []
    for line in lines:
        body = line.rstrip("\r\n")
        stripped = _MARKER_COMMENT.sub("", body)
        if stripped.strip() or not body.strip():
            out.append(stripped + line[len(body):])
    return out


def _lines(n: int) -> str:
    return f"{n} line{'' if n == 1 else 's'}"


def change_findings(code: str, name: str, before: str, after: str, path: str) -> List[Finding]:
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    out = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" or _without_markers(new[j1:j2]) == _without_markers(old[i1:i2]):
            continue
        line = min(i1 + 1, max(len(old), 1))
        message = f"{name}: {_lines(i2 - i1)} replaced by {_lines(j2 - j1)}"
        out.append(Finding(code, message, Kind.FIXED, line, 1, path))
    return out
