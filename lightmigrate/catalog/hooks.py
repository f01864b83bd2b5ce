"""The Lightning hook surface, as plain data: which methods Lightning 2.x calls on a
LightningModule or a Callback, with how many positional arguments, and which 1.x hooks it
no longer calls at all.

Read from the installed pytorch-lightning 1.9.5 and 2.6.6 (``inspect.signature`` of
``LightningModule`` and ``Callback``) and the spec's tables A.1, A.2 and A.8. Import-light: the
verify runner uses it inside the 1.9.5 interpreter.
"""

from __future__ import annotations

import difflib
from typing import Dict, FrozenSet, Optional, Tuple

# hook -> (positional arguments 2.x passes after self). Only hooks Lightning itself calls.
MODULE_HOOKS_2X: Dict[str, int] = {
    "backward": 1,  # (loss, *args, **kwargs)
    "configure_callbacks": 0,
    "configure_gradient_clipping": 3,
    "configure_model": 0,
    "configure_optimizers": 0,
    "configure_sharded_model": 0,
    "lr_scheduler_step": 2,
    "on_after_backward": 0,
    "on_after_batch_transfer": 2,
    "on_before_backward": 1,
    "on_before_batch_transfer": 2,
    "on_before_optimizer_step": 1,
    "on_before_zero_grad": 1,
    "on_fit_end": 0,
    "on_fit_start": 0,
    "on_load_checkpoint": 1,
    "on_predict_batch_end": 3,  # + dataloader_idx only with several dataloaders
    "on_predict_batch_start": 2,
    "on_predict_end": 0,
    "on_predict_epoch_end": 0,
    "on_predict_epoch_start": 0,
    "on_predict_model_eval": 0,
    "on_predict_start": 0,
    "on_save_checkpoint": 1,
    "on_test_batch_end": 3,
    "on_test_batch_start": 2,
    "on_test_end": 0,
    "on_test_epoch_end": 0,
    "on_test_epoch_start": 0,
    "on_test_model_eval": 0,
    "on_test_model_train": 0,
    "on_test_start": 0,
    "on_train_batch_end": 3,
    "on_train_batch_start": 2,
    "on_train_end": 0,
    "on_train_epoch_end": 0,
    "on_train_epoch_start": 0,
    "on_train_start": 0,
    "on_validation_batch_end": 3,
    "on_validation_batch_start": 2,
    "on_validation_end": 0,
    "on_validation_epoch_end": 0,
    "on_validation_epoch_start": 0,
    "on_validation_model_eval": 0,
    "on_validation_model_train": 0,
    "on_validation_model_zero_grad": 0,
    "on_validation_start": 0,
    "optimizer_step": 4,
    "optimizer_zero_grad": 3,
    "predict_dataloader": 0,
    "predict_step": 2,  # + dataloader_idx only with several dataloaders
    "prepare_data": 0,
    "setup": 1,
    "teardown": 1,
    "test_dataloader": 0,
    "test_step": 2,
    "train_dataloader": 0,
    "training_step": 2,
    "transfer_batch_to_device": 3,
    "val_dataloader": 0,
    "validation_step": 2,
}

# Callback hooks: positional arguments after (self, trainer, pl_module).
CALLBACK_HOOKS_2X: Dict[str, int] = {
    "on_after_backward": 0,
    "on_before_backward": 1,
    "on_before_optimizer_step": 1,
    "on_before_zero_grad": 1,
    "on_exception": 1,
    "on_fit_end": 0,
    "on_fit_start": 0,
    "on_load_checkpoint": 1,
    "on_predict_batch_end": 3,
    "on_predict_batch_start": 2,
    "on_predict_end": 0,
    "on_predict_epoch_end": 0,
    "on_predict_epoch_start": 0,
    "on_predict_start": 0,
    "on_sanity_check_end": 0,
    "on_sanity_check_start": 0,
    "on_save_checkpoint": 1,
    "on_test_batch_end": 3,
    "on_test_batch_start": 2,
    "on_test_end": 0,
    "on_test_epoch_end": 0,
    "on_test_epoch_start": 0,
    "on_test_start": 0,
    "on_train_batch_end": 3,
    "on_train_batch_start": 2,
    "on_train_end": 0,
    "on_train_epoch_end": 0,
    "on_train_epoch_start": 0,
    "on_train_start": 0,
    "on_validation_batch_end": 3,
    "on_validation_batch_start": 2,
    "on_validation_end": 0,
    "on_validation_epoch_end": 0,
    "on_validation_epoch_start": 0,
    "on_validation_start": 0,
    "setup": 1,
    "teardown": 1,
}

# 1.x module hooks that 2.x never calls, with what replaces them (spec A.1, A.8).
REMOVED_MODULE_HOOKS: Dict[str, str] = {
    "training_epoch_end": "on_train_epoch_end with an output buffer",
    "validation_epoch_end": "on_validation_epoch_end with an output buffer",
    "test_epoch_end": "on_test_epoch_end with an output buffer",
    "training_step_end": "inline it into training_step (it ran inside the optimizer closure)",
    "validation_step_end": "inline it into validation_step",
    "test_step_end": "inline it into test_step",
    "tbptt_split_batch": "manual optimization with an explicit split loop",
    "log_grad_norm": "self.log_dict(grad_norm(self, norm_type)) in on_before_optimizer_step",
    "on_epoch_start": "on_train_epoch_start / on_validation_epoch_start / on_test_epoch_start",
    "on_epoch_end": "on_train_epoch_end / on_validation_epoch_end / on_test_epoch_end",
    "on_pretrain_routine_start": "on_fit_start",
    "on_pretrain_routine_end": "on_fit_start",
    # (1.5 called a module's on_batch_start/on_batch_end; 1.6-1.9 already ignored them: see
    # IGNORED_SINCE_1_6)
    "on_batch_start": "on_train_batch_start(self, batch, batch_idx)",
    "on_batch_end": "on_train_batch_end(self, outputs, batch, batch_idx)",
    "on_post_move_to_device": "nothing (removed in 1.x)",
    "on_hpc_save": "on_save_checkpoint",
    "on_hpc_load": "on_load_checkpoint",
    "get_progress_bar_dict": "a custom progress bar's get_metrics",
    "on_train_dataloader": "train_dataloader",
    "on_val_dataloader": "val_dataloader",
    "on_test_dataloader": "test_dataloader",
    "on_predict_dataloader": "predict_dataloader",
}

