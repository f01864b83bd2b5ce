"""The import table is checked against the real packages: every ``new`` name imports on
Lightning 2.x (both roots), every ``old`` 1.9 name existed in pytorch-lightning 1.9.5."""

import ast
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from lightmigrate.catalog.imports import BY_OLD, ENTRIES, KEPT, KEPT_MODULES, LAZY_MODULES, lookup, mapped

ROOT = Path(__file__).resolve().parents[2]
PL19 = ROOT / ".venv-pl19" / "bin" / "python"

# Resolve a dotted name: import the longest importable module prefix, then getattr the rest.
RESOLVER = r'''
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
missing = []
for name in json.load(sys.stdin):
    parts = name.split(".")
    obj = None
    for n in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        try:
            for attr in parts[n:]:
                obj = getattr(obj, attr)
        except AttributeError:
            obj = None
        break
    if obj is None:
        missing.append(name)
print(json.dumps(missing))
'''


def absolute(rel, pl_root, fabric_root):
    if rel.startswith("pl."):
        return pl_root + rel[2:]
    if rel == "pl":
        return pl_root
    if rel.startswith("fabric."):
        return fabric_root + rel[6:]
    return rel


def missing_names(python, names):
    proc = subprocess.run([str(python), "-c", RESOLVER], input=json.dumps(names), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


ROOTS = [("pytorch_lightning", "lightning_fabric"), ("lightning.pytorch", "lightning.fabric")]


@pytest.mark.parametrize("pl_root,fabric_root", ROOTS)
def test_every_new_name_exists_on_2x(pl_root, fabric_root):
    names = sorted({absolute(e.new, pl_root, fabric_root) for e in ENTRIES if e.new})
    assert len(names) > 60
    assert missing_names(sys.executable, names) == []


@pytest.mark.skipif(not PL19.exists(), reason="needs .venv-pl19 (real pytorch-lightning 1.9.5)")
def test_every_old_19_name_exists_on_195():
    names = sorted({absolute(e.old, "pytorch_lightning", "lightning_fabric") for e in ENTRIES if not e.legacy})
    assert len(names) > 100
    assert missing_names(PL19, names) == []


@pytest.mark.skipif(not PL19.exists(), reason="needs .venv-pl19 (real pytorch-lightning 1.9.5)")
def test_legacy_names_were_gone_in_195():
    """A.8 names flagged legacy really were removed before 1.9 (otherwise they must be checked above)."""
    names = sorted({absolute(e.old, "pytorch_lightning", "lightning_fabric") for e in ENTRIES if e.legacy})
    assert sorted(missing_names(PL19, names)) == names


def test_removed_names_are_really_gone_on_2x():
    """A removal entry is only right when 2.x does not have the old name any more (or it is a shim
    that raises / is deprecated, listed here with the reason)."""
    pl = "pytorch_lightning."
    still_there = {  # old names 2.6.6 still imports: each a stub that raises, a deprecated shim or internals
        pl + "loggers.NeptuneLogger", pl + "loggers.neptune",  # raises on construction (L1)
        pl + "loops.loop", pl + "loops.optimization", pl + "loops.utilities",  # KEPT_MODULES: fewer names in 2.x
        # graveyard stubs: importable, raise when used (the classes moved to lightning-habana)
        pl + "accelerators.HPUAccelerator", pl + "accelerators.hpu", pl + "plugins.HPUPrecisionPlugin",
        pl + "plugins.precision.HPUPrecisionPlugin", pl + "plugins.precision.hpu", pl + "plugins.HPUCheckpointIO",
        pl + "strategies.HPUParallelStrategy", pl + "strategies.SingleHPUStrategy", pl + "strategies.hpu_parallel",
        pl + "strategies.single_hpu",
        # deprecated shim: the bf16 variant must become XLAPrecision("bf16-true") (R37)
        pl + "plugins.TPUBf16PrecisionPlugin", pl + "plugins.precision.TPUBf16PrecisionPlugin",
        pl + "plugins.precision.tpu_bf16",
    }
    names = sorted({absolute(e.old, "pytorch_lightning", "lightning_fabric") for e in ENTRIES if e.new is None})
    present = set(names) - set(missing_names(sys.executable, names))
    assert present <= still_there, sorted(present - still_there)


def bound_names(module: str, rel: str) -> tuple:
    """``(modules, names)`` of the installed ``module`` as root-relative paths: the module and
    its submodules, and ``rel.NAME`` for each name one of them binds at top level (defs,
    classes, assignments, re-exports from its own submodules)."""
    found = importlib.import_module(module)
    tree = ast.parse(Path(found.__file__).read_text(encoding="utf-8"))
    bound = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Assign):
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound.add(node.target.id)
        elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(module + ".")):
            bound.update(a.asname or a.name for a in node.names)
    modules = {rel}
    subs = {info.name for info in pkgutil.iter_modules(getattr(found, "__path__", []))}
    names = {f"{rel}.{n}" for n in bound - subs if not n.startswith("__")}
    for sub in subs:
        more_modules, more_names = bound_names(f"{module}.{sub}", f"{rel}.{sub}")
        modules |= more_modules
        names |= more_names
    return modules, names


