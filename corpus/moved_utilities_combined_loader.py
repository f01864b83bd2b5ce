"""Moved 1.x utilities and a CombinedLoader, reached through every import form.

Exercises (spec R3, R4, R13, R16, R23): `CombinedLoader(loaders, mode=...)`
from `pytorch_lightning.trainer.supporters` as the training loader (two loaders of different
lengths, `max_size_cycle`), `apply_to_collection` / `move_data_to_device` from
`pytorch_lightning.utilities.apply_func` (imported by name and reached as `pl.utilities...`),
`rank_zero_only` from `pytorch_lightning.utilities.distributed` as a decorator,
and `pl.utilities.seed.seed_everything`; a `training_epoch_end` averages the losses (LM001). LM201 moves every import; the run must be identical on 2.x.
(`loaders=` as a keyword, which LM201 renames to `iterables=`, is left to the unit tests: the v1
shim cannot run it.)
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.trainer.supporters import CombinedLoader
from pytorch_lightning.utilities.apply_func import apply_to_collection
from pytorch_lightning.utilities.distributed import rank_zero_only


class TwoSourceModel(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.seen = []

    def training_step(self, batch, batch_idx):
        batch = apply_to_collection(batch, torch.Tensor, lambda t: t.float())
        batch = pl.utilities.apply_func.move_data_to_device(batch, self.device)
        xa, ya = batch["a"]
        xb, yb = batch["b"]
        loss = F.mse_loss(self.net(xa), ya) + 0.5 * F.mse_loss(self.net(xb), yb)
        self.log("loss_a_rows", float(xa.shape[0]))
        self.log("train_loss", loss)
        self._remember(batch_idx, xb)
        return loss

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    @rank_zero_only
    def _remember(self, batch_idx, xb):
        self.seen.append((batch_idx, round(float(xb.sum()), 4)))
        self.log("seen_sum", float(xb.sum()))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def lightmigrate_case():
    pl.utilities.seed.seed_everything(7)
    g = torch.Generator().manual_seed(0)
    a = TensorDataset(torch.randn(12, 4, generator=g), torch.randn(12, 1, generator=g))
    b = TensorDataset(torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g))
    loaders = {"a": DataLoader(a, batch_size=4), "b": DataLoader(b, batch_size=4)}
    return {
        "model": TwoSourceModel(),
        "train_dataloaders": CombinedLoader(loaders, mode="max_size_cycle"),
        "trainer": {"max_epochs": 2},
    }
