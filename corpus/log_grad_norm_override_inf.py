"""`Trainer(track_grad_norm="inf")` with an overridden `log_grad_norm` hook.

Exercises (spec M17, T13): 1.9 called the module's `log_grad_norm(grad_norm_dict)` with the
rounded infinity norms (keys `grad_inf_norm/<param>`); this override renames and filters them
before logging. The migrated module calls the same method from `on_before_optimizer_step`.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class InfNormNet(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 2)

    def forward(self, x):
        return self.b(torch.sigmoid(self.a(x)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def log_grad_norm(self, grad_norm_dict):
        kept = {k.replace("grad_inf_norm/", "gmax/"): v for k, v in grad_norm_dict.items() if "bias" not in k}
        self.log_dict(kept, on_step=True, on_epoch=False)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.01)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g), torch.randint(0, 2, (n,), generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": InfNormNet(),
        "train_dataloaders": _loader(12, 331),
        "trainer": {"max_epochs": 2, "track_grad_norm": "inf"},
    }
