"""Epoch-end bodies that store results on the module, read later by a user callback.

Exercises (spec M1, M2, B.2): `training_epoch_end` stores the epoch's mean loss on `self`,
`validation_epoch_end` stores the validation error; a custom Callback reads both. It reads them
only at points where 1.x and 2.x agree on the order: `on_validation_end` (after the module's
validation epoch-end in both), `on_train_epoch_start` of the next epoch and `on_train_end`.
(Reading them in the callback's own `on_train_epoch_end` / `on_validation_epoch_end` depends on
the order, which 2.x changed, see spec B.2: `callback_reads_epoch_end_result.py` covers that.)
The callback writes what it saw into the module, so it ends up in the compared state and metrics.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class SummaryReader(pl.Callback):
    def on_validation_end(self, trainer, pl_module):
        pl_module.seen_by_callback.append(("val_end", trainer.current_epoch, pl_module.last_val_err))

    def on_train_epoch_start(self, trainer, pl_module):
        if pl_module.last_train_loss is not None:
            pl_module.seen_by_callback.append(("train_start", trainer.current_epoch, pl_module.last_train_loss))

    def on_train_end(self, trainer, pl_module):
        pl_module.final_summary.copy_(torch.tensor([pl_module.last_train_loss, pl_module.last_val_err]))


class ReportingModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.last_train_loss = None
        self.last_val_err = None
        self.seen_by_callback = []
        self.register_buffer("final_summary", torch.zeros(2))

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def training_epoch_end(self, outputs):
        self.last_train_loss = float(torch.stack([o["loss"] for o in outputs]).mean())
        self.log("train_epoch_loss", self.last_train_loss)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self(x) - y).abs().mean()

    def validation_epoch_end(self, outputs):
        self.last_val_err = float(torch.stack(outputs).mean())
        self.log("val_err", self.last_val_err)
        self.log("callback_reports", float(len(self.seen_by_callback)))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] * 3 - x[:, 1]), batch_size=4)


def lightmigrate_case():
    return {
        "model": ReportingModel(),
        "train_dataloaders": _loader(12, 300),
        "val_dataloaders": _loader(8, 301),
        "trainer": {"max_epochs": 3, "callbacks": [SummaryReader()]},
    }
