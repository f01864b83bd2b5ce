"""A `training_step_end` that changes the step's dict in place and returns None.

Exercises (spec M4, B.3, B.1): the hook rescales `out["loss"]` in place and adds a key, then
returns None, so 1.9 kept the (mutated) raw dict: the mutated loss is what was backpropagated
and what `training_epoch_end` collected (detached, divided by `accumulate_grad_batches=2`). The
rewrite must inline it into the step (it changes the result), and the epoch-end buffer must see
the added key. A `test_step_end` that returns a new value exercises the test variant.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class RescaledLoss(pl.LightningModule):
    def __init__(self, scale=0.5):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.scale = scale
        self.epoch_keys = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        err = self(x) - y
        return {"loss": (err ** 2).mean(), "abs_err": err.abs().mean()}

    def training_step_end(self, out):
        out["loss"] = out["loss"] * self.scale + out["abs_err"]
        out["scaled"] = True

    def training_epoch_end(self, outputs):
        self.epoch_keys.append(sorted(outputs[0].keys()))
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def test_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self(x), y)

    def test_step_end(self, loss):
        return {"test_mse": loss, "test_rmse": loss.sqrt()}

    def test_epoch_end(self, outputs):
        self.log("test_rmse", torch.stack([o["test_rmse"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True) * 0.5), batch_size=4)


def lightmigrate_case():
    return {
        "model": RescaledLoss(),
        "train_dataloaders": _loader(20, 920),
        "test_dataloaders": _loader(8, 921),
        "trainer": {"max_epochs": 2, "accumulate_grad_batches": 2},
        "run": ["fit", "test"],
    }
