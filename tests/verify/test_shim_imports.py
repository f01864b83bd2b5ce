"""The v1 shim's import layer makes moved 1.x module paths import on Lightning 2.x, through the
import table; removed names stay missing."""

import subprocess
import sys
import textwrap


def run(code):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.split()


def test_moved_modules_and_names_resolve_to_the_2x_objects():
    out = run('''\
    import pytorch_lightning as pl
    from lightmigrate.verify.shim_imports import install
    install("pytorch_lightning")
    from pytorch_lightning.trainer.supporters import CombinedLoader
    from pytorch_lightning.utilities.apply_func import apply_to_collection
    from pytorch_lightning.profiler import SimpleProfiler
    from lightning_utilities.core.apply_func import apply_to_collection as new_apply
    print(CombinedLoader is pl.utilities.combined_loader.CombinedLoader, apply_to_collection is new_apply,
          SimpleProfiler is pl.profilers.SimpleProfiler, pl.utilities.seed.seed_everything is pl.seed_everything)
    try:
        from pytorch_lightning.trainer.supporters import TensorRunningAccum
    except ImportError:
        print("removed-stays-missing")
    ''')
    assert out == ["True", "True", "True", "True", "removed-stays-missing"]
