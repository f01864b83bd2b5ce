"""Epoch-end hooks that never read their `outputs` argument (a plain rename in 2.x).

Exercises (spec M1, M2): `training_epoch_end(self, outputs)` logs the weight norm and
`validation_epoch_end(self, outputs)` turns counters accumulated by `validation_step` into an
accuracy, then resets them - the 1.x pattern that never needed `outputs`. Validation runs every
epoch with the default sanity check, whose counts must not leak into epoch 0 because the hook
resets them.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class CountingModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.correct = 0
        self.seen = 0
        self.weight_norms = []

    def forward(self, x):
        return self.fc(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return {"loss": loss}

    def training_epoch_end(self, outputs):
        norm = self.fc.weight.detach().norm()
        self.weight_norms.append(float(norm))
        self.log("weight_norm", norm)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        preds = self(x).argmax(dim=1)
        self.correct += int((preds == y).sum())
        self.seen += len(y)
        return preds

    def validation_epoch_end(self, outputs):
        self.log("val_acc", self.correct / max(self.seen, 1))
        self.correct = 0
        self.seen = 0

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 0] > x[:, 1]).long()), batch_size=4)


def lightmigrate_case():
    return {
        "model": CountingModel(),
        "train_dataloaders": _loader(12, 50),
        "val_dataloaders": _loader(12, 51),
        "trainer": {"max_epochs": 2},
    }
