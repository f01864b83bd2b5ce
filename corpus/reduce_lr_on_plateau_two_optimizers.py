"""ReduceLROnPlateau on a validation metric, with two optimizers.

Exercises (spec M7, B.2, B.5): optimizer 0 has a ReduceLROnPlateau scheduler monitoring
`val_loss` (logged in `validation_epoch_end`), which 1.x steps after `on_train_epoch_end` with
`callback_metrics["val_loss"]`; optimizer 1 has none. With `patience=0` and a relative
`threshold=0.5`, the LR drops after every epoch whose validation loss improved by less than 50%.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class PlateauModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_epoch_end(self, outputs):
        self.log("val_loss", torch.stack(outputs).mean())

    def training_epoch_end(self, outputs):
        self.log("lr_a", self.trainer.optimizers[0].param_groups[0]["lr"])

    def configure_optimizers(self):
        opt_a = torch.optim.SGD(self.a.parameters(), lr=0.5)
        opt_b = torch.optim.SGD(self.b.parameters(), lr=0.1)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt_a, factor=0.5, patience=0, threshold=0.5)
        return [opt_a, opt_b], [{"scheduler": plateau, "monitor": "val_loss"}]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0].exp()), batch_size=4)


def lightmigrate_case():
    return {
        "model": PlateauModel(),
        "train_dataloaders": _loader(12, 470),
        "val_dataloaders": _loader(8, 471),
        "trainer": {"max_epochs": 4},
    }
