"""Trainer arguments picked from a config object by a comprehension, as pytorch_tabular 1.0 builds
its Trainer: ``{k: v for k, v in config.items() if k in <Trainer.__init__'s parameters>}``, a few
keys set on top, ``.update(config.trainer_kwargs)``, then ``pl.Trainer(**trainer_args)``.

Exercises (issue 25 kind 3, issue 21 sweep: pytorch_tabular, LM101, T7/T28): the config's
``devices`` and ``strategy`` default to None, which 1.9 read as "the accelerator's device count"
and "choose one"; 2.x raises for both. The dict's keys cannot be read (a comprehension, an update
from the config), so LM101 cannot set the values where they are made: before the Trainer call it
replaces a None ``accelerator`` / ``strategy`` / ``devices`` of the dict by 2.x's spelling of the
1.9 default (and marks the call: a removed 1.x argument in the config would now fall out of the
filter silently). The project's Trainer pre-trains the model; a ``training_epoch_end`` (LM001) and the
logged loss show training ran.
"""
# SHIM-OUT-OF-SCOPE: 1.x Trainer values (devices=None, strategy=None) that 2.x rejects; LM101 rewrites them
import dataclasses
import inspect
from typing import Any, Dict, Optional

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl


@dataclasses.dataclass
class TrainerConfig:
    max_epochs: int = 2
    accelerator: Optional[str] = "auto"
    devices: Optional[int] = None
    strategy: Optional[str] = None
    limit_train_batches: int = 3
    progress_bar: str = "none"
    trainer_kwargs: Dict[str, Any] = dataclasses.field(default_factory=dict)

    def items(self):
        return dataclasses.asdict(self).items()


class Regressor(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self.net(x).squeeze(-1), y)
        self.log("train_loss", loss)
        return loss

    def training_epoch_end(self, outputs):
        self.log("epoch_loss", torch.stack([o["loss"] for o in outputs]).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


class TabularRunner:
    def __init__(self, config):
        self.config = config

    def _prepare_trainer(self, max_epochs=None):
        if max_epochs is not None:
            self.config.max_epochs = max_epochs
        trainer_sig = inspect.signature(pl.Trainer.__init__)
        trainer_args = [p for p in trainer_sig.parameters.keys() if p != "self"]
        trainer_args_config = {k: v for k, v in self.config.items() if k in trainer_args}
        trainer_args_config["enable_progress_bar"] = self.config.progress_bar != "none"
        trainer_args_config.update(self.config.trainer_kwargs)
        return pl.Trainer(
            logger=False,
            enable_checkpointing=False,
            enable_model_summary=False,
            **trainer_args_config,
        )


def _loader(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return DataLoader(TensorDataset(x, x.sum(-1)), batch_size=4)


def lightmigrate_case():
    model = Regressor()
    runner = TabularRunner(TrainerConfig(trainer_kwargs={"limit_val_batches": 0}))
    trainer = runner._prepare_trainer()
    trainer.fit(model, _loader(16, 7))
    pretrained = trainer.global_step
    return {
        "model": model,
        "train_dataloaders": _loader(12, 311 + pretrained),
        "trainer": {"max_epochs": 2},
    }
