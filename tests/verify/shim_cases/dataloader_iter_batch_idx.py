"""`training_step(self, dataloader_iter, batch_idx)` under the v1 shim: 2.x passes the iterator
alone and its `next()` gives `(batch, batch_idx, dataloader_idx)`; the shim hands the step 1.9's
iterator (the batch alone) and 1.9's `batch_idx` (the batches fetched so far in the epoch), which
the step logs.
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
        self.log("bidx", float(batch_idx), batch_size=1)
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
