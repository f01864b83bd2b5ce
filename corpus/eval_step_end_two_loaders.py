"""validation_step_end / test_step_end with two dataloaders, plus the epoch-end hooks.

Exercises (spec M2, M3, M5, B.3): the eval step_end hooks receive exactly what the step
returned (single device) and their non-None return is what gets buffered for
`validation_epoch_end` / `test_epoch_end` (a list of two lists). The step_end turns per-sample
errors into a summary dict tagged with the loader index it reads from the step output.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TwoLoaderStepEnd(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        return {"err": (self(x) - y).abs(), "loader": dataloader_idx}

    def validation_step_end(self, out):
        return {"mae": out["err"].mean(), "worst": out["err"].max(), "loader": out["loader"]}

    def validation_epoch_end(self, outputs):
        for per_loader in outputs:
            if per_loader:
                idx = per_loader[0]["loader"]
                self.log(f"val_mae_{idx}", torch.stack([o["mae"] for o in per_loader]).mean())
                self.log(f"val_worst_{idx}", torch.stack([o["worst"] for o in per_loader]).max())

    def test_step(self, batch, batch_idx, dataloader_idx=0):
        return self.validation_step(batch, batch_idx, dataloader_idx)

    def test_step_end(self, out):
        return self.validation_step_end(out)

    def test_epoch_end(self, outputs):
        self.log("test_mae_all", torch.stack([o["mae"] for per in outputs for o in per]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g) + shift
    return DataLoader(TensorDataset(x, x.sum(dim=1)), batch_size=4)


def lightmigrate_case():
    return {
        "model": TwoLoaderStepEnd(),
        "train_dataloaders": _loader(8, 420),
        "val_dataloaders": [_loader(8, 421), _loader(4, 422, shift=2.0)],
        "test_dataloaders": [_loader(8, 423), _loader(8, 424, shift=-1.0)],
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