REMOVED_CALLBACK_HOOKS: Dict[str, str] = {
    "on_epoch_start": "on_train_epoch_start / on_validation_epoch_start / on_test_epoch_start",
    "on_epoch_end": "on_train_epoch_end / on_validation_epoch_end / on_test_epoch_end",
    "on_batch_start": "on_train_batch_start",
    "on_batch_end": "on_train_batch_end",
    "on_pretrain_routine_start": "on_fit_start",
    "on_pretrain_routine_end": "on_fit_start",
    "on_init_start": "nothing: the callback is built before the Trainer",
    "on_init_end": "on_fit_start",
    "on_configure_sharded_model": "setup",
    "on_before_accelerator_backend_setup": "setup",
    "on_keyboard_interrupt": "on_exception",
}

# Module hooks that 1.6-1.9 already never called (without an error): renaming one to its 2.x
# equivalent would start running code that 1.9 did not run.
IGNORED_SINCE_1_6: FrozenSet[str] = frozenset({"on_batch_start", "on_batch_end"})

# Where a 1.x module hook's work happens in 2.x, for comparing hook sequences across versions.
V1_TO_V2_NAME: Dict[str, Optional[str]] = {
    "training_epoch_end": "on_train_epoch_end",
    "validation_epoch_end": "on_validation_epoch_end",
    "test_epoch_end": "on_test_epoch_end",
    "training_step_end": None,  # inlined into the step
    "validation_step_end": None,
    "test_step_end": None,
    "tbptt_split_batch": None,  # called from the migrated TBPTT step (LM006)
    "log_grad_norm": None,  # called from the migrated on_before_optimizer_step (LM302)
    "configure_sharded_model": "configure_model",  # renamed by LM305 (M25)
}

_COMMON_SLIPS = (("on_training_", "on_train_"), ("on_val_", "on_validation_"), ("on_valid_", "on_validation_"),
                 ("on_testing_", "on_test_"), ("on_predicting_", "on_predict_"), ("_epoch_ends", "_epoch_end"))


def hook_table(kind: str) -> Dict[str, int]:
    return MODULE_HOOKS_2X if kind == "module" else CALLBACK_HOOKS_2X


def removed_table(kind: str) -> Dict[str, str]:
    return REMOVED_MODULE_HOOKS if kind == "module" else REMOVED_CALLBACK_HOOKS


def likely_misspelling(name: str, kind: str = "module") -> Optional[str]:
    """The 2.x hook ``name`` was probably meant to be, or None when it is not hook-like."""
    hooks = hook_table(kind)
    if name in hooks or name in removed_table(kind) or not name.startswith("on_") or len(name) < 8:
        return None
    fixed = name
    for wrong, right in _COMMON_SLIPS:
        fixed = fixed.replace(wrong, right)
    if fixed in hooks:
        return fixed
    close = difflib.get_close_matches(name, list(hooks), n=1, cutoff=0.9)
    return close[0] if close else None


def hook_like(name: str, kind: str = "module") -> bool:
    """A name Lightning calls (or called in 1.x), or one close enough to be a slip."""
    return name in hook_table(kind) or name in removed_table(kind) or likely_misspelling(name, kind) is not None


KNOWN_HOOK_NAMES: FrozenSet[str] = frozenset(MODULE_HOOKS_2X) | frozenset(REMOVED_MODULE_HOOKS)


def required_positional(params: Tuple[str, ...], defaults: int) -> int:
    """How many positional parameters after ``self`` must be passed."""
    positional = [p for p in params[1:] if not p.startswith("*")]
    return max(0, len(positional) - defaults)


# The method LM001 writes into a LightningModule whose 1.x ``*_epoch_end`` body computes what a
# user callback reads in its own ``on_*_epoch_end`` (1.x ran the body before the callbacks' hooks,
# 2.x runs the module's hook after them): it runs the old body once per epoch, called first by
# those callbacks and then by the module's ``on_*_epoch_end``. Name -> stage.
RUN_ONCE_EPOCH_END: Dict[str, str] = {
    "_finish_train_epoch": "train",
    "_finish_validation_epoch": "validation",
    "_finish_test_epoch": "test",
}

# The method LM001 moves a 1.x ``on_train_epoch_end`` body into when ModelCheckpoint/EarlyStopping
# monitor a metric (ledger B2.6): 1.x ran those callbacks' check before the module's hook, 2.x
# after it. A ``Checkpoint`` callback the module returns from ``configure_callbacks`` (2.x runs
# Checkpoint callbacks last among the monitoring ones) calls it; its class is named
# ``_<Module>`` + AFTER_MONITORS_CALLBACK.
AFTER_MONITORS_METHOD = "_train_epoch_end_after_monitors"
AFTER_MONITORS_CALLBACK = "AfterMonitors"
