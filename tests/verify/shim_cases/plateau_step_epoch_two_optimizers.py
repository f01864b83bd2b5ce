"""Two optimizers with a step-interval, an epoch-interval and a ReduceLROnPlateau scheduler,
and an old-signature `lr_scheduler_step(scheduler, optimizer_idx, metric)` override.

Exercises (spec M7, M12, B.5) under the v1 shim: step schedulers after every batch's two
optimizer steps, the epoch scheduler after the last batch (before validation), the plateau
scheduler after `on_train_epoch_end` on a validation metric, the optimizer index and metric
handed to `lr_scheduler_step`, and the learning rates seen by later steps.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ScheduledPair(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 3)
        self.head = nn.Linear(3, 1)
        self.scheduler_calls = []

    def forward(self, x):
        return self.head(torch.tanh(self.enc(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y) * (1.0 if optimizer_idx == 0 else 0.5)
        self.log("train_loss", loss, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self(x), y))

    def lr_scheduler_step(self, scheduler, optimizer_idx, metric):
        self.scheduler_calls.append((type(scheduler).__name__, optimizer_idx, metric is not None))
        if metric is None:
            scheduler.step()
        else:
            scheduler.step(metric)

    def on_train_epoch_end(self):
        self.log("n_scheduler_calls", float(len(self.scheduler_calls)))
        self.log("lr_enc", self.trainer.optimizers[0].param_groups[0]["lr"])
        self.log("lr_head", self.trainer.optimizers[1].param_groups[0]["lr"])

    def configure_optimizers(self):
        opt_enc = torch.optim.SGD(self.enc.parameters(), lr=0.2)
        opt_head = torch.optim.Adam(self.head.parameters(), lr=0.05)
        step = torch.optim.lr_scheduler.StepLR(opt_enc, step_size=2, gamma=0.8)
        epoch = torch.optim.lr_scheduler.ExponentialLR(opt_head, gamma=0.7)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt_head, factor=0.5, patience=0)
        return [opt_enc, opt_head], [
            {"scheduler": step, "interval": "step"},
            epoch,
            {"scheduler": plateau, "monitor": "val_loss"},
        ]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1) ** 2 * 0.1), batch_size=4)


def lightmigrate_case():
    return {
        "model": ScheduledPair(),
        "train_dataloaders": _loader(12, 1),
        "val_dataloaders": _loader(8, 2),
        "trainer": {"max_epochs": 3},
    }
