"""``[tool.lightmigrate]`` in ``pyproject.toml``, merged with the command-line options.

Where the configuration comes from: ``--config PATH`` when given; otherwise the nearest
``pyproject.toml`` that has a ``[tool.lightmigrate]`` table, looking in the folder of the first
PATH argument and its parents, then in the current directory and its parents (as ruff does).
Patterns in ``exclude`` and ``per-file-ignores`` are relative to the folder of that file (the
current directory when there is none).

Keys (all optional)::

    [tool.lightmigrate]
    select = ["LM001", "LM003"]          # codes or prefixes to run; default: every rule
    ignore = ["LM002"]                   # codes or prefixes never to run
    exclude = ["legacy/", "*_old.py"]    # files and folders to leave alone
    per-file-ignores = { "tests/*" = ["LM002"] }

On the command line ``--select`` replaces the configured ``select``; ``--ignore`` and
``--exclude`` add to the configured lists. ``exclude`` applies to files named on the command
line too, so a pre-commit hook (which passes file names) honours it.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

from lightmigrate.rules.base import Rule

KNOWN_KEYS = ("select", "ignore", "exclude", "per-file-ignores", "bare-noqa")


class ConfigError(Exception):
    """The configuration file cannot be read or holds something invalid."""


def _matches(code: str, prefixes: Sequence[str]) -> bool:
    return any(code.startswith(p) for p in prefixes)


def _glob_matches(rel: str, pattern: str) -> bool:
    """Whether the posix relative path ``rel`` is matched by ``pattern``.

    A pattern matches the path itself or any folder above it: ``legacy/`` or ``legacy`` covers
    everything under ``legacy``; a pattern without ``/`` also matches a file or folder of that
    name at any depth (``*_old.py``, ``notebooks``)."""
    pattern = pattern.strip().replace(os.sep, "/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.rstrip("/")
    if not pattern:
        return False
    parts = rel.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(p, pattern) for p in parts)
    return any(fnmatch.fnmatchcase(p, pattern) for p in prefixes)


@dataclass
class Settings:
    """What a run should do with each file: which rules, which files to skip."""

    root: str = "."
    select: List[str] = field(default_factory=list)  # empty: every rule
    ignore: List[str] = field(default_factory=list)
    exclude: List[str] = field(default_factory=list)
    per_file_ignores: List[Tuple[str, List[str]]] = field(default_factory=list)
    path: Optional[str] = None  # the configuration file, if any
    # ``bare-noqa = true``: a bare noqa comment switches every rule off on its line, as in ruff
    # (off by default: such comments were written for the linters, long before a migration)
    bare_noqa: bool = False

    def _rel(self, path: str) -> str:
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))
        return rel.replace(os.sep, "/")

    def is_excluded(self, path: str) -> bool:
        if not self.exclude:
            return False
        rel = self._rel(path)
        if rel.startswith("../"):  # outside the root: match on the path as given
            rel = os.path.normpath(path).replace(os.sep, "/").lstrip("/")
        return any(_glob_matches(rel, p) for p in self.exclude)

    def rules(self, all_rules: Sequence[Rule], opt_in_rules: Sequence[Rule] = (),
              enabled: Sequence[str] = ()) -> List[Rule]:
        """The rules this run uses, in run order: the default rules ``all_rules`` as selected,
        then the opt-in rules named by their exact code in ``select`` or in ``enabled``."""
        chosen = [r for r in all_rules if not self.select or _matches(r.code, self.select)]
        chosen += [r for r in opt_in_rules if r.code in self.select or r.code in enabled]
        return [r for r in chosen if not _matches(r.code, self.ignore)]

    def rules_for(self, path: str, rules: Sequence[Rule]) -> Sequence[Rule]:
        """``rules`` less those that ``per-file-ignores`` switches off for ``path`` (``rules``
        itself when none is: the engine then sees one list of rules for every file)."""
        if not self.per_file_ignores:
            return rules
        rel = self._rel(path)
        off: List[str] = []
        for pattern, codes in self.per_file_ignores:
            if _glob_matches(rel, pattern):
                off.extend(codes)
        return [r for r in rules if not _matches(r.code, off)]


def _codes(value: Any, key: str, known: Sequence[str], where: str) -> List[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of rule codes")
    codes = [v.strip().upper() for v in value if v.strip()]
    unknown = [c for c in codes if c != "ALL" and not any(k.startswith(c) for k in known)]
    if unknown:
        raise ConfigError(f"{where}: `{key}` names unknown rule code(s): {', '.join(unknown)}")
    return ["" if c == "ALL" else c for c in codes]


def _strings(value: Any, key: str, where: str) -> List[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return list(value)


def read_table(path: str) -> Optional[Dict[str, Any]]:
    """The ``[tool.lightmigrate]`` table of ``path`` (None when it has none)."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}")
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}")
    table = data.get("tool", {}).get("lightmigrate")
    if table is None and os.path.basename(path) != "pyproject.toml":
        table = data  # a lightmigrate.toml-style file given with --config holds the keys directly
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.lightmigrate] must be a table")
    return table


