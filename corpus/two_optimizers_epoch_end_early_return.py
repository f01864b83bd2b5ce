"""Two optimizers and a `training_epoch_end` that returns early on some epochs.

Exercises (spec M7, B.1, B.5): the epoch-end body gets 1.x's `outputs[batch][optimizer]` and
returns early on odd epochs; the epoch-interval StepLR of optimizer 0 must still step after it
(1.x stepped schedulers after the hook returned). Before issue 21 the migration marked the hook
and left it in place, and a second run then moved it into a buffer that stayed empty.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class EarlyReturnGAN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.gen = nn.Linear(3, 3)
        self.disc = nn.Linear(3, 1)
        self.seen = []

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        if optimizer_idx == 0:
            loss = F.mse_loss(self.disc(self.gen(x)).squeeze(-1), y)
        else:
            loss = F.mse_loss(self.disc(x).squeeze(-1), y * 0.5)
        return {"loss": loss, "which": optimizer_idx}

    def training_epoch_end(self, outputs):
        self.seen.append(len(outputs))
        if self.current_epoch % 2 == 1:
            return
        gen = torch.stack([per_batch[0]["loss"] for per_batch in outputs]).mean()
        disc = torch.stack([per_batch[1]["loss"] for per_batch in outputs]).mean()
        self.log("gen_epoch", gen)
        self.log("disc_epoch", disc)
        self.log("lr_gen", self.trainer.optimizers[0].param_groups[0]["lr"])

    def configure_optimizers(self):
        opt_g = torch.optim.SGD(self.gen.parameters(), lr=0.2)
        opt_d = torch.optim.SGD(self.disc.parameters(), lr=0.1)
        return [opt_g, opt_d], [torch.optim.lr_scheduler.StepLR(opt_g, step_size=1, gamma=0.5)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(-1)), batch_size=4)


def lightmigrate_case():
    return {
        "model": EarlyReturnGAN(),
        "train_dataloaders": _loader(12, 2101),
        "trainer": {"max_epochs": 4},
    }
