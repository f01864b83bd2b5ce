"""Published model: `LinearRegression` from lightning-bolts 0.6.0.post1 (pl_bolts.models.regression).

Exercises (spec M2, M3, B.1) on code nobody here wrote: bolts' `validation_epoch_end` and
`test_epoch_end` stack the `"val_loss"` / `"test_loss"` of the step dicts and RETURN a
1.0-era dict with "log"/"progress_bar" keys (ignored by 1.9); `training_step` returns such a
dict too. The class is wrapped by bolts' `@under_review()` decorator (pl_bolts.utils.stability,
inlined). Nothing is logged with `self.log`, so the comparison rests on the epoch-end inputs,
the weights (Adam, `save_hyperparameters`) and the optimizer state.

The model's source is NOT in this repository: the test installs the pinned package and builds
the case file from its original source (see corpus/README.md, "Published-model cases").
"""
PUBLISHED = {
    "package": "lightning-bolts==0.6.0.post1",
    "module": "pl_bolts.models.regression.linear_regression",
    "inline": ["pl_bolts.utils.stability"],
}

import torch  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    y = (x @ torch.tensor([[1.5], [-2.0], [0.5]])) + 0.1 * torch.randn(n, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=4)


def lightmigrate_case():
    return {
        "model": LinearRegression(input_dim=3, learning_rate=0.05, l1_strength=0.01, l2_strength=0.01),  # noqa: F821
        "train_dataloaders": _loader(16, 600),
        "val_dataloaders": _loader(8, 601),
        "test_dataloaders": _loader(8, 602),
        "trainer": {"max_epochs": 3},
        "run": ["fit", "test"],
    }
