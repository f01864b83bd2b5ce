"""Drive the runner in other interpreters, and migrate case copies for the 2.x side.

* :func:`run_in` runs case files with ``python -m lightmigrate.verify.runner`` in a given
  interpreter (one subprocess for all of them) and returns the parsed results.
* :func:`run_original` does that on the 1.9.5 oracle interpreter (side ``v1``).
* :func:`migrate_cases` writes migrated copies of ORIGINAL case files to a directory, using
  any ``migrate(text) -> text`` callable; :func:`engine_migrate` builds one from the engine.
* :func:`run_migrated` migrates and runs the copies on a 2.x interpreter (side ``v2``), telling
  the runner which local names hold the old ``outputs`` (read from the originals).
* :func:`verify` does both runs and compares them.

Only the stdlib is imported at module level; :func:`engine_migrate` imports the engine lazily.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from lightmigrate.verify.hooks import epoch_end_watch

PathLike = Union[str, "os.PathLike[str]"]
Migrate = Callable[[str], str]

ORACLE_ENV = "LIGHTMIGRATE_ORACLE_PYTHON"
V2_ENV = "LIGHTMIGRATE_V2_PYTHON"


class OracleError(RuntimeError):
    """The runner subprocess failed as a whole (not a single case: those are recorded)."""


def repo_root() -> Path:
    """The directory that contains the ``lightmigrate`` package (goes on PYTHONPATH)."""
    return Path(__file__).resolve().parents[2]


def default_oracle_python() -> Path:
    """``$LIGHTMIGRATE_ORACLE_PYTHON``, else ``<repo>/.venv-pl19/bin/python``."""
    env = os.environ.get(ORACLE_ENV)
    return Path(env) if env else repo_root() / ".venv-pl19" / "bin" / "python"


def default_v2_python() -> Path:
    """``$LIGHTMIGRATE_V2_PYTHON``, else ``<repo>/.venv/bin/python`` if it exists, else this one."""
    env = os.environ.get(V2_ENV)
    if env:
        return Path(env)
    venv = repo_root() / ".venv" / "bin" / "python"
    return venv if venv.exists() else Path(sys.executable)


def corpus_files(directory: Optional[PathLike] = None, include_pending: bool = False) -> List[Path]:
    """The case files of the corpus (``<repo>/corpus/*.py``), sorted by name.

    With ``include_pending``, the cases under ``<corpus>/pending/`` (1.x code that needs rules
    not written yet) follow, also sorted by name. Published-model cases
    (``<corpus>/published/``) are never listed here: see :mod:`lightmigrate.verify.published`.
    """
    folder = Path(directory) if directory is not None else repo_root() / "corpus"
    files = sorted(p for p in folder.glob("*.py") if not p.name.startswith("_"))
    if include_pending:
        files += sorted(p for p in (folder / "pending").glob("*.py") if not p.name.startswith("_"))
    return files


def watch_names(case_files: Sequence[PathLike]) -> Dict[str, Dict[str, Any]]:
    """case name -> ``hooks.epoch_end_watch`` (1.x parameter names per stage, first lines of the
    1.x bodies), read from the ORIGINAL files."""
    out: Dict[str, Dict[str, Any]] = {}
    for path in case_files:
        p = Path(path)
        out[p.stem] = epoch_end_watch(p.read_text(encoding="utf-8"))
    return out


def run_in(
    python: PathLike,
    case_files: Sequence[PathLike],
    side: str,
    watch: Optional[Mapping[str, Mapping[str, Any]]] = None,
    timeout: float = 900,
    env: Optional[Mapping[str, str]] = None,
    checkpoint_dir: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Run ``case_files`` in interpreter ``python`` (one process) and return the results.
    With ``checkpoint_dir``, each case's final checkpoint is saved there as ``<case>.ckpt``."""
    python = Path(python)
    if not python.exists():
        raise OracleError(f"interpreter not found: {python}")
    files = [str(Path(p).resolve()) for p in case_files]
    with tempfile.TemporaryDirectory(prefix="lightmigrate-run-") as tmp:
        out_path = Path(tmp) / "results.json"
        cmd = [str(python), "-m", "lightmigrate.verify.runner", *files, "--side", side, "--out", str(out_path)]
        if watch is not None:
            watch_path = Path(tmp) / "watch.json"
            watch_path.write_text(json.dumps(watch), encoding="utf-8")
            cmd += ["--watch", str(watch_path)]
        if checkpoint_dir is not None:
            cmd += ["--save-checkpoints", str(Path(checkpoint_dir).resolve())]
        run_env = runner_env(env)
        try:
            proc = subprocess.run(
                cmd, cwd=tmp, env=run_env, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise OracleError(f"runner timed out after {timeout}s: {' '.join(cmd)}") from exc
        if proc.returncode != 0 or not out_path.exists():
            raise OracleError(
                f"runner failed (exit {proc.returncode}) in {python}:\n{proc.stderr[-4000:]}"
            )
        return json.loads(out_path.read_text(encoding="utf-8"))


def runner_env(env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    run_env = dict(os.environ)
    run_env.update(env or {})
    root = str(repo_root())
    run_env["PYTHONPATH"] = root + (os.pathsep + run_env["PYTHONPATH"] if run_env.get("PYTHONPATH") else "")
    run_env.setdefault("PYTHONHASHSEED", "0")
    return run_env


class PlanRun:
    """A runner process (``python -m lightmigrate.verify.runner --plan``) for a plan of cases
    (see ``runner.run_plan``). Without ``plan`` the process starts at once and imports
    Lightning while the caller prepares the plan, which :meth:`finish` then sends on stdin."""

    def __init__(self, python: PathLike, side: str, plan: Optional[Mapping[str, Any]] = None,
                 timeout: float = 900) -> None:
        self.python = Path(python)
        if not self.python.exists():
            raise OracleError(f"interpreter not found: {self.python}")
        self.timeout = timeout
        self.tmp = tempfile.TemporaryDirectory(prefix="lightmigrate-run-")
        self.out_path = Path(self.tmp.name) / "results.json"
        plan_arg = "-"
        if plan is not None:
            plan_arg = str(Path(self.tmp.name) / "plan.json")
            Path(plan_arg).write_text(json.dumps(plan), encoding="utf-8")
        self.cmd = [str(self.python), "-m", "lightmigrate.verify.runner", "--plan", plan_arg, "--side", side,
                    "--out", str(self.out_path)]
        self.proc = subprocess.Popen(
            self.cmd, cwd=self.tmp.name, env=runner_env(), text=True,
            stdin=subprocess.PIPE if plan is None else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )

    def finish(self, plan: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Send ``plan`` (when the process waits for one), wait, and return the results."""
        try:
            _, stderr = self.proc.communicate(json.dumps(plan) if plan is not None else None, timeout=self.timeout)
        except subprocess.TimeoutExpired as exc:
            self.cancel()
            raise OracleError(f"runner timed out after {self.timeout}s: {' '.join(self.cmd)}") from exc
        try:
            if self.proc.returncode != 0 or not self.out_path.exists():
                raise OracleError(f"runner failed (exit {self.proc.returncode}) in {self.python}:\n{stderr[-4000:]}")
            return json.loads(self.out_path.read_text(encoding="utf-8"))
        finally:
            self.tmp.cleanup()

    def cancel(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        self.tmp.cleanup()


def run_original(
    case_files: Sequence[PathLike],
    python: Optional[PathLike] = None,
    timeout: float = 900,
    checkpoint_dir: Optional[PathLike] = None,
) -> Dict[str, Any]:
    """Run the original cases on the 1.9.5 oracle interpreter (side ``v1``)."""
    return run_in(python or default_oracle_python(), case_files, "v1", timeout=timeout, checkpoint_dir=checkpoint_dir)


def migrate_cases(case_files: Sequence[PathLike], migrate: Migrate, out_dir: PathLike) -> List[Path]:
    """Write ``migrate(text)`` of every case file to ``out_dir`` under the same file name."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: List[Path] = []
    for path in case_files:
        src = Path(path)
        dest = out / src.name
        text = src.read_text(encoding="utf-8")
        # a migrate built over a project index needs to know which of its files this is
        migrated = migrate(text, str(src)) if getattr(migrate, "takes_path", False) else migrate(text)  # type: ignore[call-arg]
        dest.write_text(migrated, encoding="utf-8")
        written.append(dest)
    return written


def engine_migrate(rules: Optional[Sequence[Any]] = None) -> Migrate:
    """A ``migrate(text) -> text`` callable backed by ``lightmigrate.engine.transform_text``.

    Uses ``lightmigrate.rules.ALL_RULES`` unless ``rules`` is given. Each case is one
    self-contained file, so the project index is built from that file alone.
    """
    from lightmigrate.engine import transform_text
    from lightmigrate.analysis.project import ProjectIndex

    if rules is None:
        from lightmigrate.rules import ALL_RULES

        rules = ALL_RULES

    def migrate(text: str, path: str = "case.py") -> str:
        project = ProjectIndex()
        project.add_source(text, path)
        result = transform_text(text, list(rules), path=path, project=project)
        return result if isinstance(result, str) else result.text

    return migrate


def engine_migrate_project(case_files: Sequence[PathLike], rules: Optional[Sequence[Any]] = None) -> Migrate:
    """Like :func:`engine_migrate`, but with ONE project index over all ``case_files``, the way
    ``lightmigrate verify PATH...`` and ``lightmigrate rewrite PATH...`` index a folder: a rule
    that looks across files (a Trainer in another file, a base class elsewhere) sees every
    case, so a cross-file mistake shows up as a mismatch. :func:`migrate_cases` passes each
    file's path (``str(path)``, as indexed here)."""
    from lightmigrate.engine import transform_text
    from lightmigrate.analysis.project import ProjectIndex

    if rules is None:
        from lightmigrate.rules import ALL_RULES

        rules = ALL_RULES
    project = ProjectIndex()
    for path in case_files:
        project.add_source(Path(path).read_text(encoding="utf-8"), str(Path(path)))

    def migrate(text: str, path: str = "case.py") -> str:
        result = transform_text(text, list(rules), path=path, project=project)
        return result if isinstance(result, str) else result.text

    migrate.takes_path = True  # type: ignore[attr-defined]
    return migrate


def run_migrated(
    case_files: Sequence[PathLike],
    migrate: Migrate,
    python: Optional[PathLike] = None,
    workdir: Optional[PathLike] = None,
    timeout: float = 900,
    extra: Optional[Mapping[PathLike, str]] = None,
) -> Dict[str, Any]:
    """Migrate the ORIGINAL ``case_files`` into ``workdir`` (a temp dir when None) and run the
    copies on a 2.x interpreter (side ``v2``), in one subprocess.

    The runner is told, per case, the 1.x parameter names and body anchors read from the
    originals (:func:`watch_names`). A case whose migration raises is recorded with that error
    instead of being run. ``extra`` maps ready-made 2.x files (e.g. hand-written ports) to the
    name of the original case whose watch they use; they run in the same subprocess under
    their own file stem.
    """
    watch = watch_names(case_files)
    for path, original in (extra or {}).items():
        watch[Path(path).stem] = watch[original]
    with tempfile.TemporaryDirectory(prefix="lightmigrate-migrated-") as tmp:
        folder = Path(workdir) if workdir is not None else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        to_run: List[Path] = []
        failed: Dict[str, Dict[str, Any]] = {}
        for path in case_files:
            src = Path(path)
            try:
                to_run.extend(migrate_cases([src], migrate, folder))
            except Exception as exc:  # noqa: BLE001 - report per case
                failed[src.stem] = {
                    "file": str(src),
                    "error": f"migration failed: {type(exc).__name__}: {exc}",
                    "traceback": traceback.format_exc(),
                }
        to_run.extend(Path(p) for p in (extra or {}))
        results = (
            run_in(python or default_v2_python(), to_run, "v2", watch=watch, timeout=timeout)
            if to_run
            else {"side": "v2", "cases": {}}
        )
    cases = results.setdefault("cases", {})
    cases.update(failed)
    order = [Path(p).stem for p in case_files] + [Path(p).stem for p in (extra or {})]
    results["cases"] = {name: cases[name] for name in order if name in cases}
    return results


def verify(
    case_files: Sequence[PathLike],
    migrate: Migrate,
    oracle_python: Optional[PathLike] = None,
    v2_python: Optional[PathLike] = None,
    rtol: float = 1e-5,
    atol: float = 1e-8,
) -> Tuple[Dict[str, Any], Dict[str, Any], List[Any]]:
    """Run originals on 1.9.5 and migrated copies on 2.x; return (expected, actual, differences)."""
    from lightmigrate.verify.compare import compare_results

    expected = run_original(case_files, oracle_python)
    actual = run_migrated(case_files, migrate, v2_python)
    return expected, actual, compare_results(expected, actual, rtol=rtol, atol=atol)
