"""A callback watching a two-optimizer GAN: `on_before_zero_grad` and per-optimizer batch outputs.

Exercises (spec M7, B.4, B.5): in 1.9's automatic loop every optimizer's closure called the
callbacks' `on_before_zero_grad(trainer, pl_module, optimizer)` before zeroing the gradients,
and callbacks' `on_train_batch_end` got `outputs` as a list with one dict per optimizer. After
LM005 the module runs manual optimization, where 2.x calls neither for it: the generated loop
calls the callbacks' `on_before_zero_grad` and hands callbacks 1.9's list.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback


class GanMonitor(Callback):
    def on_before_zero_grad(self, trainer, pl_module, optimizer):
        index = trainer.optimizers.index(optimizer)
        pl_module.monitor[index, 0] += 1
        pl_module.monitor[index, 1] += sum(float(p.grad.abs().sum()) for p in optimizer.param_groups[0]["params"]
                                           if p.grad is not None)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        d_out, g_out = outputs
        pl_module.log("cb_d_loss", d_out["loss"])
        pl_module.log("cb_g_loss", g_out["loss"])
        pl_module.monitor[2, 0] += len(outputs)


class TinyGAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(2, 3)
        self.discriminator = nn.Linear(3, 1)
        self.register_buffer("monitor", torch.zeros(3, 2))

    def training_step(self, batch, batch_idx, optimizer_idx):
        (real,) = batch
        fake = self.generator(torch.ones(real.shape[0], 2) * 0.5)
        if optimizer_idx == 0:
            return F.softplus(-self.discriminator(real)).mean() + F.softplus(self.discriminator(fake.detach())).mean()
        return {"loss": F.softplus(-self.discriminator(fake)).mean(), "fake_mean": fake.mean().detach()}

    def configure_optimizers(self):
        return [torch.optim.SGD(self.discriminator.parameters(), lr=0.1),
                torch.optim.SGD(self.generator.parameters(), lr=0.1)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": TinyGAN(),
        "train_dataloaders": _loader(12, 480),
        "trainer": {"max_epochs": 2, "callbacks": [GanMonitor()]},
    }
