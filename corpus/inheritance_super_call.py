"""Epoch-end hooks spread over a class hierarchy, with a `super().validation_epoch_end` call.

Exercises (spec M1, M2): `BaseTask` (a LightningModule) defines the steps and optimizer only;
`MetricsTask(BaseTask)` adds `training_epoch_end` and `validation_epoch_end`; the model that
runs, `FineTuneTask(MetricsTask)`, overrides `validation_epoch_end` to log an extra metric and
then delegates with `super().validation_epoch_end(outputs)`. Validation runs with the default
sanity check.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class BaseTask(pl.LightningModule):
    def __init__(self, lr=0.05):
        super().__init__()
        self.lr = lr
        self.model = nn.Sequential(nn.Linear(5, 5), nn.ReLU(), nn.Linear(5, 2))

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return {"loss": F.cross_entropy(logits, y), "hits": (logits.argmax(1) == y).float()}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)


class MetricsTask(BaseTask):
    def training_epoch_end(self, outputs):
        self.log("epoch_train_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_epoch_end(self, outputs):
        hits = torch.cat([o["hits"] for o in outputs])
        self.log("val_acc", hits.mean())
        self.log("val_loss", torch.stack([o["loss"] for o in outputs]).mean())


class FineTuneTask(MetricsTask):
    def __init__(self, lr=0.02):
        super().__init__(lr=lr)
        self.best_loss = float("inf")

    def validation_epoch_end(self, outputs):
        loss = torch.stack([o["loss"] for o in outputs]).mean()
        self.best_loss = min(self.best_loss, float(loss))
        self.log("best_val_loss", self.best_loss)
        super().validation_epoch_end(outputs)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return DataLoader(TensorDataset(x, (x.sum(dim=1) > 0).long()), batch_size=4)


def lightmigrate_case():
    return {
        "model": FineTuneTask(),
        "train_dataloaders": _loader(12, 80),
        "val_dataloaders": _loader(8, 81),
        "trainer": {"max_epochs": 2},
    }
