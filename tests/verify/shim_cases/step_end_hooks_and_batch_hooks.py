"""`*_step_end` hooks that log only (return None) or replace the output, eval batch hooks
with a `dataloader_idx` parameter that has no default, and `on_predict_epoch_end(results)`.

Exercises (spec M4, M5, M6, M20, B.1, B.3) under the v1 shim: `training_step_end` returning
None keeps the raw step output (and logs with training-step defaults), `validation_step_end`
replaces the output per dataloader (two loaders, list of lists), `test_step_end` with one
loader (flat list), `on_validation_batch_end(outputs, batch, batch_idx, dataloader_idx)` and
`on_test_batch_start(batch, batch_idx, dataloader_idx)` with one test loader (1.9 always
passed the index), and the one-loader predict `results == [[...]]`.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class StepEnds(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 1)
        self.val_batch_end = []
        self.test_starts = []

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return {"loss": F.mse_loss(self(x), y), "n": len(y)}

    def training_step_end(self, out):
        self.log("step_end_loss", out["loss"])  # logs only: the raw output is kept

    def training_epoch_end(self, outputs):
        self.log("train_n", float(sum(o["n"] for o in outputs)))

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        return {"err": (self(x) - y).abs()}

    def validation_step_end(self, out):
        return {"mae": out["err"].mean(), "max": out["err"].max()}

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.val_batch_end.append((dataloader_idx, float(outputs["mae"])))

    def validation_epoch_end(self, outputs):
        for i, per_loader in enumerate(outputs):
            if per_loader:
                self.log(f"val_mae_{i}", torch.stack([o["mae"] for o in per_loader]).mean())
        self.log("n_val_batch_end", float(len(self.val_batch_end)))

    def test_step(self, batch, batch_idx):
        x, y = batch
        return (self(x) - y).abs().mean()

    def test_step_end(self, out):
        return out * 10

    def on_test_batch_start(self, batch, batch_idx, dataloader_idx):
        self.test_starts.append(dataloader_idx)

    def test_epoch_end(self, outputs):
        self.log("test_scaled", torch.stack(outputs).mean())
        self.log("test_starts", float(sum(self.test_starts) + len(self.test_starts)))

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        return self(batch[0])

    def on_predict_epoch_end(self, results):
        self.predicted = torch.cat(results[0]).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1)), batch_size=4)


def lightmigrate_case():
    return {
        "model": StepEnds(),
        "train_dataloaders": _loader(12, 1),
        "val_dataloaders": [_loader(8, 2), _loader(4, 3)],
        "test_dataloaders": _loader(8, 4),
        "predict_dataloaders": _loader(8, 5),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test", "predict"],
    }
