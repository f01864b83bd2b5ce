"""`training_epoch_end` summarising the epoch with the validation loss of the same epoch.

Exercises (spec M1, M2, B.2): 1.x ran the end-of-epoch validation (its `validation_epoch_end`
included) before `training_epoch_end`, so a training epoch-end body that reads what
`validation_epoch_end` stored sees this epoch's validation, not the previous one's (nor the
sanity check's). The body logs the generalisation gap and keeps a per-epoch summary in a
registered buffer. The Trainer keeps 1.x's default `log_every_n_steps=50` (more than the run's
steps): `self.log` in an epoch-end body defaults to on_step=False, on_epoch=True (B.9), so the
gap reaches the logger at every epoch end, where no step metric would.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl

EPOCHS = 3


class EpochSummary(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
        self.last_val_loss = None
        self.register_buffer("summary", torch.zeros(EPOCHS, 2))

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def training_epoch_end(self, outputs):
        train_loss = torch.stack([out["loss"] for out in outputs]).mean()
        self.summary[self.current_epoch, 0] = train_loss
        self.summary[self.current_epoch, 1] = self.last_val_loss
        self.log("generalisation_gap", self.last_val_loss - train_loss)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_epoch_end(self, outputs):
        self.last_val_loss = torch.stack(outputs).mean()
        self.log("val_loss", self.last_val_loss)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] + x[:, 1] * x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": EpochSummary(),
        "train_dataloaders": _loader(12, 540),
        "val_dataloaders": _loader(8, 541),
        "trainer": {"max_epochs": EPOCHS, "log_every_n_steps": 50},
    }
