"""A public function spreads its `trainer_kwargs` parameter into the Trainer; the file's own
caller gives it a dict with 1.x arguments (pykeen's `lit_pipeline(trainer_kwargs=dict(...))`).

Exercises (issue 25, "Trainer arguments built somewhere else"): `num_processes=1` and
`replace_sampler_ddp=False` were valid 1.9 arguments that 2.x rejects (`TypeError`). LM101
migrates the dict this file's own call gives the parameter, where it is written:
`accelerator="cpu", devices=1` and `use_distributed_sampler=False`; every call of the function in
the project is followed, so the spread keeps no marker. The project's training run is then
repeated by the case.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class KwargsRegressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def fit_model(model, loader, trainer_kwargs=None):
    """Train ``model``; ``trainer_kwargs`` go to the Trainer (a public API)."""
    trainer = pl.Trainer(**(trainer_kwargs or {}))
    trainer.fit(model, loader)
    return trainer


def pretrain():
    model = KwargsRegressor()
    trainer = fit_model(model, _loader(8, 495), trainer_kwargs=dict(
        num_processes=1, replace_sampler_ddp=False, max_epochs=1, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False))
    return model, trainer.global_step


def lightmigrate_case():
    model, steps = pretrain()
    model.net.bias.data += 0.01 * steps
    return {
        "model": model,
        "train_dataloaders": _loader(12, 496),
        "trainer": {"max_epochs": 2},
    }
