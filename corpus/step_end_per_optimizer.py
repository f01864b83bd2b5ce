"""training_step_end with two optimizers: it runs once per optimizer, on that optimizer's output.

Exercises (issue 26, ledger fact B3.3, spec B.3, B.5): automatic optimization with two
optimizers; `training_step(batch, batch_idx, optimizer_idx)` returns `{"loss", "idx"}` and
`training_step_end` scales the loss by a per-optimizer weight (what the closure backpropagates)
and counts its calls per optimizer in a buffer (it does not log: with `self.log` in
`training_step_end` and two optimizers 1.9.5 dropped optimizer 0's metrics of each epoch's first
batch, which the migration cannot reproduce: LM005 marks such a hook, ledger fact L18). 1.9 called it once per optimizer per
batch, inside that optimizer's closure; LM005's loop (and LM003's inlining into the old step)
must do the same: the counts, the logged values and the trained weights show it.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TwoHeads(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)
        self.register_buffer("calls", torch.zeros(2))

    def forward(self, x):
        return self.head(torch.tanh(self.body(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log(f"raw_loss_{optimizer_idx}", loss)
        return {"loss": loss, "idx": optimizer_idx}

    def training_step_end(self, out):
        i = out["idx"]
        self.calls[i] += 1
        scaled = out["loss"] * (1.0 + i)
        return {"loss": scaled, "idx": i}

    def configure_optimizers(self):
        return [torch.optim.SGD(self.body.parameters(), lr=0.05), torch.optim.SGD(self.head.parameters(), lr=0.1)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] - 0.5 * x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": TwoHeads(),
        "train_dataloaders": _loader(12, 31),
        "trainer": {"max_epochs": 2},
    }
