"""training_epoch_end over dict-returning training steps, some of which return None.

Exercises (spec M1, B.1): `training_step` returns `{"loss", "logits", "correct"}` - the extra
keys are passed through un-detached - and returns None (skips the batch) whenever the batch
holds no positive labels. Each element of `outputs` is the returned dict with "loss" divided by
`accumulate_grad_batches=2`; skipped batches leave no entry. The epoch-end body logs the
accuracy over the kept batches, the mean loss and the mean logit, and stores the number of
kept batches. A plain validation loop (no validation_epoch_end) runs alongside.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class BinaryClassifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(5, 1)
        self.kept_batches = []

    def forward(self, x):
        return self.layer(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        if y.sum() == 0:
            # nothing to learn from a batch without positives
            return None
        logits = self(x)
        loss = F.binary_cross_entropy_with_logits(logits, y)
        correct = ((logits > 0).float() == y).sum()
        self.log("train/loss", loss, on_step=True, on_epoch=True)
        return {"loss": loss, "logits": logits, "correct": correct, "size": len(y)}

    def training_epoch_end(self, outputs):
        total = sum(o["size"] for o in outputs)
        correct = torch.stack([o["correct"] for o in outputs]).sum()
        self.log("train/acc_epoch", correct / total)
        self.log("train/mean_loss_from_outputs", torch.stack([o["loss"] for o in outputs]).mean())
        self.log("train/mean_logit", torch.cat([o["logits"] for o in outputs]).mean())
        self.kept_batches.append(len(outputs))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val/loss", F.binary_cross_entropy_with_logits(self(x), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.05)


def _loader(n, seed, zero_batches=()):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).float()
    for b in zero_batches:
        y[b * 4:(b + 1) * 4] = 0.0
    return DataLoader(TensorDataset(x, y), batch_size=4)


def lightmigrate_case():
    return {
        "model": BinaryClassifier(),
        "train_dataloaders": _loader(24, 3, zero_batches=(1, 4)),
        "val_dataloaders": _loader(8, 4),
        "trainer": {"max_epochs": 2, "accumulate_grad_batches": 2},
    }
