"""`Trainer(track_grad_norm=2)` with two optimizers: only optimizer 0's steps log grad norms.

Exercises (issue 26, ledger fact B5.9, spec M17, B.5): 1.9 tracked the gradient norm only for
the optimizer with index 0 (`optimizer_idx == 0` in the optimizer loop), after its closure and
before its step: `grad_2.0_norm/<param>` and `grad_2.0_norm_total`, rounded to 4 digits. The
second optimizer's steps log none. LM005's loop and LM302's `on_before_optimizer_step` together
must do the same.
"""
# SHIM-OUT-OF-SCOPE: the shim does not emulate Trainer(track_grad_norm=...), removed from the 2.x Trainer; checked against real 1.9.5 only.
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TwoOptimizerNorms(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.body(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y) * (1.0 + optimizer_idx)
        self.log(f"loss_{optimizer_idx}", loss)
        return loss

    def configure_optimizers(self):
        return [torch.optim.SGD(self.body.parameters(), lr=0.05), torch.optim.SGD(self.head.parameters(), lr=0.1)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 1] - x[:, 3]), batch_size=4)


def lightmigrate_case():
    return {
        "model": TwoOptimizerNorms(),
        "train_dataloaders": _loader(12, 44),
        "trainer": {"max_epochs": 2, "track_grad_norm": 2},
    }
