"""test_epoch_end that forwards to validation_epoch_end, run by trainer.test after fit.

Exercises (spec M2, M3, B.1): the classic 1.x idiom `test_step` -> `self.validation_step(...)`
and `test_epoch_end(outputs)` -> `self.validation_epoch_end(outputs)`. The shared body logs
with a prefix chosen from the running stage and stores a summary on `self`, so both the fit
(validation) and test invocations are observable. The return value of `trainer.test` carries
the epoch-end metrics.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class AutoEncoder(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 3)
        self.decoder = nn.Linear(3, 8)
        self.summaries = {}

    def forward(self, x):
        return self.decoder(torch.tanh(self.encoder(x)))

    def training_step(self, batch, batch_idx):
        (x,) = batch
        loss = F.mse_loss(self(x), x)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        (x,) = batch
        recon = self(x)
        return {"loss": F.mse_loss(recon, x), "per_sample": ((recon - x) ** 2).mean(dim=1)}

    def test_step(self, batch, batch_idx):
        return self.validation_step(batch, batch_idx)

    def validation_epoch_end(self, outputs):
        prefix = "test" if self.trainer.testing else "val"
        avg = torch.stack([o["loss"] for o in outputs]).mean()
        worst = torch.cat([o["per_sample"] for o in outputs]).max()
        self.log(f"{prefix}_loss", avg)
        self.log(f"{prefix}_worst", worst)
        self.summaries[prefix] = float(avg)

    def test_epoch_end(self, outputs):
        self.validation_epoch_end(outputs)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 8, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": AutoEncoder(),
        "train_dataloaders": _loader(16, 20),
        "val_dataloaders": _loader(8, 21),
        "test_dataloaders": _loader(12, 22),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
