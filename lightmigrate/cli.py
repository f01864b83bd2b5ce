"""The ``lightmigrate`` command line. Only argument handling lives here."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional, Tuple

import click

from lightmigrate import __version__
from lightmigrate.config import ConfigError, Settings
from lightmigrate.engine import Mode, run, run_bytes
from lightmigrate.output.formats import FORMATS, effective_mode, print_run, verify_sarif, write_json
from lightmigrate.engine.gitguard import dirty_reason
from lightmigrate.engine.parallel import default_jobs
from lightmigrate.output.progress import progress_bar, wants_progress
from lightmigrate.output.console import print_report, print_rules_table, rule_detail
from lightmigrate.options import migration_rules, migration_settings
from lightmigrate.rules import ALL_RULES, OPT_IN_RULES, rules_by_code


def _parse_select(ctx: click.Context, param: click.Parameter, value: Tuple[str, ...]) -> List[str]:
    codes = [c.strip().upper() for v in value for c in v.split(",") if c.strip()]
    unknown = [c for c in codes if c != "ALL" and not any(r.code.startswith(c) for r in [*ALL_RULES, *OPT_IN_RULES])]
    if unknown:
        raise click.BadParameter(f"unknown rule code(s): {', '.join(unknown)}")
    return ["" if c == "ALL" else c for c in codes]  # "" is a prefix of every code


def _split(ctx: click.Context, param: click.Parameter, value: Tuple[str, ...]) -> List[str]:
    return [p.strip() for v in value for p in v.split(",") if p.strip()]


def _settings(paths, config_path, select, ignore, exclude) -> Settings:
    try:
        return migration_settings(paths, config_path, select, ignore, exclude)
    except ConfigError as exc:
        click.echo(f"lightmigrate: configuration error: {exc}", err=True)
        sys.exit(2)


_config_option = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False),
    help="A pyproject.toml (or TOML file) to read [tool.lightmigrate] from; default: the nearest pyproject.toml.")
_ignore_option = click.option(
    "--ignore", multiple=True, callback=_parse_select,
    help="Comma-separated rule codes (or prefixes) not to run; adds to the configuration's ignore.")
_exclude_option = click.option(
    "--exclude", multiple=True, callback=_split,
    help="Glob of files or folders to skip (repeatable); adds to the configuration's exclude.")
_unified_imports_option = click.option(
    "--unified-imports", is_flag=True,
    help="Also move every pytorch_lightning / lightning_fabric import to lightning.pytorch / lightning.fabric.")


@click.group()
@click.version_option(__version__, prog_name="lightmigrate")
def main() -> None:
    """Migrate PyTorch Lightning 1.x code to Lightning 2.x."""


def run_main() -> None:
    """The ``lightmigrate`` command (and ``python -m lightmigrate``): ``main``, its output
    flushed, then the process ends at once instead of freeing every object of a big run one by
    one (texts, trees, the class index: some tenths of a second on a large tree, after all the
    work is done and reported). An exception other than an exit is raised as usual."""
    try:
        main(prog_name="lightmigrate")
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if isinstance(exc.code, str):
            click.echo(exc.code, err=True)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: nothing more can be said
        pass
    os._exit(code)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--diff", "show_diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="List files that would change; write nothing.")
@click.option(
    "--select",
    multiple=True,
    callback=_parse_select,
    help="Comma-separated rule codes (or prefixes) to run; default: all rules.",
)
@_ignore_option
@_exclude_option
@_config_option
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True,
              help="json: one entry per change/marker/note; sarif: SARIF 2.1.0 for code scanning.")
@click.option("--allow-dirty", is_flag=True,
              help="Rewrite in place even when the git working tree has uncommitted changes.")
@click.option("--no-color", is_flag=True, help="Never colour the diff.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes to use; default: one per core. Output is the same for any value.")
@_unified_imports_option
@click.option("--stdin-filename", type=click.Path(),
              help="With PATH `-` (standard input): the file's name, for messages, its kind and its configuration.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when --check/--diff finds files to change (2 on errors).")
@click.option("--quiet", "-q", is_flag=True,
              help="No summary line: only the findings and errors (with --diff: the diff and errors).")
@click.option("--statistics", is_flag=True,
              help="Count the changes, markers and notes per rule code, instead of listing them.")
@click.option("--bare-noqa/--no-bare-noqa", default=None,
              help="A bare `# noqa` switches every rule off on its line, as in ruff (config: bare-noqa); "
                   "each change it holds back is reported as a note.")
def rewrite(
    paths: Tuple[str, ...], show_diff: bool, check: bool, select: List[str], ignore: List[str],
    exclude: List[str], config_path: Optional[str], output_format: str, allow_dirty: bool, no_color: bool,
    jobs: Optional[int], unified_imports: bool, stdin_filename: Optional[str], exit_zero: bool, quiet: bool,
    statistics: bool, bare_noqa: Optional[bool],
) -> None:
    """Rewrite the Python files and notebooks under PATHS in place (or show/check what would change).

    PATH `-` reads one file from standard input and, without --diff/--check, writes the
    rewritten file to standard output (everything else goes to standard error).

    Exit status: 0 when all went well, 1 when --check/--diff found files to change (0 with
    --exit-zero), 2 when any file could not be processed (or the configuration is invalid, or
    the git working tree is dirty).
    """
    if show_diff and check:
        raise click.UsageError("--diff and --check cannot be used together")
    stdin = paths == ("-",) or (not paths and stdin_filename is not None)
    if not paths and not stdin:
        raise click.UsageError("Missing argument 'PATHS...'.")
    if "-" in paths and not stdin:
        raise click.UsageError("`-` (standard input) must be the only PATH")
    mode = Mode.DIFF if show_diff else Mode.CHECK if check else Mode.WRITE
    if stdin and mode is Mode.WRITE and output_format != "text":
        raise click.UsageError(f"reading `-`, --output-format {output_format} needs --diff or --check")
    settings = _settings([stdin_filename or "."] if stdin else paths, config_path, select, ignore, exclude)
    if bare_noqa is not None:
        settings.bare_noqa = bare_noqa
    rules = migration_rules(settings, unified_imports)
    if mode is Mode.WRITE and not allow_dirty and not stdin:
        reason = dirty_reason(paths)
        if reason:
            click.echo(f"lightmigrate: not rewriting: {reason}", err=True)
            sys.exit(2)
    if stdin:
        report, out = run_bytes(sys.stdin.buffer.read(), stdin_filename or "-", rules,
                                effective_mode(mode, output_format), settings)
        if mode is Mode.WRITE:
            sys.stdout.buffer.write(out)
            sys.stdout.buffer.flush()
    else:
        with progress_bar(wants_progress() and not quiet) as progress:
            report = run(paths, rules, effective_mode(mode, output_format), settings,
                         jobs=jobs or default_jobs(), progress=progress)
    if output_format == "text":
        print_report(report, color=not no_color and sys.stdout.isatty(), quiet=quiet, statistics=statistics,
                     info_to_stderr=stdin and mode is Mode.WRITE)
    else:
        print_run(report, output_format, rules, sys.stdout, requested=mode)
    sys.exit(0 if exit_zero and report.exit_code == 1 else report.exit_code)


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
@click.option("--markdown", is_flag=True, help="Print the page committed as docs/coverage.md.")
def coverage(markdown: bool) -> None:
    """Show, for every row of the 1.9 -> 2.x spec catalogue, the rules that handle it and how."""
    from lightmigrate.coverage import print_ledger, render_markdown

    if markdown:
        click.echo(render_markdown(ALL_RULES), nl=False)
    else:
        print_ledger(ALL_RULES)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--oracle", "oracle_python", type=click.Path(),
              help="Run the originals on this pytorch-lightning 1.x interpreter instead of the v1 shim. "
                   "Without it, the cases the shim cannot run go to $LIGHTMIGRATE_ORACLE_PYTHON when set.")
@click.option("--source", "sources", multiple=True, type=click.Path(file_okay=False),
              help="A folder of your own code that the cases import; it is migrated for the 2.x run too.")
@click.option("--rtol", type=float, default=1e-5, show_default=True, help="Relative tolerance for numbers.")
@click.option("--atol", type=float, default=1e-8, show_default=True, help="Absolute tolerance for numbers.")
@click.option("--output-format", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--max-differences", type=int, default=5, show_default=True,
              help="Differences shown per mismatching case (text output).")
@click.option("--select", multiple=True, callback=_parse_select,
              help="Migrate with these rule codes (or prefixes) only; default: all rules.")
@_ignore_option
@_config_option
@click.option("--no-migrate", is_flag=True,
              help="Run the cases on 2.x as they are: check a hand port, or see what 2.x does with 1.x code.")
@click.option("--pytest", "pytest_mode", is_flag=True,
              help="PATHS are pytest arguments (test files, folders, node ids; options after --): run the "
                   "project's own tests on the original with --before and on a migrated copy with --after.")
@click.option("--before", "before_python", type=click.Path(dir_okay=False),
              help="--pytest: the Python of a pytorch-lightning 1.x environment for the original code; default: "
                   "one built from the project's requirements (cached).")
@click.option("--after", "after_python", type=click.Path(dir_okay=False),
              help="--pytest: the Python of a Lightning 2.x environment for the migrated copy; default: built "
                   "like --before's.")
@click.option("--project", type=click.Path(file_okay=False, exists=True),
              help="--pytest: the project folder to copy and migrate; default: the current folder.")
@click.option("--constraint", "-c", "constraints", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="--pytest, building environments: a pip constraints file (repeatable), e.g. the torch pin.")
@click.option("--requirements", "requirement_files", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="--pytest, building environments: install these requirement files instead of the project's "
                   "pyproject.toml dependencies and requirements*.txt.")
@click.option("--before-lightning", metavar="VERSION",
              help="--pytest, building environments: the 1.x version before; default: the project's == pin, "
                   "else 1.9.5.")
@click.option("--after-lightning", metavar="VERSION",
              help="--pytest, building environments: the 2.x version after (lightning and pytorch-lightning).")
@click.option("--installer", type=click.Choice(["auto", "uv", "pip"]), default="auto", show_default=True,
              help="--pytest, building environments: auto is uv when it is on PATH, else venv + pip.")
@click.option("--rebuild-envs", is_flag=True, help="--pytest: build the environments again, even if cached.")
@click.option("--junit-xml", type=click.Path(dir_okay=False),
              help="Also write the results as JUnit XML to this file (a test case per test or case).")
@click.option("--sarif-file", type=click.Path(dir_okay=False),
              help="Also write the results as SARIF 2.1.0 to this file (for code scanning).")
@click.option("--no-server", is_flag=True,
              help="Run the cases in fresh interpreters, without the warm worker that keeps torch and Lightning "
                   "imported between calls (also: LIGHTMIGRATE_VERIFY_SERVER=0).")
@_exclude_option
@_unified_imports_option
def verify(paths: Tuple[str, ...], oracle_python: Optional[str], sources: Tuple[str, ...], rtol: float,
           atol: float, output_format: str, max_differences: int, select: List[str], ignore: List[str],
           config_path: Optional[str], no_migrate: bool, pytest_mode: bool, before_python: Optional[str],
           after_python: Optional[str], project: Optional[str], constraints: Tuple[str, ...],
           requirement_files: Tuple[str, ...], before_lightning: Optional[str], after_lightning: Optional[str],
           installer: str, rebuild_envs: bool, junit_xml: Optional[str], sarif_file: Optional[str],
           no_server: bool, exclude: List[str], unified_imports: bool) -> None:
    """Run each case before and after migration and compare what matters.

    PATHS are case files (1.x code with a lightmigrate_case() entry point) or folders of them;
    with --pytest, the project's tests (pytest arguments), run before and after migration.
    Exit status: 0 all match, 1 any mismatch (--pytest: a test regressed or behaves
    differently), 2 a case or a side could not run.
    """
    from lightmigrate.verify.render import print_json, print_text
    from lightmigrate.verify.session import VerifyError, verify_paths

    if pytest_mode:
        envs = dict(constraints=constraints, requirements=requirement_files, before_version=before_lightning,
                    after_version=after_lightning, installer=installer, rebuild=rebuild_envs)
        _verify_pytest(paths, before_python, after_python, project, oracle_python, sources, rtol, atol,
                       output_format, max_differences, select, ignore, exclude, config_path, no_migrate,
                       unified_imports, envs, junit_xml, sarif_file)
    if constraints or requirement_files or before_lightning or after_lightning or rebuild_envs or installer != "auto":
        raise click.UsageError("--constraint, --requirements, --before/after-lightning, --installer and "
                               "--rebuild-envs build the environments of --pytest")
    if exclude:
        raise click.UsageError("--exclude applies to --pytest (cases name their files)")
    try:
        rules = [] if no_migrate else migration_rules(_settings(paths, config_path, select, ignore, ()),
                                                      unified_imports)
        report = verify_paths(paths, oracle_python=oracle_python, sources=sources, rtol=rtol, atol=atol,
                              rules=rules, warm_workers=not no_server)
    except VerifyError as exc:
        click.echo(f"lightmigrate verify: {exc}", err=True)
        sys.exit(2)
    from lightmigrate.output.junit import verify_junit

    _write_files(junit_xml, sarif_file, lambda: verify_junit(report), lambda: verify_sarif(report))
    if output_format == "json":
        print_json(report, sys.stdout)
    elif output_format == "sarif":
        write_json(verify_sarif(report), sys.stdout)
    else:
        print_text(report, sys.stdout, color=sys.stdout.isatty(), max_differences=max_differences)
    sys.exit(report.exit_code)


def _verify_pytest(tests, before_python, after_python, project, oracle_python, sources, rtol, atol, output_format,
                   max_differences, select, ignore, exclude, config_path, no_migrate, unified_imports, envs,
                   junit_xml, sarif_file) -> None:
    from lightmigrate.output.formats import pytest_sarif
    from lightmigrate.output.junit import pytest_junit
    from lightmigrate.verify.pytest_mode import verify_pytest
    from lightmigrate.verify.render import print_pytest_json, print_pytest_text
    from lightmigrate.verify.session import VerifyError

    if oracle_python or sources:
        raise click.UsageError("--pytest runs the project's tests: use --before/--after, not --oracle/--source")
    root = project or "."
    settings = _settings([root], config_path, select, ignore, exclude)
    rules = [] if no_migrate else migration_rules(settings, unified_imports)
    try:
        if not before_python or not after_python:
            from lightmigrate.output.progress import step_status
            from lightmigrate.verify.envs import build_environments

            missing = [side for side, python in (("before", before_python), ("after", after_python)) if not python]
            with step_status() as say:
                built = build_environments(Path(root), missing, progress=say, **envs)
            before_python = before_python or built["before"]
            after_python = after_python or built["after"]
        report = verify_pytest(tests, before_python, after_python, rules, settings, project, rtol=rtol, atol=atol)
    except VerifyError as exc:
        click.echo(f"lightmigrate verify: {exc}", err=True)
        sys.exit(2)
    _write_files(junit_xml, sarif_file, lambda: pytest_junit(report), lambda: pytest_sarif(report))
    if output_format == "json":
        print_pytest_json(report, sys.stdout)
    elif output_format == "sarif":
        write_json(pytest_sarif(report), sys.stdout)
    else:
        print_pytest_text(report, sys.stdout, color=sys.stdout.isatty(), max_differences=max_differences)
    sys.exit(report.exit_code)


def _write_files(junit_xml: Optional[str], sarif_file: Optional[str], junit, sarif) -> None:
    """``--junit-xml`` / ``--sarif-file``: the report also written to these files."""
    if junit_xml:
        with open(junit_xml, "w", encoding="utf-8") as fh:
            fh.write(junit())
    if sarif_file:
        with open(sarif_file, "w", encoding="utf-8") as fh:
            write_json(sarif(), fh)
