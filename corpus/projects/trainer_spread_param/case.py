"""Issue 25 kind 2: Trainer arguments written in a module that never mentions the Trainer, for
functions of another module that spread them into ``pl.Trainer``: ``run_pipeline(...,
trainer_kwargs=None)`` (pykeen's ``lit_pipeline``; called as ``run`` through an import alias with
``dict(...)``, and as ``pipeline.run_pipeline`` with a module-level dict), a class whose
``__init__`` takes the dict (given a name the caller fills key by key) and ``fit_quietly(...,
**trainer_kwargs)`` (given removed arguments as keywords). The removed 1.x arguments (``gpus``,
``replace_sampler_ddp``, ``auto_select_gpus``, ``amp_backend``, ``resume_from_checkpoint``,
``move_metrics_to_cpu``, ``multiple_trainloader_mode``) are migrated where the callers write them;
the pre-training through those Trainers shapes the weights the harness trains further.
Spec rows T1, T7, T9, T12, T14, T15, T16, T17, T28.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401

from spreadpkg.model import Scorer
from spreadpkg.presets import fast, polish, warm_up


def _loader(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(24, 4, generator=g)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(24, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)


def lightmigrate_case():
    model = Scorer()
    steps = warm_up(model, _loader(0))
    steps += fast(model, _loader(1))
    steps += polish(model, _loader(2))
    model.lr = 0.005 * steps
    return {
        "model": model,
        "train_dataloaders": _loader(3),
        "val_dataloaders": _loader(4),
        "trainer": {"max_epochs": 1},
    }
