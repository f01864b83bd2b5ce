"""A custom strategy that overrides `setup_environment`, and a loop helper that 2.x kept.

Exercises (spec R44, R25): 1.9's `Strategy.setup_environment(self)` is a different method from
the accelerator's `setup_environment(self, root_device)` that 2.x renamed to `setup_device`;
2.x still calls the strategy's, so the override must stay as it is (LM202 marks only the
accelerator's). `pytorch_lightning.loops.utilities._is_max_limit_reached` still exists in 2.x
with the same signature, so its import stays too. The override counts its calls and the loss
is scaled by that count: a run where it is not called does not train at all. The module's
`training_epoch_end(outputs)` (M1) is what the migration rewrites.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.loops.utilities import _is_max_limit_reached
from pytorch_lightning.strategies import SingleDeviceStrategy


class CountingStrategy(SingleDeviceStrategy):
    def __init__(self):
        super().__init__(device=torch.device("cpu"))
        self.environment_calls = 0

    def setup_environment(self):
        super().setup_environment()
        self.environment_calls += 1


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        calls = self.trainer.strategy.environment_calls
        self.log("environment_calls", float(calls))
        self.log("at_step_limit", float(_is_max_limit_reached(self.global_step, 5)))
        return F.mse_loss(self.layer(x), y) * calls

    def training_epoch_end(self, outputs):
        self.log("train_loss_epoch", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": Regressor(),
        "train_dataloaders": _loader(16, 11),
        "trainer": {"max_epochs": 2, "strategy": CountingStrategy()},
    }
