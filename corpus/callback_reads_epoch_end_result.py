"""A user Callback that reads, in its own epoch-end hooks, what the module's epoch-end computed.

Exercises (spec B.2): 1.9 ran `validation_epoch_end` before every callback's
`on_validation_epoch_end`, and `training_epoch_end` before every callback's `on_train_epoch_end`;
2.x runs the callbacks' hooks (all but EarlyStopping/ModelCheckpoint) before the module's
`on_*_epoch_end`, where LM001 puts the old bodies. The callback logs the value the module just
computed; migrated as a plain move it would log the previous epoch's (and fail in the first
epoch). LM001 turns each old body into a run-once method that the callback calls first
(issue 21 kind 6).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback


class EpochSummaryLogger(Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            pl_module.log("cb_val_mean", pl_module.val_mean)

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.log("cb_train_mean", pl_module.train_mean)


class EpochSummaryRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def training_epoch_end(self, outputs):
        self.train_mean = torch.stack([o["loss"] for o in outputs]).mean()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": EpochSummaryRegressor(),
        "train_dataloaders": _loader(12, 490),
        "val_dataloaders": _loader(8, 491),
        "trainer": {"max_epochs": 2, "callbacks": [EpochSummaryLogger()]},
    }
