"""Printing for the command line: run reports, diffs, and rule descriptions.

Where output goes: the diff (``--diff``), ``would rewrite`` lines (``--check``), findings and
the summary go to stdout, except under ``--diff``, where everything but the diff goes to stderr
so that stdout is a clean patch. Per-file problems always go to stderr.
"""

from __future__ import annotations

import sys
from typing import List, Sequence

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


def print_report(report: RunReport, color: bool = False) -> None:
    info_to_stderr = report.mode is Mode.DIFF
    for result in report.files:
        for problem in result.all_problems:
            click.echo(problem.format(), err=True)
        if result.changed and report.mode is Mode.DIFF:
            print_diff(result.diff, color)
        elif result.changed and report.mode is Mode.CHECK:
            click.echo(f"would rewrite {result.path}")
        for finding in result.findings:
            if finding.kind in SHOWN_KINDS:
                click.echo(finding.format(), err=info_to_stderr)
    click.echo(summary_line(report), err=info_to_stderr)


def print_rules_table(rules: Sequence[Rule]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(show_lines=False)
    for column in ("code", "name", "safety", "spec rows"):
        table.add_column(column, no_wrap=True)
    table.add_column("summary", overflow="fold")
    for rule in rules:
        table.add_row(
            rule.code, rule.name, rule.safety.value, ", ".join(rule.spec_rows), Text(rule.summary)
        )
    console = Console(highlight=False, file=sys.stdout)
    if not console.is_terminal:
        console.width = max(console.width, 160)
    console.print(table)


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
