"""A LightningDataModule supplies every loader: fit, validate, test and predict.

Exercises (spec M1, M2, M3, M6, B.1): the loaders come from `train_dataloader`,
`val_dataloader`, `test_dataloader` and `predict_dataloader` of a datamodule (with `setup`),
not from the Trainer call. `test_dataloader` returns two loaders, so `test_epoch_end` gets a
list of two lists; `predict_dataloader` returns one loader, so `on_predict_epoch_end(results)`
gets `[[...]]`. A migration that counts loaders from the wrong place shows up here.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ToyDataModule(pl.LightningDataModule):
    def __init__(self, batch_size=4):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage=None):
        g = torch.Generator().manual_seed(260)
        x = torch.randn(40, 3, generator=g)
        y = (x[:, 0] * x[:, 1] > 0).long()
        self.train_set = TensorDataset(x[:16], y[:16])
        self.val_set = TensorDataset(x[16:24], y[16:24])
        self.test_sets = [TensorDataset(x[24:32], y[24:32]), TensorDataset(x[32:38], y[32:38])]
        self.predict_set = TensorDataset(x[30:40], y[30:40])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size)

    def test_dataloader(self):
        return [DataLoader(ds, batch_size=self.batch_size) for ds in self.test_sets]

    def predict_dataloader(self):
        return DataLoader(self.predict_set, batch_size=3)


class QuadrantClassifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
        self.predicted = None

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def training_epoch_end(self, outputs):
        self.log("train_loss_epoch", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self(x).argmax(-1) == y).float()

    def validation_epoch_end(self, outputs):
        self.log("val_acc", torch.cat(outputs).mean())

    def test_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        return (self(x).argmax(-1) == y).float()

    def test_epoch_end(self, outputs):
        for idx, per_loader in enumerate(outputs):
            self.log(f"test_acc_{idx}", torch.cat(per_loader).mean())

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        x, _ = batch
        return self(x).softmax(-1)

    def on_predict_epoch_end(self, results):
        self.predicted = torch.cat(results[0]).argmax(-1)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.05)


def lightmigrate_case():
    return {
        "model": QuadrantClassifier(),
        "datamodule": ToyDataModule(),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "validate", "test", "predict"],
    }
