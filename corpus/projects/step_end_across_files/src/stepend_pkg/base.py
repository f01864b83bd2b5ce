"""The project's base module: the step-end hooks live here, the steps in the subclasses."""
import torch
import torch.nn.functional as F

import pytorch_lightning as pl


class BaseClassifier(pl.LightningModule):
    """Subclasses build ``self.net`` and implement the steps; the base reduces their outputs."""

    def __init__(self, smoothing=0.1):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        raise NotImplementedError

    def training_step_end(self, out):
        # label smoothing applied to what every subclass's step returns
        loss = F.cross_entropy(out["logits"], out["target"], label_smoothing=self.smoothing)
        return {"loss": loss, "n": out["target"].numel()}

    def validation_step(self, batch, batch_idx):
        raise NotImplementedError

    def validation_step_end(self, out):
        acc = (out["logits"].argmax(-1) == out["target"]).float().mean()
        return {"acc": acc, "n": out["target"].numel()}

    def test_step_end(self, out):
        self.log("test_logit_mean", out["logits"].mean())

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        x, _ = batch
        return self.validation_step((x, x.new_zeros(len(x), dtype=torch.long)), batch_idx)["logits"].argmax(-1)

    def training_epoch_end(self, outputs):
        self.log("train_loss_epoch", torch.stack([o["loss"] for o in outputs]).mean())

    def validation_epoch_end(self, outputs):
        self.log("val_acc", torch.stack([o["acc"] for o in outputs]).mean())
        self.log("val_n", float(sum(o["n"] for o in outputs)))

    def test_epoch_end(self, outputs):
        logits = torch.cat([o["logits"] for o in outputs])
        self.log("test_max_logit", logits.max())
        self.log("test_n", float(len(logits)))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)
