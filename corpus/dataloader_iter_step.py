"""`training_step(self, dataloader_iter, batch_idx)`: the step pulls its own batch (spec M24).

1.9 passed the iterator and `batch_idx`, and `next(dataloader_iter)` gave the batch; 2.1+
passes only the iterator and `next()` gives `(batch, batch_idx, dataloader_idx)`. The step
does not read `batch_idx`, so the migration drops it and takes element 0.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class IterStep(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 1)

    def training_step(self, dataloader_iter, batch_idx):
        x, y = next(dataloader_iter)
        loss = F.mse_loss(self.layer(x), y)
        self.log("iter_loss", loss, batch_size=x.shape[0])
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g), torch.randn(n, 1, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": IterStep(),
        "train_dataloaders": _loader(12, 361),
        "trainer": {"max_epochs": 2},
    }
