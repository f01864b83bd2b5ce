"""libcst.matchers (a quarter of a second to import) is never imported by a run or the CLI."""

import subprocess
import sys


def test_a_run_never_imports_libcst_matchers(tmp_path):
    (tmp_path / "a.py").write_text(
        "import pytorch_lightning as pl\n\n\nclass M(pl.LightningModule):\n"
        "    def training_epoch_end(self, outputs):\n        self.log('n', len(outputs))\n"
        "    def get_progress_bar_dict(self):\n        return super().get_progress_bar_dict()\n")
    (tmp_path / "b.py").write_text("from pytorch_lightning.callbacks import ProgressBarBase\nx = ProgressBarBase\n")
    code = ("import sys\nfrom lightmigrate.engine.model import Mode\nfrom lightmigrate.engine.run import run\n"
            "from lightmigrate.rules import ALL_RULES\n"
            f"for jobs in (1, 2):\n"
            f"    report = run([{str(tmp_path)!r}], ALL_RULES, Mode.DIFF, jobs=jobs)\n"
            "    print(sum(f.changed for f in report.files), 'libcst.matchers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    # both files migrated, and the module never imported (with one job, the rules ran here)
    assert out == ["2", "False", "2", "False"]
