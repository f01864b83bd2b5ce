"""Two optimizers (a tiny GAN) with `training_step(batch, batch_idx, optimizer_idx)`.

Exercises (spec M7, B.1, B.4, B.5): toggle/untoggle of the optimizers'
parameters, `[batch][optimizer]` nesting of `training_epoch_end` outputs, the discriminator
returning None on some batches (its entry disappears from that batch's list and the optimizer
still steps), `on_train_batch_end` receiving the per-optimizer list, `global_step` counting
every optimizer step, and `self.optimizers()` / `self.lr_schedulers()` inside the step.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TinyGAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(2, 3)
        self.discriminator = nn.Linear(3, 1)
        self.batch_end_shapes = []
        self.frozen_seen = []

    def training_step(self, batch, batch_idx, optimizer_idx):
        (real,) = batch
        z = real[:, :2] * 0.5
        fake = self.generator(z)
        # toggling: the other optimizer's parameters do not require grad right now
        self.frozen_seen.append(
            (optimizer_idx, self.generator.weight.requires_grad, self.discriminator.weight.requires_grad)
        )
        if optimizer_idx == 0:
            loss = F.binary_cross_entropy_with_logits(self.discriminator(fake), torch.ones(len(real), 1))
            self.log("g_loss", loss)
            return {"loss": loss, "fake_mean": fake.mean().detach()}
        if batch_idx % 3 == 1:
            return None  # skip the discriminator on some batches
        real_logits = self.discriminator(real)
        fake_logits = self.discriminator(fake.detach())
        loss = F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits)) + \
            F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
        self.log("d_loss", loss)
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.batch_end_shapes.append(len(outputs))
        self.log("batch_end_items", float(len(outputs)))

    def training_epoch_end(self, outputs):
        self.log("epoch_batches", float(len(outputs)))
        self.log("epoch_g_loss", torch.stack([per_batch[0]["loss"] for per_batch in outputs]).mean())
        d_losses = [per_batch[1]["loss"] for per_batch in outputs if len(per_batch) > 1]
        self.log("epoch_d_steps", float(len(d_losses)))
        self.log("epoch_frozen_ok", float(all(g != d for _, g, d in self.frozen_seen)))

    def configure_optimizers(self):
        g = torch.optim.Adam(self.generator.parameters(), lr=0.01)
        d = torch.optim.SGD(self.discriminator.parameters(), lr=0.05, momentum=0.9)
        return [g, d], []


def lightmigrate_case():
    g = torch.Generator().manual_seed(11)
    data = torch.randn(20, 3, generator=g) + 1.0
    return {
        "model": TinyGAN(),
        "train_dataloaders": DataLoader(TensorDataset(data), batch_size=4),
        "trainer": {"max_epochs": 2},
    }
