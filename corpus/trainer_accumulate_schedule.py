"""`accumulate_grad_batches` given as a schedule `{epoch: n}` (spec T11, LM101).

1.9 accepted a dict and installed a `GradientAccumulationScheduler` callback for it; 2.x only
takes an int, so LM101 moves the schedule to `callbacks=[GradientAccumulationScheduler(...)]`.
Three epochs with 1, then 2, then 3 batches per optimizer step (7 batches per epoch, so the last
window of each epoch is partial); the step logs the loss and the learning-rate scheduler is
stepped per optimizer step, so the number of steps shows in the metrics and the weights.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ScheduledAccumulation(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.layer(x).squeeze(-1), y)
        self.log("train_loss", loss)
        self.log("global_step_seen", float(self.trainer.global_step))
        return loss

    def training_epoch_end(self, outputs):
        # a 1.x hook 2.x removed (LM001 migrates it): the mean training loss the epoch saw
        self.log("epoch_mean_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.05)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.7)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, 3 * x[:, 1] + x[:, 2]), batch_size=2)


def lightmigrate_case():
    return {
        "model": ScheduledAccumulation(),
        "train_dataloaders": _loader(14, 911),
        "trainer": {"max_epochs": 3, "accumulate_grad_batches": {0: 1, 1: 2, 2: 3}},
    }
