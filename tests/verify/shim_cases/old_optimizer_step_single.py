"""One optimizer (plain automatic optimization) with the old hook signatures.

Exercises (spec M10, M11, M12) under the v1 shim: an `optimizer_step(epoch, batch_idx,
optimizer, optimizer_idx, optimizer_closure, on_tpu, using_native_amp, using_lbfgs)` learning-
rate warm-up override that reads the flags and calls `super().optimizer_step(...)` with the old
arguments, `optimizer_zero_grad(epoch, batch_idx, optimizer, optimizer_idx)` and
`lr_scheduler_step(scheduler, optimizer_idx, metric)` overrides, with accumulation.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class WarmupModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(5, 1)
        self.flags = []
        self.sched_idx = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.layer(x).squeeze(-1), y)
        self.log("loss", loss)
        return loss

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None,
                       on_tpu=False, using_native_amp=False, using_lbfgs=False):
        self.flags.append((optimizer_idx, on_tpu, using_native_amp, using_lbfgs))
        if self.trainer.global_step < 3:
            scale = (self.trainer.global_step + 1) / 3.0
            for group in optimizer.param_groups:
                group["lr"] = 0.2 * scale
        super().optimizer_step(epoch, batch_idx, optimizer, optimizer_idx, optimizer_closure,
                               on_tpu=on_tpu, using_lbfgs=using_lbfgs)

    def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
        optimizer.zero_grad(set_to_none=False)

    def lr_scheduler_step(self, scheduler, optimizer_idx, metric):
        self.sched_idx.append(optimizer_idx)
        scheduler.step()

    def training_epoch_end(self, outputs):
        self.log("n_outputs", float(len(outputs)))
        self.log("n_optimizer_steps", float(len(self.flags)))
        self.log("flags_ok", float(all(f == (0, False, False, False) for f in self.flags)))
        self.log("n_sched", float(len(self.sched_idx)))

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.layer.parameters(), lr=0.2)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)}


def lightmigrate_case():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(24, 5, generator=g)
    return {
        "model": WarmupModel(),
        "train_dataloaders": DataLoader(TensorDataset(x, x.sum(dim=1)), batch_size=4),
        "trainer": {"max_epochs": 2, "accumulate_grad_batches": 2},
    }
