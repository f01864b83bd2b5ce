"""The project's Trainer settings (no Lightning import here)."""

CHECK_SETTINGS = dict(gpus=0, logger=False, limit_val_batches=2, enable_progress_bar=False,
                      enable_model_summary=False, amp_backend="native")
