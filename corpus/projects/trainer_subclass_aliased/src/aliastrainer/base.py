"""The project's Trainer, derived from Lightning's under an import alias."""
from pytorch_lightning import Trainer as PLTrainer


class BaseTrainer(PLTrainer):
    def __init__(self, gpus=None, replace_sampler_ddp=True, **kwargs):
        super().__init__(
            gpus=gpus,
            replace_sampler_ddp=replace_sampler_ddp,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            **kwargs,
        )
