"""Truncated BPTT with an LSTM, a step scheduler and gradient clipping.

Exercises (spec M16, B.6, B.5, B.1): `truncated_bptt_steps = 3` as a class attribute over a
time length of 7 (chunks of 3, 3 and 1, not divisible); LSTM hiddens are a tuple `(h, c)`,
detached element-wise between chunks. `gradient_clip_val=0.5` in the Trainer (manual
optimization rejects it, so the migration clips in `on_before_optimizer_step`), applied at
every chunk's optimizer step; a step-interval `StepLR` is stepped once per batch, not per
chunk. `training_epoch_end` reads `[batch][split]` losses and an extra tensor key; the
learning rate is logged there.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class LstmTbptt(pl.LightningModule):
    truncated_bptt_steps = 3

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(input_size=2, hidden_size=4, batch_first=True)
        self.head = nn.Linear(4, 1)
        self.first_chunks = 0

    def training_step(self, batch, batch_idx, hiddens):
        x, y = batch
        if hiddens is None:
            self.first_chunks += 1
        seq, (h, c) = self.lstm(x, hiddens)
        loss = F.mse_loss(self.head(seq).squeeze(-1), y)
        self.log("train_loss", loss, prog_bar=True)
        return {"loss": loss, "hiddens": (h, c), "steps": torch.tensor(float(x.shape[1]))}

    def training_epoch_end(self, outputs):
        self.log("n_batches", float(len(outputs)))
        self.log("n_splits", float(sum(len(b) for b in outputs)))
        self.log("loss_sum", torch.stack([s["loss"] for b in outputs for s in b]).sum())
        self.log("steps_sum", torch.stack([s["steps"] for b in outputs for s in b]).sum())
        self.log("first_chunks", float(self.first_chunks))
        self.log("lr", self.trainer.optimizers[0].param_groups[0]["lr"])

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.5)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def lightmigrate_case():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(10, 7, 2, generator=g)
    y = x[:, :, 1].cumsum(dim=1)
    return {
        "model": LstmTbptt(),
        "train_dataloaders": DataLoader(TensorDataset(x, y), batch_size=2),
        "trainer": {"max_epochs": 2, "gradient_clip_val": 0.5},
    }
