"""HAND-WRITTEN 2.x port of corpus/train_tensor_accumulate.py, following spec B.7.

Used by tests/verify/test_corpus_oracle.py to check the harness independently of the rule
engine: this port must match the 1.9.5 run of the original exactly.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class RegressionModel(pl.LightningModule):
    def __init__(self, in_features: int = 6, lr: float = 0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(in_features, 8), nn.Tanh(), nn.Linear(8, 1))
        self.epoch_losses = []

    def forward(self, x):
        return self.net(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def on_train_epoch_start(self):
        self._v1_train_outputs = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs:
            self._v1_train_outputs.append(outputs)

    def on_train_epoch_end(self):
        outputs, self._v1_train_outputs = self._v1_train_outputs, []
        losses = torch.stack([o["loss"] for o in outputs])
        self.epoch_losses.append(losses.tolist())
        self.log("train_epoch_loss", losses.mean())
        self.log("train_epoch_batches", float(len(outputs)))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


def lightmigrate_case():
    g = torch.Generator().manual_seed(11)
    x = torch.randn(20, 6, generator=g)
    y = x[:, 0] * 0.7 - x[:, 3] + 0.1 * torch.randn(20, generator=g)
    return {
        "model": RegressionModel(),
        "train_dataloaders": DataLoader(TensorDataset(x, y), batch_size=4),
        "trainer": {"max_epochs": 2, "accumulate_grad_batches": 2},
    }
