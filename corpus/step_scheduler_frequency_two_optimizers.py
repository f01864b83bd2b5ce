"""Two optimizers with step-interval LR schedulers of frequency 2 and 3.

Exercises (issue 26, ledger fact B5.18, spec B.5): 1.9 stepped an `interval="step"` scheduler
only on batches where `(batch_idx + 1) % frequency == 0`, after both optimizers had stepped.
Optimizer 0's StepLR has frequency 2, optimizer 1's frequency 3; each step halves the LR. The
module logs both learning rates on every batch, so a loop that ignored the frequency (or
stepped on the wrong batches) shows up in the logged LRs and the weights.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TwoSchedules(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(torch.tanh(self.body(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        opt = self.trainer.optimizers[optimizer_idx]
        self.log(f"lr_{optimizer_idx}", opt.param_groups[0]["lr"])
        return loss

    def configure_optimizers(self):
        opt_a = torch.optim.SGD(self.body.parameters(), lr=0.1)
        opt_b = torch.optim.SGD(self.head.parameters(), lr=0.2)
        sched_a = torch.optim.lr_scheduler.StepLR(opt_a, step_size=1, gamma=0.5)
        sched_b = torch.optim.lr_scheduler.StepLR(opt_b, step_size=1, gamma=0.5)
        return [opt_a, opt_b], [
            {"scheduler": sched_a, "interval": "step", "frequency": 2},
            {"scheduler": sched_b, "interval": "step", "frequency": 3},
        ]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] + x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": TwoSchedules(),
        "train_dataloaders": _loader(20, 91),
        "trainer": {"max_epochs": 2},
    }
