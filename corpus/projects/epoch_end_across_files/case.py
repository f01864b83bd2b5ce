"""Epoch-end hooks in a base module, batch and epoch hooks overridden in a subclass elsewhere
(issue 21, kind 1).

Exercises (spec M1, M2, B.1, B.2): `epochend_pkg/lit_base.py` defines `training_epoch_end` and
`validation_epoch_end`; `epochend_pkg/scheduled.py` subclasses it and overrides
`on_train_epoch_start` (warm-up flag) and `on_validation_batch_end` (per-batch logging) without
calling `super()` (1.x's were no-ops). LM001 collects the outputs in those very hooks in the
base; the subclass's overrides, in a file without any `_epoch_end`, must keep collecting, or the
training buffer is never reset (it grows across epochs) and the validation buffer stays empty.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401  (the project's code is 1.x Lightning)

from epochend_pkg.scheduled import WarmupRegressor


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return DataLoader(TensorDataset(x, 2 * x[:, 1] - x[:, 4] + 0.1), batch_size=4)


def lightmigrate_case():
    return {
        "model": WarmupRegressor(),
        "train_dataloaders": _loader(12, 3),
        "val_dataloaders": _loader(8, 4),
        "trainer": {"max_epochs": 3},
    }
