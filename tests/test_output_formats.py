"""--output-format json|sarif, run as a user would; SARIF validated against the official schema."""

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
from lm_cli import CLEAN, EPOCH_END, MISSPELT, lightmigrate, snapshot, write
from sarif_schema import sarif_schema

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


@pytest.fixture(scope="module")
def schema():
    return sarif_schema()


def test_json_check_has_one_entry_per_change_and_marker(tmp_path):
    write(tmp_path, {"e.py": EPOCH_END, "m.py": MISSPELT, "c.py": CLEAN})
    before = snapshot(tmp_path)
    result = lightmigrate("rewrite", "--check", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert data["mode"] == "check"
    assert data["summary"] == {"files": 3, "changed": 2, "failed": 0, "markers": 1, "exit_code": 1}
    by_code = {(r["path"], r["code"], r["kind"]) for r in data["results"]}
    assert ("e.py", "LM001", "fixed") in by_code
    assert ("m.py", "LM002", "marker") in by_code
    marker = next(r for r in data["results"] if r["kind"] == "marker")
    assert marker["line"] == 5 and marker["column"] > 0 and marker["fixed"] is False
    assert "on_training_epoch_end" in marker["message"]
    assert all(r["fixed"] is False for r in data["results"])
    assert snapshot(tmp_path) == before  # --check writes nothing


def test_json_in_place_marks_changes_fixed(tmp_path):
    write(tmp_path, {"e.py": EPOCH_END})
    result = lightmigrate("rewrite", "--output-format", "json", ".", cwd=tmp_path)
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert data["mode"] == "write"
    assert [r["fixed"] for r in data["results"] if r["code"] == "LM001"] == [True]
    assert "def on_validation_epoch_end(self):" in (tmp_path / "e.py").read_text()


def test_json_diff_includes_the_patch(tmp_path):
    write(tmp_path, {"e.py": EPOCH_END})
    data = json.loads(lightmigrate("rewrite", "--diff", "--output-format", "json", ".", cwd=tmp_path).stdout)
    assert data["diffs"]["e.py"].startswith("--- a/e.py\n+++ b/e.py\n")


def test_sarif_check_is_valid_and_has_rules_results_fixes(tmp_path, schema):
    write(tmp_path, {"e.py": EPOCH_END, "m.py": MISSPELT, "bad.py": "def validation_epoch_end(:\n"})
    result = lightmigrate("rewrite", "--check", "--output-format", "sarif", ".", cwd=tmp_path)
    assert result.returncode == 2  # the broken file wins, the others are still reported
    log = json.loads(result.stdout)
    jsonschema.validate(log, schema)
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert {"LM001", "LM002"} <= set(rules)
    assert rules["LM001"]["helpUri"].startswith("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html")
    assert rules["LM001"]["shortDescription"]["text"]
    marker = next(r for r in run["results"] if r["ruleId"] == "LM002")
    assert marker["level"] == "warning"
    assert marker["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "m.py"
    assert marker["locations"][0]["physicalLocation"]["region"]["startLine"] == 5
    change = next(r for r in run["results"] if r["ruleId"] == "LM001")
    [replacement] = change["fixes"][0]["artifactChanges"][0]["replacements"]
    assert "def on_validation_epoch_end(self):" in replacement["insertedContent"]["text"]
    assert run["tool"]["driver"]["rules"][change["ruleIndex"]]["id"] == "LM001"
    [notification] = run["invocations"][0]["toolExecutionNotifications"]
    assert "syntax error" in notification["message"]["text"]


def test_sarif_fixes_applied_give_the_rewrite(tmp_path, schema):
    """Applying every SARIF fix to the originals gives exactly what `rewrite` writes, for every
    changed file of the bundled corpus."""
    shutil.copytree(CORPUS, tmp_path / "corpus", ignore=shutil.ignore_patterns("pending", "__pycache__"))
    result = lightmigrate("rewrite", "--check", "--output-format", "sarif", "corpus", cwd=tmp_path)
    log = json.loads(result.stdout)
    jsonschema.validate(log, schema)
    by_file = {}
    for r in log["runs"][0]["results"]:
        for fix in r.get("fixes", []):
            for change in fix["artifactChanges"]:
                by_file.setdefault(change["artifactLocation"]["uri"], []).extend(change["replacements"])
    originals = {uri: (tmp_path / uri).read_text() for uri in by_file}
    assert lightmigrate("rewrite", "corpus", cwd=tmp_path).returncode == 0
    changed = [p for p in (tmp_path / "corpus").rglob("*.py") if "pending" not in p.parts]
    assert len(by_file) >= 10
    for uri, replacements in by_file.items():
        lines = originals[uri].splitlines(keepends=True)
        for rep in sorted(replacements, key=lambda r: -r["deletedRegion"]["startLine"]):
            start, end = rep["deletedRegion"]["startLine"], rep["deletedRegion"]["endLine"]
            lines[start - 1:end - 1] = [rep["insertedContent"]["text"]]
        assert "".join(lines) == (tmp_path / uri).read_text(), uri
    rewritten = {str(p.relative_to(tmp_path)) for p in changed if p.read_text() != (CORPUS / p.relative_to(tmp_path / "corpus")).read_text()}
    assert rewritten == set(by_file)  # every rewritten file has fixes, and only those


def test_verify_sarif_reports_dead_hooks_and_errors(tmp_path, schema):
    from lightmigrate.verify.session import CaseResult, VerifyReport
    from lightmigrate.output.formats import verify_sarif

    report = VerifyReport("the v1 shim", [
        CaseResult("ok", str(tmp_path / "ok.py"), "match"),
        CaseResult("dead", str(tmp_path / "dead.py"), "match",
                   dead_hooks=[{"name": "training_step_end", "qualname": "M.training_step_end", "reason": "removed"}]),
        CaseResult("bad", str(tmp_path / "bad.py"), "error", error="boom"),
    ])
    log = verify_sarif(report)
    jsonschema.validate(log, schema)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["verify/dead-hook", "verify/error"]


def verify_case():
    case = EPOCH_END.replace("import pytorch_lightning as pl\n", "import pytorch_lightning as pl\nimport torch\nfrom torch.utils.data import DataLoader, TensorDataset\n")
    case = case.replace('        return {"x": 1}\n', '        return {"x": self.layer(batch[0]).sum()}\n\n'
                        '    def __init__(self):\n        super().__init__()\n        self.layer = torch.nn.Linear(2, 1)\n\n'
                        '    def training_step(self, batch, batch_idx):\n        return self.layer(batch[0]).sum()\n\n'
                        '    def training_step_end(self, out):\n        return out\n\n'
                        '    def configure_optimizers(self):\n        return torch.optim.SGD(self.parameters(), lr=0.1)\n')
    case += ('\n\ndef lightmigrate_case():\n    data = TensorDataset(torch.randn(4, 2))\n'
             '    return {"model": Model(), "train_dataloaders": DataLoader(data, batch_size=2),\n'
             '            "val_dataloaders": DataLoader(data, batch_size=2), "trainer": {"max_epochs": 1}}\n')
    return case


def test_verify_command_sarif(tmp_path, schema):
    """`lightmigrate verify --output-format sarif` on a real case (v1 shim on Lightning 2.x)."""
    write(tmp_path, {"case_epoch.py": verify_case()})
    result = lightmigrate("verify", "--output-format", "sarif", "case_epoch.py", cwd=tmp_path)
    log = json.loads(result.stdout)
    jsonschema.validate(log, schema)
    assert result.returncode == 0, result.stdout
    assert log["runs"][0]["results"] == []  # migrated: matches, and no hook is dead after migration


def test_verify_reads_the_configuration(tmp_path, schema):
    """With LM001 and LM003 ignored in pyproject.toml, verify migrates without them: the
    un-migrated hooks make the 2.x run differ (or fail), and SARIF says so."""
    write(tmp_path, {"case_epoch.py": verify_case(),
                     "pyproject.toml": '[tool.lightmigrate]\nignore = ["LM001", "LM003"]\n'})
    result = lightmigrate("verify", "--output-format", "sarif", "case_epoch.py", cwd=tmp_path)
    log = json.loads(result.stdout)
    jsonschema.validate(log, schema)
    assert result.returncode in (1, 2), result.stdout
    assert {r["ruleId"] for r in log["runs"][0]["results"]} & {"verify/mismatch", "verify/error"}


def pytest_report(tmp_path):
    """A `verify --pytest` report made by hand: one test of each verdict that counts."""
    from lightmigrate.verify.compare import Difference
    from lightmigrate.verify.pytest_mode import PytestReport, Side, TestOutcome

    tests = [
        TestOutcome("tests/test_a.py::test_same", "passed on both", "passed", "passed", runs=(1, 1), line=3),
        TestOutcome("tests/test_a.py::test_step_end", "behaviour differs", "passed", "passed", runs=(1, 1), line=7,
                    differences=[Difference("fit#1/hooks/dead/M.training_step_end", True, None, "dead after migration")]),
        TestOutcome("tests/test_b.py::TestX::test_epoch_end", "regressed", "passed", "failed", line=12,
                    error="NotImplementedError: Support for `training_epoch_end` has been removed in v2.0.0"),
        TestOutcome("tests/test_b.py::test_broken", "failed on both", "failed", "failed", error="AssertionError"),
        TestOutcome("tests/test_b.py::test_old", "fixed", "failed", "passed", error="ValueError: old"),
    ]
    return PytestReport(Side("before", "/envs/before/bin/python", 0, {"pytorch_lightning": "1.9.5"}),
                        Side("after", "/envs/after/bin/python", 1, {"lightning": "2.6.6"}), tests, seconds=4.2,
                        project=str(tmp_path))


def test_verify_pytest_sarif_locates_regressions_and_differences_at_their_tests(tmp_path, schema, monkeypatch):
    from lightmigrate.output.formats import pytest_sarif

    monkeypatch.chdir(tmp_path)
    log = pytest_sarif(pytest_report(tmp_path))
    jsonschema.validate(log, schema)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["verify/mismatch", "verify/regressed"]
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert [rules[r["ruleIndex"]]["id"] for r in results] == ["verify/mismatch", "verify/regressed"]
    where = [r["locations"][0]["physicalLocation"] for r in results]
    assert [(w["artifactLocation"]["uri"], w["region"]["startLine"]) for w in where] == [
        ("tests/test_a.py", 7), ("tests/test_b.py", 12)]
    assert "fit#1/hooks/dead/M.training_step_end" in results[0]["message"]["text"]
    assert results[1]["message"]["text"].startswith("tests/test_b.py::TestX::test_epoch_end: passed before "
                                                    "migration, failed after: NotImplementedError")
    assert log["runs"][0]["properties"]["summary"]["regressed"] == 1


def test_verify_pytest_junit_has_a_case_per_test(tmp_path):
    import xml.etree.ElementTree as ET

    from lightmigrate.output.junit import pytest_junit

    root = ET.fromstring(pytest_junit(pytest_report(tmp_path)))
    suite = root.find("testsuite")
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "5", "failures": "2", "errors": "0", "skipped": "1"}
    cases = {(c.get("classname"), c.get("name")): c for c in suite.findall("testcase")}
    assert list(cases) == [("tests.test_a", "test_same"), ("tests.test_a", "test_step_end"),
                           ("tests.test_b.TestX", "test_epoch_end"), ("tests.test_b", "test_broken"),
                           ("tests.test_b", "test_old")]
    assert len(cases[("tests.test_a", "test_same")]) == 0  # passed
    differs = cases[("tests.test_a", "test_step_end")].find("failure")
    assert differs.get("message") == "behaviour differs after migration"
    assert "fit#1/hooks/dead/M.training_step_end" in differs.text
    regressed = cases[("tests.test_b.TestX", "test_epoch_end")]
    assert regressed.get("file") == "tests/test_b.py" and regressed.get("line") == "12"
    assert regressed.find("failure").get("message").startswith("regressed after migration (failed): NotImpl")
    assert cases[("tests.test_b", "test_broken")].find("skipped").get("message") == \
        "failed before and after migration: AssertionError"
    assert "fixed" in cases[("tests.test_b", "test_old")].find("system-out").text
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["before"] == "Lightning 1.9.5 (/envs/before/bin/python)"


def test_verify_junit_of_cases_and_of_a_side_that_could_not_run(tmp_path):
    import xml.etree.ElementTree as ET

    from lightmigrate.output.junit import pytest_junit, verify_junit
    from lightmigrate.verify.compare import Difference
    from lightmigrate.verify.session import CaseResult, VerifyReport

    report = VerifyReport("the v1 shim", [
        CaseResult("ok", "ok.py", "match"),
        CaseResult("drift", "drift.py", "mismatch", differences=[Difference("case/metrics", 1, 2, "differs")]),
        CaseResult("bad", "bad.py", "error", error="boom\nmore"),
    ])
    suite = ET.fromstring(verify_junit(report)).find("testsuite")
    assert [(c.get("name"), [e.tag for e in c]) for c in suite.findall("testcase")] == [
        ("ok", []), ("drift", ["failure"]), ("bad", ["error"])]
    assert suite.find("testcase/error").get("message") == "boom"
    broken = pytest_report(tmp_path)
    broken.tests, broken.problems = [], ["the original code's tests could not run (x: no tests were collected)"]
    suite = ET.fromstring(pytest_junit(broken)).find("testsuite")
    assert suite.get("errors") == "1" and suite.find("testcase").get("name") == "environment"
