"""Callbacks that read, in their own epoch-end hooks, metrics and attributes the module's epoch-end
bodies just produced, with a subclass override, several validations per epoch and a test run.

Exercises (spec B.2, M1, M2, M3; issue 21 kind 6): 1.9 ran `training_epoch_end` /
`validation_epoch_end` / `test_epoch_end` before every callback's `on_*_epoch_end`; 2.x runs the
callbacks' hooks first. `MetricsWatcher` reads `trainer.callback_metrics["val_loss"]`, which
`validation_epoch_end` logged; `HistoryLogger` reads `pl_module.val_history` (appended to by the
base's body), `val_worst` (set by the subclass's override, which calls `super()`),
`trainer.lightning_module.train_epoch_loss` and `test_score`. `val_check_interval=0.5` runs
validation twice per training epoch (after the sanity check), and `trainer.test` follows the
fit. Each body must run exactly once per epoch, before the callbacks, and log at the same steps.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class MetricsWatcher(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        loss = trainer.callback_metrics.get("val_loss")
        if loss is not None:
            pl_module.watched.append(round(float(loss), 6))
            pl_module.log("watched_val_loss", loss)


class HistoryLogger(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        if trainer.sanity_checking:
            return
        pl_module.log("history_len", float(len(pl_module.val_history)))
        pl_module.log("worst_seen", pl_module.val_worst)

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.log("cb_train_epoch_loss", trainer.lightning_module.train_epoch_loss)

    def on_test_epoch_end(self, trainer, pl_module):
        pl_module.log("cb_test_score", pl_module.test_score)


class WatchedRegressorBase(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.val_history = []
        self.watched = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.train_epoch_loss = torch.stack([o["loss"] for o in outputs]).mean()
        self.log("train_epoch_loss", self.train_epoch_loss)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y, reduction="none").squeeze(-1)

    def validation_epoch_end(self, outputs):
        losses = torch.cat(outputs)
        self.val_history.append(float(losses.mean()))
        self.log("val_loss", losses.mean())

    def test_step(self, batch, batch_idx):
        x, y = batch
        return (self.net(x) - y).abs().mean()

    def test_epoch_end(self, outputs):
        self.test_score = torch.stack(outputs).mean() + 0.01 * len(self.watched)
        self.log("test_score", self.test_score)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class WorstCaseRegressor(WatchedRegressorBase):
    def validation_epoch_end(self, outputs):
        super().validation_epoch_end(outputs)
        self.val_worst = torch.cat(outputs).max()
        self.log("val_worst", self.val_worst)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True) * 0.5), batch_size=4)


def lightmigrate_case():
    return {
        "model": WorstCaseRegressor(),
        "train_dataloaders": _loader(16, 492),
        "val_dataloaders": _loader(8, 493),
        "test_dataloaders": _loader(8, 494),
        "trainer": {"max_epochs": 2, "val_check_interval": 0.5,
                    "callbacks": [MetricsWatcher(), HistoryLogger()]},
        "run": ["fit", "test"],
    }
