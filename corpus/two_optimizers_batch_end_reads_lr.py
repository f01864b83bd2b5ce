"""Two optimizers whose schedulers step on the last batch before `on_train_batch_end` reads the LR.

Exercises (spec M7, B.2 "last batch", B.5): on an epoch's last batch 1.x stepped the
optimizers, then the step-interval and epoch-interval (non-plateau) schedulers, and only then
called `on_train_batch_end`: a batch-end hook that logs the learning rates sees, on the last
batch, the epoch scheduler already stepped. Optimizer 0 has an epoch-interval `StepLR`,
optimizer 1 a step-interval `ExponentialLR`; `training_epoch_end` logs the epoch's mean losses
from the `[batch][optimizer]` outputs.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class LrWatchingPair(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log(f"loss_{optimizer_idx}", loss)
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.log("lr_encoder", self.trainer.optimizers[0].param_groups[0]["lr"])
        self.log("lr_head", self.trainer.optimizers[1].param_groups[0]["lr"])

    def training_epoch_end(self, outputs):
        self.log("epoch_loss_0", torch.stack([per_batch[0]["loss"] for per_batch in outputs]).mean())
        self.log("epoch_loss_1", torch.stack([per_batch[1]["loss"] for per_batch in outputs]).mean())

    def configure_optimizers(self):
        opt_e = torch.optim.SGD(self.encoder.parameters(), lr=0.1)
        opt_h = torch.optim.SGD(self.head.parameters(), lr=0.1)
        epoch_sched = torch.optim.lr_scheduler.StepLR(opt_e, step_size=1, gamma=0.5)
        step_sched = {"scheduler": torch.optim.lr_scheduler.ExponentialLR(opt_h, gamma=0.9), "interval": "step"}
        return [opt_e, opt_h], [epoch_sched, step_sched]


def lightmigrate_case():
    g = torch.Generator().manual_seed(490)
    x = torch.randn(12, 3, generator=g)
    return {
        "model": LrWatchingPair(),
        "train_dataloaders": DataLoader(TensorDataset(x, x[:, 0] * x[:, 1]), batch_size=4),
        "trainer": {"max_epochs": 3},
    }
