"""A callback that reads `trainer.val_dataloaders` / `trainer.test_dataloaders` as the lists 1.9
always gave, in the forms a person writes: indexed inside an f-string, iterated (in a loop and
a generator), measured, and again in later lines of the same hook (spec T-prop2, LM102).

1.9 listed even a single test loader; 2.x hands out the loader itself (and a list for several
validation loaders). The migrated hooks read each list once into a local, `test_loaders = ...`
followed by `if not isinstance(test_loaders, (list, tuple)): test_loaders = [test_loaders]`,
and use it where the original read the property. The numbers derived from the loaders are
logged, so a wrong shape (indexing or measuring a bare DataLoader) changes the metrics or fails.
"""
# SHIM-OUT-OF-SCOPE: 1.9 shapes of Trainer properties (val_dataloaders/test_dataloaders lists); LM102 rewrites them
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class LoaderReport(pl.Callback):
    def __init__(self):
        self.lines = []

    def on_validation_epoch_start(self, trainer, pl_module):
        sizes = 0
        for loader in trainer.val_dataloaders:
            sizes += loader.batch_size
        count = len(trainer.val_dataloaders)
        last = trainer.val_dataloaders[-1].batch_size if trainer.val_dataloaders else 0
        pl_module.log("val_loader_count", float(count))
        pl_module.log("val_batch_sizes", float(sizes + last))

    def on_test_epoch_start(self, trainer, pl_module):
        self.lines.append(f"{len(trainer.test_dataloaders[0])} test batches of {trainer.test_dataloaders[0].batch_size}")
        pl_module.log("test_batches", float(len(trainer.test_dataloaders[0])))
        pl_module.log("test_batch_sizes", float(sum(d.batch_size for d in trainer.test_dataloaders)))


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.layer(x).squeeze(-1), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.layer(x).squeeze(-1), y))

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", F.mse_loss(self.layer(x).squeeze(-1), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed, batch_size):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - x[:, 2]), batch_size=batch_size)


def lightmigrate_case():
    return {
        "model": Regressor(),
        "train_dataloaders": _loader(8, 71, 4),
        "val_dataloaders": [_loader(6, 72, 3), _loader(4, 73, 2)],
        "test_dataloaders": _loader(6, 74, 2),
        "trainer": {"max_epochs": 2, "callbacks": [LoaderReport()]},
        "run": ["fit", "test"],
    }
