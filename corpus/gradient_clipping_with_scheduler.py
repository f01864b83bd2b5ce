"""Trainer gradient clipping with one optimizer and a step-interval LR scheduler.

Exercises (spec M1, B.5, B.10): `gradient_clip_val=0.05` (norm) with
`accumulate_grad_batches=2` and a `StepLR` scheduler stepped every optimizer step
(`interval="step"`) - one optimizer, automatic optimization, so 2.x needs no rewrite beyond
the epoch-end hook. `training_epoch_end` logs the learning rate it sees and the mean of the
(divided) losses; an extra key carries the pre-clip gradient norm-free batch statistic.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ClippedModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        return {"loss": loss, "target_scale": y.abs().mean()}

    def training_epoch_end(self, outputs):
        self.log("lr_at_epoch_end", self.trainer.optimizers[0].param_groups[0]["lr"])
        self.log("train_loss_divided", torch.stack([o["loss"] for o in outputs]).mean())
        self.log("target_scale", torch.stack([o["target_scale"] for o in outputs]).mean())

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.2)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return DataLoader(TensorDataset(x, 10 * x[:, 0] + x[:, 4] ** 2), batch_size=3)


def lightmigrate_case():
    return {
        "model": ClippedModel(),
        "train_dataloaders": _loader(15, 360),
        "trainer": {"max_epochs": 2, "gradient_clip_val": 0.05, "accumulate_grad_batches": 2},
    }
