"""`self.log_dict` in every epoch-end hook, with prog_bar and logger flags.

Exercises (spec M1, M2, M3, B.9): the epoch-end bodies build a dict of reductions from
`outputs` and log it with `self.log_dict(..., prog_bar=True)`; the test body also logs with
`logger=False` (only in callback_metrics and in the value `trainer.test` returns). Epoch-end
logging defaults (on_epoch=True) are the same in 1.x and 2.x.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class DictLogger(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 2)
        self.dec = nn.Linear(2, 4)

    def forward(self, x):
        return self.dec(torch.sigmoid(self.enc(x)))

    def training_step(self, batch, batch_idx):
        (x,) = batch
        recon = self(x)
        loss = F.mse_loss(recon, x)
        return {"loss": loss, "l1": F.l1_loss(recon, x).detach()}

    def training_epoch_end(self, outputs):
        self.log_dict(
            {
                "epoch/train_mse": torch.stack([o["loss"] for o in outputs]).mean(),
                "epoch/train_l1": torch.stack([o["l1"] for o in outputs]).mean(),
            },
            prog_bar=True,
        )

    def validation_step(self, batch, batch_idx):
        (x,) = batch
        recon = self(x)
        return {"mse": F.mse_loss(recon, x), "l1": F.l1_loss(recon, x)}

    def validation_epoch_end(self, outputs):
        metrics = {f"epoch/val_{k}": torch.stack([o[k] for o in outputs]).mean() for k in ("mse", "l1")}
        self.log_dict(metrics)

    def test_step(self, batch, batch_idx):
        return self.validation_step(batch, batch_idx)

    def test_epoch_end(self, outputs):
        self.log_dict({"test_mse": torch.stack([o["mse"] for o in outputs]).mean()})
        self.log_dict({"test_l1_hidden": torch.stack([o["l1"] for o in outputs]).mean()}, logger=False)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.02)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 4, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": DictLogger(),
        "train_dataloaders": _loader(12, 290),
        "val_dataloaders": _loader(8, 291),
        "test_dataloaders": _loader(8, 292),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
