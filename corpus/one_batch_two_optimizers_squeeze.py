"""The one-batch squeeze quirk with two optimizers, and a validation loop.

Exercises (spec B.1 nesting edge case): with exactly one training batch per
epoch, 1.9 squeezed the batch dimension away, so `training_epoch_end` received a FLAT
`[d_opt0, d_opt1]` instead of `[[d_opt0, d_opt1]]`; `validation_epoch_end` with one loader and
one batch gets a one-element list.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class OneBatch(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 1)
        self.b = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        layer = self.a if optimizer_idx == 0 else self.b
        return {"loss": F.mse_loss(layer(x).squeeze(-1), y), "idx": optimizer_idx}

    def training_epoch_end(self, outputs):
        flat = all(isinstance(o, dict) for o in outputs)
        self.log("flat", float(flat))
        self.log("n_items", float(len(outputs)))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.a(x).squeeze(-1), y)

    def validation_epoch_end(self, outputs):
        self.log("val_items", float(len(outputs)))
        self.log("val_loss", torch.stack(outputs).mean())

    def configure_optimizers(self):
        return [torch.optim.SGD(self.a.parameters(), lr=0.1), torch.optim.SGD(self.b.parameters(), lr=0.1)]


def lightmigrate_case():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 2, generator=g)
    loader = DataLoader(TensorDataset(x, x[:, 0]), batch_size=4)
    return {
        "model": OneBatch(),
        "train_dataloaders": loader,
        "val_dataloaders": DataLoader(TensorDataset(x, x[:, 0]), batch_size=4),
        "trainer": {"max_epochs": 2},
    }
