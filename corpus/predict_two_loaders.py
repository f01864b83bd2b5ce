"""on_predict_epoch_end(self, results) with two predict dataloaders, predict only.

Exercises (spec M6, B.1): `results` is `[[preds of loader 0], [preds of loader 1]]`. The hook
computes one summary per loader and stores it on `self`; `predict_step` returns a dict, so the
nested structure of `results` is compared element by element. No training happens: the weights
are the seeded initial ones.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class Embedder(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(6, 2)
        self.per_loader_norms = []

    def forward(self, x):
        return self.proj(x)

    def training_step(self, batch, batch_idx):
        (x,) = batch
        return self(x).pow(2).mean()

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        (x,) = batch
        emb = self(x)
        return {"embedding": emb, "norm": emb.norm(dim=1), "source": dataloader_idx}

    def on_predict_epoch_end(self, results):
        self.per_loader_norms = []
        for per_loader in results:
            norms = torch.cat([r["norm"] for r in per_loader])
            self.per_loader_norms.append((len(per_loader), float(norms.mean())))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 6, generator=g)), batch_size=3)


def lightmigrate_case():
    return {
        "model": Embedder(),
        "predict_dataloaders": [_loader(7, 40), _loader(5, 41)],
        "run": ["predict"],
    }
