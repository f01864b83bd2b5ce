"""Trainer properties whose shape changed in 2.0, read from inside the model (spec T-prop1, T-prop2,
T-prop7, LM102).

1.9 handed out `trainer.train_dataloader` as a CombinedLoader (users wrote `.loaders` to get their
own loader), `trainer.val_dataloaders` as a list even for one loader, and `trainer.precision` as
the string "32" (2.x: "32-true"). The model reads all three at run time and logs numbers derived from them, so a wrong
migration (indexing a bare DataLoader, comparing "32-true" with "32") changes the metrics.
"""
# SHIM-OUT-OF-SCOPE: 1.9 shapes of Trainer properties (.loaders, val_dataloaders list, precision str); LM102 rewrites them
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ShapeReader(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def on_train_epoch_start(self):
        loader = self.trainer.train_dataloader.loaders
        self.log("train_batch_size_seen", float(loader.batch_size))
        self.log("full_precision", float(self.trainer.precision == "32"))

    def on_validation_epoch_start(self):
        first = self.trainer.val_dataloaders[0]
        self.log("val_loaders", float(len(self.trainer.val_dataloaders)))
        self.log("val_batch_size_seen", float(first.batch_size))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.layer(x).squeeze(-1), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        # a 1.x hook 2.x removed (LM001 migrates it): the mean training loss the epoch saw
        self.log("epoch_mean_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.layer(x).squeeze(-1), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed, batch_size):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] + x[:, 3]), batch_size=batch_size)


def lightmigrate_case():
    return {
        "model": ShapeReader(),
        "train_dataloaders": _loader(12, 921, 4),
        "val_dataloaders": _loader(6, 922, 3),
        "trainer": {"max_epochs": 2},
    }
