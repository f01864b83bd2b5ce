"""Machine-readable reports: ``--output-format json`` and ``--output-format sarif``.

JSON (``rewrite``): ``{"version", "mode", "summary": {...}, "results": [...], "errors": [...]}``
with one result per change or marker or note: ``path``, ``cell`` (notebooks; else null),
``line``, ``column``, ``code``, ``kind`` (``fixed``/``marker``/``note``), ``message`` and
``fixed`` (true when the change was written to disk, i.e. an in-place run).

SARIF 2.1.0: one run of the ``lightmigrate`` tool with every rule's metadata (id, name, short
and full description, help URI: the rule's page of the upgrade guide), and one result per
entry as in JSON, located by a path relative to the current directory (``%SRCROOT%``). Changes
not yet written (``--check``/``--diff``) carry a SARIF ``fix`` with the replacement text.
Markers are warnings, changes still to make are warnings, notes are notes, changes already
written are notes. ``verify`` results (one per mismatching or failing case and one per dead
hook) use the same envelope.
"""

from __future__ import annotations

import json
import os
import re
from typing import IO, Any, Dict, Iterator, List, Optional, Sequence, Tuple

from lightmigrate import __version__
from lightmigrate.engine.model import FileResult, Mode, RunReport
from lightmigrate.output.findings import Finding, Kind
from lightmigrate.rules.base import Rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"
FORMATS = ("text", "json", "sarif")
_URL = re.compile(r"https?://[^\s)>\]]+")


def effective_mode(mode: Mode, output_format: str) -> Mode:
    """``--check`` with a machine-readable format computes the diff too, for SARIF fixes."""
    return Mode.DIFF if mode is Mode.CHECK and output_format != "text" else mode


def entries(result: FileResult) -> List[Finding]:
    """A file's findings plus one entry per change of each rule that did not report its own."""
    own_fixed = {f.code for f in result.findings if f.kind is Kind.FIXED}
    out = list(result.findings) + [c for c in result.changes if c.code not in own_fixed]
    return sorted(out, key=lambda f: (f.cell, f.line, f.col, f.code))


def _rel(path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path))
    if rel.startswith(".."):
        rel = os.path.abspath(path)
    return rel.replace(os.sep, "/")


def report_json(report: RunReport, requested: Optional[Mode] = None) -> Dict[str, Any]:
    results = []
    for file in report.files:
        for f in entries(file):
            results.append({
                "path": file.path, "cell": f.cell or None, "line": f.line, "column": f.col, "code": f.code,
                "kind": f.kind.value, "message": f.message,
                "fixed": f.kind is Kind.FIXED and report.mode is Mode.WRITE,
            })
    return {
        "version": __version__,
        "mode": (requested or report.mode).value,
        "summary": {"files": report.scanned, "changed": report.changed, "failed": report.failed,
                    "markers": report.markers, "exit_code": report.exit_code},
        "results": results,
        "changed_files": [f.path for f in report.files if f.changed],
        "diffs": {f.path: f.diff for f in report.files if f.diff and requested is Mode.DIFF},
        "errors": [{"path": e.path, "line": e.line, "column": e.col, "message": e.message}
                   for f in report.files for e in f.all_problems],
    }


# --- SARIF ---------------------------------------------------------------------------------


def _guide_uri(rule: Rule) -> str:
    m = _URL.search(rule.guide or "")
    return m.group(0) if m else INFO_URI


def sarif_rules(rules: Sequence[Rule]) -> List[Dict[str, Any]]:
    return [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": (r.description or r.summary).strip()},
            "helpUri": _guide_uri(r),
            "help": {"text": f"{r.summary}\nUpgrade guide: {r.guide}"},
            "properties": {"safety": r.safety.value, "specRows": list(r.spec_rows)},
        }
        for r in rules
    ]


