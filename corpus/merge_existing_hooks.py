"""A module that already defines the 2.x-style batch and epoch hooks next to the 1.x ones.

Exercises (spec M1, M2, B.2, B.4, B.7 "merge with existing hooks"): besides
`training_epoch_end` / `validation_epoch_end` the class overrides `on_train_epoch_start`,
`on_train_batch_end` (reads `outputs["loss"]`), `on_train_epoch_end`,
`on_validation_epoch_start`, `on_validation_batch_end` and `on_validation_epoch_end`. In 1.x the
`*_epoch_end(outputs)` body runs BEFORE the module's `on_*_epoch_end`, and the latter reads state
the former wrote, so the order is observable in the logged metrics.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class HookHeavyModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.batch_losses = []
        self.val_batches_seen = 0
        self.last_train_mean = torch.tensor(0.0)
        self.last_val_max = torch.tensor(0.0)

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.smooth_l1_loss(self(x), y)
        return {"loss": loss, "abs_err": (self(x) - y).abs().mean()}

    def on_train_epoch_start(self):
        self.batch_losses = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.batch_losses.append(outputs["loss"].item())
        self.log("seen_loss", outputs["loss"])

    def training_epoch_end(self, outputs):
        self.last_train_mean = torch.stack([o["abs_err"] for o in outputs]).mean().detach()
        self.log("train_abs_err", self.last_train_mean)

    def on_train_epoch_end(self):
        # runs after training_epoch_end in 1.x, so it sees this epoch's value
        self.log("train_abs_err_x2", self.last_train_mean * 2)
        self.log("batch_loss_sum", sum(self.batch_losses))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self(x) - y).abs().max()

    def on_validation_epoch_start(self):
        self.val_batches_seen = 0

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.val_batches_seen += 1

    def validation_epoch_end(self, outputs):
        self.last_val_max = torch.stack(outputs).max()
        self.log("val_max_err", self.last_val_max)

    def on_validation_epoch_end(self):
        self.log("val_max_err_plus_batches", self.last_val_max + self.val_batches_seen)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, 2 * x[:, 0] - x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": HookHeavyModel(),
        "train_dataloaders": _loader(12, 70),
        "val_dataloaders": _loader(8, 71),
        "trainer": {"max_epochs": 2, "accumulate_grad_batches": 2},
    }
