from twoopt_pkg.base import AdversarialBase


class PenalizedCritic(AdversarialBase):
    """Adds a weight penalty to the critic's loss; the generator's step is the base's."""

    def __init__(self, lr=0.05, weight=0.5):
        super().__init__(lr)
        self.weight = weight

    def training_step(self, batch, batch_idx, optimizer_idx):
        out = super().training_step(batch, batch_idx, optimizer_idx)
        if optimizer_idx == 1:
            penalty = self.weight * self.critic.weight.pow(2).sum()
            self.log("penalty", penalty)
            out["loss"] = out["loss"] + penalty
        return out
