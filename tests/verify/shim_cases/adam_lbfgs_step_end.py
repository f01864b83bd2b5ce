"""Adam + LBFGS pair, with a `training_step_end` that changes the loss.

Exercises (spec M4, B.3, B.5, B.8) under the v1 shim: LBFGS evaluates the closure several
times per batch, so `training_step` and `training_step_end` run once per evaluation (counted),
the loss LBFGS minimises is the one `training_step_end` returned, `on_before_optimizer_step`
runs after every evaluation, the outputs keep the LAST evaluation's loss, and `global_step`
counts one step per optimizer per batch.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class AdamThenLBFGS(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.out = nn.Linear(3, 1)
        self.step_calls = [0, 0]
        self.end_calls = [0, 0]
        self.before_step = [0, 0]

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        self.step_calls[optimizer_idx] += 1
        pred = self.out(torch.tanh(self.body(x))).squeeze(-1)
        return {"loss": F.mse_loss(pred, y), "idx": optimizer_idx, "reg": self.out.weight.pow(2).sum()}

    def training_step_end(self, out):
        self.end_calls[out["idx"]] += 1
        return {"loss": out["loss"] + 0.01 * out["reg"], "idx": out["idx"]}

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        self.before_step[optimizer_idx] += 1

    def training_epoch_end(self, outputs):
        self.log("lbfgs_loss", torch.stack([per[1]["loss"] for per in outputs]).mean())
        self.log("adam_loss", torch.stack([per[0]["loss"] for per in outputs]).mean())
        for i in range(2):
            self.log(f"step_calls_{i}", float(self.step_calls[i]))
            self.log(f"end_calls_{i}", float(self.end_calls[i]))
            self.log(f"before_step_{i}", float(self.before_step[i]))

    def configure_optimizers(self):
        return [torch.optim.Adam(self.body.parameters(), lr=0.01),
                torch.optim.LBFGS(self.out.parameters(), lr=0.5, max_iter=4)]


def lightmigrate_case():
    g = torch.Generator().manual_seed(8)
    x = torch.randn(12, 3, generator=g)
    return {
        "model": AdamThenLBFGS(),
        "train_dataloaders": DataLoader(TensorDataset(x, x[:, 0] - 2 * x[:, 2]), batch_size=4),
        "trainer": {"max_epochs": 2},
    }
