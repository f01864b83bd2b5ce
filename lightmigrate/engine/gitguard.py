"""The dirty-tree guard for in-place rewriting (like ``cargo fix``).

``lightmigrate rewrite`` (in place) refuses to run when a git working tree it would write in
has uncommitted work, so that every rewrite can be reviewed with ``git diff`` and undone with
``git checkout``. Uncommitted work means:

- any tracked file of the repository with staged or unstaged changes (anywhere in the repo,
  not only the files lightmigrate would touch: a migration is best reviewed on its own), or
- an untracked (and not ignored) file under the PATH arguments: lightmigrate could rewrite it
  and git could not give the original back.

``--allow-dirty`` skips the check; ``--diff`` and ``--check`` never write and always run.
Paths outside any git repository, or a machine without git, are not checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict, List, Optional, Sequence

SHOWN = 10


def _git(args: Sequence[str], cwd: str) -> Optional[str]:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def _repo_root(path: str) -> Optional[str]:
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(folder):
        return None
    out = _git(["rev-parse", "--show-toplevel"], folder)
    return out.strip() if out else None


def dirty_files(paths: Sequence[str]) -> Dict[str, List[str]]:
    """Repository root -> uncommitted files (repo-relative), for the repositories of ``paths``."""
    if shutil.which("git") is None:
        return {}
    by_repo: Dict[str, List[str]] = {}
    for path in paths:
        if not os.path.exists(path):
            continue
        root = _repo_root(path)
        if root is None:
            continue
        by_repo.setdefault(root, []).append(os.path.abspath(path))
    out: Dict[str, List[str]] = {}
    for root, targets in by_repo.items():
        found: List[str] = []
        tracked = _git(["status", "--porcelain", "--untracked-files=no"], root) or ""
        found += [line[3:] for line in tracked.splitlines() if line.strip()]
        untracked = _git(["status", "--porcelain", "--untracked-files=all", "--", *targets], root) or ""
        found += [line[3:] for line in untracked.splitlines() if line.startswith("??")]
        if found:
            out[root] = sorted(set(found))
    return out


def dirty_reason(paths: Sequence[str]) -> Optional[str]:
    """Why rewriting ``paths`` in place is refused, or None when it may go ahead."""
    dirty = dirty_files(paths)
    if not dirty:
        return None
    lines = []
    for root, files in dirty.items():
        lines.append(f"the git working tree {root} has uncommitted changes:")
        lines += [f"  {f}" for f in files[:SHOWN]]
        if len(files) > SHOWN:
            lines.append(f"  ... and {len(files) - SHOWN} more")
    lines.append(
        "lightmigrate rewrites files in place; commit or stash your work first so that the "
        "migration can be reviewed and undone with git, or pass --allow-dirty "
        "(--diff and --check write nothing and always run)."
    )
    return "\n".join(lines)
