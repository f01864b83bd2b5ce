"""A user Callback that keeps the module in an attribute and reads, in its epoch-end hooks, what
the module's epoch-end computed, through that reference and by a name built at run time.

Exercises (spec B.2, issue 21 kind 6): 1.9 ran `validation_epoch_end` / `training_epoch_end`
before the callbacks' `on_validation_epoch_end` / `on_train_epoch_end`; 2.x runs the callbacks'
hooks first. The callback stores `pl_module` in `setup` (`self.module`) and later reads
`self.module.val_mean`, and reads `getattr(pl_module, self.stat)`, whose name is a run-time
value. Both reads see the value of the epoch that just ended in 1.9; migrated as a plain move
they would see the previous epoch's (and fail in the first epoch). LM001 makes each body a
run-once method the callback calls first.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import Callback


class KeptReferenceLogger(Callback):
    def __init__(self, stat):
        self.stat = stat
        self.module = None

    def setup(self, trainer, pl_module, stage=None):
        self.module = pl_module

    def on_validation_epoch_end(self, trainer, pl_module):
        if not trainer.sanity_checking:
            pl_module.log("cb_val_mean", self.module.val_mean)

    def on_train_epoch_end(self, trainer, pl_module):
        pl_module.log("cb_train_stat", getattr(pl_module, self.stat))


class KeptReferenceRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def training_epoch_end(self, outputs):
        self.train_mean = torch.stack([o["loss"] for o in outputs]).mean()

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_epoch_end(self, outputs):
        self.val_mean = torch.stack(outputs).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": KeptReferenceRegressor(),
        "train_dataloaders": _loader(12, 492),
        "val_dataloaders": _loader(8, 493),
        "trainer": {"max_epochs": 2, "callbacks": [KeptReferenceLogger("train_mean")]},
    }
