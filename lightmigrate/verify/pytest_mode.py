"""``lightmigrate verify --pytest``: a project's own tests, before and after migration.

The project is copied twice into a temporary folder; one copy is migrated with the rules and
settings ``rewrite`` would use (the user's files are never written). The tests run on the
original copy with the ``before`` interpreter (pytorch-lightning 1.x) and on the migrated copy
with the ``after`` interpreter (Lightning 2.x), at the same time, each with the recording
plugin (:mod:`lightmigrate.verify.pytest_plugin`). Per test the outcomes are compared
(passed on both, regressed, fixed, failed on both, skipped), and for a test that passed on
both, the Trainer runs it made (:func:`compare_runs`, in the words of ``verify`` cases).

An interpreter without pytest borrows the other side's (pure Python) when both run the same
Python version: its modules are linked into a folder put on the side's PYTHONPATH.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from lightmigrate.verify.compare import DEFAULT_SECTIONS, Difference, compare_case
from lightmigrate.verify.recordings import read_recordings
from lightmigrate.verify.session import VerifyError

# what a test's Trainer runs are compared on (the epoch-end tracer does not run under pytest)
SECTIONS = tuple(s for s in DEFAULT_SECTIONS if s != "epoch_end")
VERDICTS = ("passed on both", "behaviour differs", "regressed", "fixed", "failed on both", "skipped")
FAILING = ("regressed", "behaviour differs")
SIDE_TIMEOUT = 3600.0
_NOT_COPIED = {".git", ".hg", ".svn", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
               ".ruff_cache", "node_modules", "venv"}

_PROBE = ("import sys, json, importlib.util as u; print(json.dumps({'python': list(sys.version_info[:2]), "
          "'missing': [n for n in sys.argv[1:] if u.find_spec(n) is None]}))")
# Run in the interpreter that lends pytest: its distribution and the ones it requires, each as
# {"modules": {top-level name: path}, "info": the .dist-info folder}.
_LENDABLE = r"""
import importlib.metadata as md, json, re
from packaging.requirements import Requirement
seen, todo, out = set(), ["pytest"], {}
while todo:
    name = todo.pop()
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        continue
    seen.add(key)
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        continue
    for req in dist.requires or []:
        r = Requirement(req)
        if r.marker is None or r.marker.evaluate({"extra": ""}):
            todo.append(r.name)
    modules = {}
    for f in dist.files or []:
        first = f.parts[0]
        if first == ".." or first == "__pycache__" or first.endswith((".dist-info", ".egg-info", ".pth")):
            continue
        if len(f.parts) == 1 and not first.endswith(".py"):
            continue
        modules[first[:-3] if first.endswith(".py") else first] = str(dist.locate_file(first))
    info = getattr(dist, "_path", None)
    out[key] = {"modules": modules, "info": str(info) if info else None}
