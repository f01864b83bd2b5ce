"""The ``lightmigrate`` command line. Only argument handling lives here."""

from __future__ import annotations

import sys
from typing import List, Optional, Tuple

import click

from lightmigrate import __version__
from lightmigrate.engine import Mode, run
from lightmigrate.report import print_report, print_rules_table, rule_detail
from lightmigrate.rules import ALL_RULES, OPT_IN_RULES, rules_by_code, select_rules
from lightmigrate.rules.unified_imports import CODE as UNIFIED_IMPORTS_CODE


def _parse_select(ctx: click.Context, param: click.Parameter, value: Tuple[str, ...]) -> List[str]:
    codes = [c.strip().upper() for v in value for c in v.split(",") if c.strip()]
    unknown = [c for c in codes if not any(r.code.startswith(c) for r in [*ALL_RULES, *OPT_IN_RULES])]
    if unknown:
        raise click.BadParameter(f"unknown rule code(s): {', '.join(unknown)}")
    return codes


@click.group()
@click.version_option(__version__, prog_name="lightmigrate")
def main() -> None:
    """Migrate PyTorch Lightning 1.x code to Lightning 2.x."""


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="List files that would change; write nothing.")
@click.option(
    "--select",
    multiple=True,
    callback=_parse_select,
    help="Comma-separated rule codes (or prefixes) to run; default: all rules.",
)
@click.option("--no-color", is_flag=True, help="Never colour the diff.")
@click.option("--unified-imports", is_flag=True,
              help="Also move every pytorch_lightning / lightning_fabric import to lightning.pytorch / lightning.fabric.")
def rewrite(
    paths: Tuple[str, ...], show_diff: bool, check: bool, select: List[str], no_color: bool, unified_imports: bool
) -> None:
    """Rewrite the Python files under PATHS in place (or show/check what would change).

    Exit status: 0 when all went well, 1 when --check/--diff found files to change,
    2 when any file could not be processed.
    """
    if show_diff and check:
        raise click.UsageError("--diff and --check cannot be used together")
    mode = Mode.DIFF if show_diff else Mode.CHECK if check else Mode.WRITE
    report = run(paths, select_rules(select, opt_in=[UNIFIED_IMPORTS_CODE] if unified_imports else []), mode)
    print_report(report, color=not no_color and sys.stdout.isatty())
    sys.exit(report.exit_code)


@main.command()
@click.argument("code", required=False)
def rules(code: Optional[str]) -> None:
    """List the rules, or describe the rule CODE."""
    if code is None:
        print_rules_table([*ALL_RULES, *OPT_IN_RULES])
        return
    rule = rules_by_code().get(code.upper())
    if rule is None:
        click.echo(f"unknown rule code: {code}", err=True)
        sys.exit(2)
    click.echo(rule_detail(rule))


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--oracle", "oracle_python", type=click.Path(),
              help="Run the originals on this pytorch-lightning 1.x interpreter instead of the v1 shim.")
@click.option("--source", "sources", multiple=True, type=click.Path(file_okay=False),
              help="A folder of your own code that the cases import; it is migrated for the 2.x run too.")
@click.option("--rtol", type=float, default=1e-5, show_default=True, help="Relative tolerance for numbers.")
@click.option("--atol", type=float, default=1e-8, show_default=True, help="Absolute tolerance for numbers.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--max-differences", type=int, default=5, show_default=True,
              help="Differences shown per mismatching case (text output).")
@click.option("--select", multiple=True, callback=_parse_select,
              help="Migrate with these rule codes (or prefixes) only; default: all rules.")
@click.option("--no-migrate", is_flag=True,
              help="Run the cases on 2.x as they are: check a hand port, or see what 2.x does with 1.x code.")
def verify(paths: Tuple[str, ...], oracle_python: Optional[str], sources: Tuple[str, ...], rtol: float,
           atol: float, output_format: str, max_differences: int, select: List[str], no_migrate: bool) -> None:
    """Run each case before and after migration and compare what matters.

    PATHS are case files (1.x code with a lightmigrate_case() entry point) or folders of them.
    Exit status: 0 all match, 1 any mismatch, 2 a case could not run.
    """
    from lightmigrate.verify.render import print_json, print_text
    from lightmigrate.verify.session import VerifyError, verify_paths

    try:
        rules = [] if no_migrate else select_rules(select)
        report = verify_paths(paths, oracle_python=oracle_python, sources=sources, rtol=rtol, atol=atol,
                              rules=rules)
    except VerifyError as exc:
        click.echo(f"lightmigrate verify: {exc}", err=True)
        sys.exit(2)
    if output_format == "json":
        print_json(report, sys.stdout)
    else:
        print_text(report, sys.stdout, color=sys.stdout.isatty(), max_differences=max_differences)
    sys.exit(report.exit_code)