def _diff_replacements(diff: str) -> Iterator[Tuple[int, int, str]]:
    """(first old line, number of old lines, new text) for each run of -/+ lines of a unified diff."""
    old_line = 0
    run_start, run_deleted, run_added = 0, 0, []  # type: ignore[var-annotated]
    in_run = False

    def flush():
        return (run_start, run_deleted, "".join(run_added))

    for line in diff.splitlines(keepends=True):
        if line.startswith("@@"):
            if in_run:
                yield flush()
                in_run = False
            m = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
            old_line = int(m.group(1)) if m else 0
            if m and m.group(2) == "0":
                old_line += 1  # an insertion into an empty range is reported one line early
            continue
        if line.startswith(("---", "+++")) and not in_run and old_line == 0:
            continue
        if line.startswith("\\"):
            continue
        if line.startswith(("-", "+")):
            if not in_run:
                in_run, run_start, run_deleted, run_added = True, old_line, 0, []
            if line.startswith("-"):
                run_deleted += 1
                old_line += 1
            else:
                run_added.append(line[1:])
        else:
            if in_run:
                yield flush()
                in_run = False
            old_line += 1
    if in_run:
        yield flush()


def _file_fixes(file: FileResult, found: Sequence[Finding]) -> Dict[int, Dict[str, Any]]:
    """Index into ``found`` -> SARIF fix. Every replacement of the file's diff goes to exactly
    one FIXED result (the one on its lines, else the file's first), so applying all the fixes
    of a file gives what ``rewrite`` writes. Notebooks get none (the diff is of the JSON)."""
    fixed = [i for i, f in enumerate(found) if f.kind is Kind.FIXED]
    if not file.diff or not fixed or any(f.cell for f in found):
        return {}
    assigned: Dict[int, List[Dict[str, Any]]] = {i: [] for i in fixed}
    for start, deleted, added in _diff_replacements(file.diff):
        last = start + max(deleted - 1, 0)
        owner = next((i for i in fixed if start <= found[i].line <= last), fixed[0])
        end_line = start + deleted
        region = {"startLine": start, "startColumn": 1, "endLine": end_line, "endColumn": 1}
        assigned[owner].append({"deletedRegion": region, "insertedContent": {"text": added}})
    return {
        i: {"description": {"text": found[i].message},
            "artifactChanges": [{"artifactLocation": {"uri": _rel(file.path), "uriBaseId": "%SRCROOT%"},
                                 "replacements": reps}]}
        for i, reps in assigned.items() if reps
    }


def _location(path: str, line: int = 0, col: int = 0, cell: int = 0) -> Dict[str, Any]:
    physical: Dict[str, Any] = {"artifactLocation": {"uri": _rel(path), "uriBaseId": "%SRCROOT%"}}
    if line > 0 and not cell:
        physical["region"] = {"startLine": line, "startColumn": max(col, 1)}
    location: Dict[str, Any] = {"physicalLocation": physical}
    if cell:
        location["message"] = {"text": f"cell {cell}, line {line}"}
    return location


