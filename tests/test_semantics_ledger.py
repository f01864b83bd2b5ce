"""The semantics ledger (lightmigrate/catalog/semantics.py, issue 26) is consistent with the code."""

import importlib
import os
import re

import pytest

from lightmigrate.catalog.semantics import FACTS, NO_CASE, STATUSES, Fact, facts_for_rule, totals
from lightmigrate.rules import ALL_RULES, OPT_IN_RULES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CODES = {r.code for r in (*ALL_RULES, *OPT_IN_RULES)}
IDS = [f.id for f in FACTS]


def _resolve(path: str):
    module, _, attrs = path.partition(":")
    obj = importlib.import_module(module)
    for attr in attrs.split("."):
        obj = getattr(obj, attr)
    return obj


def test_ids_are_unique_and_well_formed():
    assert len(IDS) == len(set(IDS))
    for fact in FACTS:
        assert re.fullmatch(r"B\d+\.\d+|L\d+", fact.id), fact.id
        assert fact.new == fact.id.startswith("L"), fact.id


@pytest.mark.parametrize("fact", FACTS, ids=IDS)
def test_fact_is_complete(fact: Fact):
    assert fact.status in STATUSES
    assert fact.did and "\n" not in fact.did
    assert fact.section
    # every fact has a case or says why not
    assert fact.cases or fact.reason, f"{fact.id}: neither a case nor a reason"
    for code in fact.rules:
        assert code in CODES, f"{fact.id}: unknown rule {code}"
    for keeper in fact.keepers:
        assert callable(_resolve(keeper)), f"{fact.id}: {keeper} is not a function or class"
    for case in fact.cases:
        assert case.startswith("corpus/") and os.path.exists(os.path.join(ROOT, case)), f"{fact.id}: no {case}"
    if fact.status == "kept":
        assert fact.by_lightning or (fact.rules and fact.keepers), f"{fact.id}: kept by what?"
    else:
        assert fact.gap, f"{fact.id}: a {fact.status} fact says what is not kept"
    if fact.status in ("marked", "partial"):
        assert fact.rules and fact.keepers
    if fact.seen_to_fail:  # it names the case that failed first
        assert "corpus/" + fact.seen_to_fail.split()[0].rstrip(",") in fact.cases, fact.id
    if fact.blind:  # it names a case that did not fail
        assert fact.blind.split()[0].endswith(".py"), fact.id


def test_named_cases_exercise_something():
    """A case file named by a fact is a runnable case (it has the entry point)."""
    for case in {c for f in FACTS for c in f.cases}:
        path = os.path.join(ROOT, case)
        if os.path.isdir(path):
            continue
        with open(path, encoding="utf-8") as fh:
            assert "def lightmigrate_case" in fh.read(), case


def test_new_facts_name_a_loop_file():
    for fact in FACTS:
        if fact.new:
            assert fact.section.startswith("loops/"), fact.id
        else:
            assert re.fullmatch(r"B\.\d+", fact.section), fact.id


def test_totals_add_up():
    t = totals()
    assert t["facts"] == len(FACTS)
    assert sum(t[s] for s in STATUSES) == len(FACTS)
    assert t["with a case"] + t["with a reason"] + t["case to write"] == len(FACTS)
    assert t["new from the loops"] == sum(f.new for f in FACTS)


def test_case_to_write_is_spelt_out():
    for fact in FACTS:
        if NO_CASE in fact.reason:
            assert fact.reason.startswith(NO_CASE), fact.id


def test_facts_for_rule():
    lm001 = facts_for_rule("LM001")
    assert lm001 and all("LM001" in f.rules for f in lm001)
    assert facts_for_rule("LM311") == []


def test_rule_detail_lists_its_facts():
    from lightmigrate.output.console import rule_detail
    from lightmigrate.rules import rules_by_code

    text = rule_detail(rules_by_code()["LM001"])
    assert "1.9 facts it keeps" in text
    for fact in facts_for_rule("LM001"):
        assert fact.id in text
    for case in facts_for_rule("LM001")[1].cases:
        assert os.path.basename(case) in text


def test_rule_page_lists_its_facts():
    from lightmigrate.docs import rule_page
    from lightmigrate.rules import rules_by_code

    page = rule_page(rules_by_code()["LM005"])
    assert "## 1.9 facts it keeps" in page
    for fact in facts_for_rule("LM005"):
        assert f"| {fact.id} |" in page


def test_coverage_counts_facts():
    from lightmigrate.coverage import render_markdown

    page = render_markdown(ALL_RULES)
    t = totals()
    assert "## 1.9 semantics ledger" in page
    assert f"| facts | {t['facts']} |" in page
    for key in ("kept", "marked", "partial", "missing", "with a case", "with a reason", "seen to fail",
                "case not seen to fail", "new from the loops"):
        assert f"| {key} | {t[key]} |" in page


def test_facts_not_seen_to_fail_are_counted():
    """A fact a rule keeps, with a case but no ``seen_to_fail``, is counted apart (and reported by
    ``lightmigrate coverage``): its case may pass with the handling removed."""
    waiting = [f for f in FACTS if f.cases and not f.by_lightning and not f.seen_to_fail]
    assert totals()["case not seen to fail"] == len(waiting)
    for fact in FACTS:
        if fact.seen_to_fail:
            assert not fact.not_seen_to_fail, fact.id
            # it says what happened: the case mismatched or errored
            assert "mismatch" in fact.seen_to_fail or "error" in fact.seen_to_fail, fact.id
