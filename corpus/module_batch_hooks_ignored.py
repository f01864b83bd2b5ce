"""A LightningModule's `on_batch_start` / `on_batch_end` (spec A.8 "Hooks", LM002).

1.5 called a module's `on_batch_start()` before each training batch (returning -1 skipped the
rest of the epoch) and `on_batch_end()` after it; from 1.6 on Lightning no longer calls them,
without an error: 1.9 trained as if they did not exist, and so does 2.x. Here they would halve
the learning rate, end the epoch early and log a counter if they ran; the migration must not
start running them (LM002 marks them instead of renaming them to `on_train_batch_start/end`).
The class also has a `training_epoch_end`, so LM001 adds an `on_train_batch_end` next to them.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class OldBatchHooks(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.seen = 0

    def on_batch_start(self):
        for group in self.trainer.optimizers[0].param_groups:
            group["lr"] *= 0.5
        if self.seen >= 2:
            return -1

    def on_batch_end(self):
        self.seen += 1
        self.log("seen", float(self.seen))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())
        self.log("lr", self.trainer.optimizers[0].param_groups[0]["lr"])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 4, generator=g), torch.randn(n, 1, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": OldBatchHooks(),
        "train_dataloaders": _loader(16, 381),
        "trainer": {"max_epochs": 2},
    }
