"""Two optimizers with `"frequency"` (2, 1): alternating optimizer per batch.

Exercises (spec M7, M8, B.5): with frequencies the active optimizer for a batch is chosen from
the per-epoch `batch_idx` (`batch_idx % 3 < 2` -> optimizer 0, else 1); the cycle restarts
every epoch (5 batches: 0,0,1,0,0). `global_step` counts one step per batch.
`training_epoch_end` receives one 1-element list per batch.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class AlternatingModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log(f"loss_opt{optimizer_idx}", loss)
        return {"loss": loss, "opt": optimizer_idx}

    def training_epoch_end(self, outputs):
        used = [per_batch[0]["opt"] for per_batch in outputs]
        self.log("opt1_batches", float(sum(used)))
        self.log("epoch_loss", torch.stack([per_batch[0]["loss"] for per_batch in outputs]).mean())

    def configure_optimizers(self):
        return (
            {"optimizer": torch.optim.SGD(self.encoder.parameters(), lr=0.1), "frequency": 2},
            {"optimizer": torch.optim.SGD(self.head.parameters(), lr=0.05), "frequency": 1},
        )


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] * x[:, 1]), batch_size=4)


def lightmigrate_case():
    return {
        "model": AlternatingModel(),
        "train_dataloaders": _loader(20, 450),
        "trainer": {"max_epochs": 2},
    }
