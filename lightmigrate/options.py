"""The migration a command asks for: settings from the configuration and the options, and the
rules they choose. ``rewrite`` and ``verify`` (which migrates copies) share these, so a verify
migrates exactly as ``rewrite`` would."""

from __future__ import annotations

from typing import List, Sequence

from lightmigrate import rules as registry  # (read at each call: tests swap the rule lists)
from lightmigrate.config import Settings, load_settings
from lightmigrate.rules.base import Rule
from lightmigrate.rules.lm210_unified_imports import CODE as UNIFIED_IMPORTS_CODE


def migration_settings(paths: Sequence[str], config_path=None, select: Sequence[str] = (),
                       ignore: Sequence[str] = (), exclude: Sequence[str] = ()) -> Settings:
    """[tool.lightmigrate] of ``config_path`` (or the nearest pyproject.toml) with the command
    line's ``--select``/``--ignore``/``--exclude`` applied; raises ``ConfigError``."""
    codes = [r.code for r in [*registry.ALL_RULES, *registry.OPT_IN_RULES]]
    return load_settings(paths, codes, config_path, select, ignore, exclude)


def migration_rules(settings: Settings, unified_imports: bool = False) -> List[Rule]:
    """The rules ``settings`` choose, in run order (``unified_imports``: also LM210)."""
    return settings.rules(registry.ALL_RULES, registry.OPT_IN_RULES, [UNIFIED_IMPORTS_CODE] if unified_imports else [])
