"""``lightmigrate verify``: run each case before and after migration and compare.

The reference run is the ORIGINAL 1.x code, either under the v1 shim on this interpreter's
Lightning 2.x (default; no second environment needed) or on a real pytorch-lightning 1.x
interpreter (``oracle_python``). The migrated run migrates the case files, and the user's own
source folders they import (``sources``), into a temporary folder with the same rules as
``rewrite`` and runs them on this interpreter's Lightning 2.x. One interpreter per side runs
every case, so Lightning is imported once per side.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from lightmigrate.engine import discover, read_source, transform_text
from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.rules import ALL_RULES, Rule
from lightmigrate.verify import oracle, warm
from lightmigrate.verify.compare import Difference, compare_case
from lightmigrate.verify.hook_log import certainly_dead
from lightmigrate.verify.hooks import epoch_end_watch
from lightmigrate.verify.runner import detect_root

ENTRY_POINT = "def lightmigrate_case("


class VerifyError(Exception):
    """The run as a whole cannot start (missing dependencies, no cases)."""


@dataclass
class CaseResult:
    name: str
    path: str
    verdict: str  # "match", "mismatch" or "error"
    differences: List[Difference] = field(default_factory=list)
    dead_hooks: List[Dict[str, str]] = field(default_factory=list)
    error: Optional[str] = None
    seconds: Dict[str, Optional[float]] = field(default_factory=dict)
    # set when the v1 shim could not run the original and a real 1.x interpreter did instead
    reference_note: Optional[str] = None


@dataclass
class VerifyReport:
    reference: str
    cases: List[CaseResult]
    problems: List[str] = field(default_factory=list)  # paths that are not usable case files
    seconds: float = 0.0
    notes: List[str] = field(default_factory=list)  # what the run left out, and why

    @property
    def exit_code(self) -> int:
        if self.problems or any(c.verdict == "error" for c in self.cases):
            return 2
        return 1 if any(c.verdict == "mismatch" for c in self.cases) else 0


def find_case_files(paths: Sequence[str], pending: Optional[List[Path]] = None) -> tuple:
    """Case files under ``paths`` (files given by name must be cases; directories are searched
    for ``*.py`` files that define ``lightmigrate_case``). Returns (files, problems). A folder
    called ``pending`` found inside a searched directory holds cases known to need rules not
    written yet (the corpus's ``pending/``): its cases are left out, into ``pending`` when
    given; name the folder (or a case in it) to run them."""
    files: List[Path] = []
    problems: List[str] = []
    for entry in discover(paths):
        if entry.error is None and not entry.path.endswith(".py"):
            continue  # notebooks are not cases
        if entry.error is not None:
            problems.append(entry.error.format())
            continue
        path = Path(entry.path)
        if _in_pending_folder(path, paths):
            if pending is not None and ENTRY_POINT in path.read_text(encoding="utf-8", errors="replace"):
                pending.append(path)
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if ENTRY_POINT in text:
            files.append(path)
        elif any(Path(p).resolve() == path.resolve() for p in paths):
            problems.append(f"{path}: not a verify case (no lightmigrate_case() entry point; see the README)")
    names = [f.stem for f in files if project_source(f) is None]  # (project cases all are case.py)
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"two case files are named {name}.py; case names must be unique")
    return files, problems


def _in_pending_folder(path: Path, paths: Sequence[str]) -> bool:
    """Whether ``path`` lies in a ``pending`` folder below the searched directory it was found
    in (not when that directory is, or is inside, the ``pending`` folder)."""
    resolved = path.resolve()
    for given in paths:
        root = Path(given).resolve()
        if root.is_dir() and resolved.is_relative_to(root):
            return "pending" in resolved.relative_to(root).parts[:-1]
    return False


def project_source(case: Path) -> Optional[Path]:
    """The package folder of a *project case* (``<name>/case.py`` next to ``<name>/src/``: a
    case whose model lives in a multi-file package of its own, see corpus/README.md), None for
    a plain case file. ``verify`` runs each project case on its own, with its ``src/`` as one
    more source folder (imported by the original, migrated with the case for the 2.x run)."""
    src = case.parent / PROJECT_SOURCE
    return src if case.name == PROJECT_CASE and src.is_dir() else None


PROJECT_CASE = "case.py"
PROJECT_SOURCE = "src"


def _require_lightning() -> None:
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("pytorch_lightning") is None:
        raise VerifyError(
            "lightmigrate verify needs torch and Lightning 2.x in this environment: "
            "pip install -c constraints.txt 'lightmigrate[verify]'"
        )


def _migrate_tree(files: Sequence[Path], sources: Sequence[str], out: Path, rules: Sequence[Rule]) -> Dict[str, Path]:
    """Migrate the user's source folders into ``out/src<i>`` and the case files into
    ``out/cases``, with one project index over all of them. Returns case name -> migrated file."""
    entries = [(Path(e.path), i) for i, src in enumerate(sources) for e in discover([src])
               if e.error is None and e.path.endswith(".py")]  # notebooks cannot be imported
    texts = {path: read_source(str(path)).text for path, _ in entries}
    texts.update({f: f.read_text(encoding="utf-8") for f in files})
    project = ProjectIndex()
    for path, text in texts.items():
        project.add_source(text, str(path))
    for path, i in entries:  # sources are absolute, so discovered paths are too
        dest = out / f"src{i}" / path.relative_to(sources[i])
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(transform_text(texts[path], rules, path=str(path), project=project).text, encoding="utf-8")
    migrated: Dict[str, Path] = {}
    (out / "cases").mkdir(parents=True, exist_ok=True)
    for f in files:
        dest = out / "cases" / f.name
        dest.write_text(transform_text(texts[f], rules, path=str(f), project=project).text, encoding="utf-8")
        migrated[f.stem] = dest
    return migrated


def _build_published(files: List[Path], out: Path, problems: List[str]) -> List[Path]:
    """Published-model cases (``PUBLISHED = {...}``, see ``verify/published.py``) name a model in
    a pinned PyPI package: install it (once, into ``published.install_cache()``) and assemble a
    self-contained case file from its original source. Other case files pass through unchanged."""
    from lightmigrate.verify import published

    result: List[Path] = []
    for f in files:
        if "PUBLISHED" not in f.read_text(encoding="utf-8", errors="replace"):
            result.append(f)
            continue
        try:
            case = published.read_case(f)
            result.extend(published.build_all([case], published.install_cache(), out / "built", python=sys.executable))
        except Exception as exc:  # noqa: BLE001 - one unusable case must not stop the others
            problems.append(f"{f}: cannot build the published-model case: {exc}")
    return result


def verify_paths(
    paths: Sequence[str],
    oracle_python: Optional[str] = None,
    sources: Sequence[str] = (),
    rtol: float = 1e-5,
    atol: float = 1e-8,
    limit: Optional[int] = 10,
    rules: Optional[Sequence[Rule]] = None,
    warm_workers: bool = True,
) -> VerifyReport:
    """``rules`` migrate the copies (all rules when None; none, to run the code as it is on 2.x:
    a hand port, or un-migrated 1.x code to see what 2.x does with it). Each project case
    (:func:`project_source`) is migrated with its own package and imports it alone. Each case
    runs in a child of its interpreter's warm worker (``warm_workers``, see :func:`run_groups`),
    else all cases run in one fresh interpreter per side."""
    started = time.perf_counter()
    rules = ALL_RULES if rules is None else list(rules)
    _require_lightning()
    pending: List[Path] = []
    files, problems = find_case_files(paths, pending)
    folders = ", ".join(sorted({str(p.parent) for p in pending}))
    notes = [f"left out {len(pending)} case(s) under {folders}: cases known to need rules not written yet "
             "(name the folder to run them)"] if pending else []
    sources = [str(Path(s).resolve()) for s in sources]
    for s in sources:
        if not Path(s).is_dir():
            problems.append(f"{s}: --source must be a folder")
    if oracle_python is not None:
        # absolute, but not resolved: a venv's python is a symlink that must stay in the venv
        oracle_python = os.path.abspath(oracle_python)
        if not Path(oracle_python).exists():
            raise VerifyError(f"--oracle interpreter not found: {oracle_python}")
    reference = f"pytorch-lightning 1.x at {oracle_python}" if oracle_python else "the v1 shim on Lightning 2.x"
    if not files:
        return VerifyReport(reference, [], problems or ["no case files found"], time.perf_counter() - started, notes)
    with tempfile.TemporaryDirectory(prefix="lightmigrate-verify-") as tmp:
        out = Path(tmp)
        plain = _build_published([f for f in files if project_source(f) is None], out / "published", problems)
        groups = [(plain, sources)] if plain else []
        names = {f: f.stem for f in plain}
        for f in files:
            src = project_source(f)
            if src is not None:
                groups.append(([f], [*sources, *([] if str(src.resolve()) in sources else [str(src.resolve())])]))
                names[f] = f.parent.name  # (every project case is a case.py)
        runs = run_groups(groups, names, oracle_python, out, rules, warm_workers=warm_workers)
        case_notes = {} if oracle_python else _rerun_on_oracle(runs, fallback_oracle(), warm_workers)
    cases = [_case_result(f, names[f], runs, case_notes, rtol, atol, limit) for group, _ in groups for f in group]
    notes += [runs.worker_note] if runs.worker_note else []
    return VerifyReport(reference, cases, problems, time.perf_counter() - started, notes)


@dataclass
class SideRuns:
    """Both runs of some case files: the records of the reference and of the migrated run
    (case name -> record), the migrated copies (case name -> file), why the migration failed
    (case name -> message), and the reference's plan (to run some cases again elsewhere)."""

    expected: Dict[str, Any]
    actual: Dict[str, Any]
    migrated: Dict[str, Path]
    migrate_errors: Dict[str, str] = field(default_factory=dict)
    reference_plan: Dict[str, Any] = field(default_factory=dict)
    worker_note: Optional[str] = None  # why the warm workers were not used, when they failed

    @property
    def migrate_error(self) -> Optional[str]:
        return next(iter(self.migrate_errors.values()), None)


def run_sides(files: Sequence[Path], sources: Sequence[str], oracle_python: Optional[str], out: Path,
              rules: Sequence[Rule], checkpoint_dir: Optional[Path] = None) -> SideRuns:
    """Run the ORIGINAL ``files`` (importing ``sources``) on ``oracle_python`` (the v1 shim on
    this interpreter when None), and their migration, with ``sources`` migrated into ``out``,
    on this interpreter's Lightning 2.x. Case names are the file stems. ``checkpoint_dir``:
    where the reference run saves each case's final checkpoint."""
    return run_groups([(list(files), list(sources))], {Path(f): Path(f).stem for f in files}, oracle_python, out,
                      rules, checkpoint_dir)


def run_groups(groups: Sequence[Tuple[List[Path], List[str]]], names: Mapping[Path, str],
               oracle_python: Optional[str], out: Path, rules: Sequence[Rule],
               checkpoint_dir: Optional[Path] = None, warm_workers: bool = True) -> SideRuns:
    """Like :func:`run_sides` for several groups of case files, each group with its own source
    folders (migrated together with its cases, under ``out/g<i>``; one group: under ``out``).
    With ``warm_workers`` (and unless ``$LIGHTMIGRATE_VERIFY_SERVER=0``), each case runs in a
    child forked by its interpreter's warm worker (:mod:`lightmigrate.verify.warm`), two or more
    at a time; when a worker cannot be used, cold: ONE fresh interpreter per side for all cases."""
    ref_cases = [{"name": names[f], "file": str(f.resolve()), "sys_path": [*srcs, str(f.parent.resolve())]}
                 for files, srcs in groups for f in files]
    ref_plan = {"cases": ref_cases, "checkpoint_dir": str(checkpoint_dir.resolve()) if checkpoint_dir else None}
    watch = {names[f]: epoch_end_watch(f.read_text(encoding="utf-8")) for files, _ in groups for f in files}
    note = None
    if warm_workers and warm.enabled():
        try:
            return _run_warm(groups, names, oracle_python, out, rules, ref_plan, watch)
        except warm.ServerError as exc:
            note = f"the warm worker could not be used, so the cases ran cold: {exc}"
    runs = _run_cold(groups, names, oracle_python, out, rules, ref_plan, watch)
    runs.worker_note = note
    return runs


def _run_cold(groups: Sequence[Tuple[List[Path], List[str]]], names: Mapping[Path, str],
              oracle_python: Optional[str], out: Path, rules: Sequence[Rule], ref_plan: Dict[str, Any],
              watch: Dict[str, Any]) -> SideRuns:
    """Both interpreters start first and import Lightning while the cases are migrated."""
    try:
        ref = oracle.PlanRun(oracle_python or sys.executable, "v1" if oracle_python else "v1shim", ref_plan)
        new = oracle.PlanRun(sys.executable, "v2")
    except oracle.OracleError as exc:
        raise VerifyError(str(exc)) from exc
    migrated, errors, new_cases = migrate_groups(groups, names, out, rules)
    try:
        expected = ref.finish()["cases"]
        actual = new.finish({"cases": new_cases, "watch": watch})["cases"]
    except oracle.OracleError as exc:
        new.cancel()
        raise VerifyError(str(exc)) from exc
    return SideRuns(expected, actual, migrated, errors, ref_plan)


def _run_warm(groups: Sequence[Tuple[List[Path], List[str]]], names: Mapping[Path, str],
              oracle_python: Optional[str], out: Path, rules: Sequence[Rule], ref_plan: Dict[str, Any],
              watch: Dict[str, Any]) -> SideRuns:
    """The cases of each side are jobs for a warm worker (:func:`_submit`); the reference jobs
    start at once, the migrated ones once the copies are migrated (in a child of this
    interpreter's worker, where the migration machinery is warm, when the rules are the
    registry's)."""
    env = oracle.runner_env()
    new_worker = warm.worker_for(sys.executable, env, ["pytorch_lightning", "migration"])
    ref_worker = new_worker if oracle_python is None else warm.worker_for(oracle_python, env, ["pytorch_lightning"])
    pool = ThreadPoolExecutor(max_workers=parallel_cases())
    try:
        ref_jobs = _submit(pool, ref_worker, "v1" if oracle_python else "v1shim", ref_plan)
        codes = _registry_codes(rules)
        if codes is None:  # rules the worker cannot name: migrate here
            migrated, errors, new_cases = migrate_groups(groups, names, out, rules)
        else:
            done = new_worker.call("migrate", {  # (the worker's child runs in a folder of its own)
                "groups": [[[os.path.abspath(f) for f in files], list(srcs)] for files, srcs in groups],
                "names": {os.path.abspath(f): n for f, n in names.items()}, "out": os.path.abspath(out),
                "codes": codes})
            migrated = {n: Path(p) for n, p in done["migrated"].items()}
            errors, new_cases = done["errors"], done["cases"]
        new_jobs = _submit(pool, new_worker, "v2", {"cases": new_cases, "watch": watch})
        expected, actual = _gather(ref_jobs), _gather(new_jobs)
    except BaseException:  # (Ctrl-C, or a job failed: the children of the other jobs stop too)
        for worker in {new_worker, ref_worker}:
            worker.abort()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return SideRuns(expected, actual, migrated, errors, ref_plan)


def _run_plan(python: str, side: str, plan: Dict[str, Any], warm_workers: bool = True) -> Dict[str, Any]:
    """The records (case name -> record) of ``plan`` run on ``python``: on its warm worker,
    else (or when that fails) in one fresh interpreter."""
    if warm_workers and warm.enabled():
        try:
            worker = warm.worker_for(python, oracle.runner_env(), ["pytorch_lightning"])
            with ThreadPoolExecutor(max_workers=parallel_cases()) as pool:
                return _gather(_submit(pool, worker, side, plan))
        except warm.ServerError:
            pass
    return oracle.PlanRun(python, side, plan).finish()["cases"]


def _submit(pool: ThreadPoolExecutor, worker: "warm.Worker", side: str, plan: Dict[str, Any]) -> List[Future]:
    """Run ``plan``'s cases on ``worker``, a few per child (:func:`_chunk_size`), as many
    children at a time as ``pool`` has threads."""
    cases = list(plan["cases"])
    size = _chunk_size(len(cases), parallel_cases())
    jobs = []
    for chunk in [cases[i:i + size] for i in range(0, len(cases), size)]:
        part = {**plan, "cases": chunk}
        if plan.get("watch") is not None:
            part["watch"] = {c["name"]: plan["watch"][c["name"]] for c in chunk if c["name"] in plan["watch"]}
        jobs.append(pool.submit(_plan_job, worker, side, part))
    return jobs


def _gather(jobs: Sequence[Future]) -> Dict[str, Any]:
    return {name: record for job in jobs for name, record in job.result().items()}


def _chunk_size(cases: int, slots: int) -> int:
    """Cases per child: one for a few cases (so both sides of one case run side by side), up to
    8 for many: a child's first case pays about half a second that the next ones do not (first
    calls into torch and Lightning), and a queue of small chunks still keeps every slot busy
    to the end."""
    return max(1, min(8, cases // (3 * slots)))


def _plan_job(worker: "warm.Worker", side: str, plan: Dict[str, Any]) -> Dict[str, Any]:
    """Run ``plan`` (its cases one after the other) in a child of ``worker``; their records."""
    roots = set()
    for case in plan["cases"]:
        with open(case["file"], encoding="utf-8") as fh:
            roots.add("pytorch_lightning" if side == "v1" else detect_root(fh.read()))
    return worker.call("run_plan", {"plan": plan, "side": side}, imports=sorted(roots))["cases"]


def parallel_cases() -> int:
    """Cases run at the same time on warm workers: one per core, at least two (the two sides
    of one case)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(2, cores)


def _registry_codes(rules: Sequence[Rule]) -> Optional[List[str]]:
    """The codes of ``rules`` when each is the registry's rule of that code, else None."""
    from lightmigrate.rules import rules_by_code

    known = rules_by_code()
    return [r.code for r in rules] if all(known.get(r.code) is r for r in rules) else None


def migrate_groups(groups: Sequence[Tuple[List[Path], List[str]]], names: Mapping[Path, str], out: Path,
                   rules: Sequence[Rule]) -> Tuple[Dict[str, Path], Dict[str, str], List[Dict[str, Any]]]:
    """Migrate each group (its case files and source folders, into ``out/g<i>``; one group:
    into ``out``). Returns (case name -> migrated file, case name -> why its migration failed,
    the migrated run's plan cases)."""
    migrated: Dict[str, Path] = {}
    errors: Dict[str, str] = {}
    new_cases: List[Dict[str, Any]] = []
    for i, (files, srcs) in enumerate(groups):
        where = out / f"g{i}" if len(groups) > 1 else out
        try:
            copies = _migrate_tree(files, srcs, where, rules)
        except Exception as exc:  # noqa: BLE001 - reported as an error for every case of the group
            errors.update({names[f]: f"migration failed: {type(exc).__name__}: {exc}" for f in files})
            continue
        folders = [str(where / f"src{j}") for j in range(len(srcs))] + [str(where / "cases")]
        for f in files:
            migrated[names[f]] = copies[f.stem]
            new_cases.append({"name": names[f], "file": str(copies[f.stem]),
                              "sys_path": [*folders, str(f.parent.resolve())]})
    return migrated, errors, new_cases


def migrate_groups_by_code(groups: List[List[List[str]]], names: Dict[str, str], out: str,
                           codes: List[str]) -> Dict[str, Any]:
    """:func:`migrate_groups` as a warm worker's job: JSON in (rules by code), JSON out."""
    from lightmigrate.rules import rules_by_code

    known = rules_by_code()
    migrated, errors, cases = migrate_groups([([Path(f) for f in files], srcs) for files, srcs in groups],
                                             {Path(f): n for f, n in names.items()}, Path(out),
                                             [known[c] for c in codes])
    return {"migrated": {n: str(p) for n, p in migrated.items()}, "errors": errors, "cases": cases}


_WARM_UP = """import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self(batch)

    def training_epoch_end(self, outputs):
        self.log("n", len(outputs))
"""


def warm_migration() -> None:
    """Migrate a small module once, so that what the rules build on first use is ready (a warm
    worker does it before it forks its children)."""
    project = ProjectIndex()
    project.add_source(_WARM_UP, "warm_up.py")
    transform_text(_WARM_UP, ALL_RULES, path="warm_up.py", project=project)


SHIM_CANNOT = ("the v1 shim cannot run this original ({error}); it emulates 1.9's hooks, Trainer arguments and "
               "module attributes, but not every 1.x API")


def fallback_oracle() -> Optional[str]:
    """A real pytorch-lightning 1.x interpreter for the cases the v1 shim cannot run, when one
    is at hand without ``--oracle``: ``$LIGHTMIGRATE_ORACLE_PYTHON``, else the ``.venv-pl19``
    of a lightmigrate development checkout. None when there is none."""
    python = oracle.default_oracle_python()
    return os.path.abspath(python) if python.exists() else None


def _rerun_on_oracle(runs: SideRuns, oracle_python: Optional[str], warm_workers: bool = True) -> Dict[str, str]:
    """The originals the v1 shim could not run go to a real 1.x interpreter, when there is one.
    Returns case name -> what verify says about that case's reference."""
    failed = [c for c in runs.reference_plan["cases"] if (runs.expected.get(c["name"]) or {}).get("error")]
    if not failed:
        return {}
    notes = {c["name"]: SHIM_CANNOT.format(error=runs.expected[c["name"]]["error"]) for c in failed}
    if oracle_python is None:
        return {name: note + "; run verify with --oracle PYTHON (a pytorch-lightning 1.x environment) to "
                "check this case against real 1.x" for name, note in notes.items()}
    try:
        again = _run_plan(oracle_python, "v1", {**runs.reference_plan, "cases": failed}, warm_workers)
    except oracle.OracleError as exc:
        return {name: f"{note}; the 1.x interpreter {oracle_python} failed too: {exc}" for name, note in notes.items()}
    runs.expected.update(again)
    return {name: f"{note}; checked against pytorch-lightning 1.x at {oracle_python} instead"
            for name, note in notes.items()}


def _case_result(f: Path, name: str, runs: SideRuns, notes: Mapping[str, str], rtol: float, atol: float,
                 limit: Optional[int]) -> CaseResult:
    e, a = runs.expected.get(name), runs.actual.get(name)
    migrate_error = runs.migrate_errors.get(name)
    result = CaseResult(name, str(f), "match", seconds={
        "reference": (e or {}).get("seconds"), "migrated": (a or {}).get("seconds")})
    result.reference_note = notes.get(name)
    if e is None or e.get("error"):
        result.verdict = "error"
        if name in notes and e is not None and e.get("side") == "v1shim":  # no 1.x interpreter took over
            result.error = notes[name]
        else:
            result.error = "the original could not run: " + ((e or {}).get("error") or "no result")
    elif migrate_error or a is None:
        result.verdict = "error"
        result.error = migrate_error or "the migrated copy produced no result"
    else:
        ran_before = (e.get("hooks") or {}).get("counts") or {}
        # a run that crashed never reached most hooks: its error is the finding, not them
        result.dead_hooks = [] if a.get("error") else [
            d for d in (a.get("hooks") or {}).get("dead") or []
            if certainly_dead(d["name"]) or ran_before.get(d["name"])
        ]
        result.differences = compare_case(name, e, a, rtol=rtol, atol=atol, limit=limit)
        if result.differences:
            result.verdict = "mismatch"
    return result


def report_to_json(report: VerifyReport) -> Dict[str, Any]:
    return {
        "reference": report.reference,
        "seconds": round(report.seconds, 3),
        "exit_code": report.exit_code,
        "problems": report.problems,
        "notes": report.notes,
        "cases": [
            {
                "name": c.name,
                "path": c.path,
                "verdict": c.verdict,
                "error": c.error,
                "reference_note": c.reference_note,
                "seconds": c.seconds,
                "dead_hooks": c.dead_hooks,
                "differences": [
                    {"path": d.path, "expected": d.expected, "actual": d.actual, "message": d.message}
                    for d in c.differences
                ],
            }
            for c in report.cases
        ],
        "summary": {v: sum(c.verdict == v for c in report.cases) for v in ("match", "mismatch", "error")},
    }
