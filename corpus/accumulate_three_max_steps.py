"""Accumulation over 3 batches with a partial last window, stopped by max_steps mid-epoch.

Exercises (spec M1, M2, B.1): `accumulate_grad_batches=3` with 7 batches per epoch gives
optimizer steps after batches 2, 5 and 6 (the last window holds one batch), so every element
of `outputs` has its loss divided by 3, even in the short window. `max_steps=5` stops training
after the second optimizer step of epoch 1, i.e. in the middle of that epoch: 1.x still calls
`training_epoch_end` with the 6 batches it ran, but skips that epoch's validation (only the
sanity check and epoch 0 validate). The epoch-end bodies log and keep the count and sum of
what they received.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class AccumulatingRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.history = []

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        losses = torch.stack([out["loss"] for out in outputs])
        self.history.append(("train", len(outputs), float(losses.sum())))
        self.log("train_loss_sum", losses.sum())
        self.log("train_batches", float(len(outputs)))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_epoch_end(self, outputs):
        self.history.append(("val", len(outputs), float(torch.stack(outputs).mean())))
        self.log("val_loss", torch.stack(outputs).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


def _loader(n, seed, batch_size=2):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - 2 * x[:, 3]), batch_size=batch_size)


def lightmigrate_case():
    return {
        "model": AccumulatingRegressor(),
        "train_dataloaders": _loader(14, 200),
        "val_dataloaders": _loader(6, 201, batch_size=3),
        "trainer": {"max_epochs": 3, "max_steps": 5, "accumulate_grad_batches": 3},
    }
