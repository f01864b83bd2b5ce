"""A sanity check over every validation batch (`num_sanity_val_steps=-1`), two loaders.

Exercises (spec M2, B.1, B.2): with `-1` the sanity check runs the whole of both validation
loaders (3 and 2 batches), so the sanity call of `validation_epoch_end` receives a full list of
lists - and its metrics are discarded, while state it writes on `self` is kept. The body
keeps a running best over every call, including the sanity one, so a buffer that leaks or
drops sanity outputs changes the logged values of epoch 0.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class FullSanityModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.calls = []
        self.best = float("inf")

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        return {"mse": F.mse_loss(self(x), y), "loader": dataloader_idx}

    def validation_epoch_end(self, outputs):
        sizes = [len(per_loader) for per_loader in outputs]
        self.calls.append((self.trainer.sanity_checking, sizes))
        mean = torch.stack([o["mse"] for per_loader in outputs for o in per_loader]).mean()
        self.best = min(self.best, float(mean))
        self.log("val_mse_all", mean)
        self.log("val_best_incl_sanity", self.best)
        self.log("val_calls", float(len(self.calls)))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x @ torch.tensor([1.0, -1.0, 0.5, 2.0])), batch_size=4)


def lightmigrate_case():
    return {
        "model": FullSanityModel(),
        "train_dataloaders": _loader(8, 230),
        "val_dataloaders": [_loader(12, 231), _loader(8, 232)],
        "trainer": {"max_epochs": 2, "num_sanity_val_steps": -1},
    }
