"""A module written for one or two optimizers, trained with one, whose batch-end hooks read outputs.

Exercises (issue 21 kind 6.5 with issue 25 kind 5, LM005, M7, B.5): `training_step(self, batch,
batch_idx, optimizer_idx=0)` with a `configure_optimizers` that returns one optimizer here. 1.9
squeezed the optimizer dimension of `on_train_batch_end`'s `outputs` away with one optimizer:
the module's hook and a callback's hook got the step's dict itself, not a list of one. LM005's
loop (which reads `self.optimizers()` into a list when it may hold one optimizer) hands them
the same; the callback's `on_before_zero_grad` runs in the closure as 1.9 ran it.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback


class OutputsWatcher(Callback):
    def on_before_zero_grad(self, trainer, pl_module, optimizer):
        pl_module.seen[0] += 1

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pl_module.log("cb_loss", outputs["loss"])
        pl_module.seen[1] += 1


class OneOrTwo(pl.LightningModule):
    def __init__(self, split_lr=False):
        super().__init__()
        self.split_lr = split_lr
        self.body = nn.Linear(5, 6)
        self.head = nn.Linear(6, 1)
        self.register_buffer("seen", torch.zeros(2))

    def forward(self, x):
        return self.head(torch.relu(self.body(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx=0):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        return {"loss": loss, "scaled": loss.detach() * 2}

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.log("batch_scaled", outputs["scaled"])

    def configure_optimizers(self):
        if self.split_lr:
            return [torch.optim.SGD(self.body.parameters(), lr=0.05), torch.optim.SGD(self.head.parameters(), lr=0.2)]
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - x[:, 3]), batch_size=4)


def lightmigrate_case():
    return {
        "model": OneOrTwo(split_lr=False),
        "train_dataloaders": _loader(16, 52),
        "trainer": {"max_epochs": 2, "callbacks": [OutputsWatcher()]},
    }
