"""A callback with the 1.x `opt_idx` parameter in `on_before_optimizer_step`.

Exercises (spec C1): `Callback.on_before_optimizer_step(trainer, pl_module, optimizer, opt_idx)`
logs the gradient norm under a name built from `opt_idx` and, for optimizer 0 only, scales the
gradients of the head. One optimizer, automatic optimization; 2.x calls the hook without the
index. `training_epoch_end` logs the mean step loss.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class GradNormLogger(pl.Callback):
    def on_before_optimizer_step(self, trainer, pl_module, optimizer, opt_idx):
        norm = torch.stack([p.grad.norm() for p in pl_module.parameters() if p.grad is not None]).norm()
        pl_module.log(f"grad_norm_opt{opt_idx}", norm)
        if opt_idx == 0:
            for p in pl_module.head.parameters():
                p.grad.mul_(0.5)


class FinetuneModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x))).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 2] - x[:, 1]), batch_size=4)


def lightmigrate_case():
    return {
        "model": FinetuneModel(),
        "train_dataloaders": _loader(12, 740),
        "trainer": {"max_epochs": 3, "callbacks": [GradNormLogger()]},
    }