def sarif_log(rules: Sequence[Rule], results: List[Dict[str, Any]],
              notifications: Sequence[Dict[str, Any]] = (), extra_rules: Sequence[Dict[str, Any]] = ()) -> Dict[str, Any]:
    run: Dict[str, Any] = {
        "tool": {"driver": {"name": "lightmigrate", "version": __version__, "informationUri": INFO_URI,
                            "rules": sarif_rules(rules) + list(extra_rules)}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": _dir_uri(os.getcwd())}},
        "results": results,
    }
    if notifications:
        run["invocations"] = [{"executionSuccessful": False, "toolExecutionNotifications": list(notifications)}]
    else:
        run["invocations"] = [{"executionSuccessful": True}]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _dir_uri(path: str) -> str:
    from pathlib import Path

    uri = Path(path).resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def report_sarif(report: RunReport, rules: Sequence[Rule]) -> Dict[str, Any]:
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    for file in report.files:
        found = entries(file)
        fixes = {} if report.mode is Mode.WRITE else _file_fixes(file, found)
        for n, f in enumerate(found):
            written = f.kind is Kind.FIXED and report.mode is Mode.WRITE
            level = "note" if f.kind is Kind.NOTE or written else "warning"
            prefix = "" if not f.cell else f"cell {f.cell}, line {f.line}: "
            result: Dict[str, Any] = {
                "ruleId": f.code,
                "level": level,
                "message": {"text": prefix + f.message},
                "locations": [_location(file.path, f.line, f.col, f.cell)],
                "properties": {"lightmigrateKind": f.kind.value, "fixed": written},
            }
            if f.code in index:
                result["ruleIndex"] = index[f.code]
            if n in fixes:
                result["fixes"] = [fixes[n]]
            results.append(result)
    notifications = [
        {"level": "error", "message": {"text": e.message},
         "locations": [_location(e.path, e.line, e.col)]}
        for f in report.files for e in f.all_problems
    ]
    return sarif_log(rules, results, notifications)


def write_json(data: Dict[str, Any], stream: IO[str]) -> None:
    stream.write(json.dumps(data, indent=2) + "\n")


def print_run(report: RunReport, output_format: str, rules: Sequence[Rule], stream: IO[str],
              requested: Optional[Mode] = None) -> None:
    """Print ``report`` as JSON or SARIF on ``stream``; ``requested`` is the mode the user
    asked for (``--check`` runs as DIFF to compute fixes)."""
    data = report_json(report, requested) if output_format == "json" else report_sarif(report, rules)
    write_json(data, stream)


# --- verify ----------------------------------------------------------------------------------

VERIFY_RULES = [
    {"id": "verify/mismatch", "name": "behaviour-mismatch",
     "shortDescription": {"text": "The migrated case does not train like the original did."},
     "helpUri": INFO_URI},
    {"id": "verify/error", "name": "case-error",
     "shortDescription": {"text": "The case could not be run before or after migration."},
     "helpUri": INFO_URI},
    {"id": "verify/dead-hook", "name": "dead-hook",
     "shortDescription": {"text": "A hook-like method that Lightning 2.x never calls."},
     "helpUri": INFO_URI},
    {"id": "verify/regressed", "name": "test-regressed",
     "shortDescription": {"text": "A test that passed on Lightning 1.x fails after migration."},
     "helpUri": INFO_URI},
]


def verify_sarif(report) -> Dict[str, Any]:
    """SARIF for a ``lightmigrate verify`` report: one result per mismatching or failing case
    and one per dead hook."""
    from lightmigrate.verify.compare import format_differences

    results = []
    for case in report.cases:
        if case.verdict == "mismatch":
            text = format_differences(case.differences[:5]) or "the runs differ"
            results.append({"ruleId": "verify/mismatch", "ruleIndex": 0, "level": "error",
                            "message": {"text": f"{case.name}: behaviour differs after migration\n{text}"},
                            "locations": [_location(case.path)]})
        elif case.verdict == "error":
            results.append({"ruleId": "verify/error", "ruleIndex": 1, "level": "error",
                            "message": {"text": f"{case.name}: {case.error or 'could not run'}"},
                            "locations": [_location(case.path)]})
        for dead in case.dead_hooks:
            results.append({"ruleId": "verify/dead-hook", "ruleIndex": 2, "level": "warning",
                            "message": {"text": f"dead hook {dead.get('qualname', dead.get('name'))}: never called on "
                                                f"Lightning 2.x ({dead.get('reason', '')})"},
                            "locations": [_location(case.path)]})
    notifications = [{"level": "error", "message": {"text": p}} for p in report.problems]
    log = sarif_log([], results, notifications, VERIFY_RULES)
    log["runs"][0]["properties"] = {"reference": report.reference}
    return log


def pytest_sarif(report) -> Dict[str, Any]:
    """SARIF for ``verify --pytest``: one result per test that regressed or behaves
    differently, located at the test; a side that could not run is a notification."""
    from lightmigrate.verify.compare import format_differences

    results = []
    for test in report.tests:
        path = os.path.join(report.project or ".", test.nodeid.split("::")[0])
        if test.verdict == "behaviour differs":
            text = format_differences(test.differences[:5]) or "the Trainer runs differ"
            results.append({"ruleId": "verify/mismatch", "ruleIndex": 0, "level": "error",
                            "message": {"text": f"{test.nodeid}: behaviour differs after migration\n{text}"},
                            "locations": [_location(path, test.line or 0)]})
        elif test.verdict == "regressed":
            results.append({"ruleId": "verify/regressed", "ruleIndex": 3, "level": "error",
                            "message": {"text": f"{test.nodeid}: passed before migration, {test.after} after: "
                                                f"{test.error or ''}".rstrip(": ")},
                            "locations": [_location(path, test.line or 0)]})
    notifications = [{"level": "error", "message": {"text": p}} for p in report.problems]
    log = sarif_log([], results, notifications, VERIFY_RULES)
    log["runs"][0]["properties"] = {"mode": "pytest", "before": report.before.versions,
                                    "after": report.after.versions, "summary": report.counts()}
    return log
