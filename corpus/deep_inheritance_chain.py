"""Epoch-end hooks spread over four levels of LightningModule subclasses.

Exercises (spec M1, M2, M3): `Level0` defines the steps and `training_epoch_end`; `Level1`
overrides `training_epoch_end`, calling `super()` first; `Level2` adds `validation_epoch_end`
and a `test_epoch_end` that calls `self.validation_epoch_end(outputs)` (dispatch through the
leaf); `Level3` overrides `validation_epoch_end` again, calling `super()` last, and is the
class that runs. Every level logs its own metric, so a level that is skipped or called twice
shows up.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class Level0(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)
        self.trace = []

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return {"loss": F.cross_entropy(self(x), y), "size": len(y)}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"loss": F.cross_entropy(self(x), y), "size": len(y)}

    def test_step(self, batch, batch_idx):
        return self.validation_step(batch, batch_idx)

    def training_epoch_end(self, outputs):
        self.trace.append("level0")
        self.log("l0_train_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


class Level1(Level0):
    def training_epoch_end(self, outputs):
        super().training_epoch_end(outputs)
        self.trace.append("level1")
        self.log("l1_train_samples", float(sum(o["size"] for o in outputs)))


class Level2(Level1):
    def validation_epoch_end(self, outputs):
        self.trace.append("level2")
        self.log(f"l2_{self._stage()}_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def test_epoch_end(self, outputs):
        self.validation_epoch_end(outputs)

    def _stage(self):
        return "test" if self.trainer.testing else "val"


class Level3(Level2):
    def validation_epoch_end(self, outputs):
        self.trace.append("level3")
        self.log(f"l3_{self._stage()}_samples", float(sum(o["size"] for o in outputs)))
        super().validation_epoch_end(outputs)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 2] > 0.3).long()), batch_size=4)


def lightmigrate_case():
    return {
        "model": Level3(),
        "train_dataloaders": _loader(12, 320),
        "val_dataloaders": _loader(10, 321),
        "test_dataloaders": _loader(6, 322),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
