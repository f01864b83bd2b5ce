"""Printing for the command line: run reports, diffs, and rule descriptions.

Where output goes: the diff (``--diff``), ``would rewrite`` lines (``--check``), findings and
the summary go to stdout, except under ``--diff``, where everything but the diff goes to stderr
so that stdout is a clean patch. Per-file problems always go to stderr.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import Dict, List, Sequence

import click

from lightmigrate.engine import Mode, RunReport
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import Rule

SHOWN_KINDS = (Kind.MARKER, Kind.NOTE)
DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary_line(report: RunReport) -> str:
    verb = "changed" if report.mode is Mode.WRITE else "would change"
    return (
        f"{_plural(report.scanned, 'file')} scanned, {report.changed} {verb}, "
        f"{report.failed} failed, {_plural(report.markers, 'marker')} left"
    )


def print_diff(diff: str, color: bool) -> None:
    if not color:
        click.echo(diff, nl=False)
        return
    from rich.console import Console  # (rich only when colour is wanted: a plain run starts faster)
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=True, force_terminal=True)
    for line in diff.splitlines():
        style = next((s for prefix, s in DIFF_STYLES if line.startswith(prefix)), "")
        console.print(Text(line, style=style))


def print_report(report: RunReport, color: bool = False, quiet: bool = False, statistics: bool = False,
                 info_to_stderr: bool = False) -> None:
    """``quiet``: no summary line (and under ``--diff`` no findings: the diff only, as ruff's
    ``--diff --quiet``). ``statistics``: a count per rule code (``statistics_lines``)
    instead of the findings. ``info_to_stderr``: all but the diff to stderr (always so under
    ``--diff``; ``rewrite -`` writes the code itself to stdout)."""
    info_to_stderr = info_to_stderr or report.mode is Mode.DIFF
    for result in report.files:
        for problem in result.all_problems:
            click.echo(problem.format(), err=True)
        if result.changed and report.mode is Mode.DIFF:
            print_diff(result.diff, color)
        elif result.changed and report.mode is Mode.CHECK:
            click.echo(f"would rewrite {result.path}", err=info_to_stderr)
        for finding in () if statistics or (quiet and report.mode is Mode.DIFF) else result.findings:
            if finding.kind in SHOWN_KINDS:
                click.echo(finding.format(), err=info_to_stderr)
    if statistics:
        for line in statistics_lines(report):
            click.echo(line, err=info_to_stderr)
    if not quiet:
        click.echo(summary_line(report), err=info_to_stderr)


STATISTICS_KINDS = ((Kind.FIXED, "changes"), (Kind.MARKER, "markers"), (Kind.NOTE, "notes"))


def statistics_lines(report: RunReport) -> List[str]:
    """ruff's ``--statistics`` for a run: per rule code (in code order), how many changes
    (written, or that would be), markers and notes it made; the same entries as ``--output-format
    json`` lists. Nothing when there are none."""
    from lightmigrate.output.formats import entries
    from lightmigrate.rules import rules_by_code

    counts: Dict[str, Counter] = {}
    for result in report.files:
        if result.error is None:
            for entry in entries(result):
                counts.setdefault(entry.code, Counter())[entry.kind] += 1
    if not counts:
        return []
    names = {code: rule.name for code, rule in rules_by_code().items()}
    rows = [("code", *(label for _, label in STATISTICS_KINDS), "rule")]
    rows += [(code, *(str(counts[code][kind]) for kind, _ in STATISTICS_KINDS), names.get(code, ""))
             for code in sorted(counts)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [" ".join([row[0].ljust(widths[0]), *(v.rjust(w) for v, w in zip(row[1:-1], widths[1:])), row[-1]])
            .rstrip() for row in rows]


SAFETY_LABELS = {"behaviour-preserving": "preserving"}  # short enough for an 80-column terminal
WIDE_TABLE = 120  # from this width on, the rule names get a column of their own


def print_rules_table(rules: Sequence[Rule], console=None) -> None:
    """One row per rule, in code order: code, safety and the summary, wrapped to the terminal,
    with the rule's name in front of the summary (in its own column from ``WIDE_TABLE``
    columns on). Codes and safety never wrap, so every code shows at any usual width. Not on a
    terminal (a pipe, a file), the width is ``COLUMNS`` or 100."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if console is None:
        console = Console(highlight=False, file=sys.stdout)
        if not console.is_terminal and not os.environ.get("COLUMNS"):
            console.width = 100
    wide = console.width >= WIDE_TABLE
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1))
    table.add_column("code", no_wrap=True, style="bold")
    if wide:
        table.add_column("name", no_wrap=True)
    table.add_column("safety", no_wrap=True)
    table.add_column("summary", overflow="fold", ratio=1)
    for rule in sorted(rules, key=lambda r: r.code):
        safety = SAFETY_LABELS.get(rule.safety.value, rule.safety.value)
        if wide:
            table.add_row(rule.code, rule.name, safety, Text(rule.summary))
        else:
            summary = Text.assemble((rule.name, "italic"), ": ", rule.summary)
            table.add_row(rule.code, safety, summary)
    if console.is_terminal:
        console.print(table)
    else:  # plain text: without the padding at the ends of the lines
        with console.capture() as captured:
            console.print(table)
        lines = [line.rstrip() for line in captured.get().splitlines()]
        console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)
    console.print("`lightmigrate rules CODE` describes a rule, with its before/after examples.")


def rule_detail(rule: Rule) -> str:
    parts = [f"{rule.code} {rule.name}", "", rule.summary]
    if rule.description:
        parts += ["", rule.description.strip()]
    parts += [
        "",
        f"Safety:    {rule.safety.value}",
        f"Spec rows: {', '.join(rule.spec_rows) or '-'}",
        f"Guide:     {rule.guide}",
    ]
    parts += _facts_lines(rule.code)
    for i, example in enumerate(rule.examples, 1):
        title = f": {example.title}" if example.title else ""
        parts += ["", f"Example {i}{title}", "  before:", _indent(example.before)]
        if example.after is None:
            parts += ["  after: (left unchanged)"]
        else:
            parts += ["  after:", _indent(example.after)]
    return "\n".join(parts)


def _facts_lines(code: str) -> List[str]:
    """The 1.9 facts of the semantics ledger this rule keeps (or marks), with their cases."""
    from lightmigrate.catalog.semantics import facts_for_rule

    facts = facts_for_rule(code)
    if not facts:
        return []
    out = ["", "1.9 facts it keeps (the semantics ledger, `lightmigrate coverage`):"]
    for f in facts:
        out.append(f"  {f.id:<6} {f.status:<8} {f.did}")
        if f.cases:
            out.append("         cases: " + ", ".join(c[len("corpus/"):] for c in f.cases))
        elif f.reason:
            out.append("         " + (f.reason if f.case_to_write else "no case: " + f.reason))
        if f.seen_to_fail:
            out.append("         seen to fail: " + f.seen_to_fail)
        if f.gap:
            out.append("         not kept: " + f.gap)
    return out


def _indent(code: str) -> str:
    return "\n".join("    " + line if line else "" for line in code.rstrip("\n").splitlines())
