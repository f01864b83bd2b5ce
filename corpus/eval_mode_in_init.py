"""A LightningModule that puts a sub-module in eval mode in `__init__` (a "frozen" backbone).

Exercises (spec A.7 B-9): 1.9 called `model.train()` when `fit` started (after the sanity check)
and again after every validation, so the backbone's BatchNorm trained with batch statistics and
updated its running stats anyway; Lightning 2.2+ keeps the eval mode set in `__init__` (and
restores it after validation), so the same code trains with the running statistics. The loss,
the weights and the BatchNorm buffers differ; the mode is also logged from the step. The
migration adds an `on_fit_start` that calls `self.train()` (LM308).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class FrozenBackboneRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())
        self.head = nn.Linear(8, 1)
        # the backbone is "pretrained": keep it out of training
        self.backbone.eval()
        for p in self.backbone.parameters():
            p.requires_grad = False

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        self.log("backbone_training", float(self.backbone.training))
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.head.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g) * 3 + 1
    return DataLoader(TensorDataset(x, x[:, :1] - x[:, 1:2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": FrozenBackboneRegressor(),
        "train_dataloaders": _loader(12, 430),
        "val_dataloaders": _loader(8, 431),
        "trainer": {"max_epochs": 2},
    }
