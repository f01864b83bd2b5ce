"""Printing a verify report: a verdict table, then the first differences of each mismatch."""

from __future__ import annotations

import json
from typing import IO, Optional

from rich.console import Console
from rich.table import Table

from lightmigrate.verify.compare import format_differences
from lightmigrate.verify.session import VerifyReport, report_to_json

VERDICT_STYLE = {"match": "green", "mismatch": "bold red", "error": "bold yellow"}


def print_json(report: VerifyReport, stream: IO[str]) -> None:
    stream.write(json.dumps(report_to_json(report), indent=2, default=repr) + "\n")


def print_text(report: VerifyReport, stream: Optional[IO[str]] = None, color: bool = False,
               max_differences: int = 5) -> None:
    console = Console(file=stream, force_terminal=color, no_color=not color, width=120, soft_wrap=True)
    for problem in report.problems:
        console.print(problem, markup=False, highlight=False)
    for note in report.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    table = Table(title=f"lightmigrate verify (reference: {report.reference})")
    table.add_column("case")
    table.add_column("verdict")
    table.add_column("differences", justify="right")
    table.add_column("dead hooks")
    table.add_column("seconds (ref / migrated)", justify="right")
    for case in report.cases:
        secs = " / ".join(f"{s:.2f}" if isinstance(s, (int, float)) else "-" for s in case.seconds.values())
        table.add_row(
            case.name,
            f"[{VERDICT_STYLE[case.verdict]}]{case.verdict}[/]",
            str(len(case.differences)),
            ", ".join(d["name"] for d in case.dead_hooks) or "-",
            secs,
        )
    console.print(table)
    for case in report.cases:
        if case.verdict == "match" and not case.dead_hooks and not case.reference_note:
            continue
        console.print(f"\n{case.path}: {case.verdict}", markup=False, highlight=False)
        if case.reference_note and case.reference_note != case.error:
            console.print(f"  note: {case.reference_note}", markup=False, highlight=False)
        if case.error:
            console.print(f"  {case.error}", markup=False, highlight=False)
        for dead in case.dead_hooks:
            console.print(f"  dead hook {dead['qualname']}: never called on Lightning 2.x ({dead['reason']})",
                          markup=False, highlight=False)
        if case.differences:
            text = format_differences(case.differences[:max_differences])
            console.print("  " + text.replace("\n", "\n  "), markup=False, highlight=False)
            if len(case.differences) > max_differences:
                console.print(f"  ... {len(case.differences) - max_differences} more", markup=False)
    counts = {v: sum(c.verdict == v for c in report.cases) for v in ("match", "mismatch", "error")}
    console.print(f"\n{len(report.cases)} cases: {counts['match']} match, {counts['mismatch']} mismatch, "
                  f"{counts['error']} error ({report.seconds:.1f} s)", markup=False, highlight=False)


# --------------------------------------------------------------------------------------------
# verify --pytest

PYTEST_VERDICT_STYLE = {"passed on both": "green", "behaviour differs": "bold red", "regressed": "bold red",
                        "fixed": "cyan", "failed on both": "yellow", "skipped": "dim"}


def print_pytest_json(report, stream: IO[str]) -> None:
    from lightmigrate.verify.pytest_mode import report_to_json as pytest_report_to_json

    stream.write(json.dumps(pytest_report_to_json(report), indent=2, default=repr) + "\n")


def print_pytest_text(report, stream: Optional[IO[str]] = None, color: bool = False, max_differences: int = 5) -> None:
    """A table of the tests with their verdicts, then what went wrong in each test that did
    not pass on both sides alike."""
    console = Console(file=stream, force_terminal=color, no_color=not color, width=120, soft_wrap=True)
    for problem in report.problems:
        console.print(problem, markup=False, highlight=False)
    for note in report.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    if report.problems:
        return
    before = report.before.versions.get("pytorch_lightning") or "?"
    after = report.after.versions.get("lightning") or report.after.versions.get("pytorch_lightning") or "?"
    table = Table(title=f"lightmigrate verify --pytest (before: pytorch-lightning {before}, after: Lightning {after})")
    table.add_column("test")
    table.add_column("verdict")
    table.add_column("before")
    table.add_column("after")
    table.add_column("trainer runs", justify="right")
    for test in report.tests:
        table.add_row(test.nodeid, f"[{PYTEST_VERDICT_STYLE[test.verdict]}]{test.verdict}[/]", test.before, test.after,
                      " / ".join(map(str, test.runs)))
    console.print(table)
    for test in report.tests:
        if test.verdict in ("passed on both", "skipped"):
            continue
        console.print(f"\n{test.nodeid}: {test.verdict} (before: {test.before}, after: {test.after})",
                      markup=False, highlight=False)
        if test.error:
            console.print(f"  {test.error}", markup=False, highlight=False)
        if test.differences:
            text = format_differences(test.differences[:max_differences])
            console.print("  " + text.replace("\n", "\n  "), markup=False, highlight=False)
            if len(test.differences) > max_differences:
                console.print(f"  ... {len(test.differences) - max_differences} more", markup=False)
    counts = report.counts()
    parts = ", ".join(f"{n} {v}" for v, n in counts.items() if n or v in ("passed on both", "regressed"))
    console.print(f"\n{len(report.tests)} tests: {parts} ({report.seconds:.1f} s)", markup=False, highlight=False)
