"""A `training_step_end` that only logs, but logs the learning rate a step scheduler changes.

Exercises (spec M4, B.3, B.5 "LR schedulers"): 1.9 ran `training_step_end` inside the optimizer
closure, before the optimizer step and before the step-interval `StepLR` stepped; the LR it
logs (read both through `self.lr_schedulers().get_last_lr()` and through the optimizer's
`param_groups`) is the one the batch trained with. `on_train_batch_end` runs after the scheduler
stepped, so moving the hook there would log the next batch's LR: LM003 inlines it instead.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class LrLoggingStepEnd(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return {"loss": F.mse_loss(self(x), y)}

    def training_step_end(self, outputs):
        sched = self.lr_schedulers()
        self.log("lr_sched", sched.get_last_lr()[0])
        self.log("lr_group", self.trainer.optimizers[0].param_groups[0]["lr"])

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": LrLoggingStepEnd(),
        "train_dataloaders": _loader(12, 420),
        "trainer": {"max_epochs": 2},
    }
