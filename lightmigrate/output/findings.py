"""What a rule reports about a file: changes made, markers left, notes."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Kind(str, enum.Enum):
    FIXED = "fixed"  # the rule rewrote the code
    MARKER = "marker"  # the rule left a TODO(lightmigrate) marker: a human must act
    NOTE = "note"  # behaviour that changed between 1.9 and 2.x and that the user should know


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    kind: Kind
    line: int = 0
    col: int = 0
    path: str = ""
    cell: int = 0  # in a notebook: 1-based cell number, ``line`` counting inside that cell

    def located(self, path: str) -> "Finding":
        return Finding(self.code, self.message, self.kind, self.line, self.col, path, self.cell)

    def format(self) -> str:
        """`path:line:col: CODE message`, the form editors and CI annotate
        (`path:cell N:line:col: ...` inside a notebook)."""
        where = f"{self.path}:cell {self.cell}" if self.cell else self.path
        return f"{where}:{self.line}:{self.col}: {self.code} [{self.kind.value}] {self.message}"
