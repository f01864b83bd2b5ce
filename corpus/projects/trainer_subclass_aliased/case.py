"""Issue 25 kind 1, through import aliases: the project's Trainer derives from Lightning's as
``from pytorch_lightning import Trainer as PLTrainer; class BaseTrainer(PLTrainer)`` and forwards
1.x arguments (``gpus``, ``replace_sampler_ddp``); ``quiet.py`` subclasses it as
``from aliastrainer.base import BaseTrainer as Base; class QuietTrainer(Base)`` and passes
``amp_backend``; ``pretrain.py`` calls ``QuietTrainer(gpus=use_gpu, auto_lr_find=True, ...)``,
``PLT(**CHECK_SETTINGS)`` with the dict built in ``settings.py`` (``PLT``: ``from pytorch_lightning import
Trainer as PLT``) and ``lightning_pl.Trainer(gpus=0, ...)``; the model is ``class Regressor(LM)`` with
``validation_epoch_end``. The case pre-trains and validates with those Trainers, then the
harness trains further. Spec rows T1, T14, T15, T28, M2.
"""
# SHIM-OUT-OF-SCOPE: 1.9 Trainer arguments through a project Trainer subclass
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401

from aliastrainer.model import Regressor
from aliastrainer.pretrain import check, pretrain


def _loader(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(24, 4, generator=g)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(24, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)


def lightmigrate_case():
    model = Regressor()
    steps = pretrain(model, _loader(0))
    result, _ = check(model, _loader(1))
    model.lr = 0.02 * steps + 0.01 * float(result["val_loss"] > 0)
    return {
        "model": model,
        "train_dataloaders": _loader(2),
        "val_dataloaders": _loader(3),
        "trainer": {"max_epochs": 1},
    }
