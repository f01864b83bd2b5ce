"""What the gate tests ask of a rule: its gate's answer (``Rule.needed``) for a file of a small
project, and whether its walk, with no gate, changes or reports anything there. A gate may say
"needed" for nothing, never "not needed" where the walk does something."""

from __future__ import annotations

import ast
from typing import Dict, Optional

import libcst as cst

from lightmigrate.analysis.project import ProjectIndex, search_text
from lightmigrate.rules.base import Rule, RuleContext
from lightmigrate.rules.shared.gates import path_may_have_kind


def project_of(files: Dict[str, str]) -> ProjectIndex:
    """The class index of ``files`` (path -> text), in their order."""
    index = ProjectIndex()
    for path, text in files.items():
        index.add_source(text, path)
    return index


def gate_says(rule: Rule, text: str, path: str, files: Dict[str, str]) -> bool:
    """The gate's answer for ``text`` at ``path`` in a project of exactly ``files``. When it is
    "needed", for a file the index has seen and Python parses, the promises of the rule's text
    gates are checked too: ``may_need`` says True, and a class of the file is of one of the
    ``gate_kinds`` (asked of an index that holds every file lazily, as the engine's does)."""
    answer = rule.needed(text, RuleContext(path, project_of(files)))
    if answer and files.get(path) == text and _parses(text):
        check_text_gates(rule, text, path, files)
    return answer


def check_text_gates(rule: Rule, text: str, path: str, files: Dict[str, str]) -> None:
    """The engine skips ``text`` when a text gate says so: assert they do not, here."""
    searched = search_text(text)
    assert rule.may_need(searched), f"{rule.code}: may_need said no to a text the gate needs"
    kinds = rule.gate_kinds(searched)
    if kinds is not None:
        lazy = ProjectIndex()
        for other, other_text in files.items():
            lazy.add_source(other_text, other, lazy=True)
        assert path_may_have_kind(lazy, path, kinds), f"{rule.code}: no class of kinds {sorted(kinds)} found"


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def walk_acts(rule: Rule, text: str, path: str, files: Dict[str, str]) -> bool:
    """Whether the rule's walk changes ``text`` or reports something, in a project of ``files``."""
    ctx = RuleContext(path, project_of(files))
    out = rule.apply(cst.parse_module(text), ctx)
    return out.code != text or bool(ctx.findings)


def needed(rule: Rule, text: str, path: str = "x.py", files: Optional[Dict[str, str]] = None) -> bool:
    """``gate_says`` with ``text`` itself indexed among ``files``."""
    return gate_says(rule, text, path, {**(files or {}), path: text})


def acts(rule: Rule, text: str, path: str = "x.py", files: Optional[Dict[str, str]] = None) -> bool:
    """``walk_acts`` with ``text`` itself indexed among ``files``."""
    return walk_acts(rule, text, path, {**(files or {}), path: text})


def check(rule: Rule, text: str, expected: bool, path: str = "x.py", files: Optional[Dict[str, str]] = None) -> None:
    """The gate says ``expected``, and the walk agrees: it acts exactly when the gate says
    "needed" (for the cases given, the gate is exact)."""
    assert needed(rule, text, path, files) is expected
    assert acts(rule, text, path, files) is expected
