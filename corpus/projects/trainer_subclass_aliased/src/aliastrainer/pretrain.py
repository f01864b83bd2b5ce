"""Pre-training with the project's Trainers: 1.x arguments through their **kwargs."""
import torch
import pytorch_lightning as lightning_pl

from aliastrainer.quiet import QuietTrainer


def pretrain(model, loader):
    use_gpu = torch.cuda.is_available()
    trainer = QuietTrainer(gpus=use_gpu, replace_sampler_ddp=False, max_epochs=2, auto_lr_find=True)
    trainer.fit(model, loader)
    return trainer.global_step


def check(model, loader):
    checker = lightning_pl.Trainer(gpus=0, logger=False, limit_val_batches=2, enable_progress_bar=False,
                                   enable_model_summary=False)
    return checker.validate(model, loader, verbose=False)
