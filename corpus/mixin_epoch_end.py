"""Epoch-end hooks defined in a plain mixin class, not in a LightningModule.

Exercises (spec M1, M2, M3): `EpochSummaryMixin` (a plain `object` subclass, no Lightning
import) defines `training_epoch_end`, `validation_epoch_end` and `test_epoch_end`; the model is
`class MixedInModel(EpochSummaryMixin, pl.LightningModule)`, so the mixin's hooks win in the MRO.
A migration that only rewrote classes deriving from LightningModule would leave the 1.x hooks
in place and 2.x would refuse to fit; LM001 treats a mixin combined with LightningModule as part
of the hierarchy.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class EpochSummaryMixin:
    summary_prefix = "summary"

    def training_epoch_end(self, outputs):
        self.log(f"{self.summary_prefix}/train_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_epoch_end(self, outputs):
        self.log(f"{self.summary_prefix}/val_loss", torch.stack(outputs).mean())
        self.summaries.append(len(outputs))

    def test_epoch_end(self, outputs):
        self.log(f"{self.summary_prefix}/test_loss", torch.stack(outputs).mean())


class MixedInModel(EpochSummaryMixin, pl.LightningModule):
    summary_prefix = "mixed"

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
        self.summaries = []

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def test_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.prod(dim=1)), batch_size=4)


def lightmigrate_case():
    return {
        "model": MixedInModel(),
        "train_dataloaders": _loader(12, 310),
        "val_dataloaders": _loader(8, 311),
        "test_dataloaders": _loader(8, 312),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
