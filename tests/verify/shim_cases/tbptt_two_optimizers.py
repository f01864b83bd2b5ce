"""Truncated BPTT with two optimizers.

Exercises (spec M16, B.1, B.6) under the v1 shim: 1.9's default `tbptt_split_batch` (chunks of
length 3 along dim 1, the last one shorter), `hiddens` passed from split to split AND from
optimizer 0 to optimizer 1 within a split (detached), `"hiddens"` removed from the outputs,
`[batch][split][optimizer]` nesting in `training_epoch_end`, `global_step` counting every
split and optimizer.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class SplitRNN(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(2, 4, batch_first=True)
        self.head = nn.Linear(4, 1)
        self.truncated_bptt_steps = 3
        self.hidden_was_none = []

    def training_step(self, batch, batch_idx, optimizer_idx, hiddens):
        x, y = batch
        self.hidden_was_none.append(hiddens is None)
        out, h = self.rnn(x, hiddens)
        pred = self.head(out).squeeze(-1)
        loss = F.mse_loss(pred, y) * (1.0 if optimizer_idx == 0 else 0.5)
        self.log(f"loss_{optimizer_idx}", loss)
        return {"loss": loss, "hiddens": h, "steps": x.shape[1]}

    def training_epoch_end(self, outputs):
        self.log("n_batches", float(len(outputs)))
        self.log("n_splits", float(sum(len(per_batch) for per_batch in outputs)))
        self.log("split_steps", float(sum(o["steps"] for b in outputs for s in b for o in s)))
        self.log("has_hiddens_key", float(any("hiddens" in o for b in outputs for s in b for o in s)))
        self.log("none_hiddens", float(sum(self.hidden_was_none)))

    def configure_optimizers(self):
        return [torch.optim.SGD(self.rnn.parameters(), lr=0.1), torch.optim.Adam(self.head.parameters(), lr=0.01)]


def lightmigrate_case():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(6, 8, 2, generator=g)
    y = x.cumsum(dim=1)[..., 0]
    return {
        "model": SplitRNN(),
        "train_dataloaders": DataLoader(TensorDataset(x, y), batch_size=3),
        "trainer": {"max_epochs": 2},
    }
