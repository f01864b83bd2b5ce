"""A callback in one module of the package reads, in its own epoch-end hooks, what the
LightningModule's epoch-end hooks in another module just computed (issue 21, kind 6).

Exercises (spec B.2, M1, M2): `cbreads_pkg/models.py` defines `training_epoch_end` (which sets
`epoch_loss` through a helper) and `validation_epoch_end` (sets `val_err` and logs it);
`cbreads_pkg/callbacks.py` defines `EpochReport`, whose `on_train_epoch_end` /
`on_validation_epoch_end` read `pl_module.epoch_loss`, `pl_module.val_err` and
`trainer.callback_metrics["val_err"]`. 1.x ran the module's bodies before the callback's hooks;
2.x runs the module's `on_*_epoch_end` after them. The migration of `models.py` (the bodies
become run-once methods) and of `callbacks.py` (the callback calls them first) must agree
across files; otherwise the callback fails in the first epoch or reports the previous epoch.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401  (the project's code is 1.x Lightning)

from cbreads_pkg.callbacks import EpochReport
from cbreads_pkg.models import SummaryModule


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - 0.5 * x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": SummaryModule(),
        "train_dataloaders": _loader(12, 61),
        "val_dataloaders": _loader(8, 62),
        "trainer": {"max_epochs": 3, "callbacks": [EpochReport()]},
    }
