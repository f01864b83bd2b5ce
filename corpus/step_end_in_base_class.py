"""training_step_end defined in a base class; the subclass adds training_epoch_end.

Exercises (spec M4, B.3): `BaseRegressor.training_step_end` adds an L2 penalty to the loss
(so it changes what is backpropagated) and is inherited by `PenalizedRegressor`, which defines
`training_epoch_end` and overrides `training_step`. The step_end rewrite has to follow the
hierarchy: the subclass's own step must still go through the base class's step_end.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class BaseRegressor(pl.LightningModule):
    def __init__(self, l2=0.1):
        super().__init__()
        self.l2 = l2
        self.lin = nn.Linear(5, 1)

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def training_step_end(self, loss):
        penalty = self.l2 * self.lin.weight.pow(2).sum()
        return {"loss": loss + penalty, "penalty": penalty.detach()}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class PenalizedRegressor(BaseRegressor):
    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.smooth_l1_loss(self(x), y)
        self.log("raw_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("penalty_mean", torch.stack([o["penalty"] for o in outputs]).mean())
        self.log("loss_with_penalty", torch.stack([o["loss"] for o in outputs]).mean())


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return DataLoader(TensorDataset(x, 3 * x[:, 0] - x[:, 3]), batch_size=4)


def lightmigrate_case():
    return {
        "model": PenalizedRegressor(),
        "train_dataloaders": _loader(12, 430),
        "trainer": {"max_epochs": 2},
    }
