"""Pre-training with the project's Trainer: 1.x arguments through its **kwargs."""
import torch

from subtrainer.trainer import Trainer


def pretrain(model, loader):
    use_gpu = torch.cuda.is_available()
    trainer = Trainer(gpus=use_gpu, replace_sampler_ddp=False, max_epochs=2, auto_lr_find=True,
                      amp_backend="native", limit_train_batches=3)
    trainer.fit(model, loader)
    return trainer.global_step
