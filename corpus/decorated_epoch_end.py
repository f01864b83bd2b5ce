"""Decorated epoch-end hooks: `@torch.no_grad()` and a user decorator built with functools.wraps.

Exercises (spec M1, M2): `training_epoch_end` is wrapped in `@torch.no_grad()` (so the
un-detached extra key it receives can be used without building a graph) and
`validation_epoch_end` in a project decorator that counts calls under a key it is given. The
decorators must stay attached to the code that runs the old body. (A decorator keyed on
`fn.__name__` would see the new name after any rename; that is inherent in the migration, so
the decorator here takes its key explicitly.)
"""
import functools

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


def counted(key):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            self.hook_calls[key] = self.hook_calls.get(key, 0) + 1
            return fn(self, *args, **kwargs)

        return wrapper

    return decorate


class DecoratedModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.hook_calls = {}
        self.grad_enabled_in_hook = []

    def forward(self, x):
        return self.lin(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return {"loss": F.cross_entropy(logits, y), "logits": logits}

    @torch.no_grad()
    def training_epoch_end(self, outputs):
        self.grad_enabled_in_hook.append(torch.is_grad_enabled())
        probs = torch.cat([o["logits"] for o in outputs]).softmax(-1)
        self.log("train_confidence", probs.max(-1).values.mean())

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return (self(x).argmax(-1) == y).float().mean()

    @counted("validation")
    def validation_epoch_end(self, outputs):
        self.log("val_acc", torch.stack(outputs).mean())
        self.log("val_hook_calls", float(self.hook_calls.get("validation", 0)))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.3)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 0] + x[:, 2] > 0).long()), batch_size=4)


def lightmigrate_case():
    return {
        "model": DecoratedModel(),
        "train_dataloaders": _loader(12, 330),
        "val_dataloaders": _loader(8, 331),
        "trainer": {"max_epochs": 2},
    }
