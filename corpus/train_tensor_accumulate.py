"""training_epoch_end over tensor-returning training steps, with gradient accumulation.

Exercises (spec M1, B.1): `training_step` returns a bare loss tensor, so each element of
`outputs` is `{"loss": loss / accumulate_grad_batches}` (detached). With
`accumulate_grad_batches=2` and 5 batches per epoch the last window is a partial one. The
epoch-end body logs the mean and the count of the losses it received and keeps a history on
`self`. No validation loop.
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

    def training_epoch_end(self, outputs):
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
