"""Builds the Trainer arguments of a run, key by key."""


def trainer_config(n_gpus=0, tune=False):
    config = {"max_epochs": 1, "limit_train_batches": 4}
    config["auto_lr_find"] = tune
    config["gpus"] = n_gpus
    config["precision"] = 16
    config["multiple_trainloader_mode"] = "max_size_cycle"
    config.update(resume_from_checkpoint=None, auto_select_gpus=False)
    return config
