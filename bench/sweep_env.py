"""Projects, downloads and environments for the real-project sweep (bench/project_sweep.py).

A project is declared in ``bench/sweep_projects.toml``. Everything downloaded or installed is
cached under ``bench/.cache/sweep/`` (gitignored):

    sdists/                  the project sdists, as ``pip download`` left them
    <name>/deps/             the project's pinned extra dependencies (``pip install --no-deps
                             --target``), put first on PYTHONPATH on both sides
    <name>/deps/.pins        the pins that folder was made from (a changed list rebuilds it)

The two sides' interpreters are the repository's environments made by scripts/setup-dev.sh:
``.venv-pl19`` (pytorch-lightning 1.9.5) and ``.venv`` (Lightning 2.6.6). They are never
modified. Every pip call goes through ``constraints.txt``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PROJECTS_FILE = ROOT / "bench" / "sweep_projects.toml"
PLUGINS = ROOT / "bench" / "sweep_plugins"
CACHE = ROOT / "bench" / ".cache" / "sweep"
CONSTRAINTS = ROOT / "constraints.txt"
# Build-time pin for sdists whose setup.py still imports pkg_resources (pip download builds
# their metadata); the sdist's contents do not depend on it.
BUILD_CONSTRAINTS = "setuptools<70\n"


class SweepSetupError(RuntimeError):
    pass


@dataclass
class Project:
    name: str
    sdist: str  # NAME==VERSION
    tests: List[str]
    deps: List[str] = field(default_factory=list)
    pythonpath: List[str] = field(default_factory=list)
    why: str = ""
    slices: Dict[str, List[str]] = field(default_factory=dict)
    plugins: List[str] = field(default_factory=list)  # modules of bench/sweep_plugins, loaded with -p

    def pytest_args(self, slice_name: Optional[str] = None) -> List[str]:
        """The test selection as pytest arguments (each entry is shlex-split)."""
        entries = self.tests if slice_name is None else self.slices[slice_name]
        plugins = [arg for name in self.plugins for arg in ("-p", name)]
        return plugins + [arg for entry in entries for arg in shlex.split(entry)]


def load_projects(path: Path = PROJECTS_FILE) -> Dict[str, Project]:
    data = tomllib.loads(path.read_text())
    projects = {}
    for name, spec in data["projects"].items():
        projects[name] = Project(name=name, sdist=spec["sdist"], tests=list(spec["tests"]),
                                 deps=list(spec.get("deps", [])),
                                 pythonpath=list(spec.get("pythonpath", [])),
                                 why=spec.get("why", ""), plugins=list(spec.get("plugins", [])),
                                 slices={k: list(v) for k, v in spec.get("slices", {}).items()})
        forbidden = {"torch", "lightning", "pytorch-lightning", "lightning-fabric"}
        bad = [d for d in projects[name].deps if _dist_name(d) in forbidden]
        if bad:
            raise SweepSetupError(f"{name}: deps must not pin {bad} (they come from the side's environment)")
    return projects


def _dist_name(pin: str) -> str:
    return pin.split("==")[0].split("[")[0].strip().lower().replace("_", "-")


def _run(cmd: List[str], what: str, timeout: int = 1800, env: Optional[dict] = None) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    if proc.returncode != 0:
        errors = "\n".join(l for l in proc.stderr.splitlines() if not l.startswith("WARNING: Location"))
        raise SweepSetupError(f"{what} failed ({' '.join(cmd[:6])} ...):\n{errors[-3000:]}")
    return proc.stdout


# ---------------------------------------------------------------------------------------------
# Interpreters


def side_pythons() -> Tuple[Path, Path]:
    """(pytorch-lightning 1.9.5 interpreter, Lightning 2.6.6 interpreter): this checkout's
    ``.venv-pl19`` and ``.venv``, or, from a git worktree without them, the main checkout's."""
    for base in _checkouts():
        v1, v2 = base / ".venv-pl19" / "bin" / "python", base / ".venv" / "bin" / "python"
        if v1.exists() and v2.exists():
            return v1, v2
    raise SweepSetupError("no .venv and .venv-pl19 found; run scripts/setup-dev.sh")


