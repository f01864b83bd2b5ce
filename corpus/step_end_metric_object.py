"""Step-end hooks that only update torchmetrics objects and log them (`self.log(name, metric)`).

Exercises (spec M4, M5, B.3, B.9): `training_step_end` updates a train accuracy from extra keys
of the step's dict and logs the metric object (step defaults: on_step=True, on_epoch=False);
`validation_step_end` updates a validation accuracy and logs the metric object (eval defaults:
on_step=False, on_epoch=True), returning its argument unchanged. Neither changes the result, so
the rewrite moves both to `on_train_batch_end` / `on_validation_batch_end`; logged values, steps
and reductions must match 1.9.5, sanity check included.
"""
import torch
import torch.nn.functional as F
import torchmetrics
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class MetricStepEnd(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)
        self.train_acc = torchmetrics.Accuracy(task="multiclass", num_classes=3)
        self.val_acc = torchmetrics.Accuracy(task="multiclass", num_classes=3)

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return {"loss": F.cross_entropy(logits, y), "preds": logits.argmax(-1), "target": y}

    def training_step_end(self, step_output):
        self.train_acc(step_output["preds"], step_output["target"])
        self.log("train_acc", self.train_acc)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y))
        return {"preds": logits.argmax(-1), "target": y}

    def validation_step_end(self, outputs):
        self.val_acc(outputs["preds"], outputs["target"])
        self.log("val_acc", self.val_acc)
        return outputs

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, torch.bucketize(x[:, 1], torch.tensor([-0.3, 0.3]))), batch_size=4)


def lightmigrate_case():
    return {
        "model": MetricStepEnd(),
        "train_dataloaders": _loader(16, 910),
        "val_dataloaders": _loader(8, 911),
        "trainer": {"max_epochs": 2},
    }
