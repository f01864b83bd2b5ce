"""`Trainer(track_grad_norm=2)` with gradient clipping, accumulation and an existing hook.

Exercises (spec M17, T10, T13): 1.9 logged `grad_2.0_norm/<param>` and `grad_2.0_norm_total`
rounded to 4 digits, on_step and on_epoch, only on batches where the optimizer steps (every
second batch here), after `on_before_optimizer_step` and before clipping (the norms are of the
unclipped gradients). The module's own `on_before_optimizer_step` (1.9 signature) logs too.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ClippedNet(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(5, 4)
        self.out = nn.Linear(4, 1)
        self.frozen = nn.Linear(1, 1)  # never used: no gradient, not in the norms
        self.steps_seen = 0

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y) * 10
        self.log("train_loss", loss)
        return loss

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        self.steps_seen += 1
        self.log("weight_abs_sum", self.out.weight.abs().sum())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 5, generator=g), torch.randn(n, 1, generator=g) * 3), batch_size=4)


def lightmigrate_case():
    return {
        "model": ClippedNet(),
        "train_dataloaders": _loader(20, 321),
        "trainer": {"max_epochs": 2, "track_grad_norm": 2, "gradient_clip_val": 0.5, "accumulate_grad_batches": 2},
    }
