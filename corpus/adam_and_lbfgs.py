"""Two optimizers, Adam for one part and LBFGS for the other, in automatic mode.

Exercises (spec M7, B.5, B.8): for optimizer 1 (LBFGS) 1.x passes the closure to
`LBFGS.step`, which evaluates `training_step(..., optimizer_idx=1)` several times per batch;
optimizer 0 (Adam) runs it once. `training_epoch_end` receives [batch][optimizer] dicts whose
LBFGS entry is the last evaluation's loss.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class AdamLbfgsModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.out = nn.Linear(3, 1)
        self.evaluations = [0, 0]

    def forward(self, x):
        return self.out(torch.sigmoid(self.body(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        self.evaluations[optimizer_idx] += 1
        x, y = batch
        return F.mse_loss(self(x), y)

    def training_epoch_end(self, outputs):
        self.log("adam_loss", torch.stack([b[0]["loss"] for b in outputs]).mean())
        self.log("lbfgs_loss", torch.stack([b[1]["loss"] for b in outputs]).mean())
        self.log("lbfgs_evaluations", float(self.evaluations[1]))

    def configure_optimizers(self):
        return [
            torch.optim.Adam(self.body.parameters(), lr=0.05),
            torch.optim.LBFGS(self.out.parameters(), lr=0.3, max_iter=3),
        ]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x[:, 1] - 0.5 * x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": AdamLbfgsModel(),
        "train_dataloaders": _loader(12, 480),
        "trainer": {"max_epochs": 2},
    }
