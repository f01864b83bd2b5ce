"""`gpus` from an argparse option declared `type=int, default=None`, given `--gpus 0` on a CPU machine.

Exercises (issue 23, LM101, T1): 1.9 read `gpus=0` (and None) as "no GPU" and ran on the CPU with
its default device count. The option's type is known (an int or None), so LM101 writes the short
form exactly right for it, `"accelerator": "gpu" if args.gpus else "cpu", "devices": args.gpus or
"auto"`, rather than the general test of 1.9's parser. A `training_epoch_end` (LM001) and the
logged loss show that training ran the same way.
"""
# SHIM-OUT-OF-SCOPE: 1.x Trainer value (gpus=0) that 2.x rejects; LM101 rewrites it
import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 0] > 0).long() + (x[:, 1] > 0).long()), batch_size=4)


def lightmigrate_case():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=None)
    args = parser.parse_args(["--gpus", "0"])
    trainer_kwargs = {"gpus": args.gpus, "max_epochs": 2}
    return {
        "model": Classifier(),
        "train_dataloaders": _loader(12, 523),
        "trainer": trainer_kwargs,
    }
