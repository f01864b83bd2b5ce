"""JUnit XML for ``lightmigrate verify`` (``--junit-xml FILE``), which CI systems show as a test
report. ``verify --pytest``: one test case per test of the project; ``regressed`` and
``behaviour differs`` are failures (with the error line or the first differences), ``failed on
both`` and ``skipped`` are skipped (not the migration's doing), ``fixed`` passes with a note.
``verify`` of cases: one test case per case; a mismatch is a failure, a case that could not run
an error. A side or path that could not run at all is an error of a test case named
``lightmigrate verify``."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, List, Optional, Tuple

from lightmigrate.verify.compare import format_differences

SUITE = "lightmigrate verify"


def _suite(name: str, seconds: float, properties: List[Tuple[str, str]]) -> Tuple[ET.Element, ET.Element]:
    root = ET.Element("testsuites", name=SUITE)
    suite = ET.SubElement(root, "testsuite", name=name, time=f"{seconds:.3f}")
    if properties:
        props = ET.SubElement(suite, "properties")
        for key, value in properties:
            ET.SubElement(props, "property", name=key, value=value)
    return root, suite


def _case(suite: ET.Element, classname: str, name: str, kind: Optional[str] = None, message: str = "",
          text: str = "", **attrs: str) -> ET.Element:
    case = ET.SubElement(suite, "testcase", classname=classname, name=name, **attrs)
    if kind == "system-out":
        ET.SubElement(case, "system-out").text = message
    elif kind:
        element = ET.SubElement(case, kind, message=message)
        if text:
            element.text = text
    return case


def _finish(root: ET.Element, suite: ET.Element) -> str:
    cases = suite.findall("testcase")
    for kind, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(attr, str(sum(c.find(kind) is not None for c in cases)))
    suite.set("tests", str(len(cases)))
    for attr in ("tests", "failures", "errors", "skipped", "time"):
        root.set(attr, suite.get(attr, "0"))
    if hasattr(ET, "indent"):
        ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _test_names(nodeid: str) -> Tuple[str, str]:
    """pytest's convention: ``tests/test_a.py::TestX::test_y`` -> (``tests.test_a.TestX``, ``test_y``)."""
    parts = nodeid.split("::")
    path = parts[0][:-3] if parts[0].endswith(".py") else parts[0]
    return ".".join([path.replace("/", "."), *parts[1:-1]]), parts[-1] if len(parts) > 1 else parts[0]


def pytest_junit(report: Any) -> str:
    before = report.before.versions.get("pytorch_lightning") or report.before.versions.get("lightning") or "?"
    after = report.after.versions.get("lightning") or report.after.versions.get("pytorch_lightning") or "?"
    root, suite = _suite(f"{SUITE} --pytest", report.seconds,
                         [("before", f"Lightning {before} ({report.before.python})"),
                          ("after", f"Lightning {after} ({report.after.python})")])
    for problem in report.problems:
        _case(suite, SUITE, "environment", "error", problem.splitlines()[0], problem)
    for test in report.tests:
        classname, name = _test_names(test.nodeid)
        attrs = {"file": test.nodeid.split("::")[0]}
        if test.line:
            attrs["line"] = str(test.line)
        error = test.error or ""
        if test.verdict == "behaviour differs":
            _case(suite, classname, name, "failure", "behaviour differs after migration",
                  format_differences(test.differences[:20]), **attrs)
        elif test.verdict == "regressed":
            _case(suite, classname, name, "failure", f"regressed after migration ({test.after}): {error}", error,
                  **attrs)
        elif test.verdict == "failed on both":
            _case(suite, classname, name, "skipped", f"failed before and after migration: {error}", **attrs)
        elif test.verdict == "skipped":
            _case(suite, classname, name, "skipped", error or "skipped", **attrs)
        elif test.verdict == "fixed":
            _case(suite, classname, name, "system-out", f"fixed: {test.before} before migration ({error}), "
                                                         "passes after", **attrs)
        else:
            _case(suite, classname, name, **attrs)
    return _finish(root, suite)


def verify_junit(report: Any) -> str:
    root, suite = _suite(SUITE, report.seconds, [("reference", report.reference)])
    for problem in report.problems:
        _case(suite, SUITE, "paths", "error", problem.splitlines()[0], problem)
    for case in report.cases:
        if case.verdict == "mismatch":
            _case(suite, SUITE, case.name, "failure", "behaviour differs after migration",
                  format_differences(case.differences[:20]), file=case.path)
        elif case.verdict == "error":
            _case(suite, SUITE, case.name, "error", (case.error or "could not run").splitlines()[0],
                  case.error or "", file=case.path)
        else:
            _case(suite, SUITE, case.name, file=case.path)
    return _finish(root, suite)
