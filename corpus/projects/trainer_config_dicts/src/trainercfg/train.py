import pytorch_lightning as pl

from trainercfg import config as run_config
from trainercfg.settings import TRAINER_DEFAULTS

QUIET = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False,
         "enable_model_summary": False}


def pretrain_trainer():
    return pl.Trainer(**QUIET, **TRAINER_DEFAULTS)


def build_trainer(n_gpus=0):
    config = run_config.trainer_config(n_gpus)
    return pl.Trainer(**QUIET, **config)
