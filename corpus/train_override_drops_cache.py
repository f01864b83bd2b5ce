"""A submodule whose `train()` override drops a cache computed in eval mode (spec B-9).

The encoder caches its representations (recomputed after each optimizer step, like a graph
encoder's enriched embeddings). Validation fills the cache without gradients; 1.9 then called
`model.train()`, which ran the encoder's `train()` and dropped the cache. 2.x only resets the
`training` flags: without the migration the next training step reuses the gradient-free cache
and its loss cannot be backpropagated. The migration adds `on_validation_model_train` /
`on_test_model_train` with 1.9's body.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class CachedEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(6, 4)
        self.mix = nn.Linear(4, 4)
        self.cache = None

    def reset(self):
        self.cache = None

    def train(self, mode: bool = True):
        # going back to training: the cache was computed without gradient tracking
        if mode and not self.training:
            self.cache = None
        return super().train(mode=mode)

    def forward(self):
        if self.cache is None:
            self.cache = torch.tanh(self.mix(self.table.weight))
        return self.cache


class Scorer(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = CachedEncoder()
        self.head = nn.Linear(4, 1)

    def _loss(self, batch):
        idx, y = batch
        return F.mse_loss(self.head(self.encoder()[idx]).squeeze(-1), y)

    def training_step(self, batch, batch_idx):
        loss = self._loss(batch)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._loss(batch))

    def test_step(self, batch, batch_idx):
        self.log("test_loss", self._loss(batch))

    def on_before_zero_grad(self, optimizer):
        # the parameters change: the cached representations are stale
        self.encoder.reset()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randint(0, 6, (n,), generator=g), torch.randn(n, generator=g)),
                      batch_size=4)


def lightmigrate_case():
    return {
        "model": Scorer(),
        "train_dataloaders": _loader(12, 310),
        "val_dataloaders": _loader(8, 311),
        "test_dataloaders": _loader(8, 312),
        "trainer": {"max_epochs": 3},
        "run": ["fit", "test", "fit"],
    }
