"""Trainer arguments known only at run time: `devices` and `strategy` from a settings helper that
returns None on a CPU machine.

Exercises (issue 25 kind 3, LM101, T7/T28): 1.9 read `devices=None` as the accelerator's device
count (one CPU process) and `strategy=None` as "choose one"; 2.x raises for both. The values are
not literals, so LM101 cannot drop them: it writes `devices or "auto"` / `strategy or "auto"`, 2.x's
spelling of the same defaults. A `training_epoch_end` (LM001) and the logged loss show training ran.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class RunSettings:
    """What a project's config object looks like: GPU settings that are None without a GPU."""

    def __init__(self, use_gpu=False, n_gpus=2):
        self.use_gpu = use_gpu and torch.cuda.is_available()
        self.n_gpus = n_gpus

    @property
    def devices(self):
        return self.n_gpus if self.use_gpu else None

    @property
    def strategy(self):
        return "ddp_spawn" if self.use_gpu and self.n_gpus > 1 else None


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x).squeeze(-1), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return DataLoader(TensorDataset(x, x.sum(-1)), batch_size=4)


def lightmigrate_case():
    settings = RunSettings(use_gpu=False)
    devices = settings.devices
    trainer_kwargs = {"devices": devices, "strategy": settings.strategy, "max_epochs": 2}
    return {
        "model": Regressor(),
        "train_dataloaders": _loader(12, 311),
        "trainer": trainer_kwargs,
    }
