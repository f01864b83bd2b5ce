"""Every single-optimizer hook that lost `optimizer_idx` in 2.0, overridden with its 1.x signature.

Exercises (spec M10-M15, B.5, B.8): one SGD optimizer under automatic optimization with
`Trainer(gradient_clip_val=0.5)` and a step-interval `StepLR`. The 1.x overrides:
`optimizer_step(epoch, batch_idx, optimizer, optimizer_idx, optimizer_closure, on_tpu,
using_native_amp, using_lbfgs)` doing LR warm-up and reading `optimizer_idx` / `using_lbfgs`;
`optimizer_zero_grad(..., optimizer_idx)`; `on_before_optimizer_step(optimizer, optimizer_idx)`;
`backward(loss, optimizer, optimizer_idx, *args, **kwargs)` scaling the loss;
`configure_gradient_clipping(optimizer, optimizer_idx, ...)` clipping by norm;
`lr_scheduler_step(scheduler, optimizer_idx, metric)`. What each hook saw is logged in
`training_epoch_end`, with the mean step loss.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class OldHooksModel(pl.LightningModule):
    def __init__(self, base_lr=0.05, warmup_steps=3):
        super().__init__()
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.seen = {"step": [], "zero": [], "before": [], "backward": [], "clip": [], "sched": []}

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx, optimizer_closure, on_tpu,
                       using_native_amp, using_lbfgs):
        self.seen["step"].append(optimizer_idx + (10 if using_lbfgs else 0) + (100 if on_tpu else 0))
        if not using_lbfgs and self.trainer.global_step < self.warmup_steps:
            scale = (self.trainer.global_step + 1) / self.warmup_steps
            for group in optimizer.param_groups:
                group["lr"] = scale * self.base_lr
        optimizer.step(closure=optimizer_closure)

    def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
        self.seen["zero"].append(optimizer_idx)
        optimizer.zero_grad()

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        grad = self.net[0].weight.grad
        self.seen["before"].append(float(grad.abs().sum()) + optimizer_idx)

    def backward(self, loss, optimizer, optimizer_idx, *args, **kwargs):
        self.seen["backward"].append(optimizer_idx)
        (loss * 2.0).backward(*args, **kwargs)

    def configure_gradient_clipping(self, optimizer, optimizer_idx, gradient_clip_val=None,
                                    gradient_clip_algorithm=None):
        self.seen["clip"].append(gradient_clip_val + optimizer_idx)
        self.clip_gradients(optimizer, gradient_clip_val=gradient_clip_val, gradient_clip_algorithm="norm")

    def lr_scheduler_step(self, scheduler, optimizer_idx, metric):
        self.seen["sched"].append(optimizer_idx)
        scheduler.step()

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())
        for key, values in self.seen.items():
            self.log(f"seen_{key}_count", float(len(values)))
            self.log(f"seen_{key}_sum", float(sum(values)))

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=self.base_lr, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        return [optimizer], [{"scheduler": scheduler, "interval": "step"}]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - 2 * x[:, 3]), batch_size=4)


def lightmigrate_case():
    return {
        "model": OldHooksModel(),
        "train_dataloaders": _loader(16, 720),
        "trainer": {"max_epochs": 2, "gradient_clip_val": 0.5},
    }
