"""Which files a run covers: PATH arguments expanded to Python files, in a stable order.

Directories are walked in sorted order, skipping tool/VCS/build folders, virtual environments
and anything the repository's ignore files exclude. Explicitly named files are taken as they
are (if they are Python files), ignore rules do not apply to them.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, Set, Tuple

from lightmigrate.engine.gitignore import IgnoreRules, read_ignore_file
from lightmigrate.engine.model import Problem
from lightmigrate.engine.yaml_config import file_has_trainer_section
from lightmigrate.analysis.project import is_yaml

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".tox", ".nox", "node_modules", "site-packages", "__pycache__",
        "build", "dist", ".eggs", ".mypy_cache", ".pytest_cache", ".ipynb_checkpoints",
    }
)
SOURCE_SUFFIXES = (".py", ".ipynb")  # Python files and Jupyter notebooks
VENV_NAMES = frozenset({".venv", "venv", "env"})
VENV_PYTHONS = (os.path.join("bin", "python"), os.path.join("Scripts", "python.exe"))


@dataclass(frozen=True)
class Entry:
    """A discovered file, or a path argument/file that cannot be used (``error`` set)."""

    path: str
    error: Optional[Problem] = None


def is_virtualenv(path: str) -> bool:
    if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        return True
    return os.path.basename(path) in VENV_NAMES and any(
        os.path.lexists(os.path.join(path, exe)) for exe in VENV_PYTHONS
    )


def skip_dir(name: str, path: str) -> bool:
    return name in SKIP_DIRS or name.endswith(".egg-info") or is_virtualenv(path)


def find_repo_root(path: str) -> Optional[str]:
    """The nearest folder at or above ``path`` holding a ``.git`` directory or file."""
    current = os.path.abspath(path)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _rel_posix(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    return "" if rel == "." else rel.replace(os.sep, "/") + "/"


def initial_rules(directory: str) -> Tuple[IgnoreRules, str]:
    """Ignore rules in force at ``directory`` (before its own .gitignore), and its path
    relative to the rules' root as a prefix ("" or ending in "/")."""
    abs_dir = os.path.abspath(directory)
    root = find_repo_root(abs_dir) or abs_dir
    rules = IgnoreRules()
    git = os.path.join(root, ".git")
    if os.path.isdir(git):
        rules = rules.with_patterns(read_ignore_file(os.path.join(git, "info", "exclude")))
    # .gitignore files of the folders from the root down to (not including) ``directory``;
    # the walk reads the folder's own one.
    rel = os.path.relpath(abs_dir, root)
    parts = [] if rel == "." else rel.split(os.sep)
    folder = root
    for i in range(len(parts)):
        if i:
            folder = os.path.join(folder, parts[i - 1])
        rules = rules.with_patterns(
            read_ignore_file(os.path.join(folder, ".gitignore"), _rel_posix(folder, root))
        )
    return rules, _rel_posix(abs_dir, root)


def link_problem(path: str) -> str:
    """Why the symbolic link ``path`` cannot be followed."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    return "broken symbolic link"


def _join(parent: str, name: str) -> str:
    return name if parent == "." else os.path.join(parent, name)


class _Walker:
    def __init__(self) -> None:
        self.seen_dirs: Set[str] = set()
        self.seen_files: Set[str] = set()

    def file(self, path: str, real: Optional[str] = None) -> Iterator[Entry]:
        """``path``, unless the file (``real``: its real path, when known) was found already."""
        if real is None:
            real = os.path.realpath(path)
        if real not in self.seen_files:
            self.seen_files.add(real)
            yield Entry(path)

    def walk(self, path: str, rel: str, rules: IgnoreRules) -> Iterator[Entry]:
        real = os.path.realpath(path)
        if real in self.seen_dirs:  # symlink loop, or the same folder reached twice
            return
        self.seen_dirs.add(real)
        rules = rules.with_patterns(read_ignore_file(os.path.join(path, ".gitignore"), rel))
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield Entry(path, Problem(path, f"cannot read directory: {exc.strerror or exc}"))
            return
        for entry in entries:
            child = _join(path, entry.name)
            child_rel = rel + entry.name
            try:
                is_dir = entry.is_dir()  # follows symlinks
            except OSError:
                is_dir = False
            if is_dir:
                if not skip_dir(entry.name, child) and not rules.ignored(child_rel, True):
                    yield from self.walk(child, child_rel + "/", rules)
            elif entry.name.endswith(SOURCE_SUFFIXES) and not rules.ignored(child_rel, False):
                if not entry.is_symlink():  # its real path is the folder's, then its name
                    yield from self.file(child, os.path.join(real, entry.name))
                elif not os.path.exists(child):
                    yield Entry(child, Problem(child, link_problem(child)))
                else:
                    yield from self.file(child)
            elif is_yaml(entry.name) and not rules.ignored(child_rel, False) and file_has_trainer_section(child):
                yield from self.file(child)  # a LightningCLI config with a trainer: section


def discover(paths: Iterable[str]) -> Iterator[Entry]:
    """Python files under ``paths`` (argument order; sorted within each directory)."""
    walker = _Walker()
    for raw in paths:
        path = os.path.normpath(raw)
        if not os.path.lexists(path):
            yield Entry(path, Problem(path, "no such file or directory"))
        elif not os.path.exists(path):
            yield Entry(path, Problem(path, link_problem(path)))
        elif os.path.isdir(path):
            rules, rel = initial_rules(path)
            yield from walker.walk(path, rel, rules)
        elif path.endswith(SOURCE_SUFFIXES) or is_yaml(path):
            yield from walker.file(path)
        else:
            yield Entry(path, Problem(path, "not a Python file"))
