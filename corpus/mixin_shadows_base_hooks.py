"""A logging mixin listed before a base that defines the same hooks as the mixin.

Exercises (spec B.1, B.2, B.7; issue 21 kind 2): as `mixin_shadows_buffer_hooks.py`, but
`InjBaseRegressor` also defines `on_validation_batch_end` and `on_validation_epoch_end`, which the
mixin shadowed in `InjRegressor` on 1.x (they never ran there). The migration cannot add `super()` to
the mixin's hooks (that would run the base's hooks 1.x skipped), so `InjRegressor` itself collects the
validation outputs and runs the validation epoch-end body (kept as a helper in the base), then
calls the mixin's hook, which ends the chain as in 1.x. The mixin's `on_train_epoch_*` hooks get
`super()` first (nothing of the user's follows them).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class InjMetricsMixin:
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


class InjBaseRegressor(pl.LightningModule):
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

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.log("base_batch_end", 1.0)  # shadowed by the mixin in InjRegressor: never runs there

    def on_validation_epoch_end(self):
        self.log("base_epoch_end", 1.0)  # shadowed too

    def validation_epoch_end(self, outputs):
        self.last_val_mean = sum(outputs) / len(outputs)
        self.log("val_epoch_loss", self.last_val_mean)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.03)


class InjRegressor(InjMetricsMixin, InjBaseRegressor):
    """The model."""


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1) ** 2), batch_size=4)


def lightmigrate_case():
    return {
        "model": InjRegressor(),
        "train_dataloaders": _loader(12, 510),
        "val_dataloaders": _loader(8, 511),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "validate"],
    }
