"""training_epoch_end under manual optimization, plus test_epoch_end via trainer.test.

Exercises (spec M1, M3, B.1): with `automatic_optimization = False` a tensor return becomes
`{"loss": t.detach()}` - NOT divided, there is no accumulation - and a dict return keeps its
keys (it does not need "loss"). The step returns a dict with "loss" on even batches and a bare
tensor on odd ones. `test_epoch_end` receives the flat list of `test_step` dicts.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ManualModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.body = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)
        self.epoch_records = []

    def forward(self, x):
        return self.head(torch.relu(self.body(x))).squeeze(-1)

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        loss = F.mse_loss(self(x), y)
        opt.zero_grad()
        self.manual_backward(loss)
        opt.step()
        self.log("train_loss", loss)
        if batch_idx % 2 == 0:
            return {"loss": loss, "batch_mean": y.mean()}
        return loss

    def training_epoch_end(self, outputs):
        losses = torch.stack([o["loss"] for o in outputs])
        self.log("manual_epoch_loss", losses.mean())
        self.epoch_records.append([sorted(o.keys()) for o in outputs])

    def test_step(self, batch, batch_idx):
        x, y = batch
        return {"test_mse": F.mse_loss(self(x), y), "pred": self(x)}

    def test_epoch_end(self, outputs):
        self.log("test_mse", torch.stack([o["test_mse"] for o in outputs]).mean())
        self.log("test_pred_std", torch.cat([o["pred"] for o in outputs]).std())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.02)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 1] * x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": ManualModel(),
        "train_dataloaders": _loader(16, 100),
        "test_dataloaders": _loader(8, 101),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
