"""The v1 shim's import layer: 1.x module paths that Lightning 2.x moved or removed import again
when un-migrated 1.x code runs on 2.x.

For every module path in :mod:`lightmigrate.catalog.imports` that 2.x no longer has
(``pytorch_lightning.trainer.supporters``, ``pytorch_lightning.utilities.apply_func``,
``pytorch_lightning.profiler``, ...), :func:`install` registers a stand-in module whose
attributes resolve through the table to the 2.x objects (``CombinedLoader`` ->
``pytorch_lightning.utilities.combined_loader.CombinedLoader``), and sets it on its parent
package so that dotted uses (``pl.utilities.apply_func.move_data_to_device``) work too.
Removed names stay missing (AttributeError / ImportError), as they would be for the user.
Arguments whose meaning changed (``CombinedLoader(loaders=)``) are not emulated.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Set

from lightmigrate.catalog.imports import new_path, to_absolute
from lightmigrate.catalog.imports import ENTRIES

_INSTALLED: Set[str] = set()


def _exists(name: str) -> bool:
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def _resolve(path: str) -> Any:
    module, _, attr = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ImportError:
        return getattr(importlib.import_module(module), attr)


def _stand_in(name: str) -> types.ModuleType:
    module = types.ModuleType(name, f"lightmigrate v1 shim: 1.x module {name}, resolved through the import table")

    def __getattr__(attr: str) -> Any:
        found = new_path(f"{name}.{attr}")
        if found is None or found[0] is None:
            raise AttributeError(f"module {name!r} has no attribute {attr!r} (removed in Lightning 2.x)")
        return _resolve(found[0])

    module.__getattr__ = __getattr__  # type: ignore[attr-defined]
    return module


def install(root: str) -> None:
    """Register stand-ins for the moved 1.x modules under ``root`` (``pytorch_lightning`` or
    ``lightning.pytorch``). Idempotent."""
    if root in _INSTALLED:
        return
    _INSTALLED.add(root)
    candidates = set()
    for entry in ENTRIES:
        if not entry.old.startswith("pl."):
            continue
        parts = entry.old.split(".")
        for n in range(2, len(parts) + 1):
            candidates.add(".".join(parts[:n]))
    for rel in sorted(candidates, key=lambda r: r.count(".")):
        name = to_absolute(rel, root)
        if name in sys.modules or _exists(name):
            continue
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is None or not isinstance(parent, types.ModuleType):
            continue
        if hasattr(parent, child):
            continue  # a name (class, function) inside an existing module, not a module
        found = new_path(name)
        if found is not None and found[0] is not None and _exists(found[0]):
            module = importlib.import_module(found[0])  # the whole module moved: alias it
        elif any(e.old.startswith(rel + ".") and e.new for e in ENTRIES):
            module = _stand_in(name)  # some of its names moved
        else:
            continue  # removed: leave the import failing
        sys.modules[name] = module
        setattr(parent, child, module)
    # names that moved out of modules 2.x still has (``pl.utilities.seed.seed_everything``)
    for entry in ENTRIES:
        if not entry.old.startswith("pl.") or entry.new is None:
            continue
        name = to_absolute(entry.old, root)
        parent_name, _, attr = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is None or isinstance(parent, types.ModuleType) and parent.__doc__ and \
                parent.__doc__.startswith("lightmigrate v1 shim") or hasattr(parent, attr):
            continue
        try:
            setattr(parent, attr, _resolve(to_absolute(entry.new, root)))
        except (ImportError, AttributeError):  # an optional integration that is not installed
            continue
