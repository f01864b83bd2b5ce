"""Manual optimization that feeds 1.9's running loss by hand "for the LR finder".

Exercises (issue 25 kind 4, LM102, T-prop14): under manual optimization 1.9's loop did not record
the loss, so projects appended it to `self.trainer.fit_loop.running_loss` themselves (the LR finder
and the progress bar read it). 2.x has no running loss (the line raises AttributeError) and its LR
finder reads the loss `training_step` returns, so LM102 drops the line and makes the step return
its loss. Two optimizer steps per batch with a step scheduler and a logged loss show that training
is unchanged.
"""
# SHIM-OUT-OF-SCOPE: reads a 1.9 Trainer internal (fit_loop.running_loss) that the v1 shim does not model
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ManualRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        sched = self.lr_schedulers()
        x, y = batch
        loss = F.mse_loss(self.net(x).squeeze(-1), y)
        opt.zero_grad()
        self.manual_backward(loss)
        opt.step()
        sched.step()
        # track the loss for the lr finder
        self.trainer.fit_loop.running_loss.append(loss)
        self.log("train_loss", loss)
        self.log("lr", sched.get_last_lr()[0])

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.net(x).squeeze(-1), y))

    def configure_optimizers(self):
        opt = torch.optim.Adam(self.parameters(), lr=0.02)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] * x[:, 1]), batch_size=4)


def lightmigrate_case():
    return {
        "model": ManualRegressor(),
        "train_dataloaders": _loader(16, 71),
        "val_dataloaders": _loader(8, 72),
        "trainer": {"max_epochs": 2},
    }
