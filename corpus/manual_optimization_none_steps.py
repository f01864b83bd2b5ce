"""Manual optimization whose training_step returns None on some batches, with training_epoch_end.

Exercises (spec M1, B.1 "Manual optimization in 1.9"; issue 26, ledger fact B1.21): under manual
optimization 1.9 turned a None return into `{}` and dropped it, so `training_epoch_end` received
only the other batches' dicts (their "loss" detached, not divided). Odd batches step the optimizer
but return None; even ones return a dict with an extra key.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ManualSkips(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.lin = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        opt = self.optimizers()
        x, y = batch
        loss = F.mse_loss(self.lin(x).squeeze(-1), y)
        opt.zero_grad()
        self.manual_backward(loss)
        opt.step()
        if batch_idx % 2:
            return None
        return {"loss": loss, "idx": batch_idx}

    def training_epoch_end(self, outputs):
        self.log("kept_batches", float(len(outputs)))
        self.log("idx_sum", float(sum(o["idx"] for o in outputs)))
        self.log("mean_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def lightmigrate_case():
    g = torch.Generator().manual_seed(390)
    x = torch.randn(20, 3, generator=g)
    loader = DataLoader(TensorDataset(x, x @ torch.tensor([0.5, -1.5, 2.0]) + 0.3), batch_size=4)
    return {"model": ManualSkips(), "train_dataloaders": loader, "trainer": {"max_epochs": 2}}
