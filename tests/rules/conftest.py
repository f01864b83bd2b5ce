"""Helpers for rule tests: run one rule on source text, with an optional set of sibling files
that make up the project (for cross-file inheritance)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from lightmigrate.output.findings import Finding
from lightmigrate.analysis.project import ProjectIndex
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


CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def check_corpus_case_idempotent(rule: Rule, name: str) -> None:
    """``rule`` alone changes the corpus case ``name``, its output compiles, and a second run of
    the rule on that output changes nothing."""
    path = CORPUS / f"{name}.py"
    source = path.read_text(encoding="utf-8")
    once, _ = run_rule(rule, source, path=str(path))
    assert once != source, "the rule should change this corpus case"
    compile(once, str(path), "exec")
    twice, _ = run_rule(rule, once, path=str(path))
    assert twice == once, "second run changed the code"
