"""The survey: the index, the facts, and the hook facts some gates read, worked out once."""

from pathlib import Path

import lightmigrate.analysis.facts as facts_module
from lightmigrate.engine.survey import FACTS, HOOK_FACTS, survey
from lightmigrate.analysis.facts import remember
from lightmigrate.rules.base import GatedRule, RuleContext
from lightmigrate.rules.shared.gates import remember_hook_facts
from lightmigrate.analysis.facts import file_facts
from lightmigrate.rules import ALL_RULES
from lightmigrate.rules.shared.gates import hook_facts

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def needs_rules(text, path, rules, facts, project, hooks) -> bool:
    """Whether some gate (of rules still behind one) needs ``text``, given the survey's facts."""
    remember(text, facts)
    if hooks is not None:
        remember_hook_facts(text, hooks)
    ctx = RuleContext(path=path, project=project)
    return any(rule.needed(text, ctx) for rule in rules if rule.may_apply(text))


def test_survey_gives_hook_facts_only_where_asked_and_equal_to_the_gates_own():
    paths = sorted(CORPUS.glob("*.py"))[:12]
    items = [(p.read_text(encoding="utf-8"), str(p), (0, FACTS, HOOK_FACTS)[k % 3]) for k, p in enumerate(paths)]
    for jobs in (1, 2):
        _, facts, hooks = survey(items, jobs)
        assert set(facts) == {k for k, item in enumerate(items) if item[2]}
        assert set(hooks) == {k for k, item in enumerate(items) if item[2] == HOOK_FACTS}
        for k, found in hooks.items():
            assert found == hook_facts(items[k][0] + "\n")  # another text: worked out afresh
            assert facts[k] == file_facts(items[k][0])


def test_gates_read_the_surveys_hook_facts_without_parsing_again(monkeypatch):
    path = CORPUS / "optimizer_step_warmup_override.py"
    text = path.read_text(encoding="utf-8")
    project, facts, hooks = survey([(text, str(path), HOOK_FACTS)])
    parsed = []
    real = facts_module.parse_tree
    monkeypatch.setattr(facts_module, "parse_tree", lambda t: (parsed.append(t), real(t))[1])
    import lightmigrate.rules.shared.gates as gates_module

    monkeypatch.setattr(gates_module, "parse_tree", facts_module.parse_tree)
    monkeypatch.setattr(gates_module, "_HOOK_FACTS", {})  # nothing cached from earlier tests
    rules = [r for r in ALL_RULES if getattr(r, "gate_reads_hook_facts", False)]
    assert rules and needs_rules(text, str(path), rules, facts[0], project, hooks[0])
    assert parsed == []
    gates_module._HOOK_FACTS.clear()  # without the survey's, the gate parses the file itself
    assert needs_rules(text, str(path), rules, facts[0], project, None) and len(parsed) == 1


def test_every_rule_whose_gate_reads_hook_facts_says_so():
    import inspect
    import sys

    for rule in ALL_RULES:
        source = inspect.getsource(sys.modules[type(rule).__module__])
        reads = "hook_facts(" in source or "hooks_kind_methods(" in source
        assert getattr(rule, "gate_reads_hook_facts", False) == reads, rule.code
        assert isinstance(rule, GatedRule) or not reads, rule.code  # a rule with find reads its tree


def test_a_worker_given_the_surveys_facts_does_not_parse_the_file_with_ast_again(monkeypatch):
    import lightmigrate.engine.transform as transform_module
    from lightmigrate.engine.model import Mode
    from lightmigrate.engine.run import _process_selected
    from lightmigrate.engine.source import read_source

    path = CORPUS / "optimizer_step_warmup_override.py"
    source = read_source(str(path))
    project, facts, hooks = survey([(source.text, str(path), HOOK_FACTS)])
    parsed = []
    real = transform_module._python_tree
    monkeypatch.setattr(transform_module, "_python_tree", lambda t, p: (parsed.append(p), real(t, p))[1])
    codes = tuple(r.code for r in ALL_RULES)
    with_facts = _process_selected((source, codes, facts[0], hooks[0]), ALL_RULES, project, Mode.CHECK)
    assert parsed == [] and with_facts.changed
    facts_module._CACHE.clear()  # a worker that was not given them parses
    without = _process_selected((source, codes, None, None), ALL_RULES, project, Mode.CHECK)
    assert parsed == [str(path)]
    assert (without.changed, without.findings, without.changes) == (with_facts.changed, with_facts.findings,
                                                                   with_facts.changes)


def test_sized_spans_cover_the_items_in_order_in_runs_of_about_equal_size():
    from lightmigrate.engine.survey import sized_spans

    sizes = [(i * 37) % 101 + 1 for i in range(500)]
    for jobs in (1, 2, 3):
        spans = sized_spans(sizes, lambda n: n, jobs)
        assert spans[0][0] == 0 and spans[-1][1] == len(sizes)
        assert all(a < b for a, b in spans) and all(spans[k][1] == spans[k + 1][0] for k in range(len(spans) - 1))
        target = sum(sizes) / (8 * jobs)
        assert 8 * jobs - 1 <= len(spans) <= 8 * jobs + 1
        assert all(sum(sizes[a:b]) < target + 102 for a, b in spans)
    assert sized_spans([], len, 2) == [(0, 0)]
