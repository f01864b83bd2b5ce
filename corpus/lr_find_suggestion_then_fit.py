"""The LR finder's suggestion picks the learning rate the model then trains with.

Exercises (issue 25, LM102, T-meth2): `trainer.tuner.lr_find(...)` on a throw-away Trainer, then
`lr_finder.suggestion()` stored as the model's learning rate, as in 1.x tutorials and
pytorch_tabular's `find_learning_rate`. 1.9's suggestion is the steepest loss drop per step; 2.x's
is the steepest drop per unit of learning rate, which on this sweep lands on another rate. LM102
writes `Tuner(trainer).lr_find(..., update_attr=False)` (1.9's default) and 1.9's suggestion as
`lr_suggestion_19(lr_finder)`, a helper it adds to the file; the fit that follows logs the rate and
trains with it, so the weights show which rate was picked.
"""
# SHIM-OUT-OF-SCOPE: runs 1.9's tuner (`trainer.tuner.lr_find`) on a Trainer the case builds itself; LM102 rewrites it
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class Regressor(pl.LightningModule):
    def __init__(self, lr=1e-3):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x).squeeze(-1), y)
        self.log("train_loss", loss)
        self.log("lr", self.lr)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.net(x).squeeze(-1), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def _loader(n, seed, batch_size=4):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = x[:, 0] - 2 * x[:, 1] + 0.5 * x[:, 2] * x[:, 3]
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=False)


def find_learning_rate(model, loader):
    trainer = pl.Trainer(accelerator="cpu", devices=1, max_epochs=1, logger=False, enable_progress_bar=False,
                         enable_checkpointing=False, enable_model_summary=False)
    lr_finder = trainer.tuner.lr_find(model, train_dataloaders=loader, min_lr=1e-4, max_lr=10.0, num_training=40)
    return lr_finder.suggestion()


def lightmigrate_case():
    model = Regressor()
    model.lr = find_learning_rate(model, _loader(640, 81, batch_size=16))
    return {
        "model": model,
        "train_dataloaders": _loader(32, 82),
        "val_dataloaders": _loader(16, 83),
        "trainer": {"max_epochs": 2},
    }
