"""User callbacks written against the 1.9 `Callback` signatures, on a two-optimizer module.

Exercises (spec C1, C3, B.5) under the v1 shim: `on_before_optimizer_step(trainer, pl_module,
optimizer, opt_idx)` once per optimizer step with its index; `on_validation_batch_start/end`,
`on_test_batch_end` and `on_predict_batch_end` taking `dataloader_idx` WITHOUT a default, with
one validation loader (2.x would call them without it) and two test loaders;
`on_predict_epoch_end(trainer, pl_module, outputs)` receiving the predictions per dataloader;
`on_train_batch_end` receiving 1.9's per-optimizer list of output dicts. What the callbacks see
is logged or written into a registered buffer of the module, so the weights record it.
"""
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


class OptimizerWatcher(pl.Callback):
    def on_before_optimizer_step(self, trainer, pl_module, optimizer, opt_idx):
        grads = [p.grad.norm() for p in pl_module.parameters() if p.grad is not None]
        pl_module.log(f"grad_norm_{opt_idx}", torch.stack(grads).norm())
        pl_module.seen[opt_idx] += 1

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        # two optimizers: one dict per optimizer, losses detached
        pl_module.log("cb_batch_losses", sum(o["loss"] for o in outputs))
        pl_module.seen[2] += len(outputs)


class EvalWatcher(pl.Callback):
    def on_validation_batch_start(self, trainer, pl_module, batch, batch_idx, dataloader_idx):
        pl_module.seen[3] += 1 + dataloader_idx

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        pl_module.log("cb_val_out", outputs["val"] + dataloader_idx)

    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        pl_module.seen[4] += (dataloader_idx + 1) * float(outputs["val"])

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        pl_module.seen[5] += (dataloader_idx + 1) * float(outputs.sum())

    def on_predict_epoch_end(self, trainer, pl_module, outputs):
        pl_module.seen[6] = float(len(outputs))
        pl_module.seen[7] = float(sum(len(per_loader) for per_loader in outputs))


class TwoHeads(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(3, 3)
        self.dec = nn.Linear(3, 1)
        self.register_buffer("seen", torch.zeros(8))

    def forward(self, x):
        return self.dec(torch.tanh(self.enc(x))).squeeze(-1)

    def training_step(self, batch, batch_idx, optimizer_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        return loss * (1.0 if optimizer_idx == 0 else 0.5)

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        return {"val": F.mse_loss(self(x), y)}

    def test_step(self, batch, batch_idx, dataloader_idx=0):
        return self.validation_step(batch, batch_idx)

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        return self(batch[0])

    def configure_optimizers(self):
        return [torch.optim.SGD(self.enc.parameters(), lr=0.1), torch.optim.Adam(self.dec.parameters(), lr=0.01)]


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    return DataLoader(TensorDataset(x, x[:, 0] * 2 - x[:, 2]), batch_size=4)


def lightmigrate_case():
    return {
        "model": TwoHeads(),
        "train_dataloaders": _loader(12, 11),
        "val_dataloaders": _loader(8, 12),
        "test_dataloaders": [_loader(8, 13), _loader(4, 14)],
        "predict_dataloaders": [_loader(8, 15), _loader(4, 16)],
        "trainer": {"max_epochs": 2, "callbacks": [OptimizerWatcher(), EvalWatcher()]},
        "run": ["fit", "test", "predict"],
    }
