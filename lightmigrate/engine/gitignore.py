"""Gitignore matching, implemented from the rules in gitignore(5).

Patterns are kept with the folder of the file they came from (``base``, a POSIX path relative
to the walk root, ``""`` or ending in ``/``) and are checked against POSIX paths relative to that
same root. The caller appends patterns in precedence order (``.git/info/exclude``, then each
``.gitignore`` from the top down) and the last matching pattern decides.

Everything under an ignored directory is ignored too; the walker gets that for free by not
descending into ignored directories, so patterns here only ever match a path exactly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Pattern, Tuple


@dataclass(frozen=True)
class IgnorePattern:
    base: str
    regex: Pattern[str]
    negate: bool
    dir_only: bool

    def matches(self, relpath: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if not relpath.startswith(self.base):
            return False
        return self.regex.fullmatch(relpath[len(self.base):]) is not None


def _strip_trailing_spaces(line: str) -> str:
    # Trailing spaces are dropped unless escaped with a backslash.
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    return line


def _bracket(glob: str, start: int) -> Tuple[Optional[str], int]:
    """Translate the ``[...]`` class opening at ``glob[start]``; (None, start) when unclosed."""
    i = start + 1
    negate = i < len(glob) and glob[i] in "!^"
    if negate:
        i += 1
    parts: List[str] = []
    first = True
    while i < len(glob):
        c = glob[i]
        if c == "]" and not first:
            body = "".join(parts)
            # A class never matches "/" (gitignore uses FNM_PATHNAME).
            return ("(?!/)[" + ("^" if negate else "") + body + "]"), i + 1
        if c == "\\" and i + 1 < len(glob):
            i += 1
            c = glob[i]
        parts.append("-" if c == "-" else re.escape(c))
        first = False
        i += 1
    return None, start


def translate(glob: str) -> str:
    """Regex source for one glob (no leading/trailing slash handling, that is the caller's)."""
    out: List[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            whole_segment = (i == 0 or glob[i - 1] == "/") and (j == n or glob[j] == "/")
            if j - i >= 2 and whole_segment:
                if j == n:
                    out.append(".*")  # "a/**": everything inside a
                    i = j
                else:
                    out.append("(?:.*/)?")  # "**/" or "/**/": zero or more folders
                    i = j + 1
                continue
            out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            cls, end = _bracket(glob, i)
            if cls is None:
                out.append(re.escape("["))
                i += 1
            else:
                out.append(cls)
                i = end
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse_pattern(line: str, base: str = "") -> Optional[IgnorePattern]:
    """One line of a gitignore file; None for blank lines and comments."""
    line = _strip_trailing_spaces(line.rstrip("\r\n"))
    if not line or line.startswith("#"):
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line.rstrip("/")
    # A slash at the start or in the middle anchors the pattern to the file's folder.
    anchored = "/" in line
    line = line.lstrip("/")
    if not line:
        return None
    source = translate(line)
    if not anchored:
        source = "(?:.*/)?" + source
    try:
        regex = re.compile(source, re.DOTALL)
    except re.error:
        return None
    return IgnorePattern(base, regex, negate, dir_only)


def parse_lines(lines: Iterable[str], base: str = "") -> List[IgnorePattern]:
    return [p for p in (parse_pattern(line, base) for line in lines) if p is not None]


def read_ignore_file(path: str, base: str = "") -> List[IgnorePattern]:
    """Patterns of one ignore file; an unreadable file contributes nothing."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return parse_lines(f.read().splitlines(), base)
    except OSError:
        return []


class IgnoreRules:
    """An immutable stack of patterns; ``with_patterns`` makes the stack for a subfolder."""

    def __init__(self, patterns: Iterable[IgnorePattern] = ()) -> None:
        self.patterns: Tuple[IgnorePattern, ...] = tuple(patterns)

    def with_patterns(self, more: Iterable[IgnorePattern]) -> "IgnoreRules":
        more = tuple(more)
        return IgnoreRules(self.patterns + more) if more else self

    def ignored(self, relpath: str, is_dir: bool) -> bool:
        for pattern in reversed(self.patterns):  # last match wins
            if pattern.matches(relpath, is_dir):
                return not pattern.negate
        return False
