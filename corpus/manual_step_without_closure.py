"""Hand-written 1.x manual optimization that calls `opt.step()` without a closure (SGD).

Exercises (spec B.8, M9): with `automatic_optimization = False` the step fetches the
optimizer, zeroes the gradients, runs the forward, calls `manual_backward`, clips with
`self.clip_gradients`, and steps with a bare `opt.step()`; the prediction and the loss are used
after the step (logged, returned). LM004 moves zero_grad..clip into a closure passed to
`opt.step(closure=...)` (what LBFGS needs); SGD evaluates it once, so training is unchanged.
A step-interval scheduler is stepped by hand every other batch; `training_epoch_end` logs the
mean loss (not divided: manual optimization).
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class ManualSgdModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.net = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 1))
        self.forward_calls = 0

    def forward(self, x):
        self.forward_calls += 1
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        opt = self.optimizers()
        opt.zero_grad()
        pred = self(x)
        loss = F.mse_loss(pred, y)
        self.manual_backward(loss)
        self.clip_gradients(opt, gradient_clip_val=0.3, gradient_clip_algorithm="norm")
        opt.step()
        if batch_idx % 2 == 1:
            self.lr_schedulers().step()
        self.log("train_loss", loss)
        self.log("pred_mean", pred.mean())
        self.log("forward_calls", float(self.forward_calls))
        return loss

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.5)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.8)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] * x[:, 1] + x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": ManualSgdModel(),
        "train_dataloaders": _loader(16, 730),
        "trainer": {"max_epochs": 2},
    }
