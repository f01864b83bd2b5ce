"""The project's Trainer: 1.x arguments of its own, forwarded to Lightning's Trainer."""
import pytorch_lightning as pl


class Trainer(pl.Trainer):
    """Lightning's Trainer with the project's quiet defaults."""

    def __init__(self, gpus=None, replace_sampler_ddp=True, log_every=1, **kwargs):
        self.log_every = log_every
        super().__init__(
            gpus=gpus,
            replace_sampler_ddp=replace_sampler_ddp,
            log_every_n_steps=log_every,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            **kwargs,
        )
