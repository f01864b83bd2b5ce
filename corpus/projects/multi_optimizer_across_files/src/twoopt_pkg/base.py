import torch
import torch.nn.functional as F
from torch import nn

import pytorch_lightning as pl


class AdversarialBase(pl.LightningModule):
    """A generator and a critic trained in turns (optimizer 0: generator, 1: critic)."""

    def __init__(self, lr=0.05):
        super().__init__()
        self.lr = lr
        self.generator = nn.Linear(3, 3)
        self.critic = nn.Linear(3, 1)

    def generator_loss(self, x):
        return -self.critic(self.generator(x)).mean()

    def critic_loss(self, x):
        fake = self.generator(x).detach()
        return self.critic(fake).mean() - self.critic(x).mean()

    def training_step(self, batch, batch_idx, optimizer_idx):
        (x,) = batch
        if optimizer_idx == 0:
            loss = self.generator_loss(x)
            self.log("g_loss", loss)
        else:
            loss = self.critic_loss(x)
            self.log("c_loss", loss)
        return {"loss": loss, "which": optimizer_idx}

    def training_epoch_end(self, outputs):
        g = torch.stack([step[0]["loss"] for step in outputs]).mean()
        c = torch.stack([step[1]["loss"] for step in outputs]).mean()
        self.log("g_epoch", g)
        self.log("c_epoch", c)

    def configure_optimizers(self):
        return [torch.optim.SGD(self.generator.parameters(), lr=self.lr),
                torch.optim.SGD(self.critic.parameters(), lr=self.lr)]
