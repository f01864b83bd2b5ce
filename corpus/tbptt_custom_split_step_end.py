"""Truncated BPTT with a custom `tbptt_split_batch`, `training_step_end` and one batch per epoch.

Exercises (spec M16, B.6, B.3, B.1): the module overrides `tbptt_split_batch` (chunks of
`split_size` steps, but only x and y; a per-sample weight is passed whole to every chunk);
`training_step_end` scales the loss (it runs inside the closure, once per chunk, before
zero_grad and backward); an epoch epoch has ONE batch, so 1.9 squeezed the batch dimension:
`training_epoch_end` gets a flat list of the chunk dicts. `truncated_bptt_steps` comes from a
constructor argument and is saved to hparams.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class CustomSplit(pl.LightningModule):
    def __init__(self, tbptt=2):
        super().__init__()
        self.save_hyperparameters()
        self.truncated_bptt_steps = tbptt
        self.rnn = nn.RNN(input_size=1, hidden_size=3, batch_first=True)
        self.head = nn.Linear(3, 1)

    def tbptt_split_batch(self, batch, split_size):
        x, y, w = batch
        return [[x[:, t:t + split_size], y[:, t:t + split_size], w] for t in range(0, x.shape[1], split_size)]

    def training_step(self, batch, batch_idx, hiddens):
        x, y, w = batch
        seq, h = self.rnn(x, hiddens)
        per_sample = ((self.head(seq).squeeze(-1) - y) ** 2).mean(dim=1)
        return {"loss": (per_sample * w).mean(), "hiddens": h, "n": x.shape[1]}

    def training_step_end(self, out):
        out["loss"] = out["loss"] * 0.5
        self.log("scaled", out["loss"])
        return out

    def training_epoch_end(self, outputs):
        self.log("n_outputs", float(len(outputs)))
        self.log("chunk_steps", float(sum(o["n"] for o in outputs)))
        self.log("mean_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.05)


def lightmigrate_case():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 6, 1, generator=g)
    y = x[..., 0].cumsum(dim=1)
    w = torch.rand(4, generator=g) + 0.5
    return {
        "model": CustomSplit(tbptt=2),
        "train_dataloaders": DataLoader(TensorDataset(x, y, w), batch_size=4),
        "trainer": {"max_epochs": 3},
    }
