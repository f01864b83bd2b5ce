"""A `configure_gradient_clipping` override with the 1.x `optimizer_idx` parameter.

Exercises (spec M13, B.5): with one optimizer and `Trainer(gradient_clip_val=0.1)`, 1.x calls
`configure_gradient_clipping(optimizer, optimizer_idx, gradient_clip_val,
gradient_clip_algorithm)` before each real step; the override clips by value for the first
epoch and by norm afterwards, using `self.clip_gradients`. 2.x calls it with 3 arguments, so
the old signature binds the clip value to `optimizer_idx`.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class CustomClipModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 1))
        self.clip_calls = []

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("clip_calls", float(len(self.clip_calls)))

    def configure_gradient_clipping(self, optimizer, optimizer_idx, gradient_clip_val=None, gradient_clip_algorithm=None):
        self.clip_calls.append((optimizer_idx, gradient_clip_val))
        algorithm = "value" if self.current_epoch == 0 else "norm"
        self.clip_gradients(optimizer, gradient_clip_val=gradient_clip_val, gradient_clip_algorithm=algorithm)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, 4 * x[:, 0] ** 2), batch_size=4)


def lightmigrate_case():
    return {
        "model": CustomClipModel(),
        "train_dataloaders": _loader(12, 510),
        "trainer": {"max_epochs": 2, "gradient_clip_val": 0.1},
    }
