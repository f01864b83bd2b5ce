"""A model whose attributes already use the names a migration would pick for its buffers.

Exercises (spec M1, M2, B.7): the class keeps `self.validation_step_outputs` (a dict of
per-class prediction counts) and `self.training_step_outputs` (a list of batch sizes) for its
own purposes, next to `training_epoch_end(outputs)` and `validation_epoch_end(outputs)` that
use their arguments. A migration that reuses those attribute names for its output buffers
changes what the hooks log.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class CollidingModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.clf = nn.Linear(4, 3)
        self.validation_step_outputs = {0: 0, 1: 0, 2: 0}
        self.training_step_outputs = []

    def forward(self, x):
        return self.clf(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        self.training_step_outputs.append(len(y))
        loss = F.cross_entropy(self(x), y)
        return loss

    def training_epoch_end(self, outputs):
        self.log("train_loss_epoch", torch.stack([o["loss"] for o in outputs]).mean())
        self.log("train_samples_so_far", float(sum(self.training_step_outputs)))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        preds = self(x).argmax(dim=1)
        for p in preds.tolist():
            self.validation_step_outputs[p] += 1
        return F.cross_entropy(self(x), y)

    def validation_epoch_end(self, outputs):
        self.log("val_loss", torch.stack(outputs).mean())
        self.log("val_class0_share", self.validation_step_outputs[0] / max(1, sum(self.validation_step_outputs.values())))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, torch.randint(0, 3, (n,), generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": CollidingModel(),
        "train_dataloaders": _loader(12, 90),
        "val_dataloaders": _loader(8, 91),
        "trainer": {"max_epochs": 2},
    }
