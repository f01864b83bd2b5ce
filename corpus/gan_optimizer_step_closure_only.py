"""Two optimizers and an `optimizer_step` override that steps the generator every other batch.

Exercises (spec M7, M10, B.5 "global_step"): the 1.x docs' recipe: on batches where the
generator must not step, `optimizer_step` only runs the closure (training_step, zero_grad,
backward). 1.9 counted `global_step` once per `optimizer_step` call, whether or not the optimizer
stepped, so 3 batches with 2 optimizers gave 6 and `max_steps` stopped the run by that count.
LM005 writes the manual loop that calls this hook; 2.x manual optimization counts only real
optimizer steps, so the loop counts the calls that did not step as 1.9 did.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class SlowGeneratorGAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(2, 3)
        self.discriminator = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        (real,) = batch
        fake = self.generator(torch.ones(real.shape[0], 2) * 0.3)
        if optimizer_idx == 0:
            loss = F.softplus(-self.discriminator(real)).mean() + F.softplus(self.discriminator(fake.detach())).mean()
            self.log("d_loss", loss)
        else:
            loss = F.softplus(-self.discriminator(fake)).mean()
            self.log("g_loss", loss)
        self.log("step_seen", float(self.global_step))
        return loss

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx, optimizer_closure,
                       on_tpu=False, using_native_amp=False, using_lbfgs=False):
        if optimizer_idx == 0 or (batch_idx + 1) % 2 == 0:
            optimizer.step(closure=optimizer_closure)
        else:
            optimizer_closure()

    def configure_optimizers(self):
        return [torch.optim.SGD(self.discriminator.parameters(), lr=0.1),
                torch.optim.SGD(self.generator.parameters(), lr=0.1)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": SlowGeneratorGAN(),
        "train_dataloaders": _loader(16, 470),
        "trainer": {"max_epochs": 3, "max_steps": 13},
        # 1.9's Trainer called optimizer_step, the migrated loop calls it from the module: the
        # hook log cannot line the two orders up (metrics, steps and weights are compared)
        "hook_order": False,
    }
