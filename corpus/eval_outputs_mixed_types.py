"""Validation/test steps returning dicts of tensors, python numbers and strings; None steps.

Exercises (spec M2, M3, B.1): evaluation outputs are kept raw - any type, not detached, not
converted - so the epoch-end bodies receive dicts holding a tensor, a python float, an int and
a string, and a bare python float from `test_step`. `validation_step` returns None for odd
batches (they are left out, no placeholder). The bodies group by the string key and log
per-group means.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class MixedOutputs(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.groups_seen = []

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_step(self, batch, batch_idx):
        if batch_idx % 2 == 1:
            return None
        x, y = batch
        err = (self(x) - y).abs()
        return {
            "err": err,
            "max_err": float(err.max()),
            "count": len(y),
            "group": "small" if float(y.abs().mean()) < 1.0 else "large",
        }

    def validation_epoch_end(self, outputs):
        groups = {}
        for out in outputs:
            groups.setdefault(out["group"], []).append(out["err"])
        self.groups_seen.append(sorted(groups))
        for name, errs in sorted(groups.items()):
            self.log(f"val_err_{name}", torch.cat(errs).mean())
        self.log("val_worst", max(out["max_err"] for out in outputs))
        self.log("val_count", float(sum(out["count"] for out in outputs)))

    def test_step(self, batch, batch_idx):
        x, y = batch
        return float(F.mse_loss(self(x), y))

    def test_epoch_end(self, outputs):
        self.log("test_mse_mean", sum(outputs) / len(outputs))
        self.log("test_mse_first", outputs[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    scales = torch.linspace(0.2, 3.0, n) * scale
    return DataLoader(TensorDataset(x, x.sum(dim=1) * scales), batch_size=2)


def lightmigrate_case():
    return {
        "model": MixedOutputs(),
        "train_dataloaders": _loader(8, 280),
        "val_dataloaders": _loader(12, 281),
        "test_dataloaders": _loader(6, 282, scale=0.5),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
