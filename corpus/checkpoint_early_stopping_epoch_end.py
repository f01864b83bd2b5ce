"""ModelCheckpoint and EarlyStopping monitoring metrics that the epoch-end hooks log.

Exercises (spec B.2): 1.9 ran `validation_epoch_end` before ModelCheckpoint and EarlyStopping
checked `val_loss`, and `training_epoch_end` before they checked `train_mean` at the end of the
training epoch, so both saw the values of the epoch that just ended. The model learns the
training targets (`2 * x.sum()`) while the validation targets are `x.sum()`: the validation
loss falls, then rises, so the best epoch lies inside the run and EarlyStopping (patience 2)
stops it early. The best score, the epochs and steps of the best, kept and saved checkpoints and
the stopped epoch all depend on when and what the epoch-end hooks log. A user callback reads
the `outputs` of every training batch. LM001 moves both bodies into `on_*_epoch_end` with
output buffers; 2.x still runs the two callbacks after the module's hooks.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback, EarlyStopping, ModelCheckpoint


class BatchLossSum(Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        pl_module.seen[0] += outputs["loss"].detach()
        pl_module.seen[1] += 1


class DriftingRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.register_buffer("seen", torch.zeros(2))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def training_epoch_end(self, outputs):
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_epoch_end(self, outputs):
        self.log("val_loss", torch.stack(outputs).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed, scale):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, scale * x.sum(1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": DriftingRegressor(),
        "train_dataloaders": _loader(16, 500, 2.0),
        "val_dataloaders": _loader(8, 501, 1.0),
        "trainer": {
            "max_epochs": 10,
            "enable_checkpointing": True,
            "callbacks": [
                BatchLossSum(),
                ModelCheckpoint(monitor="val_loss", mode="min", save_top_k=2),
                ModelCheckpoint(monitor="train_mean", mode="min", save_top_k=1),
                EarlyStopping(monitor="val_loss", mode="min", patience=2),
            ],
        },
    }
