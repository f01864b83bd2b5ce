"""Issue 25 kind 2: Trainer arguments built in other modules. A settings module (no Lightning
import) holds ``TRAINER_DEFAULTS = dict(gpus=0, replace_sampler_ddp=False, amp_backend="native",
...)``; a helper fills ``config["auto_lr_find"] = tune``, ``config["gpus"] = n_gpus``,
``config["precision"] = 16``, ``config.update(resume_from_checkpoint=None, ...)``; a third module
spreads both into ``pl.Trainer(**...)``. The case pre-trains with both Trainers and hands the
helper's dict to the harness's Trainer. Spec rows T1, T6, T7, T9, T12, T14, T15, T16, T17, T28.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401

from trainercfg.config import trainer_config
from trainercfg.model import Regressor
from trainercfg.train import build_trainer, pretrain_trainer


def _loader(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(24, 4, generator=g)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(24, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)


def lightmigrate_case():
    model = Regressor()
    first = pretrain_trainer()
    first.fit(model, _loader(0))
    second = build_trainer(0)
    second.fit(model, _loader(1))
    model.lr = 0.01 * (first.global_step + second.global_step)
    return {
        "model": model,
        "train_dataloaders": _loader(2),
        "val_dataloaders": _loader(3),
        "trainer": trainer_config(0),
    }