print(json.dumps(out))
"""


@dataclass
class TestOutcome:
    nodeid: str
    verdict: str
    before: str  # passed, failed, error, skipped or missing
    after: str
    error: Optional[str] = None  # the first error line that explains the verdict
    differences: List[Difference] = field(default_factory=list)
    runs: Tuple[int, int] = (0, 0)  # Trainer runs recorded before / after
    line: Optional[int] = None  # where the test is defined in its file


@dataclass
class Side:
    name: str  # "before" or "after"
    python: str
    exit_status: Optional[int] = None
    versions: Dict[str, Any] = field(default_factory=dict)
    lent: List[str] = field(default_factory=list)  # modules borrowed from the other interpreter
    output: str = ""


@dataclass
class PytestReport:
    before: Side
    after: Side
    tests: List[TestOutcome]
    problems: List[str] = field(default_factory=list)  # a side that could not run
    notes: List[str] = field(default_factory=list)  # migration problems, borrowed pytest
    seconds: float = 0.0
    project: str = ""  # the folder the test ids are relative to

    @property
    def exit_code(self) -> int:
        if self.problems:
            return 2
        return 1 if any(t.verdict in FAILING for t in self.tests) else 0

    def counts(self) -> Dict[str, int]:
        return {v: sum(t.verdict == v for t in self.tests) for v in VERDICTS}


# --------------------------------------------------------------------------------------------
# comparison (pure: works on the recordings alone)


def compare_runs(before: Sequence[Dict[str, Any]], after: Sequence[Dict[str, Any]], rtol: float = 1e-5,
                 atol: float = 1e-8, limit: Optional[int] = 10) -> List[Difference]:
    """Differences between the Trainer runs one test made before and after migration. A run
    is named by its method and its place (``fit#1``); within a run the sections are those of
    a verify case (:func:`~lightmigrate.verify.compare.compare_case`)."""
    diffs: List[Difference] = []
    if [r.get("method") for r in before] != [r.get("method") for r in after]:
        diffs.append(Difference("runs", [r.get("method") for r in before], [r.get("method") for r in after],
                                f"{len(before)} Trainer run(s) in the original, {len(after)} after migration"))
    for i, (e, a) in enumerate(zip(before, after)):
        if e.get("method") != a.get("method"):
            break
        name = f"{e.get('method')}#{i + 1}"
        if e.get("error") and a.get("error"):  # raised on both sides (inside pytest.raises...)
            if e["error"].split(":")[0] != a["error"].split(":")[0]:
                diffs.append(Difference(f"{name}/error", e["error"], a["error"], "the runs failed differently"))
            continue
        diffs.extend(compare_case(name, e, a, rtol=rtol, atol=atol, limit=limit, sections=SECTIONS))
    return diffs


def _lookup(doc: Dict[str, Any], nodeid: str) -> Dict[str, Any]:
    """The record of ``nodeid`` on one side; a test of a module that failed to import there
    gets the module's collection error; a test the side never saw is ``missing``."""
    tests = doc.get("tests") or {}
    if nodeid in tests and not tests[nodeid].get("collection"):
        return tests[nodeid]
    for other, rec in tests.items():
        if rec.get("collection") and (nodeid == other or nodeid.startswith(other + "::")
                                      or nodeid.startswith(other.rstrip("/") + "/")):
            return {"outcome": "error", "error": rec.get("error"), "runs": []}
    return {"outcome": "missing", "error": "not collected on this side", "runs": []}


def compare_tests(before: Dict[str, Any], after: Dict[str, Any], rtol: float = 1e-5, atol: float = 1e-8,
                  limit: Optional[int] = 10) -> List[TestOutcome]:
    """One outcome per test of either side, in the order the tests ran before (then after)."""
    names: List[str] = []
    for doc in (before, after):
        for nodeid, rec in (doc.get("tests") or {}).items():
            if nodeid not in names and not rec.get("collection"):
                names.append(nodeid)
    # a collection error no test of either side falls under (a module that imports on neither)
    for doc in (before, after):
        for nodeid, rec in (doc.get("tests") or {}).items():
            if rec.get("collection") and nodeid not in names and not any(
                    n.startswith(nodeid + "::") or n.startswith(nodeid.rstrip("/") + "/") for n in names):
                names.append(nodeid)
    out: List[TestOutcome] = []
    for nodeid in names:
        b, a = _lookup(before, nodeid), _lookup(after, nodeid)
        bo, ao = b.get("outcome") or "missing", a.get("outcome") or "missing"
        result = TestOutcome(nodeid, "", bo, ao, runs=(len(b.get("runs") or []), len(a.get("runs") or [])),
                             line=b.get("line") or a.get("line"))
        if bo == "passed" and ao == "passed":
            result.differences = compare_runs(b.get("runs") or [], a.get("runs") or [], rtol, atol, limit)
            result.verdict = "behaviour differs" if result.differences else "passed on both"
        elif bo == "passed":
            result.verdict = "regressed"
            result.error = a.get("error") or ao
        elif ao == "passed":
            result.verdict = "fixed"
            result.error = b.get("error") or bo
        elif bo == "skipped" and ao == "skipped":
            result.verdict = "skipped"
            result.error = a.get("error")
        else:
            result.verdict = "failed on both"
            result.error = a.get("error") or b.get("error")
        out.append(result)
    return out


# --------------------------------------------------------------------------------------------
# running


def _probe(python: str, names: Sequence[str]) -> Dict[str, Any]:
    try:
        proc = subprocess.run([python, "-c", _PROBE, *names], capture_output=True, text=True, timeout=120,
                              check=False)
        return json.loads(proc.stdout)
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise VerifyError(f"cannot run the interpreter {python}: {exc}") from exc


def _lend_pytest(lender: str, borrower: str, folder: Path) -> List[str]:
    """Link into ``folder`` the modules of ``lender``'s pytest (and of the distributions it
    requires) that ``borrower`` cannot import. Returns their names."""
    proc = subprocess.run([lender, "-c", _LENDABLE], capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        raise VerifyError(f"cannot list the pytest of {lender}: {proc.stderr.strip()[-500:]}")
    dists = json.loads(proc.stdout)
    modules = {name: path for d in dists.values() for name, path in d["modules"].items()}
    missing = set(_probe(borrower, sorted(modules))["missing"])
    lent = []
    for d in dists.values():
        names = [n for n in d["modules"] if n in missing]
        for name in names:
            target = Path(d["modules"][name])
            (folder / target.name).symlink_to(target)
            lent.append(name)
        if names and d.get("info"):  # its metadata too: pytest asks for versions
            (folder / Path(d["info"]).name).symlink_to(d["info"])
    return sorted(lent)


def _copy_project(project: Path, dest: Path) -> None:
    def ignore(folder: str, names: List[str]) -> List[str]:
        return [n for n in names if n in _NOT_COPIED or n.startswith(".venv")]

    shutil.copytree(project, dest, symlinks=True, ignore=ignore)


def _map_paths(args: Sequence[str], project: Path, cwd: Path) -> List[str]:
    """The test arguments, paths made relative to the project (the copies' root)."""
    out = []
    for arg in args:
        path_part = arg.split("::", 1)[0]
        if arg.startswith("-") or not path_part or not (cwd / path_part).exists():
            out.append(arg)
            continue
        rel = os.path.relpath((cwd / path_part).resolve(), project.resolve())
        if rel == ".." or rel.startswith(".." + os.sep):
            raise VerifyError(f"{arg}: not inside the project {project} (see --project)")
        out.append(rel + arg[len(path_part):])
    return out


def _pythonpath(support: Path, project: Path, copy: Path) -> str:
    """``support`` (this lightmigrate, borrowed pytest), the copy's ``src/`` when it has one,
    then the caller's PYTHONPATH with folders inside the project moved to the copy."""
    entries = [str(support)]
    if (copy / "src").is_dir():
        entries.append(str(copy / "src"))
    for entry in filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        rel = os.path.relpath(os.path.abspath(entry), project)
        entries.append(str(copy / rel) if not rel.startswith("..") else entry)
    return os.pathsep.join(entries)


def _run_side(side: Side, cwd: Path, args: Sequence[str], env: Dict[str, str], record: Path,
              timeout: float) -> Optional[Dict[str, Any]]:
    cmd = [side.python, "-m", "pytest", "-p", "no:lightmigrate", "-p", "lightmigrate.verify.pytest_plugin",
           f"--lightmigrate-record={record}", "--continue-on-collection-errors", "-q", *args]
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        side.output = f"pytest timed out after {timeout:.0f} s"
        return None
    side.exit_status = proc.returncode
    side.output = (proc.stdout + proc.stderr)[-3000:]
    doc = read_recordings(str(record))
    if doc is not None:
        side.versions = doc.get("versions") or {}
    return doc


def _side_problem(side: Side, doc: Optional[Dict[str, Any]]) -> Optional[str]:
    what = {"before": "original", "after": "migrated"}[side.name]
    if doc is None or side.exit_status not in (0, 1):
        why = {5: "no tests were collected", 2: "pytest was interrupted", 3: "pytest had an internal error",
               4: "pytest could not use its arguments"}.get(side.exit_status or -1, "pytest did not finish")
        tail = "\n    ".join(side.output.strip().splitlines()[-15:])
        return f"the {what} code's tests could not run ({side.python}: {why}, exit {side.exit_status}):\n    {tail}"
    return None


def verify_pytest(
    tests: Sequence[str],
    before_python: str,
    after_python: str,
    rules: Sequence[Any],
    settings: Any = None,
    project: Optional[str] = None,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    limit: Optional[int] = 10,
    timeout: float = SIDE_TIMEOUT,
) -> PytestReport:
    """Run ``tests`` (pytest arguments) on the original ``project`` (default: the current
    folder) with ``before_python`` and on a copy migrated with ``rules``/``settings`` with
    ``after_python``, and compare them test by test."""
    from lightmigrate.engine import Mode, run
    from lightmigrate.engine.parallel import default_jobs
    from lightmigrate.verify.oracle import repo_root

    started = time.perf_counter()
    cwd = Path.cwd()
    root = Path(project or ".").resolve()
    if not root.is_dir():
        raise VerifyError(f"--project {project}: not a folder")
    sides = {}
    for name, python in (("before", before_python), ("after", after_python)):
        python = os.path.abspath(python)  # a venv's python is a symlink that must stay in its venv
        if not Path(python).exists():
            raise VerifyError(f"--{name} interpreter not found: {python}")
        sides[name] = Side(name, python)
    args = _map_paths(tests, root, cwd)
    probes = {name: _probe(side.python, ["pytest"]) for name, side in sides.items()}

    with tempfile.TemporaryDirectory(prefix="lightmigrate-pytest-") as tmp:
        out = Path(tmp)
        # the copies sit where the configuration's root puts them, so its exclude patterns and
        # per-file-ignores read the same
        rel = os.path.relpath(root, settings.root) if settings is not None else ".."
        inner = Path(rel) if not rel.startswith("..") else Path(root.name or "project")
        copies = {name: out / name / inner for name in sides}
        notes: List[str] = []
        for name in sides:
            _copy_project(root, copies[name])
        if rules:
            copy_settings = None if settings is None else dataclasses.replace(
                settings, root=str(out / "after") if not rel.startswith("..") else str(copies["after"]))
            report = run([str(copies["after"])], list(rules), Mode.WRITE, copy_settings, jobs=default_jobs())
            for f in report.files:
                for problem in f.all_problems:
                    notes.append("migration: " + problem.format().replace(str(copies["after"]) + os.sep, ""))
        supports = {}
        for name, side in sides.items():
            supports[name] = out / f"support-{name}"
            supports[name].mkdir()
            (supports[name] / "lightmigrate").symlink_to(repo_root() / "lightmigrate")
            if "pytest" in probes[name]["missing"]:
                other = sides["after" if name == "before" else "before"]
                other_probe = probes[other.name]
                if "pytest" in other_probe["missing"] or other_probe["python"] != probes[name]["python"]:
                    raise VerifyError(f"the --{name} interpreter {side.python} has no pytest: install pytest there")
                side.lent = _lend_pytest(other.python, side.python, supports[name])
                notes.append(f"{name}: pytest borrowed from {other.python} ({', '.join(side.lent)})")
        docs: Dict[str, Optional[Dict[str, Any]]] = {}
        with ThreadPoolExecutor(max_workers=2) as pool:
            jobs = {}
            for name, side in sides.items():
                env = dict(os.environ)
                env.pop("LIGHTMIGRATE_RECORD", None)
                env["PYTHONPATH"] = _pythonpath(supports[name], root, copies[name])
                env.setdefault("PYTHONHASHSEED", "0")
                env["PYTHONDONTWRITEBYTECODE"] = "1"
                jobs[name] = pool.submit(_run_side, side, copies[name], args, env, out / f"{name}.json", timeout)
            for name, job in jobs.items():
                docs[name] = job.result()
    problems = [p for p in (_side_problem(sides[n], docs[n]) for n in sides) if p]
    results = [] if problems else compare_tests(docs["before"] or {}, docs["after"] or {}, rtol, atol, limit)
    return PytestReport(sides["before"], sides["after"], results, problems, notes, time.perf_counter() - started,
                        str(root))


def report_to_json(report: PytestReport) -> Dict[str, Any]:
    def side(s: Side) -> Dict[str, Any]:
        return {"python": s.python, "exit_status": s.exit_status, "versions": s.versions, "lent": s.lent}

    return {
        "mode": "pytest",
        "before": side(report.before),
        "after": side(report.after),
        "seconds": round(report.seconds, 3),
        "exit_code": report.exit_code,
        "problems": report.problems,
        "notes": report.notes,
        "tests": [
            {
                "nodeid": t.nodeid,
                "verdict": t.verdict,
                "before": t.before,
                "after": t.after,
                "error": t.error,
                "trainer_runs": list(t.runs),
                "differences": [
                    {"path": d.path, "expected": d.expected, "actual": d.actual, "message": d.message}
                    for d in t.differences
                ],
            }
            for t in report.tests
        ],
        "summary": report.counts(),
    }
