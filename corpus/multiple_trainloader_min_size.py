"""Two training loaders returned as a dict, iterated with `multiple_trainloader_mode="min_size"`.

Exercises (spec T17): 1.9 wrapped the dict `train_dataloader` returned in a `CombinedLoader`
with the Trainer's `multiple_trainloader_mode`; 2.x removed the argument and wraps a returned
dict with the default `"max_size_cycle"`. With loaders of 3 and 2 batches, 1.9 ran 2 batches per
epoch ("min_size"), 2.x 3. LM101 moves the mode into the module: `return CombinedLoader(
{...}, mode="min_size")` (the loaders are in the same file as the Trainer arguments).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


def _dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return TensorDataset(x, x.sum(1, keepdim=True))


class TwoDomainRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        xa, ya = batch["source"]
        xb, yb = batch["target"]
        loss = F.mse_loss(self.net(xa), ya) + 0.5 * F.mse_loss(self.net(xb), yb)
        self.log("train_loss", loss)
        return loss

    def train_dataloader(self):
        return {
            "source": DataLoader(_dataset(12, 450), batch_size=4),
            "target": DataLoader(_dataset(8, 451), batch_size=4),
        }

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def lightmigrate_case():
    return {
        "model": TwoDomainRegressor(),
        "trainer": {"max_epochs": 2, "multiple_trainloader_mode": "min_size"},
    }
