"""Optimizer dicts with `"frequency"` (2, 1) and per-optimizer LR schedulers.

Exercises (spec M8, B.5): the active optimizer is chosen by the per-epoch
`batch_idx` (the cycle restarts every epoch: 5 batches give optimizers 0,0,1,0,0), outputs
are `[[d], [d], ...]`, a step-interval scheduler on optimizer 0 is stepped only when 1.9's
`total_batch_idx`-based activity check says so (the 1.9 inconsistency), an epoch-interval
scheduler with frequency 2 on optimizer 1, and `global_step` counts one step per batch.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class Alternating(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 1)
        self.b = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        head = self.a if optimizer_idx == 0 else self.b
        loss = F.mse_loss(head(x).squeeze(-1) + 0.1 * self.a(x).squeeze(-1).detach(), y)
        self.log(f"loss_{optimizer_idx}", loss)
        self.log("lr_a", self.trainer.optimizers[0].param_groups[0]["lr"])
        self.log("lr_b", self.trainer.optimizers[1].param_groups[0]["lr"])
        return {"loss": loss, "opt": optimizer_idx}

    def training_epoch_end(self, outputs):
        self.log("n_batches", float(len(outputs)))
        self.log("n_opt1", float(sum(1 for per in outputs for o in per if o["opt"] == 1)))
        self.log("mean_loss", torch.stack([o["loss"] for per in outputs for o in per]).mean())

    def configure_optimizers(self):
        opt_a = torch.optim.SGD(self.a.parameters(), lr=0.1)
        opt_b = torch.optim.SGD(self.b.parameters(), lr=0.1)
        sched_a = torch.optim.lr_scheduler.StepLR(opt_a, step_size=1, gamma=0.9)
        sched_b = torch.optim.lr_scheduler.ExponentialLR(opt_b, gamma=0.5)
        return [
            {"optimizer": opt_a, "frequency": 2, "lr_scheduler": {"scheduler": sched_a, "interval": "step"}},
            {"optimizer": opt_b, "frequency": 1, "lr_scheduler": {"scheduler": sched_b, "frequency": 2}},
        ]


def lightmigrate_case():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(20, 4, generator=g)
    y = x @ torch.tensor([0.5, -1.0, 0.3, 2.0])
    return {
        "model": Alternating(),
        "train_dataloaders": DataLoader(TensorDataset(x, y), batch_size=4),
        "trainer": {"max_epochs": 3},
    }
