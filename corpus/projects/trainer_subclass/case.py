"""Issue 25 kind 1: the project's own Trainer subclass (``subtrainer.trainer.Trainer``) takes
1.x arguments (``gpus``, ``replace_sampler_ddp``) and forwards them to ``pl.Trainer``; another
module calls it with ``gpus=use_gpu`` and removed arguments (``auto_lr_find``, ``amp_backend``)
that reach Lightning through ``**kwargs``. The case pre-trains the model with that Trainer, then
the harness trains it further: both runs shape the final weights. Spec rows T1, T14, T15, T28.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401

from subtrainer.model import Regressor
from subtrainer.pretrain import pretrain
from subtrainer import trainer as project_trainer


def _loader(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(24, 4, generator=g)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(24, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)


def lightmigrate_case():
    model = Regressor()
    steps = pretrain(model, _loader(0))
    # the project Trainer reached as module.Class, positional `gpus`, validating once
    checker = project_trainer.Trainer(0, log_every=2, limit_val_batches=2)
    checker.validate(model, _loader(1), verbose=False)
    model.lr = 0.02 * steps
    return {
        "model": model,
        "train_dataloaders": _loader(2),
        "val_dataloaders": _loader(3),
        "trainer": {"max_epochs": 1},
    }
