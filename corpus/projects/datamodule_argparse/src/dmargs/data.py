from typing import Optional

import torch
from torch.utils.data import DataLoader, TensorDataset
import pytorch_lightning as pl


class RegressionData(pl.LightningDataModule):
    """Random regression batches.

    Args:
        batch_size: samples per batch
        n_samples: samples in the training set
        noise: noise added to the targets
        normalize: scale the inputs to unit variance
        val_fraction: the part of the samples kept for validation (None: none)
    """

    def __init__(self, batch_size: int = 4, n_samples: int = 24, noise: float = 0.1, normalize: bool = False,
                 val_fraction: Optional[float] = None, seed=0):
        super().__init__()
        self.batch_size = batch_size
        self.n_samples = n_samples
        self.noise = noise
        self.normalize = normalize
        self.val_fraction = val_fraction
        self.seed = seed

    def setup(self, stage=None):
        g = torch.Generator().manual_seed(self.seed)
        x = torch.randn(self.n_samples, 4, generator=g)
        if self.normalize:
            x = x / x.std(dim=0, keepdim=True)
        y = x.sum(dim=1, keepdim=True) + self.noise * torch.randn(self.n_samples, 1, generator=g)
        n_val = int(self.n_samples * self.val_fraction) if self.val_fraction else 0
        self.train_set = TensorDataset(x[n_val:], y[n_val:])
        self.val_set = TensorDataset(x[:n_val], y[:n_val])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=False)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size, shuffle=False)
