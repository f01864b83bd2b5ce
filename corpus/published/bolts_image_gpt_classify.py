"""Published model: `ImageGPT(classify=True)` from lightning-bolts 0.6.0.post1.

Exercises (spec M2, M3, B.1) on code nobody here wrote: the classification branch of
`pl_bolts.models.vision.image_gpt.igpt_module.ImageGPT`, whose validation steps return
`{"val_loss", "correct"}` with a boolean per-sample tensor that `validation_epoch_end(outs)`
concatenates into an accuracy; `configure_optimizers` returns a bare Adam in this mode. The test
run goes through `test_epoch_end` -> `self.validation_epoch_end(outs)` and renames the keys.

The model's source is NOT in this repository: the test installs the pinned package and builds
the case file from its original source (see corpus/README.md, "Published-model cases").
"""
PUBLISHED = {
    "package": "lightning-bolts==0.6.0.post1",
    "module": "pl_bolts.models.vision.image_gpt.igpt_module",
    "inline": ["pl_bolts.utils.stability", "pl_bolts.models.vision.image_gpt.gpt2"],
}

import torch  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    images = torch.rand(n, 1, 4, 4, generator=g)
    labels = (images[:, 0, :2].mean(dim=(1, 2)) > 0.5).long()
    return DataLoader(TensorDataset(images, labels), batch_size=4)


def lightmigrate_case():
    model = ImageGPT(  # noqa: F821
        embed_dim=8, heads=2, layers=1, pixels=4, vocab_size=4, num_classes=2,
        classify=True, learning_rate=0.02, num_workers=0,
    )
    return {
        "model": model,
        "train_dataloaders": _loader(12, 630),
        "val_dataloaders": _loader(8, 631),
        "test_dataloaders": _loader(8, 632),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
