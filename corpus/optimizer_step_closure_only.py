"""An `optimizer_step` override that, on odd batches, only runs the closure (no optimizer step).

Exercises (spec M10, B.5 "global_step"): a hand-rolled "accumulate every other batch": the
closure (training_step, zero_grad, backward) runs on every batch, the optimizer steps on even
ones. 1.9 counted `global_step` once per `optimizer_step` call, whether or not the optimizer
stepped, so `max_steps` stops after that many batches; step-interval schedulers step per batch.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class HalfStepping(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        self.log("step_seen", float(self.global_step))
        return loss

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None,
                       on_tpu=False, using_native_amp=False, using_lbfgs=False):
        if batch_idx % 2 == 0:
            optimizer.step(closure=optimizer_closure)
        else:
            optimizer_closure()

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.05)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        return [opt], [{"scheduler": sched, "interval": "step"}]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": HalfStepping(),
        "train_dataloaders": _loader(20, 460),
        "trainer": {"max_epochs": 3, "max_steps": 7},
    }
