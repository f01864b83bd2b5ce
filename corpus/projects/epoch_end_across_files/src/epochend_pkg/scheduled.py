import torch

from epochend_pkg.lit_base import LitRegressor


class WarmupRegressor(LitRegressor):
    """Adds an LR warm-up over the first epoch and logs per-batch validation errors."""

    def on_train_epoch_start(self):
        self.warm = self.current_epoch == 0

    def on_train_batch_start(self, batch, batch_idx):
        if self.warm:
            for group in self.optimizers().param_groups:
                group["lr"] = self.lr * (batch_idx + 1) / 3

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        self.log("val_batch_abs_err", outputs["err"].abs().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.5)
