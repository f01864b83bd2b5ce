"""`gpus` known only at run time: a settings object whose GPU count is None on a CPU machine.

Exercises (issue 25 kind 3, LM101, T1, T28): 1.9 read `gpus=None` (like 0, "0" and []) as "no GPU"
and ran on the CPU with `devices` deciding the count (None there meant the accelerator's count);
2.x has no `gpus` and rejects `devices=None`. The values are not literals, so LM101 writes the 1.9
reading once, `use_gpus = gpus not in (None, 0, "0", [])`, and picks accelerator and devices from
it. A `training_epoch_end` (LM001) and the logged loss show that training ran the same way.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class HardwareSettings:
    def __init__(self, want_gpus=1):
        self.want_gpus = want_gpus

    @property
    def gpus(self):
        return self.want_gpus if torch.cuda.is_available() else None

    @property
    def devices(self):
        return None  # let Lightning decide


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
    hw = HardwareSettings()
    gpus, devices = hw.gpus, hw.devices
    trainer_kwargs = {"gpus": gpus, "devices": devices, "max_epochs": 2}
    return {
        "model": Classifier(),
        "train_dataloaders": _loader(12, 523),
        "trainer": trainer_kwargs,
    }
