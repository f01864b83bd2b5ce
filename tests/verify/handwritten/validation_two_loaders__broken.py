"""DELIBERATELY BROKEN 2.x port of corpus/validation_two_loaders.py, following spec B.7.

Used by tests/verify/test_corpus_oracle.py to check the harness independently of the rule
engine: this port never resets its buffer, so the sanity-check outputs leak into
later epochs; the comparison must report it.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class TwoDomainModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 6)
        self.head = nn.Linear(6, 1)
        self.loader_counts = []
        # BROKEN on purpose: the buffer is never reset, so sanity-check outputs leak into epoch 0
        self._v1_val_outputs = {}

    def forward(self, x):
        return self.head(torch.relu(self.encoder(x))).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("loss", loss)
        return loss

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        if dataloader_idx == 1 and batch_idx < 2:
            return None  # the target domain has no labels for its first samples
        err = (self(x) - y).abs()
        self.log("val_mae", err.mean())
        return err

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self._v1_val_outputs.setdefault(dataloader_idx, []).append(outputs)

    def on_validation_epoch_end(self):
        dls = self.trainer.val_dataloaders
        n = len(dls) if isinstance(dls, (list, tuple)) else 1
        outputs = [self._v1_val_outputs.get(i, []) for i in range(n)]
        if n == 1:
            outputs = outputs[0]
        counts = []
        for idx, per_loader in enumerate(outputs):
            counts.append(len(per_loader))
            if not per_loader:
                continue
            self.log(f"val_mae_epoch_{idx}", torch.cat(per_loader).mean())
        self.loader_counts.append(counts)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed, shift=0.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g) + shift
    y = x.sum(dim=1)
    return DataLoader(TensorDataset(x, y), batch_size=4)


def lightmigrate_case():
    return {
        "model": TwoDomainModel(),
        "train_dataloaders": _loader(12, 5),
        "val_dataloaders": [_loader(12, 6), _loader(12, 7, shift=1.0)],
        "trainer": {"max_epochs": 2},
    }
