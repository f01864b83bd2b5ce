"""The real-project sweep (bench/project_sweep.py) on its CI slice: one small project
(gluonts, declared in bench/sweep_projects.toml), a handful of its tests, on both sides.

The project's sdist and pinned extra deps are fetched from PyPI into bench/.cache/sweep/ (through
constraints.txt) the first time; later runs reuse them. Without the two environments of
scripts/setup-dev.sh or without PyPI the slice skips locally and FAILS under CI (``$CI`` set).
The pure parts (JUnit parsing, first error lines, the comparison, markers) are tested on
made-up inputs and always run.
"""

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import project_sweep  # noqa: E402
import sweep_env  # noqa: E402
from project_sweep import FAILED, PASSED, SKIPPED, Outcome, SideRun  # noqa: E402

CI_PROJECT = "gluonts"


def _unavailable(message):
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


# ---------------------------------------------------------------------------------------------
# The pure parts


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="5">
<testcase classname="tests.test_a" name="test_ok" file="tests/test_a.py" line="3" time="0.1"/>
<testcase classname="tests.test_a.TestK" name="test_bad[x]" file="tests/test_a.py" line="9" time="0.1">
  <failure message="AttributeError: 'Trainer' object has no attribute 'x'">tests/test_a.py:10: in test_bad
    trainer.x
E   AttributeError: 'Trainer' object has no attribute 'x'</failure></testcase>
<testcase classname="tests.test_a" name="test_skip" file="tests/test_a.py" line="20" time="0.0">
  <skipped type="pytest.skip" message="no gpu">no gpu</skipped></testcase>
<testcase classname="tests.test_a" name="test_teardown" file="tests/test_a.py" line="30" time="0.1">
  <error message="failed on teardown with &quot;RuntimeError: boom&quot;">E   RuntimeError: boom</error></testcase>
<testcase classname="" name="tests.test_b" file="tests/test_b.py" time="0.0">
  <error message="collection failure">tests/test_b.py:1: in &lt;module&gt;
