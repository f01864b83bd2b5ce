"""A logging mixin listed before the LightningModule base whose epoch-end hooks are migrated.

Exercises (spec B.1, B.2, B.3, B.7; issue 21 kind 2): `class Regressor(MetricsMixin,
BaseRegressor)`. `BaseRegressor` has `training_epoch_end(outputs)`, `validation_epoch_end(outputs)`
and a `validation_step_end` that only logs; `MetricsMixin` (a plain class, earlier in the MRO)
defines `on_train_epoch_start`, `on_validation_batch_end`, `on_train_epoch_end` and
`on_validation_epoch_end` without calling `super()`, as 1.x mixins did: in 1.x nothing of
Lightning's came after them. The migration writes the output buffers into `BaseRegressor`'s
`on_*_epoch_start` / `on_*_batch_end` / `on_*_epoch_end`, which the mixin's hooks shadow in
`Regressor`: the training buffer is never created (AttributeError), the validation buffer stays
empty (ZeroDivisionError), the moved step-end never logs. In 1.x the epoch-end bodies ran before
the mixin's `on_*_epoch_end`, which read what they stored.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class MetricsMixin:
    """Counts batches and reports them at the end of each epoch."""

    def on_train_epoch_start(self):
        self.val_batches_seen = 0

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.val_batches_seen += 1

    def on_validation_epoch_end(self):
        self.log("val_batches_seen", float(self.val_batches_seen))
        self.log("val_mean_copy", self.last_val_mean)

    def on_train_epoch_end(self):
        self.log("train_mean_copy", self.last_train_mean)


class BaseRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1))
        self.val_batches_seen = 0
        self.last_train_mean = torch.tensor(0.0)
        self.last_val_mean = torch.tensor(0.0)

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def training_epoch_end(self, outputs):
        self.last_train_mean = torch.stack([o["loss"] for o in outputs]).mean()
        self.log("train_epoch_loss", self.last_train_mean)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_step_end(self, loss):
        self.log("val_step_loss", loss)

    def validation_epoch_end(self, outputs):
        self.last_val_mean = sum(outputs) / len(outputs)
        self.log("val_epoch_loss", self.last_val_mean)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.03)


class Regressor(MetricsMixin, BaseRegressor):
    pass


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1) ** 2), batch_size=4)


def lightmigrate_case():
    return {
        "model": Regressor(),
        "train_dataloaders": _loader(12, 510),
        "val_dataloaders": _loader(8, 511),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "validate"],
    }
