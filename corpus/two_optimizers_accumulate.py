"""Accumulation with several optimizers, plus clipping and step/epoch schedulers.

Exercises (spec M7, B.5, B.6): `Trainer(accumulate_grad_batches=2, gradient_clip_val=0.5)`
with two optimizers in automatic mode. Per batch both optimizers run (toggled); `zero_grad`
happens once per accumulation window, after the forward pass; losses are divided by 2 before
backward; clipping and the real step happen on window ends and on the partial last window
(5 batches: windows (0, 1), (2, 3), (4)). Optimizer 0 has a `StepLR` (`interval="step"`:
stepped once per window), optimizer 1 an `ExponentialLR` per epoch. `training_epoch_end`
reads the `[batch][optimizer]` outputs (losses divided by 2) and keeps a history in a
registered buffer, which the weights comparison covers.

Nothing is sent to the logger during fit: with accumulation, 1.9 sent step metrics only on
the batches that stepped, under a step counting accumulation windows, while 2.x manual
optimization logs every batch under a step counting batches (LM005 reports this as a note;
see `pending/two_optimizers_schedulers_clip_accumulate.py`).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl

EPOCHS = 3


class TwoPartRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)
        # per epoch: mean loss of each optimizer, both learning rates, number of batches
        self.register_buffer("history", torch.zeros(EPOCHS, 5))

    def forward(self, x):
        return self.head(torch.tanh(self.features(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        if optimizer_idx == 1:
            loss = loss + 0.05 * self.head.weight.pow(2).sum()
        return {"loss": loss, "batch": batch_idx}

    def training_epoch_end(self, outputs):
        row = self.history[self.current_epoch]
        row[0] = torch.stack([per_batch[0]["loss"] for per_batch in outputs]).mean()
        row[1] = torch.stack([per_batch[1]["loss"] for per_batch in outputs]).mean()
        row[2] = self.trainer.optimizers[0].param_groups[0]["lr"]
        row[3] = self.trainer.optimizers[1].param_groups[0]["lr"]
        row[4] = len(outputs)

    def configure_optimizers(self):
        opt_f = torch.optim.SGD(self.features.parameters(), lr=0.3)
        opt_h = torch.optim.SGD(self.head.parameters(), lr=0.3, momentum=0.5)
        step_sched = {"scheduler": torch.optim.lr_scheduler.StepLR(opt_f, step_size=1, gamma=0.8), "interval": "step"}
        epoch_sched = torch.optim.lr_scheduler.ExponentialLR(opt_h, gamma=0.5)
        return [opt_f, opt_h], [step_sched, epoch_sched]


def lightmigrate_case():
    g = torch.Generator().manual_seed(460)
    x = torch.randn(20, 4, generator=g)
    return {
        "model": TwoPartRegressor(),
        "train_dataloaders": DataLoader(TensorDataset(x, 5 * x[:, 0] - 3 * x[:, 1]), batch_size=4),
        "trainer": {"max_epochs": EPOCHS, "gradient_clip_val": 0.5, "accumulate_grad_batches": 2},
    }
