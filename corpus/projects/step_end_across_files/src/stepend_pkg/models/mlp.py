from torch import nn

from stepend_pkg.models.linear import LinearClassifier


class MLPClassifier(LinearClassifier):
    """Two layers; reuses LinearClassifier's validation step, logs its own training metric."""

    def __init__(self, features=4, hidden=8, classes=3):
        super().__init__(features, classes)
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.Tanh(), nn.Linear(hidden, classes))

    def training_step(self, batch, batch_idx):
        out = super().training_step(batch, batch_idx)
        self.log("logit_norm", out["logits"].norm())
        return out

    def test_step(self, batch, batch_idx):
        # the MLP is tested as it is validated
        return self.validation_step(batch, batch_idx)