E   ImportError: cannot import name 'LightningDataModule'</error></testcase>
</testsuite></testsuites>
"""


def test_parse_junit_ids_statuses_and_first_error_lines(tmp_path):
    path = tmp_path / "r.xml"
    path.write_text(JUNIT)
    out = project_sweep.parse_junit(path)
    assert out["tests/test_a.py::test_ok"] == Outcome(PASSED)
    assert out["tests/test_a.py::TestK::test_bad[x]"] == Outcome(
        FAILED, "AttributeError: 'Trainer' object has no attribute 'x'")
    assert out["tests/test_a.py::test_skip"].status == SKIPPED
    assert out["tests/test_a.py::test_teardown"] == Outcome(FAILED, "RuntimeError: boom")
    assert out["tests/test_b.py"] == Outcome(FAILED, "ImportError: cannot import name 'LightningDataModule'")


def test_compare_regressions_fixed_and_tests_missing_after():
    before = SideRun({"t.py::a": Outcome(PASSED), "t.py::b": Outcome(PASSED), "u.py::c": Outcome(PASSED),
                      "t.py::d": Outcome(FAILED, "ValueError: x"), "t.py::e": Outcome(PASSED)}, 1.0, 1)
    after = SideRun({"t.py::a": Outcome(PASSED), "t.py::b": Outcome(FAILED, "TypeError: y"),
                     "u.py": Outcome(FAILED, "ImportError: z"), "t.py::d": Outcome(PASSED),
                     "t.py::e": Outcome(SKIPPED)}, 1.0, 1)
    regressions, fixed = project_sweep.compare(before, after)
    assert regressions == [
        {"test": "t.py::b", "status": FAILED, "error": "TypeError: y"},
        {"test": "t.py::e", "status": SKIPPED, "error": SKIPPED},
        {"test": "u.py::c", "status": FAILED, "error": "ImportError: z"},
    ]
    assert fixed == ["t.py::d"]


def test_compare_matches_cases_whose_generated_ids_differ_between_the_runs():
    """pykeen's parameters come from a set: the same (model, loop) case is ``model_kwargs0-slcwa``
    in one run and ``model_kwargs1-slcwa`` in the other; both passed, so no regression and no fix."""
    before = SideRun({"t.py::f[A-model_kwargs0-slcwa]": Outcome(PASSED), "t.py::f[A-model_kwargs1-lcwa]": Outcome(PASSED),
                      "t.py::f[B-model_kwargs2-slcwa]": Outcome(PASSED)}, 1.0, 0)
    after = SideRun({"t.py::f[A-model_kwargs0-lcwa]": Outcome(PASSED), "t.py::f[A-model_kwargs1-slcwa]": Outcome(PASSED),
                     "t.py::f[B-model_kwargs2-lcwa]": Outcome(FAILED, "TypeError: y")}, 1.0, 1)
    assert project_sweep.auto_id_key("t.py::f[A-model_kwargs12-slcwa]") == "t.py::f[A-model_kwargs#-slcwa]"
    regressions, fixed = project_sweep.compare(before, after)
    assert regressions == [{"test": "t.py::f[B-model_kwargs2-slcwa]", "status": FAILED,
                            "error": "not run after the migration (pytest exit 1)"}]
    assert fixed == []


def test_a_baseline_is_reused_only_for_the_same_sdist_and_tests(tmp_path):
    project = sweep_env.load_projects()[CI_PROJECT]
    args = project.pytest_args(None)
    assert project_sweep.reused_baseline(tmp_path, project, args) is None  # nothing recorded yet
    (tmp_path / "baseline.xml").write_text(JUNIT)
    assert project_sweep.reused_baseline(tmp_path, project, args) is None  # no stamp: not known to match
    project_sweep.stamp_baseline(tmp_path, project, args)
    reused = project_sweep.reused_baseline(tmp_path, project, args)
    assert reused is not None and reused.outcomes == project_sweep.parse_junit(tmp_path / "baseline.xml")
    assert project_sweep.reused_baseline(tmp_path, project, [*args, "-k", "other"]) is None


def test_markers_are_read_from_the_files(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(textwrap.dedent("""\
        x = 1
            # TODO(lightmigrate): LM002 `on_epoch_end` is never called
        y = 2  # TODO(lightmigrate): LM105 something
        """))
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.py").write_text("# TODO(lightmigrate): LM001 not project code\n")
    markers = project_sweep.find_markers(tmp_path)
    assert [(m.path, m.line, m.code) for m in markers] == [("pkg/m.py", 2, "LM002"), ("pkg/m.py", 3, "LM105")]


def test_declared_projects_are_pinned():
    projects = sweep_env.load_projects()
    assert len(projects) >= 3
    for p in projects.values():
        assert p.sdist.count("==") == 1 and p.tests, p.name
        assert all("==" in d for d in p.deps), p.name
    assert "ci" in projects[CI_PROJECT].slices


# ---------------------------------------------------------------------------------------------
# The CI slice, for real


@pytest.fixture(scope="module")
def ci_report(tmp_path_factory):
    try:
        sweep_env.side_pythons()
    except sweep_env.SweepSetupError as exc:
        _unavailable(str(exc))
    project = sweep_env.load_projects()[CI_PROJECT]
    report = project_sweep.sweep_project(project, "ci", timeout=600, work=tmp_path_factory.mktemp("sweep"))
    if report.problem and ("downloading" in report.problem or "installing" in report.problem):
        _unavailable(report.problem)
    return report


@pytest.mark.oracle
def test_ci_slice_runs_both_sides(ci_report):
    r = ci_report
    assert r.problem == ""
    assert r.migrate_exit == 0 and r.migrate_errors == []
    assert r.baseline_passed > 0 and r.baseline_total >= r.baseline_passed
    assert r.migrated_total > 0
    for side in ("baseline tests", "migrated tests", "migrate"):
        assert r.seconds[side] > 0


@pytest.mark.oracle
def test_ci_slice_regressions_each_have_an_error_line(ci_report):
    text = project_sweep.render([ci_report])
    for reg in ci_report.regressions:
        assert reg["error"].strip()
        assert reg["test"] in text and reg["error"] in text
    # every baseline pass either still passes or is listed as a regression
    assert ci_report.migrated_passed >= ci_report.baseline_passed - len(ci_report.regressions)


@pytest.mark.oracle
def test_ci_slice_markers_match_the_migrated_files(ci_report):
    r = ci_report
    root = Path(r.migrated_root)
    assert len(r.markers) == r.markers_reported
    for m in r.markers:
        line = (root / m.path).read_text().splitlines()[m.line - 1]
        assert "TODO(lightmigrate)" in line and m.code in line


@pytest.mark.oracle
def test_ci_slice_table_and_json(ci_report):
    text = project_sweep.render([ci_report])
    header, rule, row = text.splitlines()[:3]
    assert header.split()[:3] == ["project", "sdist", "baseline"]
    assert row.split()[:4] == [CI_PROJECT, ci_report.sdist, f"{ci_report.baseline_passed}/{ci_report.baseline_total}",
                               f"{ci_report.migrated_passed}/{ci_report.migrated_total}"]
    assert f"{CI_PROJECT}: {len(ci_report.markers)}" in text
    data = json.loads(project_sweep.to_json([ci_report]))
    assert data[0]["name"] == CI_PROJECT and len(data[0]["markers"]) == len(ci_report.markers)
    assert project_sweep.render(project_sweep.from_json(project_sweep.to_json([ci_report]))) == text
