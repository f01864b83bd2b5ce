"""1.x manual optimization calling the old `toggle_optimizer(opt, idx)` /
`untoggle_optimizer(idx)` and an old-signature `backward(loss, optimizer, optimizer_idx)`.

Exercises (spec M9, M15, B.1) under the v1 shim: the 1.x toggle API on 2.x, `manual_backward`
reaching a `backward` override with `optimizer=None, optimizer_idx=None` as in 1.9, a
`training_step_end` under manual optimization, and manual outputs (loss not divided) in
`training_epoch_end`.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ManualToggle(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 1)
        self.backward_args = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt_a, opt_b = self.optimizers()
        for idx, opt in enumerate((opt_a, opt_b)):
            self.toggle_optimizer(opt, idx)
            loss = F.mse_loss(self.b(torch.relu(self.a(x))).squeeze(-1), y)
            opt.zero_grad()
            self.manual_backward(loss)
            opt.step()
            self.untoggle_optimizer(idx)
        return {"loss": loss, "frozen_b": float(not self.b.weight.requires_grad)}

    def training_step_end(self, out):
        return {"loss": out["loss"] * 2, "frozen_b": out["frozen_b"]}

    def backward(self, loss, optimizer, optimizer_idx, *args, **kwargs):
        self.backward_args.append((optimizer, optimizer_idx))
        loss.backward(*args, **kwargs)

    def training_epoch_end(self, outputs):
        self.log("mean_loss", torch.stack([o["loss"] for o in outputs]).mean())
        self.log("frozen_b", float(sum(o["frozen_b"] for o in outputs)))
        self.log("backward_none", float(all(a == (None, None) for a in self.backward_args)))

    def configure_optimizers(self):
        return [torch.optim.SGD(self.a.parameters(), lr=0.1), torch.optim.SGD(self.b.parameters(), lr=0.1)]


def lightmigrate_case():
    g = torch.Generator().manual_seed(9)
    x = torch.randn(12, 3, generator=g)
    return {
        "model": ManualToggle(),
        "train_dataloaders": DataLoader(TensorDataset(x, x.prod(dim=1)), batch_size=4),
        "trainer": {"max_epochs": 2},
    }
