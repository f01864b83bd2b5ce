"""Real-project sweep: run published 1.x-era projects' own tests before and after migration.

    .venv/bin/python bench/project_sweep.py [--only NAME ...] [--slice ci] [--json] [--timeout S]
    .venv/bin/python bench/project_sweep.py --render SWEEP.json   # the text report of a --json run

For each project of bench/sweep_projects.toml (see bench/sweep_env.py for downloads and
environments):

1. the sdist is unpacked twice into ``bench/.cache/sweep/<name>/`` (``baseline/`` and
   ``migrated/``); the migrated copy is made its own git repository, so lightmigrate reads the
   project's ignore rules and not this repository's (bench/.cache is gitignored here);
2. ``python -m lightmigrate rewrite --allow-dirty`` runs on the migrated copy, from this
   checkout (its code, not an installed one);
3. the selected tests run with pytest (``--junitxml``) on pytorch-lightning 1.9.5 in the
   baseline copy and on Lightning 2.6.6 in the migrated copy, with the same pinned extra deps;
4. the report: per project the tests passed on each side, the regressions (passed before, not
   after; each with its first error line), the fixed ones (failed before, pass after), and the
   ``TODO(lightmigrate)`` markers left in the migrated copy (file:line code).

Exit status: 0 when every project ran (regressions are findings, not failures), 2 when a
project could not be set up or its migration or a test run failed to run at all.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sweep_env  # noqa: E402
from sweep_env import CACHE, ROOT, Project, SweepSetupError  # noqa: E402

MARKER_RE = re.compile(r"TODO\(lightmigrate\):?\s*(LM\d+)?")
PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
# torch 2.13's torch.load defaults to weights_only=True (since 2.6). pytorch-lightning 1.9.5 and
# the projects' own code predate that and call it without weights_only; this variable restores
# the old default for calls that do not choose (weights_only unset or None), on both sides, so
# that a torch upgrade is not counted as a migration regression. Lightning 2.6 leaves
# weights_only None for local checkpoints unless asked, so the sweep does not measure that
# change either (lightmigrate notes it: LM102 T-prop15).
TORCH_LOAD_ENV = {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}


@dataclass
class Outcome:
    status: str  # passed / failed / skipped
    error: str = ""  # first line of the failure or error message


@dataclass
class SideRun:
    outcomes: Dict[str, Outcome]
    seconds: float
    exit_code: int
    tail: str = ""  # end of pytest's output when it reported nothing usable

    @property
    def passed(self) -> List[str]:
        return sorted(t for t, o in self.outcomes.items() if o.status == PASSED)


@dataclass
class Marker:
    path: str  # relative to the project root
    line: int
    code: str  # LMnnn, or "?" when the marker names none
    text: str


@dataclass
class ProjectReport:
    name: str
    sdist: str
    selection: List[str]
    baseline_passed: int = 0
    baseline_total: int = 0
    migrated_passed: int = 0
    migrated_total: int = 0
    regressions: List[Dict[str, str]] = field(default_factory=list)  # test, error
    fixed: List[str] = field(default_factory=list)
    markers: List[Marker] = field(default_factory=list)
    files_changed: int = 0
    markers_reported: Optional[int] = None  # lightmigrate's own count, to check find_markers
    migrate_exit: Optional[int] = None
    migrate_errors: List[str] = field(default_factory=list)
    seconds: Dict[str, float] = field(default_factory=dict)
    problem: str = ""  # set when the project could not be swept
    migrated_root: str = ""  # where the migrated copy is (markers' paths are relative to it)


# ---------------------------------------------------------------------------------------------
# Steps


def migrate(copy: Path, python: str) -> subprocess.CompletedProcess:
    """``lightmigrate rewrite --allow-dirty`` on ``copy`` with this checkout's lightmigrate."""
    subprocess.run(["git", "init", "-q", str(copy)], check=True)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "CI": "1"}
    return subprocess.run([python, "-m", "lightmigrate", "rewrite", "--allow-dirty", "--output-format",
                           "json", str(copy)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900, check=False)


def run_tests(project: Project, root: Path, python: Path, deps: Path, args: List[str],
              junit: Path, timeout: int, extra_env: Optional[Dict[str, str]] = None) -> SideRun:
    """The selected tests of ``project`` in ``root`` with ``python``; outcomes from JUnit XML."""
    cmd = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rN", "--tb=line",
           "-o", "junit_family=xunit1", "--continue-on-collection-errors", f"--junitxml={junit}", *args]
    junit.unlink(missing_ok=True)
    start = time.monotonic()
    try:
        env = dict(sweep_env.run_env(project, root, deps), **(extra_env or {}))
        proc = subprocess.run(cmd, cwd=root, env=env,
                              capture_output=True, text=True, timeout=timeout, check=False)
        code, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, out = -1, f"timed out after {timeout}s\n" + (exc.stdout or b"").decode(errors="replace")[-2000:]
    seconds = time.monotonic() - start
    outcomes = parse_junit(junit) if junit.exists() else {}
    return SideRun(outcomes, seconds, code, "" if outcomes else out[-3000:])


