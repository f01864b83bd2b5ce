"""Two optimizers with a step-interval and an epoch-interval scheduler and Trainer clipping.

Exercises (spec M7, M13, B.5): an encoder/decoder pair trained with two optimizers in
automatic mode, `Trainer(gradient_clip_val=0.3, gradient_clip_algorithm="value")`: 1.9 clipped
each optimizer's gradients (only its own, toggled parameters) right before its step. Optimizer
0 has a `StepLR` stepped every batch (`interval="step"`), optimizer 1 an `ExponentialLR`
stepped per epoch. A large learning rate makes clipping change the weights. The step logs the
LRs as it sees them; `training_epoch_end` reads `[batch][optimizer]` outputs (LM005).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class EncoderDecoder(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 3)
        self.decoder = nn.Linear(3, 4)

    def forward(self, x):
        return self.decoder(torch.tanh(self.encoder(x)))

    def training_step(self, batch, batch_idx, optimizer_idx):
        (x,) = batch
        recon = self(x)
        if optimizer_idx == 0:
            loss = F.mse_loss(recon, x) + 0.01 * self.encoder.weight.abs().sum()
        else:
            loss = F.l1_loss(recon, x)
        self.log(f"loss_{optimizer_idx}", loss)
        self.log(f"lr_{optimizer_idx}", self.trainer.optimizers[optimizer_idx].param_groups[0]["lr"])
        return loss

    def training_epoch_end(self, outputs):
        self.log("enc_epoch_loss", torch.stack([per_batch[0]["loss"] for per_batch in outputs]).mean())
        self.log("dec_epoch_loss", torch.stack([per_batch[1]["loss"] for per_batch in outputs]).mean())

    def configure_optimizers(self):
        enc = torch.optim.SGD(self.encoder.parameters(), lr=0.8)
        dec = torch.optim.Adam(self.decoder.parameters(), lr=0.05)
        return [enc, dec], [
            {"scheduler": torch.optim.lr_scheduler.StepLR(enc, step_size=2, gamma=0.7), "interval": "step"},
            torch.optim.lr_scheduler.ExponentialLR(dec, gamma=0.6),
        ]


def lightmigrate_case():
    g = torch.Generator().manual_seed(521)
    x = torch.randn(20, 4, generator=g) * 3
    return {
        "model": EncoderDecoder(),
        "train_dataloaders": DataLoader(TensorDataset(x), batch_size=4),
        "trainer": {"max_epochs": 3, "gradient_clip_val": 0.3, "gradient_clip_algorithm": "value"},
    }
