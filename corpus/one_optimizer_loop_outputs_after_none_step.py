"""A module written for several optimizers, trained with one, whose steps sometimes return None.

Exercises (issue 26, ledger fact B4.3 with LM005, spec B.4, B.5): `training_step(self, batch,
batch_idx, optimizer_idx=0)` with one optimizer, so LM005's loop runs it. The step skips every
batch whose labels are all negative (returns None). 1.9.5 then passed `[]` to the module's and
callbacks' `on_train_batch_end` (with one optimizer the optimizer dimension was squeezed away);
LM005's loop must hand them `[]` too, not None. The module counts the skipped batches with
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


class SkipWatcher(Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if isinstance(outputs, list):
            pl_module.counts[1] += 1
        else:
            pl_module.log("cb_loss", outputs["loss"])


class SkippingOneOfMany(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)
        self.register_buffer("counts", torch.zeros(2))

    def forward(self, x):
        return self.layer(x).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx=0):
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
        "model": SkippingOneOfMany(),
        "train_dataloaders": _loader(20, 7, zero_batches=(1, 3)),
        "trainer": {"max_epochs": 2, "callbacks": [SkipWatcher()]},
    }
