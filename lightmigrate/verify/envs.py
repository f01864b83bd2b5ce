"""The two environments of ``lightmigrate verify --pytest`` when ``--before``/``--after`` are
not given: built from the project's own requirements and cached.

What goes in (:func:`read_requirements`, :func:`environment_specs`):

* the project's requirements: ``[project] dependencies`` of its pyproject.toml, its test
  extras / dependency groups (``test``, ``tests``, ``testing``; ``dev`` only when none of those
  exists), and its ``*requirements*.txt`` files (root and ``requirements/``, not the docs ones),
  ``-r`` includes followed, ``-c`` constraint files honoured, pip options kept; or, instead,
  the requirement files given (``--requirements``). The project itself (``-e .``) is not
  installed: its copies run from their folders;
* Lightning, taken out of those and pinned per side. Before: the distribution the project
  names (``pytorch-lightning``, or ``lightning`` when that is what it depends on) at the 1.x
  version it pins with ``==`` (default :data:`DEFAULT_BEFORE`), then ``setuptools<70`` in a
  second install command (pytorch-lightning 1.x imports ``pkg_resources``, which later
  setuptools dropped, and one resolver run refuses it beside torch's own requirement). After:
  both ``lightning`` and ``pytorch-lightning`` at :data:`DEFAULT_AFTER`, since the migrated
  code imports ``pytorch_lightning`` (what ``rewrite`` keeps by default) or ``lightning.pytorch``
  (``--unified-imports``, or code already written that way);
* pytest on both sides;
* the constraints files given (``-c``: pin torch, or an unpinned torch may bring GBs of CUDA).

How: with uv when it is on PATH (``uv venv``, ``uv pip install``), else ``python -m venv`` and
pip. The environment's folder is named by a hash of everything above plus the Python version
and the installer, under :func:`cache_root` (``$LIGHTMIGRATE_CACHE_DIR``, else
``$XDG_CACHE_HOME/lightmigrate``, else ``~/.cache/lightmigrate``) ``/envs``; a folder whose
marker file (written last) exists is reused as it is. A failed build removes its folder and
raises :class:`EnvBuildError` with the tail of the installer's output.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from lightmigrate.verify.session import VerifyError

DEFAULT_BEFORE = "1.9.5"
# the Lightning 2.x the rules are verified against (the development environment's)
DEFAULT_AFTER = "2.6.6"
LIGHTNING_DISTS = ("pytorch-lightning", "lightning")
TEST_GROUPS = ("test", "tests", "testing")
BEFORE_SETUP = ("setuptools<70",)
CACHE_ENV = "LIGHTMIGRATE_CACHE_DIR"
MARKER = "lightmigrate-env.json"
REQUIREMENTS_FILE = "lightmigrate-requirements.txt"
FORMAT = 1  # part of the key: bump when what an environment holds changes
TAIL_LINES = 25

# run(command, on_line) -> (exit status, everything it printed)
Runner = Callable[[Sequence[str], Callable[[str], None]], Tuple[int, str]]
# progress(text, detail): a step (detail False) or a line of the installer's output
Progress = Callable[[str, bool], None]


class EnvBuildError(VerifyError):
    """An environment could not be built."""


# --------------------------------------------------------------------------------------------
# reading the project's requirements


@dataclass
class ProjectRequirements:
    lines: List[str] = field(default_factory=list)  # requirements and pip options, Lightning left out
    lightning: List[str] = field(default_factory=list)  # the Lightning distributions the project names
    version: Optional[str] = None  # the 1.x version it pins with ==
    constraints: List[str] = field(default_factory=list)  # -c files of the requirement files
    sources: List[str] = field(default_factory=list)  # what was read, for the user
    skipped: List[str] = field(default_factory=list)  # lines not installed, with why


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_URL_PREFIXES = ("http://", "https://", "git+", "hg+", "svn+", "bzr+")
_PIN = re.compile(r"===?\s*([0-9][^,;\s]*)")


def _local_path(spec: str) -> bool:
    first = spec.split(";")[0].strip().split()[0] if spec.strip() else ""
    if first.startswith(_URL_PREFIXES):
        return False
    return first.startswith((".", "/", "~", "file:")) or "/" in first or "\\" in first


def _add(req: ProjectRequirements, spec: str, base: Path, project: Path, origin: str) -> None:
    """One requirement (PEP 508 text, a URL or a local path) of ``origin``."""
    spec = spec.strip()
    if not spec:
        return
    if _local_path(spec):
        path = spec[5:] if spec.startswith("file:") else spec
        target = (base / os.path.expanduser(path.split(";")[0].strip())).resolve()
        if target == project.resolve():
            req.skipped.append(f"{spec} ({origin}: the project itself; its copies run from their folders)")
        else:
            req.lines.append(str(target))
        return
    m = _NAME.match(spec)
    if m and not spec.startswith(_URL_PREFIXES) and canonical(m.group(1)) in LIGHTNING_DISTS:
        dist = canonical(m.group(1))
        if dist not in req.lightning:
            req.lightning.append(dist)
        pin = _PIN.search(spec)
        if pin and pin.group(1).startswith("1.") and req.version is None:
            req.version = pin.group(1)
        return
    req.lines.append(spec)


def _logical_lines(text: str) -> List[str]:
    """A requirements file's lines: comments dropped, continuations joined."""
    out, pending = [], ""
    for raw in text.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", raw).rstrip()
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = (pending + line.strip()).strip()
        pending = ""
        if line:
            out.append(line)
    return out


