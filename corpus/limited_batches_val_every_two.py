"""limit_train_batches / limit_val_batches with validation every second epoch.

Exercises (spec M1, M2, B.1, B.2): `limit_train_batches=0.75` keeps 3 of 4 training batches,
`limit_val_batches=2` keeps 2 of 4 validation batches (the sanity check also runs 2), and
`check_val_every_n_epoch=2` runs validation only after epochs 1 and 3 of 4. So
`validation_epoch_end` is called 3 times (sanity, epoch 1, epoch 3), `training_epoch_end` 4
times with 3 elements each. The validation body stores the epochs it saw; the training body
logs a metric that depends on whether validation ran in this epoch.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class SparseValidationModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(3, 2)
        self.validated_epochs = []
        self.last_val_loss = None

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        return {"loss": loss, "batch": batch_idx}

    def training_epoch_end(self, outputs):
        self.log("train_batches_seen", float(sum(1 for _ in outputs)))
        self.log("train_last_batch_idx", float(outputs[-1]["batch"]))
        if self.last_val_loss is not None:
            self.log("train_minus_val", torch.stack([o["loss"] for o in outputs]).mean() - self.last_val_loss)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"val_loss": F.cross_entropy(self(x), y), "idx": batch_idx}

    def validation_epoch_end(self, outputs):
        self.validated_epochs.append((self.current_epoch, [o["idx"] for o in outputs]))
        self.last_val_loss = torch.stack([o["val_loss"] for o in outputs]).mean()
        self.log("val_loss", self.last_val_loss)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.03)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=4)


def lightmigrate_case():
    return {
        "model": SparseValidationModel(),
        "train_dataloaders": _loader(16, 210),
        "val_dataloaders": _loader(16, 211),
        "trainer": {
            "max_epochs": 4,
            "limit_train_batches": 0.75,
            "limit_val_batches": 2,
            "check_val_every_n_epoch": 2,
        },
    }
