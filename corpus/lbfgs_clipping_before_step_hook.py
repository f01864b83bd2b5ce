"""LBFGS with gradient clipping and an on_before_optimizer_step hook.

Exercises (issue 26, ledger fact B8.2, spec B.8): LBFGS evaluates the closure several times per
batch; 1.9 ran `on_before_optimizer_step` and the Trainer's clipping (`gradient_clip_val`) after
every evaluation, inside the closure, not once per batch. The hook counts its calls in a buffer
and logs the gradient norm it sees (before clipping); clipping changes what LBFGS steps with, so
the final weights show where it ran. Nothing is rewritten for it: 2.x does the same.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ClippedLbfgs(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.register_buffer("hook_calls", torch.zeros(()))

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("loss", loss)
        return loss

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        self.hook_calls += 1
        norm = torch.norm(torch.stack([p.grad.norm() for p in self.parameters() if p.grad is not None]))
        self.log("grad_norm_before_clip", norm)

    def configure_optimizers(self):
        return torch.optim.LBFGS(self.parameters(), lr=0.5, max_iter=4)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x @ torch.tensor([0.5, -1.5, 2.0]) + 0.3), batch_size=4)


def lightmigrate_case():
    return {
        "model": ClippedLbfgs(),
        "train_dataloaders": _loader(12, 352),
        "trainer": {"max_epochs": 2, "gradient_clip_val": 0.3},
    }
