"""LBFGS with a training_step_end that only counts and logs (issue 26, ledger fact B3.2).

Exercises (spec M4, B.3, B.8): 1.9 ran `training_step_end` inside the optimizer closure, and LBFGS
evaluates the closure up to `max_eval` times per batch, so the hook ran once per evaluation (16
times for 4 batches here), not once per batch. The hook only counts its calls (a registered
buffer, so the final state shows it) and logs an extra key of the step's dict: without LBFGS
LM003 would move such a hook to `on_train_batch_end`, which runs once per batch.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class CountingLbfgsModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.register_buffer("step_end_calls", torch.zeros(()))

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        pred = self(x)
        loss = F.mse_loss(pred, y)
        return {"loss": loss, "err": (pred - y).abs().mean().detach()}

    def training_step_end(self, out):
        self.step_end_calls += 1
        self.log("step_end_calls", self.step_end_calls.clone())
        self.log("abs_err", out["err"])

    def configure_optimizers(self):
        return torch.optim.LBFGS(self.parameters(), lr=0.5, max_iter=4)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x @ torch.tensor([0.5, -1.5, 2.0]) + 0.3), batch_size=4)


def lightmigrate_case():
    return {
        "model": CountingLbfgsModel(),
        "train_dataloaders": _loader(16, 360),
        "trainer": {"max_epochs": 2},
    }
