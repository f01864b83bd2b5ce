"""The files the pytest plugin (:mod:`lightmigrate.verify.pytest_plugin`) writes: where each
process writes, and reading them back merged. Without pytest, so that ``verify --pytest`` reads
them in an environment that has no pytest itself."""

from __future__ import annotations

import glob
import json
import os
from typing import Any, Dict, Optional


def worker_path(path: str, worker: Optional[str]) -> str:
    """The file one process writes: ``path`` itself, or ``<stem>.<worker><suffix>``."""
    if not worker:
        return path
    stem, suffix = os.path.splitext(path)
    return f"{stem}.{worker}{suffix}"


def read_recordings(path: str) -> Optional[Dict[str, Any]]:
    """The recording at ``path`` merged with those of xdist workers (``worker_path``); None
    when no process wrote one."""
    stem, suffix = os.path.splitext(path)
    files = ([path] if os.path.exists(path) else []) + sorted(glob.glob(glob.escape(stem) + ".*" + suffix))
    if not files:
        return None
    merged: Dict[str, Any] = {"workers": [], "versions": None, "tests": {}}
    for name in files:
        with open(name, encoding="utf-8") as fh:
            doc = json.load(fh)
        merged["workers"].append(doc.get("worker") or "main")
        merged["versions"] = merged["versions"] or doc.get("versions")
        merged["tests"].update(doc.get("tests") or {})
    return merged
