"""Test hooks bound to the validation hooks by class-body aliases.

Exercises (spec M2, M3, M5, B.1, B.3; issue 21 kind 3): the 1.x idiom of reusing the validation
hooks for testing by aliasing them in the class body: `test_step = validation_step`,
`test_step_end = validation_step_end` (which builds the loss from the step's predictions, so it
changes what the epoch end receives), `test_epoch_end = validation_epoch_end`, and the
per-batch / per-epoch hooks `on_test_batch_end = on_validation_batch_end`,
`on_test_epoch_end = on_validation_epoch_end`. Renaming or wrapping the validation methods
without the aliases leaves them naming methods that no longer exist (NameError when the class is
defined), or makes the test hooks collect into the validation buffers.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class AliasedEvalRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
        self.eval_batches = 0
        self.summaries = []

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"pred": self(x), "target": y}

    test_step = validation_step

    def validation_step_end(self, out):
        # the loss is computed here, on the (possibly gathered) outputs
        return {"loss": F.mse_loss(out["pred"], out["target"]), "n": out["pred"].shape[0]}

    test_step_end = validation_step_end

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.eval_batches += 1

    on_test_batch_end = on_validation_batch_end

    def validation_epoch_end(self, outputs):
        stage = "test" if self.trainer.testing else "val"
        total = sum(o["n"] for o in outputs)
        loss = sum(o["loss"] * o["n"] for o in outputs) / total
        self.log(f"{stage}_loss", loss)
        self.summaries.append((stage, len(outputs), float(loss)))

    test_epoch_end = validation_epoch_end

    def on_validation_epoch_end(self):
        # runs after validation_epoch_end in 1.x: sees the summary it just appended
        self.log("eval_batches", float(self.eval_batches))
        self.log("summaries", float(len(self.summaries)))

    on_test_epoch_end = on_validation_epoch_end

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - 0.5 * x[:, 1]), batch_size=4)


def lightmigrate_case():
    return {
        "model": AliasedEvalRegressor(),
        "train_dataloaders": _loader(12, 410),
        "val_dataloaders": _loader(10, 411),
        "test_dataloaders": _loader(6, 412),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
