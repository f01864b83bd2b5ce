"""The coverage ledger: committed spec rows, rule coverage keys, and docs/coverage.md."""

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from lightmigrate.cli import main
from lightmigrate.coverage import (
    NOT_HANDLED,
    REGENERATE,
    SpecRow,
    ledger,
    load_rows,
    render_markdown,
    totals,
    unknown_keys,
)
from lightmigrate.rules import ALL_RULES
from engine_toys import WholeFileRule
from lightmigrate.rules.base import Handling

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT.parent / "shared" / "spec" / "lightning-1-to-2.md"  # shared/ sits beside the repo (CI, developers)
A8_IDS = {"A8-trainer-args", "A8-fit-keywords", "A8-hooks", "A8-checkpoint-state", "A8-module", "A8-imports",
          "A8-trainer-attributes", "A8-callbacks-loggers"}


def test_spec_rows_cover_every_section_of_a():
    rows = load_rows()
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids))
    assert {r.section for r in rows} == {f"A.{i}" for i in range(1, 9)}
    assert A8_IDS <= set(ids)
    assert {f"B-{i}" for i in range(1, 15)} <= set(ids)
    assert {"M1", "M27", "C13", "T0", "T32", "T-meth4", "T-prop15", "R46", "L3", "CLI4"} <= set(ids)
    t1 = next(r for r in rows if r.id == "T1")
    assert t1.old == "`gpus=N`" and t1.category == "1" and t1.section == "A.3"


def test_every_coverage_key_is_a_real_row_id():
    assert unknown_keys(ALL_RULES) == {}
    for rule in ALL_RULES:
        assert all(isinstance(h, Handling) for h in rule.coverage.values()), rule.code


def test_unknown_keys_are_caught():
    class Fake(WholeFileRule):
        code = "LM999"
        coverage = {"M1": Handling.REWRITTEN, "M99": Handling.MARKED}

    assert unknown_keys([Fake()]) == {"LM999": ["M99"]}


def test_status_is_the_strongest_handling_and_totals_add_up():
    rows = [SpecRow("X1", "A.1", "t", "old", "new", "1"), SpecRow("X2", "A.1", "t", "o", "n", "3"),
            SpecRow("X3", "A.1", "t", "o", "n", "3")]

    class A(WholeFileRule):
        code = "LM901"
        coverage = {"X1": Handling.MARKED, "X2": Handling.NOTED}

    class B(WholeFileRule):
        code = "LM902"
        coverage = {"X1": Handling.REWRITTEN}

    entries = ledger([A(), B()], rows)
    assert [e.status for e in entries] == ["rewritten", "noted", NOT_HANDLED]
    assert entries[0].handlers == (("LM901", Handling.MARKED), ("LM902", Handling.REWRITTEN))
    counts = totals(entries)
    assert counts["rewritten"] == 1 and counts["noted"] == 1 and counts[NOT_HANDLED] == 1
    assert sum(counts.values()) == 3


def test_existing_rules_fill_their_rows():
    by_id = {e.row.id: e for e in ledger(ALL_RULES)}
    assert ("LM001", Handling.REWRITTEN) in by_id["M1"].handlers
    assert ("LM003", Handling.REWRITTEN) in by_id["M4"].handlers
    assert ("LM006", Handling.REWRITTEN) in by_id["M16"].handlers
    assert ("LM002", Handling.MARKED) in by_id["A8-hooks"].handlers
    assert by_id["M20"].status in ("rewritten", "marked")


def test_docs_coverage_md_is_up_to_date():
    committed = (ROOT / "docs" / "coverage.md").read_text(encoding="utf-8")
    assert committed == render_markdown(ALL_RULES), (
        f"docs/coverage.md is out of date; regenerate it with: {REGENERATE}")


def test_cli_coverage_prints_every_row_and_the_totals():
    result = CliRunner().invoke(main, ["coverage"])
    assert result.exit_code == 0, result.output
    counts = totals(ledger(ALL_RULES))
    assert f"{sum(counts.values())} spec rows: {counts['rewritten']} rewritten" in result.output
    for row_id in ("M1", "T-prop15", "A8-callbacks-loggers", "B-14"):
        assert row_id in result.output
    md = CliRunner().invoke(main, ["coverage", "--markdown"])
    assert md.exit_code == 0 and md.output == render_markdown(ALL_RULES)


def test_spec_rows_json_matches_the_spec_when_it_is_available():
    """The dev script regenerates exactly the committed data (only where the spec is present)."""
    if not SPEC.exists():
        import pytest

        pytest.skip(f"spec not available at {SPEC}")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "spec_rows.py"), str(SPEC), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((ROOT / "lightmigrate" / "catalog" / "spec_rows.json").read_text(encoding="utf-8"))
