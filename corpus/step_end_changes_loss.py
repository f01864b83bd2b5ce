"""training_step_end that changes the loss that gets backpropagated.

Exercises (spec M4, B.3): in 1.x `training_step_end` runs inside the optimizer closure, right
after `training_step`, and its return value IS the loss used for backward - here the step
returns per-sample losses and the step_end reduces them with a weight. 2.x never calls
`training_step_end`, so an unmigrated file silently trains on a different loss (or fails on a
non-scalar loss). `training_epoch_end` receives the step_end results.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class WeightedLossModel(pl.LightningModule):
    def __init__(self, weight=0.5):
        super().__init__()
        self.weight = weight
        self.lin = nn.Linear(4, 1)

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return {"per_sample": (self(x) - y) ** 2, "y": y}

    def training_step_end(self, step_output):
        per_sample = step_output["per_sample"]
        loss = self.weight * per_sample.mean() + (1 - self.weight) * per_sample.max()
        self.log("train_weighted_loss", loss)
        return {"loss": loss, "spread": per_sample.std().detach()}

    def training_epoch_end(self, outputs):
        self.log("train_spread", torch.stack([o["spread"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] + x[:, 1] * x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": WeightedLossModel(),
        "train_dataloaders": _loader(12, 400),
        "trainer": {"max_epochs": 2},
    }
