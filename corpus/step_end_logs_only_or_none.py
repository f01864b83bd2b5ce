"""Step-end hooks that only log and return None, so the raw step output is kept.

Exercises (spec M4, M5, B.3): `training_step_end` logs a statistic of the step's dict and
returns None - 1.x then uses the step's own output (`final = step_end or raw`).
`validation_step_end` returns None for low-loss batches (and in the sanity check) and a
replaced dict otherwise, so `validation_epoch_end` sees a mix of raw and replaced outputs.
The step_end logs use the step defaults (train: on_step; eval: on_epoch).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class LoggingStepEnd(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 2)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return {"loss": F.cross_entropy(logits, y), "logits": logits}

    def training_step_end(self, outputs):
        self.log("train_logit_abs", outputs["logits"].abs().mean())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"loss": F.cross_entropy(self(x), y), "replaced": False}

    def validation_step_end(self, outputs):
        self.log("val_step_end_loss", outputs["loss"])
        if self.trainer.sanity_checking or outputs["loss"] < 0.4:
            return None
        return {"loss": outputs["loss"] * 2, "replaced": True}

    def validation_epoch_end(self, outputs):
        self.log("val_replaced", float(sum(o["replaced"] for o in outputs)))
        self.log("val_loss_mix", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=3)


def lightmigrate_case():
    return {
        "model": LoggingStepEnd(),
        "train_dataloaders": _loader(9, 410),
        "val_dataloaders": _loader(9, 411),
        "trainer": {"max_epochs": 2},
    }
