"""An old-signature `optimizer_step` override implementing learning-rate warm-up.

Exercises (spec M10, B.5): the 1.x hook signature `optimizer_step(self, epoch, batch_idx,
optimizer, optimizer_idx, optimizer_closure, on_tpu, using_native_amp, using_lbfgs)` -
2.x passes 4 positional arguments, so the closure would land in `optimizer_idx`. The override
scales the LR linearly over the first 4 steps, then calls `optimizer.step(closure=...)`, and
records the flags it was given.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class WarmupModel(pl.LightningModule):
    def __init__(self, base_lr=0.1, warmup_steps=4):
        super().__init__()
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.lin = nn.Linear(4, 1)
        self.flags_seen = []

    def forward(self, x):
        return self.lin(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("lr_now", self.trainer.optimizers[0].param_groups[0]["lr"])

    def optimizer_step(
        self,
        epoch,
        batch_idx,
        optimizer,
        optimizer_idx=0,
        optimizer_closure=None,
        on_tpu=False,
        using_native_amp=False,
        using_lbfgs=False,
    ):
        self.flags_seen.append((optimizer_idx, on_tpu, using_native_amp, using_lbfgs))
        if self.trainer.global_step < self.warmup_steps:
            scale = float(self.trainer.global_step + 1) / self.warmup_steps
            for group in optimizer.param_groups:
                group["lr"] = scale * self.base_lr
        optimizer.step(closure=optimizer_closure)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.base_lr)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(dim=1)), batch_size=4)


def lightmigrate_case():
    return {
        "model": WarmupModel(),
        "train_dataloaders": _loader(12, 490),
        "trainer": {"max_epochs": 2},
    }
