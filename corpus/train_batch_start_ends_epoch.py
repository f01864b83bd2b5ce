"""on_train_batch_start returning -1 ends the epoch; that batch runs no step and leaves no outputs.

Exercises (issue 26, ledger fact L14, 1.9.5 loops/epoch/training_epoch_loop.py::advance):
`on_train_batch_start` returns -1 at batch 3 of every epoch, so each epoch trains on batches 0-2
only; the batch that returned -1 runs no training step and adds nothing to the outputs (the
module counts its steps in a buffer and logs the loss; `training_epoch_end` logs how many outputs
it got: 3). The end-of-epoch validation still runs. Nothing is rewritten for the -1 itself: 2.x
does the same; LM001 migrates `training_epoch_end`, keeping it for epochs that ran a batch (L1).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class EarlyEpochEnd(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.register_buffer("steps", torch.zeros(()))

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def on_train_batch_start(self, batch, batch_idx):
        if batch_idx == 3:
            return -1

    def training_step(self, batch, batch_idx):
        self.steps += 1
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("train_outputs", float(len(outputs)))
        self.log("train_mean_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x @ torch.tensor([1.0, -0.5, 0.25])), batch_size=4)


def lightmigrate_case():
    return {
        "model": EarlyEpochEnd(),
        "train_dataloaders": _loader(24, 360),
        "val_dataloaders": _loader(8, 361),
        "trainer": {"max_epochs": 2},
    }
