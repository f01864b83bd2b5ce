"""trainer.validate and trainer.test without any fit; two test loaders, one returning None.

Exercises (spec M2, M3, B.1): `validation_epoch_end` and `test_epoch_end` run outside fit
(no sanity check, inference mode, untrained seeded weights). `test_step` returns None for
every batch of test loader 1, so `test_epoch_end` receives `[[a, b, c], []]` - a list of two
lists, the second empty. validate runs twice; the second call must not see the first call's
outputs. The bodies log per-call metrics, returned by validate/test.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class EvalOnlyModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)
        self.eval_log = []

    def forward(self, x):
        return self.proj(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self(x), y)

    def validation_epoch_end(self, outputs):
        self.eval_log.append(("validate", len(outputs)))
        self.log("val_loss", torch.stack(outputs).mean())
        self.log("val_num_outputs", float(len(outputs)))

    def test_step(self, batch, batch_idx, dataloader_idx=0):
        if dataloader_idx == 1:
            return None  # the unlabeled split only logs
        x, y = batch
        return {"loss": F.cross_entropy(self(x), y), "pred": self(x).argmax(-1)}

    def test_epoch_end(self, outputs):
        labeled, unlabeled = outputs
        self.eval_log.append(("test", len(labeled), len(unlabeled)))
        self.log("test_loss", torch.stack([o["loss"] for o in labeled]).mean())
        self.log("test_pos_rate", torch.cat([o["pred"] for o in labeled]).float().mean())
        self.log("test_unlabeled_outputs", float(len(unlabeled)))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    return DataLoader(TensorDataset(x, (x[:, 1] > x[:, 2]).long()), batch_size=4)


def lightmigrate_case():
    return {
        "model": EvalOnlyModel(),
        "val_dataloaders": _loader(8, 250),
        "test_dataloaders": [_loader(12, 251), _loader(8, 252)],
        "run": ["validate", "test", "validate"],
    }