def parse_junit(path: Path) -> Dict[str, Outcome]:
    """Per-test outcomes from pytest's JUnit XML: id ``file::Class::name`` (the file as pytest
    names it), a failure or error gives ``failed`` with the message's first line."""
    outcomes: Dict[str, Outcome] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = case_id(case)
        status, error = PASSED, ""
        for child in case:
            if child.tag in ("failure", "error"):
                status, error = FAILED, first_error_line(child.get("message") or "", child.text or "")
                break
            if child.tag == "skipped":
                status = SKIPPED
        if test_id in outcomes and outcomes[test_id].status == FAILED:
            continue  # a test that failed and then errored in teardown stays failed
        outcomes[test_id] = Outcome(status, error)
    return outcomes


def case_id(case: ET.Element) -> str:
    file = case.get("file") or ""
    classname = case.get("classname") or ""
    name = case.get("name") or ""
    if not classname:  # a collection error: named after the module (or the file)
        return file or name.replace(".", "/") + ".py"
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    cls = classname[len(module) + 1:] if classname.startswith(module + ".") else ""
    return "::".join(p for p in (file, cls, name) if p)


def first_error_line(message: str, text: str) -> str:
    """The line that says what went wrong: the message when it is an exception line
    (``ValueError: ...``), else the last ``E   SomeError: ...`` line of the traceback, else the
    message's (or the traceback's) first non-empty line."""
    exc = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b(?::|$)")
    first = next((l.strip() for l in message.splitlines() if l.strip()), "")
    if exc.match(first):
        return first[:300]
    e_lines = [l[1:].strip() for l in text.splitlines() if l.startswith("E ")]
    for line in reversed(e_lines):
        if exc.match(line):
            return line[:300]
    for line in [first] + e_lines + text.splitlines():
        if line.strip():
            return line.strip()[:300]
    return "(no message)"


def find_markers(root: Path) -> List[Marker]:
    """``TODO(lightmigrate)`` markers in the files under ``root``, read from the files."""
    found = []
    for path in sorted(root.rglob("*")):
        if ".git" in path.parts or not path.is_file() or path.suffix not in (".py", ".ipynb", ".yaml", ".yml"):
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = MARKER_RE.search(line)
            if m:
                found.append(Marker(str(path.relative_to(root)), n, m.group(1) or "?",
                                    line.strip()[:200]))
    return found


_AUTO_ID = re.compile(r"^([A-Za-z_]\w*?)\d+$")


def auto_id_key(test: str) -> str:
    """``test`` with pytest's generated parameter ids (``model_kwargs12``: the argument's name and
    the parameter set's index) reduced to the name: the index follows the order the parameters
    were made in, which a project may draw from a set (pykeen's training loops), so the same
    case can get another index in the other side's run."""
    head, sep, params = test.partition("[")
    if not sep or not params.endswith("]"):
        return test
    return head + "[" + "-".join(_AUTO_ID.sub(r"\1#", p) for p in params[:-1].split("-")) + "]"


