"""Every rule's own before/after examples are tests: exact output, valid code, idempotent."""

import pytest

from lightmigrate.rules import ALL_RULES

from .conftest import check_rewrite

CASES = [(rule, ex) for rule in ALL_RULES for ex in rule.examples]


@pytest.mark.parametrize("rule,example", CASES, ids=[f"{r.code}-{e.title or i}" for i, (r, e) in enumerate(CASES)])
def test_rule_example(rule, example):
    check_rewrite(rule, example.before, example.after)


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_rule_metadata(rule):
    assert rule.code.startswith("LM") and rule.code[2:].isdigit()
    assert rule.summary and "\n" not in rule.summary
    assert rule.spec_rows and rule.guide and rule.triggers
    assert any(e.after is not None for e in rule.examples), "a rule needs at least one rewrite example"
    assert any(e.after is None for e in rule.examples), "a rule needs at least one no-change example"
    for ex in rule.examples:
        assert rule.may_apply(ex.before) or ex.after is None, "prefilter would skip an example it rewrites"


def test_codes_unique():
    codes = [r.code for r in ALL_RULES]
    assert len(codes) == len(set(codes))
