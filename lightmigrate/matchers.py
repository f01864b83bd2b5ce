"""``libcst.matchers``, imported when first used.

The matchers module is the slowest part of importing libcst (about a quarter of a second:
thousands of generated classes), and only rule walks use it: a run's main process (discovery,
prefilter, survey, gates) and commands such as ``lightmigrate rules`` never do. Rules import
``m`` from here instead of the module itself."""

from __future__ import annotations

import importlib
from typing import Any

_NAME = "libcst.matchers"


class _Lazy:
    """Stands for the module: the first attribute asked for imports it, and copies its names
    onto this object, so later lookups cost what a module's do."""

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(_NAME)
        self.__dict__.update(vars(module))
        return getattr(module, name)


m: Any = _Lazy()