def compare(before: SideRun, after: SideRun) -> tuple:
    """(regressions as [{test, error}], fixed): a regression passed before and did not pass
    after; a test missing after the migration (its module no longer collects) gets the
    collection error of its file, or "not run". A test whose id is missing on one side is
    matched by :func:`auto_id_key` with a passing test of the other side missing on this one
    (the same case under another generated index), one for one."""
    regressions, fixed = [], []
    unmatched_after: Dict[str, int] = {}
    for test in after.passed:
        if test not in before.outcomes:
            unmatched_after[auto_id_key(test)] = unmatched_after.get(auto_id_key(test), 0) + 1
    unmatched_before: Dict[str, int] = {}
    for test in before.passed:
        if test not in after.outcomes:
            unmatched_before[auto_id_key(test)] = unmatched_before.get(auto_id_key(test), 0) + 1
    for test in before.passed:
        out = after.outcomes.get(test)
        if out is not None and out.status == PASSED:
            continue
        if out is None and unmatched_after.get(auto_id_key(test), 0) > 0:
            unmatched_after[auto_id_key(test)] -= 1
            continue
        if out is None:
            file = test.split("::")[0]
            out = after.outcomes.get(file) or Outcome(FAILED, "not run after the migration" + (
                f" (pytest exit {after.exit_code})" if after.exit_code else ""))
        regressions.append({"test": test, "status": out.status, "error": out.error or out.status})
    for test in after.passed:
        prior = before.outcomes.get(test)
        if prior is None and unmatched_before.get(auto_id_key(test), 0) > 0:
            unmatched_before[auto_id_key(test)] -= 1
            continue
        if prior is None or prior.status == FAILED:
            fixed.append(test)
    return regressions, fixed


def _baseline_stamp(project: Project, args: List[str]) -> str:
    return json.dumps({"sdist": project.sdist, "args": args, "v1": str(sweep_env.side_pythons()[0])})


def stamp_baseline(work: Path, project: Project, args: List[str]) -> None:
    """Record what the baseline JUnit file of ``work`` was made from (``--reuse-baseline``)."""
    if (work / "baseline.xml").exists():
        (work / "baseline.stamp").write_text(_baseline_stamp(project, args))


def reused_baseline(work: Path, project: Project, args: List[str]) -> Optional[SideRun]:
    """The baseline outcomes of an earlier run of the same sdist, test selection and 1.x
    interpreter (the baseline does not depend on lightmigrate's code), or None."""
    stamp, junit = work / "baseline.stamp", work / "baseline.xml"
    if not (stamp.exists() and junit.exists()) or stamp.read_text() != _baseline_stamp(project, args):
        return None
    outcomes = parse_junit(junit)
    return SideRun(outcomes, 0.0, 0, "") if outcomes else None


def sweep_project(project: Project, slice_name: Optional[str], timeout: int,
                  cache: Path = CACHE, work: Optional[Path] = None, reuse_baseline: bool = False) -> ProjectReport:
    """Sweep one project; the copies and JUnit files go to ``work`` (default
    ``cache/<name>``), the sdist and deps come from ``cache``. ``reuse_baseline``: take the
    baseline outcomes of an earlier run with the same sdist, tests and 1.x interpreter."""
    v1, v2 = sweep_env.side_pythons()
    args = project.pytest_args(slice_name)
    report = ProjectReport(project.name, project.sdist, args)
    t0 = time.monotonic()
    try:
        sdist = sweep_env.fetch_sdist(project, v2, cache)
        deps = sweep_env.ensure_deps(project, v2, cache)
    except SweepSetupError as exc:
        report.problem = str(exc)
        return report
    work = work or cache / project.name
    base_root = sweep_env.unpack(sdist, work / "baseline")
    mig_root = sweep_env.unpack(sdist, work / "migrated")
    report.migrated_root = str(mig_root)
    report.seconds["setup"] = time.monotonic() - t0

    t0 = time.monotonic()
    proc = migrate(mig_root, sys.executable)
    report.seconds["migrate"] = time.monotonic() - t0
    report.migrate_exit = proc.returncode
    try:
        summary = json.loads(proc.stdout)
        report.files_changed = summary["summary"]["changed"]
        report.markers_reported = summary["summary"]["markers"]
        report.migrate_errors = [f"{e['path']}:{e['line']}: {e['message']}" for e in summary["errors"]]
    except (json.JSONDecodeError, KeyError, TypeError):
        report.migrate_errors = [(proc.stderr or proc.stdout)[-1000:]]
    report.markers = find_markers(mig_root)

    before = (reused_baseline(work, project, args) if reuse_baseline else None) or \
        run_tests(project, base_root, v1, deps, args, work / "baseline.xml", timeout, TORCH_LOAD_ENV)
    stamp_baseline(work, project, args)
    after = run_tests(project, mig_root, v2, deps, args, work / "migrated.xml", timeout, TORCH_LOAD_ENV)
    report.seconds["baseline tests"], report.seconds["migrated tests"] = before.seconds, after.seconds
    report.baseline_passed, report.baseline_total = len(before.passed), len(before.outcomes)
    report.migrated_passed, report.migrated_total = len(after.passed), len(after.outcomes)
    report.regressions, report.fixed = compare(before, after)
    for label, side in (("baseline", before), ("migrated", after)):
        if not side.outcomes:
            report.problem += f"{label}: pytest reported no test (exit {side.exit_code}):\n{side.tail}\n"
    return report


