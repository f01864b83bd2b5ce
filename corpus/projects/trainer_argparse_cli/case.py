"""Issue 25 (argparse, no Trainer option in the code): ``train.py`` declares the Trainer's options
with ``pl.Trainer.add_argparse_args(parser)`` and builds the Trainer with
``from_argparse_args(args, logger=False, ...)``, but its own code reads none of them; the project's
``scripts/train.sh`` runs it with ``--max_epochs 2 --limit_train_batches 3``, the command line the
case runs. Those two options must stay declared (with 1.9's types and defaults) and reach the
Trainer; the others go. The case trains with that Trainer, then the harness trains further.
Spec row T-meth3.
"""
# SHIM-OUT-OF-SCOPE: 1.9 Trainer argparse methods
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401

from cliscript.train import train


def _loader(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(24, 4, generator=g)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(24, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)


def lightmigrate_case():
    # the command line of scripts/train.sh
    trainer, model = train(["--max_epochs", "2", "--limit_train_batches", "3", "--lr", "0.1"], _loader(0))
    model.lr = 0.01 * trainer.global_step + 0.001 * trainer.current_epoch
    return {
        "model": model,
        "train_dataloaders": _loader(1),
        "val_dataloaders": _loader(2),
        "trainer": {"max_epochs": 1},
    }