_OPTION = re.compile(r"^(-r|--requirement|-c|--constraint|-e|--editable)(?:\s*=\s*|\s+|(?=[^-\s]))(.+)$")


def read_requirements_file(path: Path, project: Path, req: ProjectRequirements, seen: Optional[set] = None) -> None:
    seen = set() if seen is None else seen
    path = path.resolve()
    if path in seen:
        return
    seen.add(path)
    req.sources.append(os.path.relpath(path, project) if path.is_relative_to(project.resolve()) else str(path))
    for line in _logical_lines(path.read_text(encoding="utf-8")):
        m = _OPTION.match(line)
        if m:
            option, value = m.group(1), m.group(2).strip()
            if option in ("-r", "--requirement"):
                read_requirements_file(path.parent / value, project, req, seen)
            elif option in ("-c", "--constraint"):
                req.constraints.append(str((path.parent / value).resolve()))
            else:  # -e: installed as an ordinary requirement (or skipped: the project itself)
                _add(req, value, path.parent, project, path.name)
        elif line.startswith("-"):
            req.lines.append(line)  # --index-url, --extra-index-url, --find-links, --pre, ...
        else:
            _add(req, line, path.parent, project, path.name)


def _toml(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise EnvBuildError(f"cannot read {path}: {exc}") from exc


def _group(groups: dict, name: str, seen: Tuple[str, ...] = ()) -> List[str]:
    """A PEP 735 dependency group's requirements, its ``include-group`` entries expanded."""
    out: List[str] = []
    for item in groups.get(name) or []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and item.get("include-group") and item["include-group"] not in seen:
            out.extend(_group(groups, item["include-group"], seen + (name,)))
    return out


def _test_names(names: Sequence[str]) -> List[str]:
    found = [n for n in names if canonical(n) in TEST_GROUPS]
    return found or [n for n in names if canonical(n) == "dev"]


def requirement_files(project: Path) -> List[Path]:
    """The project's requirement files: ``*requirements*.txt`` at its root and the files of
    its ``requirements/`` folder, without the ones for docs."""
    found = sorted(project.glob("*requirements*.txt")) + sorted((project / "requirements").glob("*.txt"))
    return [p for p in found if p.is_file() and "doc" not in p.name.lower()]


def read_requirements(project: Path, files: Optional[Sequence[str]] = None) -> ProjectRequirements:
    """What the project needs installed to run its tests (see the module's docstring):
    ``files`` (requirement files) when given, else its pyproject.toml and requirement files."""
    project = project.resolve()
    req = ProjectRequirements()
    if files:
        seen: set = set()
        for name in files:
            read_requirements_file(Path(name), project, req, seen)
        return req
    pyproject = project / "pyproject.toml"
    if pyproject.is_file():
        data = _toml(pyproject)
        meta = data.get("project") or {}
        used = []
        for spec in meta.get("dependencies") or []:
            _add(req, spec, project, project, "pyproject.toml")
        if meta.get("dependencies"):
            used.append("[project] dependencies")
        extras = meta.get("optional-dependencies") or {}
        for name in _test_names(list(extras)):
            for spec in extras[name]:
                _add(req, spec, project, project, "pyproject.toml")
            used.append(f"[project.optional-dependencies] {name}")
        groups = data.get("dependency-groups") or {}
        for name in _test_names(list(groups)):
            for spec in _group(groups, name):
                _add(req, spec, project, project, "pyproject.toml")
            used.append(f"[dependency-groups] {name}")
        if used:
            req.sources.append("pyproject.toml (" + ", ".join(used) + ")")
    seen: set = set()  # a file that another includes is read once
    for path in requirement_files(project):
        read_requirements_file(path, project, req, seen)
    return req


# --------------------------------------------------------------------------------------------
# what each environment holds


@dataclass(frozen=True)
class EnvSpec:
    side: str  # "before" or "after"
    requirements: Tuple[str, ...]  # the lines of the requirements file installed first
    setup: Tuple[str, ...]  # a second install command (before: setuptools<70), or none
    constraints: Tuple[str, ...]  # absolute paths of constraint files
    python: str  # the interpreter the environment is made from
    python_version: str
    installer: str  # "uv" or "pip"
    installer_path: str  # the uv executable (pip: the environment's own)

    def key(self) -> str:
        """A hash of everything that makes the environment what it is (the constraint files
        by their contents, not their paths)."""
        texts = []
        for path in self.constraints:
            try:
                texts.append(Path(path).read_text(encoding="utf-8"))
            except OSError as exc:
                raise EnvBuildError(f"cannot read the constraints file {path}: {exc}") from exc
        inputs = {"format": FORMAT, "side": self.side, "requirements": list(self.requirements),
                  "setup": list(self.setup), "constraints": texts, "python": self.python_version,
                  "base": os.path.realpath(self.python), "platform": [sys.platform, platform.machine()],
                  "installer": self.installer}
        return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]

    def folder_name(self) -> str:
        return f"{self.side}-py{self.python_version.replace('.', '')[:3]}-{self.key()}"


