"""Validation twice per training epoch (`val_check_interval=0.5`).

Exercises (spec M1, M2, B.1, B.2, B.7): with 6 training batches, validation runs after batch 2
and after batch 5, so `validation_epoch_end` runs in the middle of the training epoch. Each
call must receive only that run's outputs as a flat list (the buffer is reset at every
validation start, not at training-epoch start), and the mid-epoch validation must not disturb
the training buffer: `training_epoch_end` still receives all 6 batches. The validation body
counts its invocations per epoch.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class FrequentValidation(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 6)
        self.fc2 = nn.Linear(6, 1)
        self.val_runs = {}

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x))).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.l1_loss(self(x), y)
        self.log("train_l1", loss, on_step=True, on_epoch=True)
        return loss

    def training_epoch_end(self, outputs):
        self.log("train_outputs", float(len(outputs)))
        self.log("train_mean_from_outputs", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self(x) - y).abs()

    def validation_epoch_end(self, outputs):
        if not self.trainer.sanity_checking:
            self.val_runs[self.current_epoch] = self.val_runs.get(self.current_epoch, 0) + 1
        errors = torch.cat(outputs)
        self.log("val_l1", errors.mean())
        self.log("val_batches", float(len(outputs)))
        self.log("val_run_in_epoch", float(self.val_runs.get(self.current_epoch, 0)))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1).sin()), batch_size=3)


def lightmigrate_case():
    return {
        "model": FrequentValidation(),
        "train_dataloaders": _loader(18, 220),
        "val_dataloaders": _loader(9, 221),
        "trainer": {"max_epochs": 2, "val_check_interval": 0.5},
    }
