"""``libcst.matchers``, imported when first used.

The matchers module is the slowest part of importing libcst (about a quarter of a second:
thousands of generated classes), and only rule walks use it: a run's main process (discovery,
prefilter, survey, gates) and commands such as ``lightmigrate rules`` never do. Rules import
``m`` from here instead of the module itself.

A run on several processes imports it in a thread of the main process while the survey's
processes work (``preload``), once those are started (a fork must not copy an import half
done), and waits for it (``loaded``) before it starts the processes that migrate, which then
have it from the start (and whatever else ``preload`` was asked to make ready)."""

from __future__ import annotations

import importlib
import threading
from typing import Any, Callable, Optional

_NAME = "libcst.matchers"


class _Lazy:
    """Stands for the module: the first attribute asked for imports it, and copies its names
    onto this object, so later lookups cost what a module's do."""

    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(_NAME)
        self.__dict__.update(vars(module))
        return getattr(module, name)


m: Any = _Lazy()

_loader: Optional[threading.Thread] = None


def preload(then: Optional[Callable[[], None]] = None) -> None:
    """Start importing ``libcst.matchers`` in a thread (once), and run ``then`` there after it
    (more that the migrating processes will need). Call it only when no process will be
    forked before ``loaded`` returns."""
    global _loader
    if _loader is None:
        def load() -> None:
            importlib.import_module(_NAME)
            if then is not None:
                then()

        _loader = threading.Thread(target=load, name="lightmigrate-preload", daemon=True)
        _loader.start()


def loaded() -> None:
    """Wait for ``preload`` to finish."""
    if _loader is not None:
        _loader.join()
