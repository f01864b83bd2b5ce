"""Two optimizers with `optimizer_idx` in a base module, the step overridden in a subclass in
another module (issue 21, kind 1).

Exercises (spec M7, B.5): `twoopt_pkg/base.py` trains a generator and a critic in turns with
`training_step(self, batch, batch_idx, optimizer_idx)` and reads `outputs[batch][optimizer]` in
`training_epoch_end`; `twoopt_pkg/penalized.py` overrides the step, calls `super()` and adds a
penalty to the critic's loss. LM005 writes the manual-optimization loop in the base, whose
closure calls the old step as `_training_step`; the subclass's override, in its own file, must
become that helper (and its `super()` call follow), and only when the base really gets the loop.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401  (the project's code is 1.x Lightning)

from twoopt_pkg.penalized import PenalizedCritic


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    return DataLoader(TensorDataset(torch.randn(n, 3, generator=g)), batch_size=4)


def lightmigrate_case():
    return {
        "model": PenalizedCritic(),
        "train_dataloaders": _loader(12, 11),
        "trainer": {"max_epochs": 2},
    }
