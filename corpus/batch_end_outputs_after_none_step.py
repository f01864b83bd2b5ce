"""on_train_batch_end hooks that test `outputs == []` after a training step that returned None.

Exercises (issue 26, ledger fact B4.3, spec B.4): the training step skips every batch whose
labels are all negative (returns None). 1.9.5 then passed `[]` to the module's and callbacks'
`on_train_batch_end`; 2.x passes `{}`. The module counts the skipped batches with
`outputs == []` and logs the kept batches' loss otherwise; a callback counts the batches whose
outputs is a list (`isinstance(outputs, list)`). Both counts are buffers of the module, so a
migration that left the hooks as they are shows up in the final state and the logged counts.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback


class SkipCounter(Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if isinstance(outputs, list):
            pl_module.counts[1] += 1
        else:
            pl_module.log("cb_loss", outputs["loss"])


class SkippingModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)
        self.register_buffer("counts", torch.zeros(2))

    def forward(self, x):
        return self.layer(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        if y.sum() == 0:
            return None
        return F.binary_cross_entropy_with_logits(self(x), y)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs == []:
            self.counts[0] += 1
            self.log("skipped", self.counts[0])
        else:
            self.log("kept_loss", outputs["loss"])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed, zero_batches):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = (x[:, 0] > 0).float()
    for b in zero_batches:
        y[b * 4:(b + 1) * 4] = 0.0
    return DataLoader(TensorDataset(x, y), batch_size=4)


def lightmigrate_case():
    return {
        "model": SkippingModel(),
        "train_dataloaders": _loader(20, 7, zero_batches=(1, 3)),
        "trainer": {"max_epochs": 2, "callbacks": [SkipCounter()]},
    }
