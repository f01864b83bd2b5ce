"""Ready-made runs (no Lightning import here): the Trainer arguments are written where the
pipeline's functions are called."""
from spreadpkg import pipeline
from spreadpkg.pipeline import Experiment, fit_quietly, run_pipeline as run

FAST = {"gpus": 0, "max_epochs": 1, "limit_train_batches": 3, "replace_sampler_ddp": False}


def warm_up(model, loader):
    return run(model, loader, trainer_kwargs=dict(max_epochs=2, limit_train_batches=2, auto_select_gpus=False,
                                                  amp_backend="native", resume_from_checkpoint=None))


def fast(model, loader):
    return pipeline.run_pipeline(model, loader, FAST)


def polish(model, loader):
    settings = dict(max_epochs=1, move_metrics_to_cpu=False)
    settings["gpus"] = 0
    settings["limit_train_batches"] = 4
    steps = Experiment(model, trainer_kwargs=settings).run(loader)
    return steps + fit_quietly(model, loader, gpus=None, max_epochs=1, limit_train_batches=1,
                               multiple_trainloader_mode="max_size_cycle")
