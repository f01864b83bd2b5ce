"""validation_epoch_end with one validation dataloader, run by fit (with sanity check) and validate.

Exercises (spec M2, B.1, B.2, B.9): with exactly one loader `outputs` is a flat list of the
`validation_step` return values. The default `num_sanity_val_steps=2` calls the hook once with
the first two batches before training. `trainer.validate` afterwards calls it again with all
batches. The body concatenates predictions, logs accuracy and mean loss with `self.log`, and
appends to a history on `self`.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class LitClassifier(pl.LightningModule):
    def __init__(self, num_classes=3):
        super().__init__()
        self.save_hyperparameters()
        self.backbone = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, num_classes))
        self.val_history = []

    def forward(self, x):
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        return {"val_loss": loss, "preds": logits.argmax(dim=1), "target": y}

    def validation_epoch_end(self, outputs):
        preds = torch.cat([o["preds"] for o in outputs])
        target = torch.cat([o["target"] for o in outputs])
        acc = (preds == target).float().mean()
        avg_loss = torch.stack([o["val_loss"] for o in outputs]).mean()
        self.log("val_acc", acc, prog_bar=True)
        self.log("val_loss", avg_loss)
        self.val_history.append((len(outputs), float(avg_loss)))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = torch.randint(0, 3, (n,), generator=g)
    return TensorDataset(x, y)


def lightmigrate_case():
    return {
        "model": LitClassifier(),
        "train_dataloaders": DataLoader(_data(16, 0), batch_size=4),
        "val_dataloaders": DataLoader(_data(12, 1), batch_size=4),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "validate"],
    }
