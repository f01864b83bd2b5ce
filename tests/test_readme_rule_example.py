"""The worked example of "Adding a rule" in the README is a rule that works."""

from __future__ import annotations

import re
from pathlib import Path

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules.base import RuleContext, SourceFile

from rules.conftest import check_rewrite

README = Path(__file__).resolve().parent.parent / "README.md"


def _example_rule():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Adding a rule"):text.index("## Verifying behaviour")]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, "README.md", "exec"), namespace)
    return namespace["NumGpusRule"]()


def test_the_readme_rule_rewrites_its_examples_once():
    rule = _example_rule()
    assert len(rule.examples) == 2
    for example in rule.examples:
        check_rewrite(rule, example.before, example.after)


def test_the_readme_rule_finds_only_trainer_attributes():
    rule = _example_rule()
    text = "a = trainer.num_gpus\nb = cfg.num_gpus\nc = self.trainer.num_gpus + 1\n"
    sites = rule.find(SourceFile("x.py", text), RuleContext("x.py", ProjectIndex()))
    assert [(s.line, s.col) for s in sites] == [(1, 12), (3, 17)]
