"""Model set-up done in `configure_sharded_model` (spec M25, LM305).

1.9 called `configure_sharded_model` once per `fit`/`validate` before the optimizers were
configured; 2.1+ calls `configure_model` at the same point (the old name still works with a
deprecation). The module picks its activation there (the step fails if the hook never ran)
and counts the calls in a logged metric.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class LateLayers(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)
        self.act = None
        self.builds = 0

    def configure_sharded_model(self):
        self.builds += 1
        if self.act is None:
            self.act = torch.tanh

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.head(self.act(self.body(x))), y)
        self.log("loss", loss)
        self.log("builds", float(self.builds))
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.head(self.act(self.body(x))), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 4, generator=g), torch.randn(n, 1, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": LateLayers(),
        "train_dataloaders": _loader(8, 371),
        "val_dataloaders": _loader(8, 372),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "validate"],
    }
