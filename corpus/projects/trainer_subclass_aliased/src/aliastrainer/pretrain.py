"""Pre-training with the project's Trainers: 1.x arguments through their **kwargs."""
import torch
import pytorch_lightning as lightning_pl
from pytorch_lightning import Trainer as PLT

from aliastrainer.quiet import QuietTrainer
from aliastrainer.settings import CHECK_SETTINGS


def pretrain(model, loader):
    use_gpu = torch.cuda.is_available()
    trainer = QuietTrainer(gpus=use_gpu, replace_sampler_ddp=False, max_epochs=2, auto_lr_find=True)
    trainer.fit(model, loader)
    return trainer.global_step


def check(model, loader):
    checker = PLT(**CHECK_SETTINGS)
    first = checker.validate(model, loader, verbose=False)
    again = lightning_pl.Trainer(gpus=0, logger=False, limit_val_batches=1, enable_progress_bar=False,
                                 enable_model_summary=False)
    return first + again.validate(model, loader, verbose=False)
