"""A module that reads `trainer.amp_backend` to choose what it does (T-prop6).

1.9.5 answered "native" for its native mixed-precision plugin (`precision="bf16"` here, on the
CPU) and None without mixed precision; 2.x removed the property. LM102 reads it as 2.x's
precision: "native" for "16-mixed"/"bf16-mixed", else None. The case trains with bf16 mixed
precision and logs what the module saw in `on_train_start` and in each step.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class AmpAwareRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)
        self.backend_at_start = None

    def on_train_start(self):
        self.backend_at_start = self.trainer.amp_backend

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x).float(), y)
        self.log("native_amp", float(self.trainer.amp_backend == "native"))
        self.log("no_amp", float(self.backend_at_start is None))
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def lightmigrate_case():
    return {
        "model": AmpAwareRegressor(),
        "train_dataloaders": _loader(12, 494),
        "trainer": {"max_epochs": 2, "precision": "bf16"},
    }
