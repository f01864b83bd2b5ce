"""A `BasePredictionWriter` that writes at epoch end, reading one list per dataloader.

Exercises (spec C2, B.1 "Prediction"): 1.9 passed `write_on_epoch_end` the predictions as one
list per dataloader, also for a single dataloader (`[[p0, p1, ...]]`); 2.x passes a flat list
for one dataloader (`batch_indices` stays nested in both). The writer zips the two per
dataloader: unmigrated on 2.x `torch.cat` gets a tensor and raises. It stores what it wrote
in a registered buffer of the module (compared at the end of the run). LM307 wraps the
predictions as 1.9 did when there is one dataloader.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import BasePredictionWriter


class SummaryWriter(BasePredictionWriter):
    def __init__(self):
        super().__init__(write_interval="epoch")

    def write_on_epoch_end(self, trainer, pl_module, predictions, batch_indices):
        for dataloader_idx, (preds, indices) in enumerate(zip(predictions, batch_indices)):
            stacked = torch.cat(preds)
            flat = [i for batch in indices for i in batch]
            pl_module.written[dataloader_idx, 0] += stacked.sum()
            pl_module.written[dataloader_idx, 1] += len(stacked)
            pl_module.written[dataloader_idx, 2] += sum(flat)


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.register_buffer("written", torch.zeros(2, 3))

    def forward(self, x):
        return self.net(x)

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        return self(batch[0])


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": Regressor(),
        "predict_dataloaders": _loader(10, 440),
        "trainer": {"callbacks": [SummaryWriter()]},
        "run": ["predict"],
    }
