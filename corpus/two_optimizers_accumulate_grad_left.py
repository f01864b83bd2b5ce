"""Two optimizers with gradient accumulation and no clipping; the step reads the gradients left over.

Exercises (spec M7, B.5 "the closure"): `Trainer(accumulate_grad_batches=2)` with two SGD
optimizers in automatic mode. 1.x ran each optimizer's closure as training_step, zero_grad
(only on the first batch of a window), backward of `loss / 2`: the forward pass of a window's
first batch still sees the gradients the previous window left, and with no clipping the
division by 2 shows in the weights. Each `training_step` adds the norm of the gradients it
finds on its optimizer's parameters (0 when there are none) to a registered buffer, which the
weights comparison covers; `training_epoch_end` keeps the `[batch][optimizer]` losses there too.
Nothing is logged during fit (with accumulation 1.x and 2.x log step metrics under different
steps, see `pending/two_optimizers_schedulers_clip_accumulate.py`).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl

EPOCHS = 2


class GradientWatcher(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)
        # per optimizer: the summed norm of the gradients found at the start of its steps
        self.register_buffer("grad_left", torch.zeros(2))
        # per epoch: mean loss of each optimizer
        self.register_buffer("epoch_losses", torch.zeros(EPOCHS, 2))

    def forward(self, x):
        return self.head(torch.tanh(self.encoder(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        module = self.encoder if optimizer_idx == 0 else self.head
        grads = [p.grad.norm() for p in module.parameters() if p.grad is not None]
        if grads:
            self.grad_left[optimizer_idx] += torch.stack(grads).sum()
        x, y = batch
        loss = F.mse_loss(self(x), y)
        if optimizer_idx == 1:
            loss = loss + 0.1 * self.head.weight.abs().sum()
        return loss

    def training_epoch_end(self, outputs):
        for i in range(2):
            self.epoch_losses[self.current_epoch, i] = torch.stack([per_batch[i]["loss"] for per_batch in outputs]).mean()

    def configure_optimizers(self):
        return [torch.optim.SGD(self.encoder.parameters(), lr=0.1),
                torch.optim.SGD(self.head.parameters(), lr=0.05)]


def lightmigrate_case():
    g = torch.Generator().manual_seed(470)
    x = torch.randn(20, 4, generator=g)
    return {
        "model": GradientWatcher(),
        "train_dataloaders": DataLoader(TensorDataset(x, 2 * x[:, 0] - x[:, 2]), batch_size=4),
        "trainer": {"max_epochs": EPOCHS, "accumulate_grad_batches": 2},
    }
