"""LM307: callback/datamodule API changes of 1.9 -> 2.x."""

import pytest

from lightmigrate.rules.lm307_callback_api import CallbackApiRule

from .conftest import check_rewrite, run_rule

RULE = CallbackApiRule()


def test_predict_epoch_end_unused_outputs_just_dropped():
    check_rewrite(RULE, '''\
import pytorch_lightning as pl


class Writer(pl.callbacks.BasePredictionWriter):
    def on_predict_epoch_end(self, trainer, pl_module, outputs):
        print("done")
''', '''\
import pytorch_lightning as pl


class Writer(pl.callbacks.BasePredictionWriter):
    def on_predict_epoch_end(self, trainer, pl_module):
        print("done")
''')


def test_val_and_test_batch_idx_in_progress_bar():
    check_rewrite(RULE, '''\
from pytorch_lightning.callbacks.progress import ProgressBarBase


class Bar(ProgressBarBase):
    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        print(self.val_batch_idx, self.test_batch_idx)
''', '''\
from pytorch_lightning.callbacks.progress import ProgressBar


class Bar(ProgressBar):
    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        print((self.trainer.fit_loop.epoch_loop.val_loop if self.trainer.state.fn == "fit" else self.trainer.validate_loop).batch_progress.current.processed, self.trainer.test_loop.batch_progress.current.processed)
''')


def test_get_standard_metrics_signature_import_and_loss_marker():
    out, _ = run_rule(RULE, '''\
from pytorch_lightning.callbacks.progress.base import get_standard_metrics


def metrics(trainer, pl_module):
    return get_standard_metrics(trainer, pl_module)["loss"]
''')
    assert "from pytorch_lightning.callbacks.progress.progress_bar import get_standard_metrics" in out
    assert 'get_standard_metrics(trainer)["loss"]' in out
    assert "# TODO(lightmigrate): LM307 `get_standard_metrics` no longer returns \"loss\"" in out


def test_markers_for_qat_argparse_and_batch_size_finder():
    out, _ = run_rule(RULE, '''\
import pytorch_lightning as pl
from pytorch_lightning.callbacks import BatchSizeFinder, QuantizationAwareTraining


class DM(pl.LightningDataModule):
    pass


dm = DM.from_argparse_args(args)
qat = QuantizationAwareTraining()
finder = BatchSizeFinder(mode="binsearch")
other = BatchSizeFinder(margin=0.0)
''')
    lines = out.splitlines()
    assert "LM307 `QuantizationAwareTraining` was removed" in lines[lines.index("qat = QuantizationAwareTraining()") - 1]
    assert "LM307 LightningDataModule `from_argparse_args`" in lines[lines.index("dm = DM.from_argparse_args(args)") - 1]
    assert "LM307 Lightning 2.6 shrinks" in lines[lines.index('finder = BatchSizeFinder(mode="binsearch")') - 1]
    assert "LM307" not in lines[lines.index("other = BatchSizeFinder(margin=0.0)") - 1]
    again, _ = run_rule(RULE, out)
    assert again == out


def test_foreign_progress_bar_base_untouched():
    check_rewrite(RULE, '''\
from mylib.bars import ProgressBarBase


class Bar(ProgressBarBase):
    def step(self):
        return self.train_batch_idx
''', None)


@pytest.mark.parametrize("line, reason", [
    ("qat = QuantizationAwareTraining()", "`QuantizationAwareTraining` was removed"),
    ("DM.add_argparse_args(parser)", "LightningDataModule `add_argparse_args`"),
    ("dm = DM.from_argparse_args(args)", "LightningDataModule `from_argparse_args`"),
    ("trainer.tuner.scale_batch_size(model)", "Lightning 2.6 shrinks"),
    ("finder = BatchSizeFinder()", "Lightning 2.6 shrinks"),
    ('loss = get_standard_metrics(trainer)["loss"]', "`get_standard_metrics` no longer returns"),
])
def test_each_marker_alone(line, reason):
    # Each reason on its own in a file, the statement holding it marked.
    out, _ = run_rule(RULE, f"import pytorch_lightning as pl\n\n\nclass DM(pl.LightningDataModule):\n    pass\n\n\n{line}\n")
    lines = out.splitlines()
    assert f"LM307 {reason}" in lines[lines.index(line) - 1]
