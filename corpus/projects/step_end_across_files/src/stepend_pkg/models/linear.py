from torch import nn

from stepend_pkg.base import BaseClassifier


class LinearClassifier(BaseClassifier):
    def __init__(self, features=4, classes=3):
        super().__init__()
        self.net = nn.Linear(features, classes)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return {"logits": self(x), "target": y}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"logits": self(x), "target": y}

    def test_step(self, batch, batch_idx):
        x, y = batch
        return {"logits": self(x) / 2, "target": y}
