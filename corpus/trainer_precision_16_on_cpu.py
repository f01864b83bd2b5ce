"""`precision=16` (and the string "16") on a CPU Trainer, plus legacy explicit-None arguments.

Exercises (spec T9, T12, T28, LM101): 1.9 turned `precision=16` on the CPU into bf16 autocast;
LM101 writes `precision="16-mixed"`, which 2.x runs the same way. The case also passes
`accumulate_grad_batches=None` and `strategy=None` (1.9 defaults; 2.x rejects them, so LM101 drops
them) and `replace_sampler_ddp=False` (renamed to `use_distributed_sampler`). The step logs the
autocast dtype and the loss so a wrong precision shows in the metrics and the weights.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class HalfModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self(x)
        self.log("out_is_bf16", float(out.dtype == torch.bfloat16))
        loss = F.mse_loss(out.float(), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        # a 1.x hook 2.x removed (LM001 migrates it): the mean training loss the epoch saw
        self.log("epoch_mean_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self(x).float(), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - 2 * x[:, 3]), batch_size=4)


def lightmigrate_case():
    return {
        "model": HalfModel(),
        "train_dataloaders": _loader(16, 901),
        "val_dataloaders": _loader(8, 902),
        "trainer": {"max_epochs": 2, "precision": 16, "accumulate_grad_batches": None, "strategy": None,
                    "replace_sampler_ddp": False},
    }
