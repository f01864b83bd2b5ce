"""A two-optimizer GAN with `optimizer_idx`, and training_epoch_end over per-optimizer outputs.

Exercises (spec M7, M1, B.1, B.5): automatic optimization with two optimizers: each batch runs
`training_step(batch, batch_idx, optimizer_idx)` for the generator (0) and then the
discriminator (1), with toggle_optimizer freezing the other's parameters; `global_step` counts
both optimizer steps. `training_epoch_end` receives `[[d_opt0, d_opt1], ...]` ([batch][optimizer])
and logs per-optimizer means.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TinyGAN(pl.LightningModule):
    def __init__(self, latent=2):
        super().__init__()
        self.latent = latent
        self.generator = nn.Sequential(nn.Linear(latent, 4), nn.Tanh(), nn.Linear(4, 3))
        self.discriminator = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))

    def forward(self, z):
        return self.generator(z)

    def training_step(self, batch, batch_idx, optimizer_idx):
        (real,) = batch
        z = torch.randn(real.size(0), self.latent, generator=torch.Generator().manual_seed(batch_idx))
        if optimizer_idx == 0:
            fake_logits = self.discriminator(self(z))
            g_loss = F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))
            self.log("g_loss", g_loss)
            return {"loss": g_loss, "which": "generator"}
        real_logits = self.discriminator(real)
        fake_logits = self.discriminator(self(z).detach())
        d_loss = (
            F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
            + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
        ) / 2
        self.log("d_loss", d_loss)
        return {"loss": d_loss, "which": "discriminator"}

    def training_epoch_end(self, outputs):
        g = torch.stack([per_batch[0]["loss"] for per_batch in outputs]).mean()
        d = torch.stack([per_batch[1]["loss"] for per_batch in outputs]).mean()
        self.log("epoch_g_loss", g)
        self.log("epoch_d_loss", d)

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=0.01, betas=(0.5, 0.999))
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=0.01, betas=(0.5, 0.999))
        return [opt_g, opt_d], []


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g) * 0.5 + 1.0), batch_size=4)


def lightmigrate_case():
    return {
        "model": TinyGAN(),
        "train_dataloaders": _loader(12, 440),
        "trainer": {"max_epochs": 2},
    }
