"""An epoch in which every training step returns None.

Exercises (spec M1, B.1): 1.x calls `training_epoch_end` even when every step of the epoch
returned None, with `[]`; in other epochs only the kept batches appear. Epoch 1 skips all
batches (a "frozen" epoch), epochs 0 and 2 skip none. The body must cope with the empty list,
and the optimizer does not step in the frozen epoch (`global_step` stays put).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class FreezeEpochModel(pl.LightningModule):
    def __init__(self, frozen_epochs=(1,)):
        super().__init__()
        self.frozen_epochs = frozen_epochs
        self.lin = nn.Linear(4, 1)
        self.outputs_per_epoch = []

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        if self.current_epoch in self.frozen_epochs:
            return None
        x, y = batch
        return F.mse_loss(self(x), y)

    def training_epoch_end(self, outputs):
        self.outputs_per_epoch.append(len(outputs))
        self.log("kept_batches", float(len(outputs)))
        if outputs:
            self.log("train_loss_epoch", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 1] - x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": FreezeEpochModel(),
        "train_dataloaders": _loader(12, 370),
        "trainer": {"max_epochs": 3},
    }
