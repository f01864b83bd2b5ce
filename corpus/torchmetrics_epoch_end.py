"""torchmetrics objects updated in the steps and computed/reset in the epoch-end hooks.

Exercises (spec M1, M2): `torchmetrics.Accuracy(task="multiclass")` and
`torchmetrics.MeanSquaredError` are module attributes, updated in `training_step` /
`validation_step`, computed and reset in `training_epoch_end` / `validation_epoch_end`, which
also read `outputs`. The sanity check updates the validation metric too; the reset in the hook
keeps that from leaking. (Same torchmetrics version in both environments.)
"""
import torch
import torch.nn.functional as F
import torchmetrics
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class MetricModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)
        self.train_acc = torchmetrics.Accuracy(task="multiclass", num_classes=3)
        self.val_acc = torchmetrics.Accuracy(task="multiclass", num_classes=3)
        self.val_prob_mse = torchmetrics.MeanSquaredError()

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.train_acc.update(logits.argmax(-1), y)
        return F.cross_entropy(logits, y)

    def training_epoch_end(self, outputs):
        self.log("train_acc", self.train_acc.compute())
        self.log("train_loss", torch.stack([o["loss"] for o in outputs]).mean())
        self.train_acc.reset()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        probs = self(x).softmax(-1)
        self.val_acc.update(probs.argmax(-1), y)
        self.val_prob_mse.update(probs, F.one_hot(y, 3).float())
        return probs.max(-1).values

    def validation_epoch_end(self, outputs):
        self.log("val_acc", self.val_acc.compute())
        self.log("val_brier", self.val_prob_mse.compute())
        self.log("val_confidence", torch.cat(outputs).mean())
        self.val_acc.reset()
        self.val_prob_mse.reset()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, torch.bucketize(x[:, 0], torch.tensor([-0.4, 0.4]))), batch_size=4)


def lightmigrate_case():
    return {
        "model": MetricModel(),
        "train_dataloaders": _loader(16, 340),
        "val_dataloaders": _loader(8, 341),
        "trainer": {"max_epochs": 2},
    }
