"""One training batch per epoch, one optimizer, no TBPTT: the squeeze re-wraps the only element.

Exercises (spec M1, B.1 "Squeeze edge case"; issue 26, ledger fact B1.16): 1.9 squeezed every
dimension of size 1 of the training outputs, so an epoch of exactly one batch with one optimizer
would have collapsed to the bare dict; 1.9 re-wrapped it, and `training_epoch_end` received `[d]`.
The body indexes `outputs[0]["loss"]` and logs `len(outputs)`, so a bare dict or an extra nesting
level shows (a KeyError or a different count).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class OneBatchModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.lin(x).squeeze(-1), y)
        return {"loss": loss, "n": torch.tensor(float(len(x)))}

    def training_epoch_end(self, outputs):
        self.log("n_outputs", float(len(outputs)))
        self.log("first_loss", outputs[0]["loss"])
        self.log("first_n", outputs[0]["n"])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def lightmigrate_case():
    g = torch.Generator().manual_seed(380)
    x = torch.randn(6, 3, generator=g)
    loader = DataLoader(TensorDataset(x, x @ torch.tensor([0.5, -1.5, 2.0])), batch_size=6)
    return {"model": OneBatchModel(), "train_dataloaders": loader, "trainer": {"max_epochs": 3}}
