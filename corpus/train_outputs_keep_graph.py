"""`training_epoch_end` that checks whether the step's extra outputs are still attached to the graph.

Exercises (spec M1, B.1): 1.x detached only "loss" of a dict returned by `training_step`; the
other keys reached `training_epoch_end` as returned, still requiring grad. The epoch-end body
collects the `preds` key, counts the epochs whose predictions were still attached (and
detaches them before use, as careful 1.x code did) and logs the count and the mean prediction.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class AttachedOutputs(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.attached_epochs = 0

    def training_step(self, batch, batch_idx):
        x, y = batch
        preds = self.net(x).squeeze(-1)
        return {"loss": F.mse_loss(preds, y), "preds": preds}

    def training_epoch_end(self, outputs):
        preds = torch.cat([out["preds"] for out in outputs])
        if preds.requires_grad:  # the step's graph is still referenced: let it go
            self.attached_epochs += 1
            preds = preds.detach()
        self.log("attached_epochs", float(self.attached_epochs))
        self.log("epoch_pred_mean", preds.mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def lightmigrate_case():
    g = torch.Generator().manual_seed(520)
    x = torch.randn(12, 4, generator=g)
    return {
        "model": AttachedOutputs(),
        "train_dataloaders": DataLoader(TensorDataset(x, x[:, 1] - x[:, 3]), batch_size=4),
        "trainer": {"max_epochs": 2},
    }
