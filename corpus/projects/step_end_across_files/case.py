"""Step-end hooks in a base module, steps in subclasses in other modules (issue 21, kind 1).

Exercises (spec M4, M5, B.3): `stepend_pkg/base.py` defines `training_step_end` (the loss, with
label smoothing, built from what the step returns) and `validation_step_end` (accuracy), and the
epoch-end hooks; `models/linear.py` and `models/mlp.py` subclass it and define the steps (the
MLP calls `super().training_step`). LM003 wraps the base's steps; the subclasses' steps, in
files without any `_step_end`, must override the helpers the wrappers call, or 2.x never runs
the step-end code (no loss: the training step fails; validation collects raw dicts). The base's
`predict_step` and the MLP's `test_step` call `self.validation_step(...)`, which in 1.9 ran the
step alone (no step-end): the calls must reach the step body, not the wrapper, and the base's
`test_step_end`, which only logs, must still run for the subclasses' `test_step` overrides.
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl  # noqa: F401  (the project's code is 1.x Lightning)

from stepend_pkg.models import LinearClassifier, MLPClassifier


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
    return DataLoader(TensorDataset(x, y), batch_size=4)


def lightmigrate_case():
    torch.manual_seed(7)
    LinearClassifier()  # the project builds both; the case trains the deeper one
    return {
        "model": MLPClassifier(),
        "train_dataloaders": _loader(12, 1),
        "val_dataloaders": _loader(8, 2),
        "trainer": {"max_epochs": 2},
        "test_dataloaders": _loader(8, 5),
        "predict_dataloaders": _loader(8, 6),
        "run": ["fit", "validate", "test", "predict"],
    }
