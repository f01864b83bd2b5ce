"""ModelCheckpoint and EarlyStopping monitoring a metric the module logs in `on_train_epoch_end`.

Exercises (spec B.2, issue 26, ledger fact B2.6): 1.9 ran every callback's `on_train_epoch_end`,
ModelCheckpoint's and EarlyStopping's included, before the module's, so without a validation
loop they checked the score the module logged at the end of the previous epoch (nothing at the
first epoch: EarlyStopping needs `strict=False`); 2.x runs them after the module's hook and
they see the score of the epoch just ended. The score falls, then rises: the best checkpoint,
its epoch and step, and the stopped epoch differ. The module also has a `training_epoch_end`
(migrated by LM001) whose metric no callback monitors: it stays in `on_train_epoch_end` (1.9's
callbacks saw it the same epoch, B2.5), while LM001 moves the 1.x `on_train_epoch_end` body into
a method that a Checkpoint callback from `configure_callbacks` runs after the monitors (B2.6).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint


class ScoredRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.epoch_losses = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.epoch_losses.append(loss.detach())
        return loss

    def training_epoch_end(self, outputs):
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())

    def on_train_epoch_end(self):
        # a penalty for epochs 2 and 3 makes the score rise there
        penalty = 0.5 * self.current_epoch if self.current_epoch in (2, 3) else 0.0
        self.log("train_score", torch.stack(self.epoch_losses).mean() + penalty)
        self.epoch_losses = []

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": ScoredRegressor(),
        "train_dataloaders": _loader(12, 650),
        "trainer": {
            "max_epochs": 6,
            "enable_checkpointing": True,
            "callbacks": [ModelCheckpoint(monitor="train_score", save_top_k=1),
                          EarlyStopping(monitor="train_score", patience=1, strict=False)],
        },
    }
