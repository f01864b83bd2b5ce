"""Truncated back-propagation through time: `truncated_bptt_steps` and `hiddens`.

Exercises (spec M16, B.6, B.1): `self.truncated_bptt_steps = 2` splits each (batch, time=5)
sequence into chunks of length 2, 2 and 1; `training_step(batch, batch_idx, hiddens)` gets
None for the first chunk and the previous chunk's returned (detached) `"hiddens"` after that.
Every chunk is an optimizer step. `training_epoch_end` receives [batch][split] dicts without
the "hiddens" key.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TbpttModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.truncated_bptt_steps = 2
        self.rnn = nn.GRU(input_size=2, hidden_size=3, batch_first=True)
        self.out = nn.Linear(3, 1)

    def forward(self, x, hiddens=None):
        seq, hiddens = self.rnn(x, hiddens)
        return self.out(seq).squeeze(-1), hiddens

    def training_step(self, batch, batch_idx, hiddens):
        x, y = batch
        pred, hiddens = self(x, hiddens)
        loss = F.mse_loss(pred, y)
        self.log("chunk_loss", loss)
        return {"loss": loss, "hiddens": hiddens, "chunk_len": x.size(1)}

    def training_epoch_end(self, outputs):
        lengths = [[split["chunk_len"] for split in per_batch] for per_batch in outputs]
        self.log("splits_per_batch", float(len(lengths[0])))
        self.log("epoch_loss", torch.stack([s["loss"] for b in outputs for s in b]).mean())

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.02)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, 2, generator=g)
    return DataLoader(TensorDataset(x, x[:, :, 0].cumsum(dim=1)), batch_size=3)


def lightmigrate_case():
    return {
        "model": TbpttModel(),
        "train_dataloaders": _loader(6, 500),
        "trainer": {"max_epochs": 2},
    }
