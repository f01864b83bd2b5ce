"""Helpers for the ``find`` tests of the import rules (LM090, LM201, LM202, LM203, LM210):
the sites a rule finds in a file of a small project, and whether its ``fix`` then acts."""

from __future__ import annotations

import textwrap
from typing import Dict, List, Optional

import libcst as cst

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules.base import Rule, RuleContext, Site, SourceFile


def context(path: str, files: Dict[str, str]) -> RuleContext:
    """A context for ``path`` in a project of exactly ``files`` (path -> text), indexed in order."""
    index = ProjectIndex()
    for other, text in files.items():
        index.add_source(text, other)
    return RuleContext(path, index)


def sites_of(rule: Rule, source: str, files: Optional[Dict[str, str]] = None, indexed: bool = True,
             path: str = "model.py") -> List[Site]:
    """``rule.find`` on ``source`` at ``path``, among ``files`` (``source`` itself indexed
    unless ``indexed`` is False)."""
    source = textwrap.dedent(source)
    all_files = {**(files or {}), **({path: source} if indexed else {})}
    return rule.find(SourceFile(path, source), context(path, all_files))


def check_find(rule: Rule, source: str, effect: bool, files: Optional[Dict[str, str]] = None,
               indexed: bool = True, path: str = "model.py") -> List[Site]:
    """``find`` returns sites exactly when ``effect`` says the rule changes or reports
    something, and ``fix`` then does change or report something."""
    source = textwrap.dedent(source)
    sites = sites_of(rule, source, files, indexed, path)
    assert bool(sites) is effect, sites
    if sites:
        all_files = {**(files or {}), **({path: source} if indexed else {})}
        ctx = context(path, all_files)
        out = rule.fix(cst.parse_module(source), sites, ctx)
        assert out.code != source or ctx.findings, "find returned sites where fix does nothing"
    return sites
