"""Issue 25 kind 2 (argparse): a training script declares the Trainer's options with
``pl.Trainer.add_argparse_args(parser)`` (next to the model's own ``add_model_specific_args``)
and builds the Trainer with ``pl.Trainer.from_argparse_args(args, logger=False, ...)``; the
command line passes ``--gpus 0``, ``--max_epochs``, ``--limit_train_batches`` and
``--fast_dev_run 0`` (1.9 parsed it as False), which the script's own code reads. The case trains
with that Trainer, then the harness trains further. Spec rows T-meth3, T1.
"""
# SHIM-OUT-OF-SCOPE: 1.9 Trainer argparse methods
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401

from argscript.train import make_trainer


def _loader(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(24, 4, generator=g)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(24, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)


def lightmigrate_case():
    trainer, model, args = make_trainer(["--max_epochs", "2", "--gpus", "0", "--limit_train_batches", "3",
                                         "--fast_dev_run", "0", "--hidden", "6", "--lr", "0.1"])
    trainer.fit(model, _loader(0))
    model.lr = 0.01 * trainer.global_step
    return {
        "model": model,
        "train_dataloaders": _loader(1),
        "val_dataloaders": _loader(2),
        "trainer": {"max_epochs": args.max_epochs, "limit_train_batches": args.limit_train_batches},
    }
