"""The engine's result types: per-file problems and results, and the run report."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import List, Optional

from lightmigrate.output.findings import Finding


class Mode(str, enum.Enum):
    WRITE = "write"  # rewrite files in place
    DIFF = "diff"  # nothing written; a unified diff per changed file
    CHECK = "check"  # nothing written; only which files would change


class EngineError(Exception):
    """A problem with one file that stops its processing (and only its processing)."""

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col

    def problem(self, path: str) -> "Problem":
        return Problem(path, self.message, self.line, self.col)


@dataclass(frozen=True)
class Problem:
    """Why a file could not be processed. ``line``/``col`` are 1-based, 0 when unknown."""

    path: str
    message: str
    line: int = 0
    col: int = 0

    def format(self) -> str:
        """``path:line:col: message`` (just ``path: message`` when there is no position)."""
        if self.line:
            return f"{self.path}:{self.line}:{self.col}: {self.message}"
        return f"{self.path}: {self.message}"


@dataclass
class FileResult:
    path: str
    changed: bool = False
    error: Optional[Problem] = None
    findings: List[Finding] = field(default_factory=list)
    markers: int = 0  # TODO(lightmigrate) markers in the file's (would-be) output
    diff: str = ""  # unified diff, filled in DIFF mode for changed files
    changes: List[Finding] = field(default_factory=list)  # one FIXED entry per changed region per rule
    # Rules that could not handle the file; their changes were left out, the others' kept.
    problems: List[Problem] = field(default_factory=list)

    @property
    def all_problems(self) -> List[Problem]:
        """``error`` (the file could not be processed) and ``problems`` (some rule could not)."""
        return ([self.error] if self.error is not None else []) + self.problems


@dataclass
class RunReport:
    mode: Mode
    files: List[FileResult] = field(default_factory=list)

    @property
    def scanned(self) -> int:
        return len(self.files)

    @property
    def changed(self) -> int:
        return sum(1 for f in self.files if f.changed)

    @property
    def failed(self) -> int:
        """Files with a problem: not processed, or some rule could not handle them."""
        return sum(1 for f in self.files if f.error is not None or f.problems)

    @property
    def markers(self) -> int:
        return sum(f.markers for f in self.files)

    @property
    def exit_code(self) -> int:
        """2 when any file had a problem; 1 when --check/--diff found changes; else 0."""
        if self.failed:
            return 2
        if self.mode is not Mode.WRITE and self.changed:
            return 1
        return 0