def _checkouts() -> List[Path]:
    found = [ROOT]
    try:
        common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        found.append(Path(common).parent)
    except (OSError, subprocess.CalledProcessError):
        pass
    return found


# ---------------------------------------------------------------------------------------------
# Downloads and dependency folders


def fetch_sdist(project: Project, pip_python: Path, cache: Path = CACHE) -> Path:
    """The project's sdist, downloaded once into ``cache/sdists``."""
    folder = cache / "sdists"
    folder.mkdir(parents=True, exist_ok=True)
    found = _find_sdist(project.sdist, folder)
    if found:
        return found
    build = cache / "build-constraints.txt"
    build.write_text(BUILD_CONSTRAINTS)
    env = dict(os.environ, PIP_CONSTRAINT=str(build))
    _run([str(pip_python), "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
          "--no-binary", ":all:", "-c", str(CONSTRAINTS), "-d", str(folder), project.sdist],
         f"downloading {project.sdist}", env=env)
    found = _find_sdist(project.sdist, folder)
    if not found:
        raise SweepSetupError(f"pip downloaded no sdist for {project.sdist} into {folder}")
    return found


def _find_sdist(spec: str, folder: Path) -> Optional[Path]:
    name, _, version = spec.partition("==")
    want = {name.lower().replace("_", "-").replace(".", "-") + "-" + version}
    for p in folder.iterdir():
        stem = p.name
        for ext in (".tar.gz", ".zip"):
            if stem.endswith(ext):
                stem = stem[: -len(ext)]
        if stem.lower().replace("_", "-").replace(".", "-") in {w.replace(".", "-") for w in want}:
            return p
    return None


def unpack(sdist: Path, dest: Path) -> Path:
    """Unpack ``sdist`` into an empty ``dest``; returns the project root (the sdist's top folder)."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if sdist.name.endswith(".zip"):
        with zipfile.ZipFile(sdist) as zf:
            zf.extractall(dest)
    else:
        with tarfile.open(sdist) as tf:
            tf.extractall(dest, filter="data")
    tops = [p for p in dest.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise SweepSetupError(f"{sdist.name}: expected one top folder, found {[p.name for p in tops]}")
    return tops[0]


def ensure_deps(project: Project, pip_python: Path, cache: Path = CACHE) -> Path:
    """The folder holding the project's pinned extra dependencies, installed once (again when
    the pins change)."""
    folder = cache / project.name / "deps"
    pins = "\n".join(sorted(project.deps)) + "\n"
    stamp = folder / ".pins"
    if stamp.exists() and stamp.read_text() == pins:
        return folder
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    if project.deps:
        _run([str(pip_python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
              "--prefer-binary", "-c", str(CONSTRAINTS), "--target", str(folder), *project.deps],
             f"installing the deps of {project.name}")
    stamp.write_text(pins)
    return folder


def run_env(project: Project, project_root: Path, deps: Path) -> Dict[str, str]:
    """Environment for running the project's tests: its deps, then its own folders, first on
    PYTHONPATH; no GPU; plugins only when the project asks for them; one thread."""
    path = [str(deps)] + [str((project_root / p).resolve()) for p in project.pythonpath] + [str(PLUGINS)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST", "VIRTUAL_ENV"))}
    env.update(PYTHONPATH=os.pathsep.join(path), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0",
               PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", CUDA_VISIBLE_DEVICES="", MPLBACKEND="Agg",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TQDM_DISABLE="1", PL_DISABLE_FORK="1")
    return env


if __name__ == "__main__":  # pragma: no cover - a quick look at the declared projects
    for p in load_projects().values():
        print(p.name, p.sdist, p.pytest_args(), file=sys.stdout)
