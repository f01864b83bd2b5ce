"""Two optimizers with Trainer gradient clipping (by value) and `accumulate_grad_batches=3`,
plus every old-signature hook of the optimization path.

Exercises (spec M7, M11, M13, M14, M15, B.5) under the v1 shim: accumulation over 3 batches
with a partial last window, zero_grad only on the first batch of a window (after the forward),
losses divided by 3 in the outputs, clipping through an overridden
`configure_gradient_clipping(optimizer, optimizer_idx, gradient_clip_val, gradient_clip_algorithm)`,
`on_before_optimizer_step(optimizer, optimizer_idx)`, `optimizer_zero_grad(epoch, batch_idx,
optimizer, optimizer_idx)` and `backward(loss, optimizer, optimizer_idx)` overrides, logging
skipped on accumulating batches.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ClippedPair(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(4, 4)
        self.second = nn.Linear(4, 1)
        self.events = []

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        out = self.second(torch.relu(self.first(x))).squeeze(-1)
        loss = F.mse_loss(out, y) * (3.0 if optimizer_idx == 0 else 1.0)
        self.log(f"loss_{optimizer_idx}", loss)
        return loss

    def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
        self.events.append(("zero", batch_idx, optimizer_idx))
        optimizer.zero_grad()

    def backward(self, loss, optimizer, optimizer_idx, *args, **kwargs):
        self.events.append(("backward", optimizer_idx))
        (loss * (1.0 + optimizer_idx)).backward(*args, **kwargs)

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        norm = torch.stack([p.grad.norm() for g in optimizer.param_groups for p in g["params"]
                            if p.grad is not None]).sum()
        self.log(f"grad_norm_before_clip_{optimizer_idx}", norm)

    def configure_gradient_clipping(self, optimizer, optimizer_idx, gradient_clip_val=None,
                                    gradient_clip_algorithm=None):
        self.events.append(("clip", optimizer_idx, gradient_clip_val, str(gradient_clip_algorithm)))
        if optimizer_idx == 0:
            self.clip_gradients(optimizer, gradient_clip_val=gradient_clip_val,
                                gradient_clip_algorithm=gradient_clip_algorithm)

    def training_epoch_end(self, outputs):
        self.log("mean_loss_0", torch.stack([per[0]["loss"] for per in outputs]).mean())
        self.log("mean_loss_1", torch.stack([per[1]["loss"] for per in outputs]).mean())
        self.log("n_events", float(len(self.events)))
        self.log("n_zero", float(sum(1 for e in self.events if e[0] == "zero")))
        self.log("n_clip", float(sum(1 for e in self.events if e[0] == "clip")))

    def configure_optimizers(self):
        return [torch.optim.SGD(self.first.parameters(), lr=0.1, momentum=0.5),
                torch.optim.Adam(self.second.parameters(), lr=0.02)]


def lightmigrate_case():
    g = torch.Generator().manual_seed(21)
    x = torch.randn(28, 4, generator=g) * 2
    y = (x ** 2).sum(dim=1)
    return {
        "model": ClippedPair(),
        "train_dataloaders": DataLoader(TensorDataset(x, y), batch_size=4),
        "trainer": {"max_epochs": 2, "accumulate_grad_batches": 3, "gradient_clip_val": 0.05,
                    "gradient_clip_algorithm": "value"},
    }