def test_kept_names_are_what_2x_binds_under_the_removed_loop_modules():
    """``KEPT_MODULES`` and ``KEPT`` are exactly what Lightning 2.x still has under the loop
    modules the table removes: a name missing would be marked as removed although it imports,
    and an extra one would hide a removal."""
    modules, names = set(), set()
    for rel in ("pl.loops.loop", "pl.loops.optimization", "pl.loops.utilities"):
        entry = BY_OLD[rel]  # the table's entry for the module: a removal...
        assert entry.new is None and mapped(rel + ".Anything")[1] is entry
        assert lookup(rel) is None  # ...whose module still imports
        more_modules, more_names = bound_names("lightning.pytorch" + rel[2:], rel)
        modules |= more_modules
        names |= more_names
    assert "pl.loops.loop._Loop" in names and "pl.loops.utilities._parse_loop_limits" in names
    assert modules == set(KEPT_MODULES)
    assert names == set(KEPT)


@pytest.mark.parametrize("pl_root,fabric_root", ROOTS)
def test_kept_names_import_on_2x(pl_root, fabric_root):
    kept = sorted(absolute(n, pl_root, fabric_root) for n in KEPT | KEPT_MODULES)
    assert missing_names(sys.executable, kept) == []


@pytest.mark.skipif(not PL19.exists(), reason="needs .venv-pl19 (real pytorch-lightning 1.9.5)")
def test_19_names_that_2x_dropped_under_the_loop_modules_stay_removed():
    gone = ["pl.loops.utilities._get_active_optimizers", "pl.loops.loop.Loop",
            "pl.loops.optimization.optimizer_loop.OptimizerLoop", "pl.loops.optimization.manual_loop.ManualOptimization"]
    assert missing_names(PL19, [absolute(n, "pytorch_lightning", "lightning_fabric") for n in gone]) == []
    assert sorted(missing_names(sys.executable, [absolute(n, "lightning.pytorch", "lightning.fabric") for n in gone])) \
        == sorted(absolute(n, "lightning.pytorch", "lightning.fabric") for n in gone)
    for name in gone:
        assert mapped(name) is not None and mapped(name)[0] is None, name


def test_lookup_leaves_kept_names_their_attributes_and_kept_modules_alone():
    assert lookup("pl.loops.utilities._parse_loop_limits") is None
    assert lookup("pl.loops.optimization.closure.OutputResult.loss") is None
    assert lookup("pl.loops.utilities") is None
    assert lookup("pl.loops.utilities._get_active_optimizers")[0].row == "R25"
    assert lookup("pl.loops.loop.Loop")[0].row == "A8-imports"
    # a kept module's other names are still removals
    assert lookup("pl.loops.optimization.closure.Gone")[0].row == "R25"

REACH = r'''
import importlib, json, sys, warnings
warnings.simplefilter("ignore")
for root in ("pytorch_lightning", "lightning_fabric", "lightning.pytorch", "lightning.fabric"):
    importlib.import_module(root)
unreachable = []
for name in json.load(sys.stdin):
    obj = sys.modules[name.split(".")[0]]
    try:
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
    except AttributeError:
        unreachable.append(name)
print(json.dumps(unreachable))
'''


def test_lazy_modules_are_exactly_the_targets_not_reachable_as_attributes():
    """LM201 rewrites ``pl.a.b.C`` into a dotted use of the new name only when importing the
    root package makes it reachable; LAZY_MODULES lists the exceptions, which get an import."""
    names = sorted({absolute(e.new, r, f) for e in ENTRIES if e.new and e.new.startswith("pl.") for r, f in ROOTS})
    proc = subprocess.run([sys.executable, "-c", REACH], input=json.dumps(names), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    unreachable = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = sorted(absolute(m, r, f) for m in LAZY_MODULES for r, f in ROOTS)
    assert sorted({".".join(n.split(".")[:3 if n.startswith("lightning.") else 2]) for n in unreachable}) == expected


def test_lookup_prefers_the_longest_entry():
    assert mapped("pl.profiler.base.BaseProfiler")[0] == "pl.profilers.Profiler"
    assert mapped("pl.profiler.SimpleProfiler")[0] == "pl.profilers.SimpleProfiler"
    assert mapped("pl.trainer.supporters.CombinedLoader")[0] == "pl.utilities.combined_loader.CombinedLoader"
    assert mapped("pl.trainer.supporters.TensorRunningAccum")[0] is None
    assert lookup("pl.Trainer") is None


def test_every_entry_names_a_row():
    rows = {e.row for e in ENTRIES}
    for row in [f"R{i}" for i in range(1, 47) if i not in (44, 45)] + ["L1", "L3", "CLI4", "A8-imports",
                                                                       "A8-callbacks-loggers"]:
        assert row in rows, row