def find_config(paths: Sequence[str]) -> Optional[str]:
    """The nearest pyproject.toml with a [tool.lightmigrate] table (see the module docstring)."""
    starts = []
    if paths:
        first = os.path.abspath(paths[0])
        starts.append(first if os.path.isdir(first) else os.path.dirname(first))
    starts.append(os.getcwd())
    for start in starts:
        current = start
        while True:
            candidate = os.path.join(current, "pyproject.toml")
            if os.path.isfile(candidate):
                try:
                    if read_table(candidate) is not None:
                        return candidate
                except ConfigError:
                    return candidate  # report the broken file rather than skip it
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
    return None


def load_settings(
    paths: Sequence[str],
    known_codes: Sequence[str],
    config: Optional[str] = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Settings:
    """Settings from the configuration file (``config`` or the one found) and the CLI options."""
    path = config or find_config(paths)
    settings = Settings(root=os.getcwd())
    if path is not None:
        if not os.path.isfile(path):
            raise ConfigError(f"{path}: no such configuration file")
        table = read_table(path) or {}
        unknown = sorted(set(table) - set(KNOWN_KEYS))
        if unknown:
            raise ConfigError(
                f"{path}: unknown key(s) in [tool.lightmigrate]: {', '.join(unknown)} "
                f"(known: {', '.join(KNOWN_KEYS)})"
            )
        settings.path = path
        settings.root = os.path.dirname(os.path.abspath(path))
        settings.select = _codes(table.get("select", []), "select", known_codes, path)
        settings.ignore = _codes(table.get("ignore", []), "ignore", known_codes, path)
        settings.exclude = _strings(table.get("exclude", []), "exclude", path)
        pfi = table.get("per-file-ignores", {})
        if not isinstance(pfi, dict):
            raise ConfigError(f"{path}: `per-file-ignores` must be a table of pattern = [codes]")
        settings.per_file_ignores = [
            (pattern, _codes(codes, f"per-file-ignores.{pattern}", known_codes, path))
            for pattern, codes in pfi.items()
        ]
        bare = table.get("bare-noqa", False)
        if not isinstance(bare, bool):
            raise ConfigError(f"{path}: `bare-noqa` must be true or false")
        settings.bare_noqa = bare
    if select:
        settings.select = list(select)
    settings.ignore += list(ignore)
    settings.exclude += list(exclude)
    return settings


DEFAULT_LINE_LENGTH = 88  # black's and ruff's default


def line_length(path: str) -> int:
    """The line length the project of the file ``path`` formats to, for the lines a rule writes:
    in the nearest folder at or above the file's that holds one, ``line-length`` of ruff.toml or
    .ruff.toml, or of ``[tool.ruff]`` / ``[tool.black]`` in pyproject.toml (the smaller when both
    are set); else 88 (also for text that is no file: ``<string>``, standard input)."""
    if not os.path.isfile(path):
        return DEFAULT_LINE_LENGTH
    return _line_length_in(os.path.dirname(os.path.abspath(path)))


@functools.lru_cache(maxsize=256)
def _line_length_in(folder: str) -> int:
    found = _line_lengths(folder)
    if found:
        return min(found)
    parent = os.path.dirname(folder)
    return DEFAULT_LINE_LENGTH if parent == folder else _line_length_in(parent)


def _line_lengths(folder: str) -> List[int]:
    """The line lengths the formatter settings of ``folder`` give (none when it has none)."""
    found = []
    for name, tables in (("ruff.toml", ((),)), (".ruff.toml", ((),)),
                         ("pyproject.toml", (("tool", "ruff"), ("tool", "black")))):
        candidate = os.path.join(folder, name)
        if not os.path.isfile(candidate):
            continue
        try:
            with open(candidate, "rb") as f:
                data = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError):
            continue
        for keys in tables:
            table: Any = data
            for k in keys:
                table = table.get(k, {}) if isinstance(table, dict) else {}
            value = table.get("line-length") if isinstance(table, dict) else None
            if type(value) is int and value > 0:
                found.append(value)
    return found
