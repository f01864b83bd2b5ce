"""A validation run in the middle of a gradient-accumulation window.

Exercises (issue 26, ledger fact L6, read from 1.9.5's `EvaluationLoop.on_run_start`): every
evaluation run of 1.9 started with `module.zero_grad()`, so with `accumulate_grad_batches=2`
and `val_check_interval=3` the validation after the third batch discarded that batch's
gradients, and the step after the fourth used the fourth batch's alone. 2.x keeps the
accumulated gradients: LM101 adds a callback that zeroes them at each validation start. The
trained weights and the logged losses show it.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class WindowedRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - 0.5 * x[:, 1] + 0.25 * x[:, 3]), batch_size=4)


def lightmigrate_case():
    return {
        "model": WindowedRegressor(),
        "train_dataloaders": _loader(24, 640),
        "val_dataloaders": _loader(8, 641),
        "trainer": {"max_epochs": 2, "accumulate_grad_batches": 2, "val_check_interval": 3},
    }
