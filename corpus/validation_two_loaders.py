"""validation_epoch_end with two validation dataloaders, one of which sometimes returns None.

Exercises (spec M2, B.1, B.9): with two loaders `outputs` is a list of two lists. Loader 1's
step returns None for its first two batches, so the sanity check (default
`num_sanity_val_steps=2`) hands the hook `[[a, b], []]`, and every real epoch
`[[a, b, c], [z]]`. The body logs one metric per loader (no `/dataloader_idx_N` suffix at epoch
end), guarding the empty list, and records the per-loader counts on `self`.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TwoDomainModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 6)
        self.head = nn.Linear(6, 1)
        self.loader_counts = []

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x))).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("loss", loss)
        return loss

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        if dataloader_idx == 1 and batch_idx < 2:
            return None  # the target domain has no labels for its first samples
        err = (self(x) - y).abs()
        self.log("val_mae", err.mean())
        return err

    def validation_epoch_end(self, outputs):
        counts = []
        for idx, per_loader in enumerate(outputs):
            counts.append(len(per_loader))
            if not per_loader:
                continue
            self.log(f"val_mae_epoch_{idx}", torch.cat(per_loader).mean())
        self.loader_counts.append(counts)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g) + shift
    y = x.sum(dim=1)
    return DataLoader(TensorDataset(x, y), batch_size=4)


def lightmigrate_case():
    return {
        "model": TwoDomainModel(),
        "train_dataloaders": _loader(12, 5),
        "val_dataloaders": [_loader(12, 6), _loader(12, 7, shift=1.0)],
        "trainer": {"max_epochs": 2},
    }
