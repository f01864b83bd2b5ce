"""The survey: the project class index of a run's files, built once, on one or more processes."""

from pathlib import Path

from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.engine.survey import survey
from lightmigrate.rules import ALL_RULES, OPT_IN_RULES
from lightmigrate.rules.base import Rule

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def test_the_survey_builds_the_index_one_process_would_build():
    paths = sorted(CORPUS.glob("*.py"))
    items = [(p.read_text(encoding="utf-8"), str(p)) for p in paths]
    alone = ProjectIndex()
    for text, path in items:
        alone.add_source(text, path, lazy=True)
    expected = sorted((c.name, c.path, c.bases) for c in alone.classes())
    assert len(expected) > 50
    for jobs in (1, 2):
        index = survey(items * 20 if jobs == 2 else items, jobs)  # (enough text for the pool)
        found = sorted({(c.name, c.path, c.bases) for c in index.classes()})
        assert found == expected


def test_every_rule_decides_in_find_and_has_no_gate():
    for rule in [*ALL_RULES, *OPT_IN_RULES]:
        kind = type(rule)
        assert isinstance(rule, Rule)
        assert kind.find is not Rule.find, rule.code
        # a rule edits code in ``fix``, or only reports in ``report`` (``edits_code`` False)
        assert (kind.fix is not Rule.fix) if rule.edits_code else (kind.report is not Rule.report), rule.code
        for gone in ("needed", "may_need", "gate_kinds", "gate_reads_hook_facts", "apply"):
            assert not hasattr(rule, gone), (rule.code, gone)


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


def test_a_file_the_index_parses_at_once_is_merged_into_the_survey_index():
    # (lines ending in a lone "\r" cannot be searched as text: the index parses such a file)
    texts = [("import lightning.pytorch as pl\r\r\nclass Base(pl.LightningModule):\r    def training_step(self):\r"
              "        pass\r", "base.py"),
             ("from base import Base\n\n\nclass Child(Base):\n    def training_step(self):\n        pass\n", "child.py")]
    index = survey(texts, 1)
    assert [c.name for c in index.descendants(index.resolve("Base"))] == ["Child"]