# ---------------------------------------------------------------------------------------------
# Output


def table(reports: List[ProjectReport]) -> str:
    head = ("project", "sdist", "baseline passed", "passed after", "regressions", "fixed", "markers",
            "files changed", "time")
    rows = [head]
    for r in reports:
        rows.append((r.name, r.sdist, f"{r.baseline_passed}/{r.baseline_total}",
                     f"{r.migrated_passed}/{r.migrated_total}", str(len(r.regressions)), str(len(r.fixed)),
                     str(len(r.markers)), str(r.files_changed), f"{sum(r.seconds.values()):.0f}s"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render(reports: List[ProjectReport]) -> str:
    out = [table(reports), "", "Regressions (passed on 1.9.5, not after migration on 2.6.6):"]
    for r in reports:
        if r.problem:
            out.append(f"  {r.name}: NOT SWEPT: {r.problem.strip()}")
        for reg in r.regressions:
            out.append(f"  {r.name}: {reg['test']}\n      {reg['error']}")
        if r.migrate_errors:
            out.append(f"  {r.name}: lightmigrate exit {r.migrate_exit}: " + "; ".join(r.migrate_errors)[:1000])
    if not any(r.regressions for r in reports):
        out.append("  none")
    else:
        out += ["", "Regressions by first error line:"]
        for r in reports:
            causes: Dict[str, int] = {}
            for reg in r.regressions:
                causes[reg["error"]] = causes.get(reg["error"], 0) + 1
            out.extend(f"  {r.name}: {n} x {error}" for error, n in sorted(causes.items(), key=lambda c: -c[1]))
    out.append("")
    out.append("Fixed (failed on 1.9.5, pass after migration):")
    out.extend(f"  {r.name}: {t}" for r in reports for t in r.fixed)
    if not any(r.fixed for r in reports):
        out.append("  none")
    out.append("")
    out.append("TODO(lightmigrate) markers left in the migrated copies:")
    for r in reports:
        codes: Dict[str, int] = {}
        for m in r.markers:
            codes[m.code] = codes.get(m.code, 0) + 1
        by_code = ", ".join(f"{c} x{n}" for c, n in sorted(codes.items()))
        out.append(f"  {r.name}: {len(r.markers)}" + (f" ({by_code})" if by_code else ""))
        out.extend(f"    {m.path}:{m.line} {m.code}" for m in r.markers)
    return "\n".join(out)


def to_json(reports: List[ProjectReport]) -> str:
    return json.dumps([asdict(r) for r in reports], indent=2)


def from_json(text: str) -> List[ProjectReport]:
    reports = []
    for data in json.loads(text):
        data["markers"] = [Marker(**m) for m in data["markers"]]
        reports.append(ProjectReport(**data))
    return reports


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], help="project name (repeatable)")
    ap.add_argument("--slice", dest="slice_name", help="a named smaller test selection, e.g. ci")
    ap.add_argument("--json", action="store_true", help="print the reports as JSON")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds for one side's test run")
    ap.add_argument("--reuse-baseline", action="store_true",
                    help="take the 1.9.5 outcomes of an earlier run of the same sdist and tests")
    ap.add_argument("--render", type=Path, metavar="JSON", help="print the report of an earlier --json run")
    args = ap.parse_args(argv)
    if args.render:
        print(render(from_json(args.render.read_text())))
        return 0
    projects = sweep_env.load_projects()
    names = args.only or list(projects)
    unknown = [n for n in names if n not in projects]
    if unknown:
        ap.error(f"unknown project(s) {unknown}; known: {sorted(projects)}")
    reports = []
    for name in names:
        project = projects[name]
        if args.slice_name and args.slice_name not in project.slices:
            continue
        print(f"sweeping {name} ({project.sdist}) ...", file=sys.stderr, flush=True)
        reports.append(sweep_project(project, args.slice_name, args.timeout, reuse_baseline=args.reuse_baseline))
    print(to_json(reports) if args.json else render(reports))
    return 2 if any(r.problem for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
