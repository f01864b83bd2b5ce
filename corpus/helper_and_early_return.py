"""Epoch-end bodies that delegate to a helper method or return early.

Exercises (spec M1, M2): `validation_epoch_end` hands `outputs` to a shared `_summarize` helper
that logs stage-prefixed metrics; `training_epoch_end` returns early during the first epoch and
only then looks at its outputs. A second `validation_epoch_end` exit path returns early when the
run is the sanity check. Runs 3 epochs with
`limit_train_batches=3`.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class Forecaster(pl.LightningModule):
    def __init__(self, warmup_epochs=1):
        super().__init__()
        self.warmup_epochs = warmup_epochs
        self.rnn = nn.GRU(input_size=2, hidden_size=4, batch_first=True)
        self.out = nn.Linear(4, 1)
        self.summaries = []

    def forward(self, seq):
        hidden, _ = self.rnn(seq)
        return self.out(hidden[:, -1]).squeeze(-1)

    def training_step(self, batch, batch_idx):
        seq, target = batch
        loss = F.l1_loss(self(seq), target)
        self.log("train_l1", loss)
        return {"loss": loss, "target_mean": target.mean()}

    def validation_step(self, batch, batch_idx):
        seq, target = batch
        return {"loss": F.l1_loss(self(seq), target), "n": len(target)}

    def _summarize(self, stage, outputs):
        total = sum(o["n"] for o in outputs) if "n" in outputs[0] else len(outputs)
        loss = torch.stack([o["loss"] for o in outputs]).mean()
        self.log(f"{stage}_l1_epoch", loss)
        self.log(f"{stage}_count", float(total))
        self.summaries.append((stage, total, float(loss)))
        return loss

    def training_epoch_end(self, outputs):
        if self.current_epoch < self.warmup_epochs:
            return
        self._summarize("train", outputs)
        self.log("train_target_mean", torch.stack([o["target_mean"] for o in outputs]).mean())

    def validation_epoch_end(self, outputs):
        if self.trainer.sanity_checking:
            self.summaries.append(("sanity", len(outputs), None))
            return
        self._summarize("val", outputs)

    def configure_optimizers(self):
        return torch.optim.RMSprop(self.parameters(), lr=0.01)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    seq = torch.randn(n, 5, 2, generator=g)
    return DataLoader(TensorDataset(seq, seq[:, :, 0].sum(dim=1)), batch_size=4)


def lightmigrate_case():
    return {
        "model": Forecaster(),
        "train_dataloaders": _loader(16, 60),
        "val_dataloaders": _loader(8, 61),
        "trainer": {"max_epochs": 3, "limit_train_batches": 3},
    }
