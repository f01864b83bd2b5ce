"""Callbacks whose own epoch-end hooks change what the module's epoch-end body reads, or read
what it computed through one of the module's methods.

Exercises (spec B.2, ledger B2.2 and B2.4): 1.9 ran `training_epoch_end` before every callback's
`on_train_epoch_end` and `validation_epoch_end` before every callback's
`on_validation_epoch_end`; 2.x runs the callbacks' hooks first, then the module's
`on_*_epoch_end`, where LM001 puts the old bodies. `NoiseAnnealing` halves the module's input
noise after each training epoch: 1.9's `training_epoch_end` logged the scale the epoch trained
with, a plain move would log the halved one. `ScoreReporter` logs `pl_module.score()`, a method
that reads what `validation_epoch_end` just stored: a plain move would report the previous
validation's score (and fail at the first). LM001 makes each body a run-once method the callback
calls first.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback


class NoiseAnnealing(Callback):
    def __init__(self, factor=0.5):
        self.factor = factor

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.noise_scale = pl_module.noise_scale * self.factor


class ScoreReporter(Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            pl_module.log("reported_score", pl_module.score())


class NoisyRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.noise_scale = 0.8

    def training_step(self, batch, batch_idx):
        x, noise, y = batch
        return F.mse_loss(self.net(x + self.noise_scale * noise), y)

    def training_epoch_end(self, outputs):
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())
        self.log("noise_scale", self.noise_scale)

    def validation_step(self, batch, batch_idx):
        x, _, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()

    def score(self):
        return 1.0 / (1.0 + self.val_mean)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    noise = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, noise, x.sum(1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": NoisyRegressor(),
        "train_dataloaders": _loader(12, 610),
        "val_dataloaders": _loader(8, 611),
        "trainer": {"max_epochs": 3, "callbacks": [NoiseAnnealing(), ScoreReporter()]},
    }
