"""Two optimizers, a ReduceLROnPlateau, and max_steps that stops training in the middle of an epoch.

Exercises (spec M7, B.5 "LR schedulers"; issue 26, ledger fact L4 read from 1.9.5's
`loops/fit_loop.py::on_advance_end`): 1.9 stepped epoch-interval ReduceLROnPlateau schedulers only
after an epoch that reached its last batch. `max_steps=20` with 2 optimizers and 4 batches per
epoch stops after batch 1 of epoch 2: 1.9 still ran `on_train_epoch_end` for that cut epoch but did
not step the scheduler, so the final LR is 0.01 (0.001 if it had stepped). The scheduler reduces on
every epoch after the first (`patience=0`, a relative `threshold` of 0.999).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class PlateauPair(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 1)
        self.b = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        net = self.a if optimizer_idx == 0 else self.b
        loss = F.mse_loss(net(x).squeeze(-1), y)
        self.log(f"loss{optimizer_idx}", loss, on_step=False, on_epoch=True)
        return loss

    def configure_optimizers(self):
        opt_a = torch.optim.SGD(self.a.parameters(), lr=0.1)
        opt_b = torch.optim.SGD(self.b.parameters(), lr=0.1)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt_a, patience=0, threshold=0.999)
        return [opt_a, opt_b], [{"scheduler": plateau, "monitor": "loss0"}]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x @ torch.tensor([0.5, -1.5, 2.0]) + 0.3), batch_size=4)


def lightmigrate_case():
    return {
        "model": PlateauPair(),
        "train_dataloaders": _loader(16, 370),
        "trainer": {"max_epochs": 3, "max_steps": 20},
    }
