"""Project-wide Trainer settings (no Lightning import here)."""

TRAINER_DEFAULTS = dict(gpus=0, max_epochs=2, replace_sampler_ddp=False, amp_backend="native",
                        move_metrics_to_cpu=False, limit_train_batches=3)
