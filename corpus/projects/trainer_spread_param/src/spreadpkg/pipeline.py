"""The project's public entry points: each builds a Trainer from what its caller gives."""
import pytorch_lightning as pl

QUIET = dict(logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)


def run_pipeline(model, loader, trainer_kwargs=None):
    """Fit ``model`` on ``loader``; ``trainer_kwargs`` go to the Trainer."""
    trainer = pl.Trainer(**QUIET, **(trainer_kwargs or {}))
    trainer.fit(model, loader)
    return trainer.global_step


def fit_quietly(model, loader, **trainer_kwargs):
    trainer = pl.Trainer(**QUIET, **trainer_kwargs)
    trainer.fit(model, loader)
    return trainer.global_step


class Experiment:
    def __init__(self, model, trainer_kwargs):
        self.model = model
        self.trainer = pl.Trainer(**QUIET, **trainer_kwargs)

    def run(self, loader):
        self.trainer.fit(self.model, loader)
        return self.trainer.global_step
