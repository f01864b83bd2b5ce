"""Helpers for rule tests: run one rule on source text, with an optional set of sibling files
that make up the project (for cross-file inheritance)."""

from __future__ import annotations

import textwrap
from typing import Dict, List, Optional, Tuple

import pytest

from lightmigrate.findings import Finding
from lightmigrate.project import ProjectIndex
from lightmigrate.engine import transform_text
from lightmigrate.rules.base import Rule


def run_rule(rule: Rule, source: str, path: str = "model.py",
             project_files: Optional[Dict[str, str]] = None) -> Tuple[str, List[Finding]]:
    index = ProjectIndex()
    for other_path, text in (project_files or {}).items():
        index.add_source(text, other_path)
    index.add_source(source, path)
    result = transform_text(source, [rule], path=path, project=index)
    return result.text, result.findings


def check_rewrite(rule: Rule, before: str, after: Optional[str], **kw) -> List[Finding]:
    """``before`` becomes ``after`` (unchanged when None), the result compiles, and a second run
    changes nothing."""
    before = textwrap.dedent(before)
    expected = before if after is None else textwrap.dedent(after)
    out, findings = run_rule(rule, before, **kw)
    assert out == expected, f"got:\n{out}"
    compile(out, "<rewritten>", "exec")
    again, _ = run_rule(rule, out, **kw)
    assert again == out, "second run changed the code"
    return findings


@pytest.fixture
def rewrite():
    return check_rewrite
