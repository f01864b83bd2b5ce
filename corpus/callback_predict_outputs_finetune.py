"""A callback reading `outputs` in `on_predict_epoch_end`, and `finetune_function(..., opt_idx)` (LM307, LM004).

Exercises (spec C2, C4): 1.9 passed the predictions to the callback as one list per dataloader
(`outputs[0]` with a single loader); the callback stores their count and mean into a buffer of
the module, so a wrong shape shows in the final state. `BaseFinetuning` freezes the backbone and
unfreezes it at epoch 1 for optimizer index 0, adding a param group with its own lr.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import BaseFinetuning


class PredictionStats(pl.Callback):
    def on_predict_epoch_end(self, trainer, pl_module, outputs):
        preds = torch.cat(outputs[0])
        pl_module.pred_stats.copy_(torch.stack([torch.tensor(float(len(outputs[0]))), preds.mean()]))


class UnfreezeAtOne(BaseFinetuning):
    def freeze_before_training(self, pl_module):
        self.freeze(pl_module.backbone)

    def finetune_function(self, pl_module, epoch, optimizer, opt_idx):
        if epoch == 1 and opt_idx == 0:
            self.unfreeze_and_add_param_group(pl_module.backbone, optimizer, lr=0.01, initial_denom_lr=1.0)


class Finetuned(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)
        self.register_buffer("pred_stats", torch.zeros(2))

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log("loss", loss)
        return loss

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        return self(batch[0])

    def configure_optimizers(self):
        return torch.optim.SGD(filter(lambda p: p.requires_grad, self.parameters()), lr=0.1)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 4, generator=g), torch.randn(n, 1, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": Finetuned(),
        "train_dataloaders": _loader(8, 351),
        "predict_dataloaders": _loader(8, 352),
        "trainer": {"max_epochs": 3, "callbacks": [PredictionStats(), UnfreezeAtOne()]},
        "run": ["fit", "predict"],
    }
