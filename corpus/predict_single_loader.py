"""on_predict_epoch_end(self, results) with one predict dataloader, after a short fit.

Exercises (spec M6, B.1): in 1.x `results` is always a list with one list per dataloader, so a
single loader gives `[[p0, p1, ...]]`. The hook concatenates `results[0]` into a tensor kept on
`self` (the usual "collect predictions for export" idiom). `trainer.predict` returns the flat
list of batch predictions.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ScoreModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.Linear(4, 1))
        self.all_scores = None

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        x, _ = batch
        return torch.sigmoid(self(x))

    def on_predict_epoch_end(self, results):
        self.all_scores = torch.cat(results[0])
        self.num_predict_batches = len(results[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x.mean(dim=1)), batch_size=4)


def lightmigrate_case():
    return {
        "model": ScoreModel(),
        "train_dataloaders": _loader(12, 30),
        "predict_dataloaders": _loader(10, 31),
        "trainer": {"max_epochs": 1},
        "run": ["fit", "predict"],
    }
