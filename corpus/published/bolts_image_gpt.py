"""Published model: `ImageGPT` (generative pre-training) from lightning-bolts 0.6.0.post1.

Exercises (spec M2, M3, B.1) on code nobody here wrote:
`pl_bolts.models.vision.image_gpt.igpt_module.ImageGPT` with its `GPT2` (itself a
LightningModule, pl_bolts.models.vision.image_gpt.gpt2, inlined) and bolts' `@under_review()`
(pl_bolts.utils.stability, inlined). Its epoch-end parameter is named `outs`, and
`test_epoch_end(outs)` calls `self.validation_epoch_end(outs)` and edits the returned dict -
a hook that is also called as a plain method. Tiny configuration: 4x4 one-channel images,
4-level pixel vocabulary, one transformer block; Adam + CosineAnnealingLR.

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
    labels = (images.mean(dim=(1, 2, 3)) > 0.5).long()
    return DataLoader(TensorDataset(images, labels), batch_size=3)


def lightmigrate_case():
    model = ImageGPT(  # noqa: F821
        embed_dim=8, heads=2, layers=1, pixels=4, vocab_size=4, num_classes=2,
        learning_rate=0.01, steps=20, num_workers=0,
    )
    return {
        "model": model,
        "train_dataloaders": _loader(9, 620),
        "val_dataloaders": _loader(6, 621),
        "test_dataloaders": _loader(6, 622),
        "trainer": {"max_epochs": 2},
        "run": ["fit", "test"],
    }
