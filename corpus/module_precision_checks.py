"""`self.precision` and `pl_module.precision` compared with 1.9 values (default precision).

Exercises (spec M19): 1.9 set `module.precision` to the int 32 here; 2.x has only
`trainer.precision == "32-true"`. The step branches on `self.precision == 32` and on
`self.precision in (16, "bf16")`, a callback on `pl_module.precision != 32`; each branch logs
or scales the loss, so a comparison that flips (an untranslated `!= 32` is always true on 2.x)
shows in the metrics. Default precision keeps the 1.9.5 checkpoint loadable into the migrated
model unchanged.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class PrecisionProbe(pl.Callback):
    def on_train_epoch_start(self, trainer, pl_module):
        if pl_module.precision != 32:
            pl_module.log("not_fp32", 1.0)


class PrecisionAware(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        scale = 2.0 if self.precision == 32 else 1.0
        if self.precision in (16, "bf16"):
            scale = scale * 10
        loss = F.mse_loss(self.layer(x), y) * scale
        self.log("scaled_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g), torch.randn(n, 1, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": PrecisionAware(),
        "train_dataloaders": _loader(8, 341),
        "trainer": {"max_epochs": 2, "callbacks": [PrecisionProbe()]},
    }
