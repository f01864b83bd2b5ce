"""The command-line options a project's tests and shell scripts pass (``--max_epochs 3``).

A 1.x script that declared the Trainer's options with ``Trainer.add_argparse_args(parser)``
accepted every one of them on its command line; the migration declares the ones the project
uses (LM101, T-meth3). Those include the options the project's own tests pass to the script
(``main(["--max_epochs", "3"])``, ``subprocess.run("python train.py --gpus 0", ...)``, also
test files outside the folder the run names) and its shell scripts (``scripts/train.sh``, under
the project's root): :func:`project_cli_options` finds every ``--name`` word in them (a superset: a word in a comment counts too, and keeping an option declared is harmless).
"""

from __future__ import annotations

import os
import re
from typing import FrozenSet, Iterable, List, Optional, Set

_OPTION = re.compile(r"(?<![\w-])--([A-Za-z_][A-Za-z0-9_-]*)")
SHELL_SUFFIXES = (".sh", ".bash")
_MAX_SHELL_FILES = 200
_MAX_FOLDERS = 2000
_MAX_SHELL_BYTES = 1 << 20


def options_in(text: str) -> Set[str]:
    """The ``--name`` words of ``text``, with ``-`` read as ``_`` (argparse's ``dest``)."""
    if "--" not in text:
        return set()
    return {m.group(1).replace("-", "_") for m in _OPTION.finditer(text)}


def is_test_path(path: str) -> bool:
    """A pytest file (``test_*.py``, ``*_test.py``, ``conftest.py``) or a file in a ``test(s)``
    folder."""
    parts = re.split(r"[\\/]", path)
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(p in ("tests", "test", "testing") for p in parts[:-1]))


def project_root(folder: str) -> str:
    """The folder above the Python packages that hold ``folder`` (``src/pkg/sub`` -> the folder
    that holds ``src``): where a project keeps its ``tests/`` and ``scripts/``. ``folder``
    itself when it is no package."""
    current = folder
    while os.path.isfile(os.path.join(current, "__init__.py")) or os.path.basename(current) == "src":
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return current


def option_files(paths: Iterable[str]) -> List[str]:
    """The shell scripts (``*.sh``) and the Python test files not among ``paths`` (the files of
    a run that are on disk) under their project's root (``project_root`` of the folder that holds
    them all: a run over ``src/pkg`` still sees ``scripts/`` and ``tests/`` beside ``src``), skipping the folders
    the engine's discovery skips (virtualenvs, caches, hidden ones); at most ``_MAX_SHELL_FILES``,
    looked for in at most ``_MAX_FOLDERS`` folders."""
    from lightmigrate.engine.discovery import skip_dir  # (discovery imports the index)

    on_disk = {os.path.abspath(p) for p in paths if os.path.isfile(p)}  # (not in-memory texts)
    if not on_disk:
        return []
    try:
        common = os.path.commonpath(sorted({os.path.dirname(p) for p in on_disk}))
    except ValueError:  # different drives
        return []
    root = project_root(common)
    if os.path.dirname(root) == root:
        return []  # the files of the run have no folder in common but the file system's root
    found: List[str] = []
    for count, (here, dirs, files) in enumerate(os.walk(root)):
        if count >= _MAX_FOLDERS:
            break
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not skip_dir(d, os.path.join(here, d)))
        for name in sorted(files):
            path = os.path.join(here, name)
            if name.endswith(SHELL_SUFFIXES) or (
                    name.endswith(".py") and path not in on_disk and is_test_path(os.path.relpath(path, root))):
                found.append(path)
                if len(found) >= _MAX_SHELL_FILES:
                    return found
    return found


def project_cli_options(paths: Iterable[str], text_of) -> FrozenSet[str]:
    """The ``--name`` options (``-`` read as ``_``) in the run's test files (``text_of(path)``
    gives a file's text, or None), and in the shell scripts and other test files of their
    project (``option_files``)."""
    paths = list(paths)
    out: Set[str] = set()
    for path in paths:
        if is_test_path(path):
            text: Optional[str] = text_of(path)
            if text:
                out |= options_in(text)
    for script in option_files(paths):
        try:
            if os.path.getsize(script) > _MAX_SHELL_BYTES:
                continue
            with open(script, encoding="utf-8", errors="replace") as handle:
                out |= options_in(handle.read())
        except OSError:
            continue
    return frozenset(out)
