"""Published model: `SemSegment` (a U-Net) from lightning-bolts 0.6.0.post1.

Exercises (spec M2, B.1, B.5 epoch schedulers) on code nobody here wrote:
`pl_bolts.models.vision.segmentation.SemSegment` with its `UNet` (pl_bolts.models.vision.unet,
inlined). Its `validation_epoch_end(outputs)` stacks the step dicts' `"val_loss"` and returns a
1.0-era dict; `configure_optimizers` returns `[Adam], [CosineAnnealingLR]` (an epoch-interval
scheduler). Tiny configuration: 2 U-Net levels, 4 base features, 3 classes, 8x8 images, with
`ignore_index` pixels in the masks. The sanity check, two epochs and `trainer.validate` run.

The model's source is NOT in this repository: the test installs the pinned package and builds
the case file from its original source (see corpus/README.md, "Published-model cases").
"""
PUBLISHED = {
    "package": "lightning-bolts==0.6.0.post1",
    "module": "pl_bolts.models.vision.segmentation",
    "inline": ["pl_bolts.models.vision.unet"],
}

import torch  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    images = torch.rand(n, 3, 8, 8, generator=g)
    masks = (images[:, 0] * 3).long().clamp(max=2)
    masks[:, 0, :2] = 250  # unlabeled pixels, skipped by the loss (ignore_index)
    return DataLoader(TensorDataset(images, masks), batch_size=2)


def lightmigrate_case():
    return {
        "model": SemSegment(num_classes=3, num_layers=2, features_start=4, lr=0.01),  # noqa: F821
        "train_dataloaders": _loader(6, 610),
        "val_dataloaders": _loader(4, 611),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "validate"],
    }
