import torch
import torch.nn.functional as F
from torch import nn

import pytorch_lightning as pl


class LitRegressor(pl.LightningModule):
    """Shared training logic of the project's regressors: epoch-level metrics from the outputs."""

    def __init__(self, features=5, lr=0.05):
        super().__init__()
        self.lr = lr
        self.model = nn.Linear(features, 1)

    def forward(self, x):
        return self.model(x).squeeze(-1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        return {"loss": loss, "mae": (self(x) - y).abs().mean().detach()}

    def training_epoch_end(self, outputs):
        self.log("train_mae_epoch", torch.stack([o["mae"] for o in outputs]).mean())
        self.log("train_batches", float(len(outputs)))

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"err": self(x) - y}

    def validation_epoch_end(self, outputs):
        err = torch.cat([o["err"] for o in outputs])
        self.log("val_rmse", err.pow(2).mean().sqrt())
        self.log("val_count", float(err.numel()))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)
