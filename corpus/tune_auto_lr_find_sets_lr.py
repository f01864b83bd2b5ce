"""`trainer.tune()` with `auto_lr_find=True` sets the learning rate the model then trains with.

Exercises (issue 25, LM102, T-meth1): 1.9's `tune()` ran the LR finder with `update_attr=True` and
set `model.lr` to 1.9's suggestion (the steepest loss drop per step); 2.x's
`Tuner(trainer).lr_find(update_attr=True)` sets its own suggestion (per unit of learning rate),
another rate on this sweep. LM102 writes the Tuner call and then `apply_lr_suggestion_19(model,
lr_finder)`, a helper it adds to the file that sets 1.9's value; the fit that follows logs the rate
and trains with it.
"""
# SHIM-OUT-OF-SCOPE: runs 1.9's `trainer.tune()` on a Trainer the case builds itself; LM102 rewrites it
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


def tune(model, loader):
    trainer = pl.Trainer(auto_lr_find=True, accelerator="cpu", devices=1, max_epochs=1, logger=False,
                         enable_progress_bar=False, enable_checkpointing=False, enable_model_summary=False)
    trainer.tune(model, loader, lr_find_kwargs={"min_lr": 1e-4, "max_lr": 10.0, "num_training": 40})


def lightmigrate_case():
    model = Regressor()
    tune(model, _loader(640, 81, batch_size=16))
    return {
        "model": model,
        "train_dataloaders": _loader(32, 82),
        "val_dataloaders": _loader(16, 83),
        "trainer": {"max_epochs": 2},
    }
