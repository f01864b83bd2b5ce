"""No sanity check (`num_sanity_val_steps=0`), then trainer.validate and trainer.test after fit.

Exercises (spec M2, M3, B.1): without the sanity check the first `validation_epoch_end` call is
epoch 0's. After fit, `trainer.validate` calls it again (stage "validate", inference mode) and
`trainer.test` calls `test_epoch_end`. The validation body keeps a call counter on `self` whose
value is logged, so a spurious or missing call shows in the metrics and in the values returned
by validate/test.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class CountedValidation(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 4), nn.ReLU(), nn.Linear(4, 3))
        self.val_calls = 0

    def forward(self, x):
        return self.body(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return {"loss": F.cross_entropy(logits, y), "hits": (logits.argmax(-1) == y).sum(), "n": len(y)}

    def validation_epoch_end(self, outputs):
        self.val_calls += 1
        self.log("val_loss", torch.stack([o["loss"] for o in outputs]).mean())
        self.log("val_acc", sum(int(o["hits"]) for o in outputs) / sum(o["n"] for o in outputs))
        self.log("val_calls", float(self.val_calls))

    def test_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y, reduction="none")

    def test_epoch_end(self, outputs):
        per_sample = torch.cat(outputs)
        self.log("test_loss", per_sample.mean())
        self.log("test_loss_max", per_sample.max())
        self.log("test_seen_val_calls", float(self.val_calls))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.02)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    return DataLoader(TensorDataset(x, torch.randint(0, 3, (n,), generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": CountedValidation(),
        "train_dataloaders": _loader(12, 240),
        "val_dataloaders": _loader(8, 241),
        "test_dataloaders": _loader(10, 242),
        "trainer": {"max_epochs": 2, "num_sanity_val_steps": 0},
        "run": ["fit", "validate", "test"],
    }