def choose_installer(preference: Optional[str] = None) -> Tuple[str, str]:
    """("uv", its path) when uv is wanted (``preference`` "uv", or None and uv on PATH), else
    ("pip", "")."""
    if preference not in (None, "auto", "uv", "pip"):
        raise EnvBuildError(f"unknown installer {preference!r}: uv or pip")
    uv = shutil.which("uv") if preference != "pip" else None
    if preference == "uv" and not uv:
        raise EnvBuildError("--installer uv: uv is not on PATH")
    return ("uv", uv) if uv else ("pip", "")


def _python_version(python: str) -> str:
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        return ".".join(map(str, sys.version_info[:3]))
    try:
        proc = subprocess.run([python, "-c", "import sys; print('.'.join(map(str, sys.version_info[:3])))"],
                              capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvBuildError(f"cannot run {python}: {exc}") from exc
    return proc.stdout.strip()


@dataclass
class Plan:
    """Both sides' specs and what the user should be told about them."""
    specs: Dict[str, EnvSpec]
    notes: List[str]


def environment_specs(req: ProjectRequirements, sides: Sequence[str] = ("before", "after"),
                      constraints: Sequence[str] = (), before_version: Optional[str] = None,
                      after_version: Optional[str] = None, python: Optional[str] = None,
                      installer: Optional[str] = None) -> Plan:
    python = python or sys.executable
    version = _python_version(python)
    tool, tool_path = choose_installer(installer)
    before_version = before_version or req.version or DEFAULT_BEFORE
    after_version = after_version or DEFAULT_AFTER
    before_dists = [d for d in LIGHTNING_DISTS if d in req.lightning] or ["pytorch-lightning"]
    pins = {"before": [f"{d}=={before_version}" for d in before_dists],
            "after": [f"{d}=={after_version}" for d in ("lightning", "pytorch-lightning")]}
    all_constraints = tuple(str(Path(c).resolve()) for c in [*constraints, *req.constraints])
    for path in all_constraints:
        if not Path(path).is_file():
            raise EnvBuildError(f"constraints file not found: {path}")
    notes = []
    if req.sources:
        notes.append("requirements from " + "; ".join(req.sources))
    else:
        notes.append("the project names no requirements (no pyproject.toml dependencies, no requirements files)")
    why = ("the project's pin" if req.version and before_version == req.version else
           "--before-lightning" if before_version != DEFAULT_BEFORE else "the default")
    notes.append(f"before: {', '.join(pins['before'])} ({why}); after: {', '.join(pins['after'])}")
    notes.extend(f"not installed: {s}" for s in req.skipped)
    specs = {}
    for side in sides:
        lines = tuple([*pins[side], *req.lines, "pytest"])
        specs[side] = EnvSpec(side, lines, BEFORE_SETUP if side == "before" else (), all_constraints, python,
                              version, tool, tool_path)
    return Plan(specs, notes)


# --------------------------------------------------------------------------------------------
# building


def cache_root() -> Path:
    """``$LIGHTMIGRATE_CACHE_DIR``, else ``$XDG_CACHE_HOME/lightmigrate``, else ``~/.cache/lightmigrate``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "lightmigrate"


def env_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def build_commands(spec: EnvSpec, folder: Path) -> List[Tuple[str, List[str]]]:
    """(what it does, command line) for each step of building ``spec`` into ``folder``."""
    py = str(env_python(folder))
    req = str(folder / REQUIREMENTS_FILE)
    cons = [a for c in spec.constraints for a in ("-c", c)]
    shown = ", ".join(spec.requirements)
    if len(shown) > 200:
        shown = shown[:200] + "..."
    with_cons = f" (constraints: {', '.join(os.path.basename(c) for c in spec.constraints)})" if cons else ""
    if spec.installer == "uv":
        uv = spec.installer_path or "uv"
        create = [uv, "venv", "--python", spec.python, str(folder)]
        install = [uv, "pip", "install", "--python", py, "-r", req, *cons]
        setup = [uv, "pip", "install", "--python", py, *spec.setup]
    else:
        pip = [py, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off"]
        create = [spec.python, "-m", "venv", str(folder)]
        install = [*pip, "-r", req, *cons]
        setup = [*pip, *spec.setup]
    steps = [(f"{spec.side}: creating the environment (Python {spec.python_version}, {spec.installer})", create),
             (f"{spec.side}: installing {shown}{with_cons}", install)]
    if spec.setup:
        steps.append((f"{spec.side}: installing {', '.join(spec.setup)} (pytorch-lightning 1.x imports pkg_resources)",
                      setup))
    return steps


def run_command(cmd: Sequence[str], on_line: Callable[[str], None]) -> Tuple[int, str]:
    """Run ``cmd``, passing each line it prints to ``on_line``; (exit status, all it printed)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    try:
        proc = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", env=env)
    except OSError as exc:
        return 127, f"cannot run {cmd[0]}: {exc}"
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if line.strip():
            on_line(line.rstrip())
    return proc.wait(), "".join(lines)


def _quiet(text: str, detail: bool) -> None:
    pass


def ensure_environment(spec: EnvSpec, cache: Optional[Path] = None, rebuild: bool = False,
                       run: Optional[Runner] = None, progress: Progress = _quiet) -> Path:
    """The Python of the environment ``spec`` describes: the cached one, or built now (each
    command run by ``run``, default :func:`run_command`)."""
    run = run or run_command
    folder = (cache or cache_root()) / "envs" / spec.folder_name()
    python = env_python(folder)
    if (folder / MARKER).is_file() and python.exists() and not rebuild:
        progress(f"{spec.side}: cached environment {folder}", False)
        return python
    if folder.exists():
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    steps = build_commands(spec, folder)
    for i, (what, cmd) in enumerate(steps):
        progress(what, False)
        if i == 1:  # the environment exists: its requirements file goes into it
            (folder / REQUIREMENTS_FILE).write_text("\n".join(spec.requirements) + "\n", encoding="utf-8")
        status, output = run(cmd, lambda line: progress(line, True))
        if status != 0:
            shutil.rmtree(folder, ignore_errors=True)
            tail = "\n    ".join(output.strip().splitlines()[-TAIL_LINES:])
            raise EnvBuildError(f"building the {spec.side} environment failed: `{' '.join(cmd)}` exited {status}:"
                                f"\n    {tail}")
    seconds = time.perf_counter() - started
    marker = {"side": spec.side, "requirements": list(spec.requirements), "setup": list(spec.setup),
              "constraints": list(spec.constraints), "python": spec.python_version, "installer": spec.installer,
              "seconds": round(seconds, 1), "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (folder / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    progress(f"{spec.side}: built {folder} in {seconds:.0f} s", False)
    return python


def build_environments(project: Path, sides: Sequence[str] = ("before", "after"), constraints: Sequence[str] = (),
                       requirements: Optional[Sequence[str]] = None, before_version: Optional[str] = None,
                       after_version: Optional[str] = None, python: Optional[str] = None,
                       installer: Optional[str] = None, cache: Optional[Path] = None, rebuild: bool = False,
                       run: Optional[Runner] = None, progress: Progress = _quiet) -> Dict[str, str]:
    """The Python of each of ``sides``, built from ``project``'s requirements (or cached)."""
    plan = environment_specs(read_requirements(project, requirements), sides, constraints, before_version,
                             after_version, python, installer)
    for note in plan.notes:
        progress(note, False)
    return {side: str(ensure_environment(spec, cache, rebuild, run, progress)) for side, spec in plan.specs.items()}
