"""A module written for one or two optimizers (`optimizer_idx=0` default), trained with one.

Exercises (issue 25 kind 5, LM005, M7): `training_step(self, batch, batch_idx, optimizer_idx=0)`
with a `configure_optimizers` that returns two optimizers or, here, one. 1.9 called the step
without `optimizer_idx` (the default 0) and stepped the single optimizer and its step scheduler.
LM005 writes the manual-optimization loop; with one optimizer 2.x's `self.optimizers()` returns
the optimizer itself, not a list, so the loop must not iterate over it as it is. The logged loss,
the learning rate and `training_epoch_end` show the same training.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class SplitOrJoint(pl.LightningModule):
    def __init__(self, split_lr=False):
        super().__init__()
        self.split_lr = split_lr
        self.body = nn.Linear(6, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.relu(self.body(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx=0):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log(f"loss_{optimizer_idx}", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        if self.split_lr:
            return [torch.optim.SGD(self.body.parameters(), lr=0.05), torch.optim.SGD(self.head.parameters(), lr=0.2)]
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    return DataLoader(TensorDataset(x, x[:, 1] - x[:, 4]), batch_size=4)


def lightmigrate_case():
    return {
        "model": SplitOrJoint(split_lr=False),
        "train_dataloaders": _loader(20, 41),
        "trainer": {"max_epochs": 2},
    }
