"""LBFGS as the only optimizer, with training_epoch_end and validation_epoch_end.

Exercises (spec M1, M2, B.8): LBFGS evaluates Lightning's closure several times per batch, so
`training_step` runs several times per batch, but `global_step` moves once per batch and the
element of `outputs` for a batch holds the LAST evaluation's loss. No rewrite is needed for
LBFGS itself; the epoch-end hooks are the migrated part. The step counts its own calls so the
number of closure evaluations is visible.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class LbfgsModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.step_calls = 0

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        self.step_calls += 1
        x, y = batch
        loss = F.mse_loss(self(x), y)
        return {"loss": loss, "call": self.step_calls}

    def training_epoch_end(self, outputs):
        self.log("train_last_eval_loss", torch.stack([o["loss"] for o in outputs]).mean())
        self.log("train_closure_calls", float(outputs[-1]["call"]))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_epoch_end(self, outputs):
        self.log("val_mse", torch.stack(outputs).mean())

    def configure_optimizers(self):
        return torch.optim.LBFGS(self.parameters(), lr=0.5, max_iter=4)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x @ torch.tensor([0.5, -1.5, 2.0]) + 0.3), batch_size=4)


def lightmigrate_case():
    return {
        "model": LbfgsModel(),
        "train_dataloaders": _loader(12, 350),
        "val_dataloaders": _loader(8, 351),
        "trainer": {"max_epochs": 2},
    }
