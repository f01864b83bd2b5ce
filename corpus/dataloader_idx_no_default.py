"""Evaluation batch hooks and steps declaring `dataloader_idx` without a default, one loader.

Exercises (spec M20, C3): 1.9 passed `dataloader_idx=0` to `on_validation_batch_end` and the
callback's `on_test_batch_start` even with a single dataloader; 2.x passes nothing there, so
the migrated hooks need `dataloader_idx=0`. The hooks log and count with the index, so a wrong
value shows in the metrics.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class IndexCounter(pl.Callback):
    def __init__(self):
        self.seen = []

    def on_test_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx):
        self.seen.append(dataloader_idx)
        pl_module.log("cb_test_idx", float(dataloader_idx + 1))


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 1)
        self.val_batches = 0

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.layer(x), y))

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.val_batches += 1
        self.log("val_idx_plus_batch", float(dataloader_idx * 10 + batch_idx))

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", F.mse_loss(self.layer(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g), torch.randn(n, 1, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": Regressor(),
        "train_dataloaders": _loader(8, 301),
        "val_dataloaders": _loader(8, 302),
        "test_dataloaders": _loader(8, 303),
        "trainer": {"max_epochs": 2, "callbacks": [IndexCounter()]},
        "run": ["fit", "test"],
    }
