"""The semantics ledger: every 1.9.5 runtime fact a faithful rewrite has to keep (issue 26).

One ``Fact`` per behaviour of pytorch-lightning 1.9.5 that user code can see: section B of the
spec (``../shared/spec/lightning-1-to-2.md``, "Exact v1.9 runtime semantics"), read line by
line, plus facts read from 1.9.5's loops that the spec does not state (``new=True``; the section
names the loop file). Each fact says what 1.9.5 did, which rule(s) keep it and in which
function(s) (``"module:attribute.path"`` strings that ``tests/test_semantics_ledger.py``
resolves), the corpus case(s) whose before/after comparison exercises it, or why no case can
observe it, and its status:

- ``kept``: the migrated code behaves as 1.9.5 did (by a rule, or by Lightning 2.x itself when
  ``by_lightning`` is set: 2.x does the same and no rewrite is needed);
- ``marked``: a ``# TODO(lightmigrate)`` marker names it where a faithful rewrite is impossible;
- ``partial``: kept for some forms, not for others (``gap`` says which);
- ``missing``: not kept and not marked (``gap`` says what happens).

A fact lists a case only when the case's docstring ("Exercises ...") names that behaviour (and
a case that was seen NOT to fail without the handling is left out). That the case fails when
the rule ignores the fact was checked for the facts whose ``seen_to_fail`` is set (the rule's
handling removed in a copy of the package, then ``lightmigrate verify --oracle`` against real
1.9.5 on the case), not for the others. ``reason`` is set when no case names the fact:
either nothing a case records can observe it (the original raises, it needs several GPUs or
processes, it only changes memory), or it starts with ``NO_CASE`` when a case could be written
but is not there yet.

Kept free of rule imports (``lightmigrate rules`` and the coverage report read it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

STATUSES: Tuple[str, ...] = ("kept", "marked", "partial", "missing")
NO_CASE = "no case yet:"  # the prefix of a reason that is a to-do, not an impossibility

LM001 = "lightmigrate.rules.lm001_epoch_end"
LM003 = "lightmigrate.rules.lm003_step_end"
LM004 = "lightmigrate.rules.lm004_optimizer_hooks"
LM005 = "lightmigrate.rules.lm005_multi_optimizer"
LM006 = "lightmigrate.rules.lm006_tbptt"
LM302 = "lightmigrate.rules.lm302_grad_norm"
LM303 = "lightmigrate.rules.lm303_dataloader_idx"
LM307 = "lightmigrate.rules.lm307_callback_api"
LM309 = "lightmigrate.rules.lm309_behaviour_notes"

RAISES = "the original raises on 1.9.5, so there is no training run to compare"
MEMORY = "only memory use differs; nothing a run records depends on it"
DP_ONLY = "needs strategy=\"dp\" on several GPUs; the corpus runs on one CPU device"
DDP_ONLY = "needs DDP with several processes; the corpus runs one CPU process"
MARKED = "the code is marked, not migrated: there is no migrated run to compare"


@dataclass(frozen=True)
class Fact:
    id: str  # stable: "B1.5", "L3" (L: read from 1.9.5's loops, not stated by the spec)
    section: str  # spec section ("B.1") or, for new facts, the 1.9.5 loop file
    did: str  # one line: what 1.9.5 did
    status: str  # one of STATUSES
    rules: Tuple[str, ...] = ()  # rule codes that keep (or mark) it
    keepers: Tuple[str, ...] = ()  # "module:attr.path" of the code that keeps it
    cases: Tuple[str, ...] = ()  # corpus paths (from the repository root) that exercise it
    reason: str = ""  # why no case names it (see NO_CASE)
    new: bool = False  # found in 1.9.5's loops, not stated by the spec
    by_lightning: bool = False  # 2.x does the same: kept without a rewrite
    gap: str = ""  # for partial / missing / marked: what is not kept
    seen_to_fail: str = ""  # how a named case was seen to fail with the fact's handling removed
    blind: str = ""  # a case that exercises it but was seen NOT to fail with the handling removed

    @property
    def has_case(self) -> bool:
        return bool(self.cases)

    @property
    def not_seen_to_fail(self) -> bool:
        """A rule keeps it and a case names it, but nobody has yet removed the rule's handling and
        seen the case fail (facts kept by 2.x itself have no handling to remove)."""
        return self.has_case and not self.by_lightning and not self.seen_to_fail

    @property
    def case_to_write(self) -> bool:
        return not self.cases and self.reason.startswith(NO_CASE)


def _f(id, section, did, status, rules=(), keepers=(), cases=(), reason="", **kw) -> Fact:
    return Fact(id, section, did, status, tuple(rules), tuple(keepers),
                tuple("corpus/" + c for c in cases), reason, **kw)


_COLLECT = f"{LM001}:_collect"
_GATHER = f"{LM001}:_gather"
_RESET = f"{LM001}:_reset"
_BUFFERS = f"{LM001}:_ClassMigration._add_buffer_hooks"
_INLINE = f"{LM003}:_StepEndMigration._inline_top"
_WHY_INLINE = f"{LM003}:_StepEndMigration._why_inline"
_LOOP = f"{LM005}:_training_step"
_OPTIMIZE = f"{LM005}:_optimize"
_SCHED = f"{LM005}:_scheduler_helper"
_EPOCH_END5 = f"{LM005}:_MultiOptimizerMigration._epoch_end"
_TBPTT = f"{LM006}:_Tbptt._rewrite"
# B.2 order: which callbacks read or change what a body computes or reads, and the run-once method they call first
_READ_PLAN = "lightmigrate.rules.shared.epoch_end_readers:read_plan"
_ONCE = f"{LM001}:_ClassMigration._migrate_top_once"
_CALLBACK_CALLS = f"{LM001}:_CallbackCalls"
_LIBRARY_FIRST = "lightmigrate.rules.shared.epoch_end_readers:library_callback_first"
_PRUNING_GAP = ("a Lightning callback that changes the module in that hook cannot call the run-once method: 1.9.5's "
                "ModelPruning prunes in on_train_epoch_end (in on_validation_epoch_end with "
                "prune_on_train_epoch_end=False), now before the body; LM001 marks the module's hook when the project "
                "names it (a probe: training_epoch_end counted 0 zero weights at epoch 0 on 1.9.5, 2 migrated)")

FACTS: Tuple[Fact, ...] = (
    # ---- B.1 what `outputs` holds: training, automatic optimization ---------------------------
    _f("B1.1", "B.1", "training outputs are buffered for training_epoch_end only when the hook is overridden",
       "kept", ["LM001"], [_BUFFERS], reason=MEMORY),
    _f("B1.2", "B.1", "a tensor returned by training_step becomes the element {\"loss\": ...}",
       "kept", ["LM001"], [_COLLECT], ["train_tensor_accumulate.py"],
       seen_to_fail="train_tensor_accumulate.py errors (the body indexes a bare tensor) when LM001 collects a tensor step's loss bare, as training_step returned it"),
    _f("B1.3", "B.1", "a dict returned by training_step becomes {\"loss\": ..., **other keys}",
       "kept", ["LM001"], [_COLLECT], ["train_dict_skip_batches.py"],
       seen_to_fail="train_dict_skip_batches.py errors (KeyError 'size') when LM001 collects only the loss of a dict step"),
    _f("B1.4", "B.1", "a dict without \"loss\" raises MisconfigurationException (automatic optimization)",
       "kept", reason=RAISES, by_lightning=True),
    _f("B1.5", "B.1", "\"loss\" in outputs is (loss / accumulate_grad_batches).detach().clone()",
       "kept", ["LM001"], [_COLLECT], ["train_tensor_accumulate.py", "accumulate_three_max_steps.py"],
       seen_to_fail='train_tensor_accumulate.py and accumulate_three_max_steps.py mismatch (the epoch-end losses) when LM001 collects the loss undivided, as training_step returned it'),
    _f("B1.6", "B.1", "other keys of the returned dict are not detached (they keep grad_fn)",
       "kept", ["LM001"], [_COLLECT], ["train_outputs_keep_graph.py", "train_dict_skip_batches.py", "decorated_epoch_end.py"],
       seen_to_fail="train_outputs_keep_graph.py mismatches (attached_epochs 0 vs 1 at the first epoch end: the body "
                    "found its predictions detached) when LM001 collects a dict step's output with the other keys "
                    "detached (train_dict_skip_batches.py and decorated_epoch_end.py still matched, see blind)",
       blind='train_dict_skip_batches.py and decorated_epoch_end.py still matched with LM001 detaching the other keys: the comparison records requires_grad but compares it only with check_requires_grad=True, which verify and the corpus test leave off, and neither body backpropagates through them'),
    _f("B1.7", "B.1", "a step that returned None is absent from outputs (no None placeholder)",
       "kept", ["LM001"], [_COLLECT], ["train_dict_skip_batches.py", "training_epoch_all_steps_skipped.py"],
       seen_to_fail="train_dict_skip_batches.py errors (KeyError) when LM001 appends every training output, None steps' {} included"),
    _f("B1.8", "B.1", "the element comes from training_step_end's return value when that hook returns non-None",
       "kept", ["LM001", "LM003"], [_COLLECT, _INLINE], ["step_end_mutates_dict.py", "step_end_changes_loss.py"],
       seen_to_fail='step_end_changes_loss.py errors (no "loss" key) when the step wrapper ignores the hook\'s result'),
    _f("B1.9", "B.1", "one optimizer, no TBPTT: a flat list with one dict per kept batch",
       "kept", ["LM001"], [_COLLECT, _GATHER], ["train_tensor_accumulate.py", "train_dict_skip_batches.py"],
       seen_to_fail="train_tensor_accumulate.py and train_dict_skip_batches.py error (list indices) when LM001 collects each batch's dict in a list of its own"),
    _f("B1.10", "B.1", "N optimizers: outputs[batch][optimizer]",
       "kept", ["LM005"], [_LOOP, _EPOCH_END5], ["gan_two_optimizers.py", "two_optimizers_accumulate.py"],
       seen_to_fail="gan_two_optimizers.py, two_optimizers_accumulate.py and optimizer_frequencies.py error (KeyError 0 in the epoch-end body) when LM005's loop flattens the per-optimizer outputs into the epoch buffer"),
    _f("B1.11", "B.1", "an optimizer that skipped a batch (None) leaves a shorter inner list for that batch",
       "kept", ["LM005"], [_OPTIMIZE], ["gan_skipped_steps_batch_end.py"],
       seen_to_fail="gan_skipped_steps_batch_end.py errors (None is not subscriptable) when LM005's loop keeps the None output of an optimizer that skipped"),
    _f("B1.12", "B.1", "with optimizer frequencies every batch is a 1-element list [[d], [d], ...]",
       "kept", ["LM005"], [_LOOP], ["optimizer_frequencies.py", "frequencies_with_schedulers.py"],
       seen_to_fail="optimizer_frequencies.py and frequencies_with_schedulers.py error in the epoch-end body when LM005's loop stores the frequency-selected optimizer's dict instead of a one-element list"),
    _f("B1.13", "B.1", "TBPTT with one optimizer: outputs[batch][split]",
       "kept", ["LM006"], [_TBPTT, f"{LM006}:_Tbptt._convert_epoch_end"], ["tbptt_hiddens.py"],
       seen_to_fail='tbptt_hiddens.py errors in the epoch-end body when LM006 flattens the per-split outputs into the epoch buffer'),
    _f("B1.14", "B.1", "TBPTT with N optimizers: outputs[batch][split][optimizer]",
       "marked", ["LM006"], [f"{LM006}:_Tbptt._blocked"], reason=MARKED,
       gap="LM006 marks TBPTT with optimizer_idx instead of migrating it"),
    _f("B1.15", "B.1", "an epoch of exactly one batch squeezes the batch dimension: 2 optimizers give a flat [d0, d1]",
       "kept", ["LM005"], [_EPOCH_END5], ["one_batch_two_optimizers_squeeze.py"],
       seen_to_fail='one_batch_two_optimizers_squeeze.py mismatches when LM005 does not squeeze a one-batch epoch'),
    _f("B1.16", "B.1", "one batch with one optimizer is re-wrapped as [d]",
       "kept", ["LM001"], [_GATHER], ["one_batch_one_optimizer_epoch_end.py"],
       seen_to_fail='one_batch_one_optimizer_epoch_end.py errors (KeyError 0) when LM001 squeezes a one-batch epoch to the dict as LM005 squeezes two optimizers'),
    _f("B1.17", "B.1", "training_epoch_end is still called, with [], when every step of the epoch returned None",
       "kept", ["LM001"], [_GATHER], ["training_epoch_all_steps_skipped.py"],
       seen_to_fail="training_epoch_all_steps_skipped.py errors (KeyError 'loss': the {} of a None step reached the body) when LM001 collects every training output, empty ones included"),
    _f("B1.18", "B.1", "training_epoch_end returning anything but None raises MisconfigurationException",
       "marked", ["LM001"], [f"{LM001}:_mark_value_returns"], reason=RAISES,
       gap="the body moves into on_train_epoch_end, whose return value 2.x ignores: each `return <value>` of the "
           "body whose value is never None (a literal, a container, an operation) gets a marker naming the 1.9 "
           "error (the 1.9 code crashed there, so nothing is rewritten); a call or name may be None, as it was "
           "in code that ran on 1.9, and is left unmarked"),
    _f("B1.19", "B.1", "manual optimization: a tensor return becomes {\"loss\": t.detach()}, not divided",
       "kept", ["LM001"], [_COLLECT], ["manual_optimization_outputs.py"], by_lightning=True),
    _f("B1.20", "B.1", "manual optimization: a dict keeps every key but \"hiddens\"; \"loss\" is detached and optional",
       "kept", ["LM001"], [_COLLECT], ["manual_optimization_outputs.py"], by_lightning=True),
    _f("B1.21", "B.1", "manual optimization: a None return gives {} and is dropped from outputs",
       "kept", ["LM001"], [_COLLECT], ["manual_optimization_none_steps.py"],
       seen_to_fail="manual_optimization_none_steps.py errors (KeyError 'idx') when LM001 collects the {} 2.x passes for a None manual step"),
    # ---- B.1 validation / test / predict ----------------------------------------------------
    _f("B1.22", "B.1", "eval outputs are the raw step return values, any type, not detached",
       "kept", ["LM001"], [_COLLECT], ["eval_outputs_mixed_types.py"],
       seen_to_fail='eval_outputs_mixed_types.py mismatches (the validation epoch end gets tensor(1.9625) for the '
                    'python float "max_err", 11 differences) when LM001 collects eval outputs with their python numbers '
                    'made tensors, and errors (int + dict in test_epoch_end\'s sum) when it wraps a non-dict eval '
                    'output as {"loss": ...} as training outputs are; "not detached" cannot show: eval steps run under '
                    'no_grad (B1.23), their outputs have no graph'),
    _f("B1.23", "B.1", "eval steps run under no_grad during fit and under inference mode in validate/test",
       "kept", cases=["standalone_validate_and_test.py"], by_lightning=True),
    _f("B1.24", "B.1", "an eval step that returned None is left out of outputs",
       "kept", ["LM001"], [_COLLECT], ["eval_outputs_mixed_types.py", "standalone_validate_and_test.py"],
       seen_to_fail='eval_outputs_mixed_types.py errors when LM001 appends None eval outputs'),
    _f("B1.25", "B.1", "eval outputs are buffered only when validation_epoch_end / test_epoch_end is overridden",
       "kept", ["LM001"], [_BUFFERS], reason=MEMORY),
    _f("B1.26", "B.1", "exactly one eval dataloader: the hook gets that loader's list flat",
       "kept", ["LM001"], [_GATHER], ["validation_single_loader.py", "module_dataloaders_list_of_one.py"],
       seen_to_fail="validation_single_loader.py errors when LM001 never flattens a single loader's list"),
    _f("B1.27", "B.1", "several eval dataloaders: a list per loader, an empty list for a loader whose steps all returned None",
       "kept", ["LM001"], [_RESET, _GATHER], ["validation_two_loaders.py", "standalone_validate_and_test.py",
                                               "datamodule_all_stages.py"],
       seen_to_fail="validation_two_loaders.py errors when LM001 always hands over loader 0's list"),
    _f("B1.28", "B.1", "if no dataloader ran the eval hook receives []",
       "kept", ["LM001"], [_GATHER],
       reason="unreachable on 1.9.5: with no eval batches at all the loop is skipped and the hook is not called (L8)"),
    _f("B1.29", "B.1", "on_predict_epoch_end(results): one list per dataloader, predictions on the CPU ([[p0, ...]] for one)",
       "kept", ["LM001"], [f"{LM001}:_ClassMigration._migrate_predict"],
       ["predict_single_loader.py", "predict_two_loaders.py"],
       seen_to_fail="predict_single_loader.py errors (torch.cat on a tensor: results came flat) when LM001 reads on_predict_epoch_end's results as 2.x's flat predictions (predict_two_loaders.py: two loaders are a list per loader in both, it still matched)"),
    _f("B1.30", "B.1", "trainer.predict() returned the flat list for one dataloader",
       "kept", cases=["predict_single_loader.py"], by_lightning=True),
    _f("B1.31", "B.1", "BasePredictionWriter.write_on_epoch_end got predictions as one list per dataloader",
       "kept", ["LM307"], [f"{LM307}:_Fix._writer_epoch"], ["prediction_writer_epoch_end.py"],
       seen_to_fail="prediction_writer_epoch_end.py errors (torch.cat on a tensor: predictions came flat) when LM307 does not wrap write_on_epoch_end's predictions for one dataloader"),
    # ---- B.2 when the epoch-end hooks run ------------------------------------------------------
    _f("B2.1", "B.2", "last batch: optimizer step, then step- and epoch-interval non-plateau schedulers, then on_train_batch_end",
       "kept", ["LM005"], [_LOOP, _SCHED],
       ["two_optimizers_batch_end_reads_lr.py", "two_optimizers_epoch_end_early_return.py", "step_end_logs_scheduler_lr.py"],
       seen_to_fail="two_optimizers_batch_end_reads_lr.py mismatches (lr_encoder 0.1 vs 0.05 logged by on_train_batch_end "
                    "at each epoch's last batch) when LM005's loop steps the epoch-interval schedulers at the start of "
                    "on_train_epoch_end, after on_train_batch_end, instead of in the last batch's step "
                    "(two_optimizers_epoch_end_early_return.py still matched: it reads the LR in training_epoch_end, "
                    "after both; step_end_logs_scheduler_lr.py has one optimizer, where 2.x keeps the order itself)"),
    _f("B2.2", "B.2", "validation: validation_epoch_end, then callbacks' and module's on_validation_epoch_end, then on_validation_end",
       "kept", ["LM001"], [_READ_PLAN, _ONCE, _CALLBACK_CALLS, _LIBRARY_FIRST],
       ["callback_changes_epoch_end_state.py", "callback_reads_epoch_end_result.py",
        "callbacks_read_logged_metrics_subclass.py", "callback_reads_kept_module_reference.py"],
       gap=_PRUNING_GAP,
       seen_to_fail=("callback_changes_epoch_end_state.py mismatches (reported_score one validation late: 0.131 vs "
                     "0.334 at step 2) when LM001 does not follow a callback's call of a module method that reads "
                     "what validation_epoch_end stored (the body then runs after the callback's hook)")),
    _f("B2.3", "B.2", "end-of-epoch validation runs before training_epoch_end",
       "kept", ["LM001"], [_BUFFERS, f"{LM001}:_ClassMigration._migrate_top"],
       ["train_epoch_end_reads_validation.py", "callback_reads_epoch_end_state.py", "val_check_interval_half.py"],
       seen_to_fail="train_epoch_end_reads_validation.py mismatches (epoch 0's summary holds the sanity check's val "
                    "loss, 2.465 vs 2.699; the logged gap 1.095 vs 1.330 before the case set log_every_n_steps=50) "
                    "when the migrated training body runs in the last on_train_batch_end, before the end-of-epoch "
                    "validation, instead of in on_train_epoch_end, which 2.x calls after it "
                    "(callback_reads_epoch_end_state.py and val_check_interval_half.py then differed only in when the "
                    "epoch-end body ran)"),
    _f("B2.4", "B.2", "training_epoch_end runs before every callback's on_train_epoch_end",
       "kept", ["LM001"], [_READ_PLAN, _ONCE, _CALLBACK_CALLS, _LIBRARY_FIRST],
       ["callback_changes_epoch_end_state.py", "callback_reads_epoch_end_result.py",
        "callbacks_read_logged_metrics_subclass.py", "callback_reads_kept_module_reference.py"],
       gap=_PRUNING_GAP,
       seen_to_fail=("callback_changes_epoch_end_state.py mismatches (noise_scale 0.4 vs 0.8 at step 2: the body "
                     "logged the scale the callback had already halved) when LM001 does not order a callback that "
                     "changes an attribute the body reads")),
    _f("B2.5", "B.2", "ModelCheckpoint/EarlyStopping saw metrics logged in training_epoch_end",
       "kept", ["LM001"], [f"{LM001}:_ClassMigration._migrate_top"], ["checkpoint_early_stopping_epoch_end.py"],
       seen_to_fail=("checkpoint_early_stopping_epoch_end.py mismatches (ModelCheckpoint(train_mean) best score 3.595 "
                     "vs 0.530, train_mean) when the migrated training buffer is not reset every epoch")),
    _f("B2.6", "B.2", "metrics logged in the module's on_train_epoch_end were not seen by ModelCheckpoint/EarlyStopping",
       "kept", ["LM001", "LM309"],
       [f"{LM001}:_ClassMigration._defer_after_monitors", f"{LM001}:_add_after_monitors_callback",
        "lightmigrate.rules.shared.after_monitors:can_defer", f"{LM309}:_notes"],
       ["monitor_metric_logged_in_on_train_epoch_end.py"],
       seen_to_fail=("monitor_metric_logged_in_on_train_epoch_end.py mismatches when LM001 leaves the 1.x "
                     "on_train_epoch_end in place (1.9.5: best checkpoint epoch 2 step 9, stopped_epoch 3, 4 epochs; "
                     "migrated: best epoch 1 step 6, stopped_epoch 2, 3 epochs, global_step 9 vs 12)"),
       gap=("kept for a top-level LightningModule class whose removed *_epoch_end hook LM001 migrates in the same run "
            "(the evidence that its on_train_epoch_end is 1.x code; gone after that run, so a second run does not move "
            "the body LM001 put there from training_epoch_end, which 1.9's callbacks saw the same epoch, B2.5), in a "
            "project naming ModelCheckpoint/EarlyStopping and a monitor: the body moves into "
            "_train_epoch_end_after_monitors, run by a Checkpoint callback from configure_callbacks (2.x runs "
            "Checkpoint callbacks last, after the module's hook, before the epoch's metrics go to the loggers). "
            "Left as it is, with LM309's NOTE (C11): a class without such a hook (its on_train_epoch_end may be 2.x "
            "code), one whose on_train_epoch_end an earlier rule wrote or merged training_epoch_end into (LM005, "
            "several optimizers), one whose line defines another on_train_epoch_end or configure_callbacks, calls or binds "
            "on_train_epoch_end by name, has bases the index cannot follow, or a file naming Checkpoint otherwise. "
            "Without a ModelCheckpoint (enable_checkpointing=False) trainer.checkpoint_callback is the written "
            "callback instead of None (ckpt_path='best' then raises AttributeError, 1.9.5 ValueError); with one, "
            "ckpt_path='best' still loads its best model but warns that several checkpoint callbacks are configured, "
            "and each later fit/validate/test/predict logs that the module's callback replaces the previous call's")),
    _f("B2.7", "B.2", "the module's on_train_epoch_end runs after the training_epoch_end body",
       "kept", ["LM001"], [f"{LM001}:_ClassMigration._migrate_top", f"{LM001}:_ClassMigration._merge_safe"],
       ["merge_existing_hooks.py"],
       seen_to_fail='merge_existing_hooks.py mismatches (train_abs_err_x2 0.0 vs 4.26, val_max_err_plus_batches) when LM001 merges the existing on_*_epoch_end body before the old body'),
    _f("B2.8", "B.2", "ReduceLROnPlateau (epoch interval) steps after on_train_epoch_end, with callback_metrics[monitor]",
       "kept", ["LM005"], [_EPOCH_END5], ["reduce_lr_on_plateau_two_optimizers.py"],
       seen_to_fail='reduce_lr_on_plateau_two_optimizers.py mismatches (val_loss, LR) when LM005 never steps ReduceLROnPlateau'),
    _f("B2.9", "B.2", "the sanity check calls validation_epoch_end with num_sanity_val_steps batches of each loader",
       "kept", ["LM001"], [_RESET], ["sanity_check_all_batches.py", "validation_two_loaders.py"],
       seen_to_fail="sanity_check_all_batches.py mismatches (val_calls 1 vs 2) and validation_two_loaders.py mismatches (the sanity check's epoch-end input missing) when LM001's migrated body returns at once during the sanity check"),
    _f("B2.10", "B.2", "metrics logged during the sanity check are thrown away",
       "kept", cases=["sanity_check_all_batches.py"], by_lightning=True),
    _f("B2.11", "B.2", "sanity-check outputs never reach epoch 0's validation_epoch_end",
       "kept", ["LM001"], [_RESET, f"{LM001}:_ClassMigration._with_reset"],
       ["epoch_end_ignores_outputs.py", "validation_single_loader.py", "sanity_check_all_batches.py"],
       seen_to_fail='sanity_check_all_batches.py and validation_single_loader.py mismatch when LM001 does not reset the buffer at each validation start'),
    _f("B2.12", "B.2", "trainer.test calls test_epoch_end with the same structure as validation",
       "kept", ["LM001"], [_GATHER], ["test_epoch_end_reuses_validation.py", "datamodule_all_stages.py"],
       seen_to_fail="test_epoch_end_reuses_validation.py errors (list indices) when LM001 does not flatten test_epoch_end's single loader as it flattens validation's (datamodule_all_stages.py still matched)"),
    _f("B2.13", "B.2", "a mid-epoch validation (val_check_interval) hands the hook only that run's outputs",
       "kept", ["LM001"], [_RESET], ["val_check_interval_half.py"],
       seen_to_fail='val_check_interval_half.py mismatches (val_batches 3 vs 5) when LM001 does not reset the buffer per run'),
    _f("B2.14", "B.2", "ModelCheckpoint/EarlyStopping saw the val metrics logged in validation_epoch_end of the same "
       "epoch (with validation every epoch they check at the training epoch end, else in on_validation_end)",
       "kept", ["LM001"], [_RESET, _BUFFERS], ["checkpoint_early_stopping_epoch_end.py"],
       seen_to_fail=("checkpoint_early_stopping_epoch_end.py mismatches (best checkpoint epoch 7 step 32 vs epoch 3 "
                     "step 16, stopped_epoch 9 vs 5, val_loss) when the migrated validation buffer is not reset at "
                     "each validation start")),
    # ---- B.3 step_end hooks ---------------------------------------------------------------------
    _f("B3.1", "B.3", "training_step_end runs inside the optimizer closure, after training_step, before zero_grad and backward",
       "kept", ["LM003"], [_INLINE], ["step_end_changes_loss.py", "step_end_in_base_class.py"],
       seen_to_fail='step_end_changes_loss.py errors (the step\'s dict has no "loss": training_step_end made it) when LM003 moves training_step_end to on_train_batch_end instead of inlining it into the step (step_end_in_base_class.py still matched)'),
    _f("B3.2", "B.3", "training_step_end runs once per closure evaluation (several times per batch under LBFGS)",
       "kept", ["LM003"], [_WHY_INLINE, f"{LM003}:_uses_lbfgs"], ["step_end_counts_under_lbfgs.py"],
       seen_to_fail="step_end_counts_under_lbfgs.py mismatches on main before LM003's LBFGS check (step_end_calls 4 vs 1)"),
    _f("B3.3", "B.3", "training_step_end runs once per optimizer (optimizer_idx)",
       "kept", ["LM005"], [_OPTIMIZE], ["step_end_per_optimizer.py"],
       seen_to_fail="step_end_per_optimizer.py mismatches (logged losses from the second batch on, weights) when "
                    "LM005's closure does not call the training_step_end helper"),
    _f("B3.4", "B.3", "training_step_end runs once per TBPTT split",
       "kept", ["LM006"], [_TBPTT], ["tbptt_custom_split_step_end.py"],
       seen_to_fail='tbptt_custom_split_step_end.py mismatches (step_end logs once per batch instead of per split, losses) when LM006 does not call training_step_end per split'),
    _f("B3.5", "B.3", "eval step_end hooks run per batch, before on_*_batch_end",
       "kept", ["LM003"], [_INLINE, f"{LM003}:_StepEndMigration._move_to_batch_end"],
       ["eval_step_end_two_loaders.py", "step_end_logs_only_or_none.py"],
       seen_to_fail='step_end_logs_only_or_none.py mismatches (its step_end logs missing) when LM003 drops a side-effect-only eval step_end instead of moving it to on_*_batch_end (eval_step_end_two_loaders.py is inlined, not moved)'),
    _f("B3.6", "B.3", "on one device the step_end hook receives exactly the object the step returned",
       "kept", ["LM003"], [_INLINE], ["step_end_mutates_dict.py"],
       seen_to_fail="step_end_mutates_dict.py mismatches (epoch_loss, test_rmse) when LM003 hands the step_end hook a copy of the step's dict"),
    _f("B3.7", "B.3", "under strategy=\"dp\" the step_end hook received outputs gathered (concatenated) across GPUs",
       "marked", ["LM003"], [f"{LM003}:_reduces"], reason=DP_ONLY,
       gap="a hook that reduces its argument in a project using dp is marked; 2.x has no dp"),
    _f("B3.8", "B.3", "DP averaged \"loss\" only when training_step_end was not overridden",
       "marked", ["LM003"], [f"{LM003}:_reduces"], reason=DP_ONLY, gap="as B3.7"),
    _f("B3.9", "B.3", "a step_end returning None keeps the step's raw output",
       "kept", ["LM003"], [_INLINE], ["step_end_logs_only_or_none.py", "step_end_mutates_dict.py"],
       seen_to_fail="step_end_logs_only_or_none.py errors when the step wrapper returns the hook's None"),
    _f("B3.10", "B.3", "the step_end result is what the closure backpropagates",
       "kept", ["LM003"], [_INLINE], ["step_end_changes_loss.py", "step_end_in_base_class.py"],
       seen_to_fail="step_end_changes_loss.py errors when the step wrapper ignores the hook's result"),
    _f("B3.11", "B.3", "the step_end result is what on_*_batch_end receives and *_epoch_end collects",
       "kept", ["LM003", "LM001"], [_INLINE, _COLLECT], ["eval_step_end_two_loaders.py", "step_end_logs_only_or_none.py"],
       seen_to_fail="eval_step_end_two_loaders.py errors (KeyError 'mae': the epoch end got the raw step output) and step_end_logs_only_or_none.py mismatches when LM003's step wrapper returns the step's output instead of the hook's result"),
    _f("B3.12", "B.3", "self.log in step_end hooks: training on_step=True/on_epoch=False, eval on_step=False/on_epoch=True",
       "kept", ["LM003"], [f"{LM003}:_StepEndMigration._move_to_batch_end"], ["step_end_metric_object.py"],
       by_lightning=True,
       blind="step_end_metric_object.py still matched with LM003 forced to inline both hooks into the steps instead "
             "of moving them to on_*_batch_end: 2.x takes self.log's defaults from the stage of the running hook, and "
             "both places LM003 puts a step_end hook are batch hooks of the step's stage (no LM003 code chooses a "
             "hook with other defaults, so there is no handling to remove: kept by 2.x)"),
    _f("B3.13", "B.3", "training_step_end saw the LR, weights and global_step of before the optimizer and scheduler step",
       "kept", ["LM003"], [f"{LM003}:_not_side_effect_only"], ["step_end_logs_scheduler_lr.py"],
       seen_to_fail="step_end_logs_scheduler_lr.py mismatches (lr 0.1 vs 0.05) when LM003's step-sensitive check is off"),
    # ---- B.4 on_train_batch_end ------------------------------------------------------------------
    _f("B4.1", "B.4", "on_train_batch_end(outputs, batch, batch_idx) in module and callbacks (no dataloader_idx since 1.7)",
       "kept", reason=RAISES + " for a dataloader_idx override (it fails on 1.9.5 and on 2.x)", by_lightning=True),
    _f("B4.2", "B.4", "one optimizer, no TBPTT: outputs is the dict {\"loss\": detached(loss/accumulate), **extras}",
       "kept", cases=["merge_existing_hooks.py", "one_optimizer_batch_end_outputs.py"], by_lightning=True),
    _f("B4.3", "B.4", "a None step gives outputs == [] (2.x: {}), also under manual optimization",
       "kept", ["LM001", "LM005"], [f"{LM001}:_empty_outputs_sites", f"{LM001}:_EmptyOutputs", _LOOP],
       ["batch_end_outputs_after_none_step.py", "one_optimizer_loop_outputs_after_none_step.py"],
       seen_to_fail="batch_end_outputs_after_none_step.py errors (KeyError 'loss' in the callback, which took {} "
                    "for a non-empty dict) when LM001 leaves on_train_batch_end hooks that test `outputs == []` / "
                    "isinstance(outputs, list) as they are; one_optimizer_loop_outputs_after_none_step.py errors "
                    "(None is not subscriptable) when LM005's one-optimizer loop hands the hooks None instead of []"),
    _f("B4.4", "B.4", "N optimizers: a list of per-optimizer dicts, skipped optimizers removed",
       "kept", ["LM005"], [_OPTIMIZE, f"{LM005}:_MultiOptimizerMigration._migrate_top"],
       ["gan_skipped_steps_batch_end.py", "gan_callback_zero_grad_outputs.py"],
       seen_to_fail="gan_skipped_steps_batch_end.py mismatches (batch_end_items 1 vs 2) when LM005 hands the module's on_train_batch_end the last optimizer's dict instead of the per-optimizer list"),
    _f("B4.5", "B.4", "TBPTT: outputs is a list with one entry per split",
       "marked", ["LM006"], [_TBPTT], reason=MARKED,
       gap="an on_train_batch_end that reads outputs under TBPTT is marked"),
    # ---- B.5 several optimizers ----------------------------------------------------------------
    _f("B5.1", "B.5", "active optimizers run in index order (or the single frequency-selected one)",
       "kept", ["LM005"], [_LOOP], ["gan_two_optimizers.py", "optimizer_frequencies.py"],
       seen_to_fail="gan_two_optimizers.py mismatches (d_loss/g_loss from step 0, weights) when LM005's loop runs the optimizers in reverse index order"),
    _f("B5.2", "B.5", "toggle_optimizer before each optimizer when there are several, untoggle_optimizer after",
       "kept", ["LM005"], [_LOOP], ["gan_skipped_steps_batch_end.py", "two_optimizers_accumulate.py"],
       seen_to_fail='gan_skipped_steps_batch_end.py and two_optimizers_accumulate.py mismatch without toggle_optimizer (gan_two_optimizers.py still matched: its closures zero the leaked gradients)'),
    _f("B5.3", "B.5", "stepping batch: the module's optimizer_step(epoch, batch_idx, opt, i, closure, ...) hook runs",
       "kept", ["LM005", "LM004"], [_OPTIMIZE, f"{LM004}:_plan_module_hook"],
       ["optimizer_step_warmup_override.py", "gan_optimizer_step_closure_only.py"],
       seen_to_fail="gan_optimizer_step_closure_only.py mismatches (the module's optimizer_step never runs; steps, weights) when LM005's loop calls optimizer.step itself instead of the user's optimizer_step (optimizer_step_warmup_override.py has one optimizer: LM004 keeps it there, and it still matched)"),
    _f("B5.4", "B.5", "the closure runs training_step, training_step_end, zero_grad, backward in that order",
       "kept", ["LM005"], [_OPTIMIZE], ["two_optimizers_accumulate_grad_left.py", "two_optimizers_accumulate.py"],
       seen_to_fail="two_optimizers_accumulate_grad_left.py mismatches (grad_left 4.68 vs 15.56: the steps of a "
                    "window's first batch found no gradients left) when LM005's closure zeroes the gradients before "
                    "the forward pass (two_optimizers_accumulate.py still matched, see blind)",
       blind="two_optimizers_accumulate.py still matched with LM005's zero_grad moved before the forward pass (the same gradients: only a hook that reads gradients between forward and backward could tell)"),
    _f("B5.5", "B.5", "zero_grad only when batch_idx % accumulate_grad_batches == 0, after the forward pass",
       "kept", ["LM005"], [_OPTIMIZE], ["two_optimizers_accumulate.py"],
       seen_to_fail='two_optimizers_accumulate.py mismatches (losses) when LM005 zeroes the gradients on every batch'),
    _f("B5.6", "B.5", "zero_grad calls on_before_zero_grad (callbacks, then module), then optimizer_zero_grad",
       "kept", ["LM005"], [_OPTIMIZE], ["gan_callback_zero_grad_outputs.py", "one_optimizer_batch_end_outputs.py"],
       seen_to_fail="gan_callback_zero_grad_outputs.py and one_optimizer_batch_end_outputs.py mismatch (the callback's on_before_zero_grad counts) when LM005's closure does not call the callbacks' on_before_zero_grad"),
    _f("B5.7", "B.5", "backward(loss / N) only when the loss is not None",
       "kept", ["LM005"], [_OPTIMIZE],
       ["two_optimizers_accumulate_grad_left.py", "gan_skipped_steps_batch_end.py", "two_optimizers_accumulate.py"],
       seen_to_fail="two_optimizers_accumulate_grad_left.py mismatches (epoch-end losses from batch 1, weights: 17 "
                    "differences) when LM005's closure backpropagates the loss undivided; gan_skipped_steps_batch_end.py "
                    "errors (manual_backward(None)) when the closure backpropagates a None loss",
       blind="two_optimizers_accumulate.py still matched with the loss not divided by N before backward (likely because its gradient_clip_val=0.5 clips by norm, which hides the scale): no case detects the division"),
    _f("B5.8", "B.5", "after the closure: on_before_optimizer_step, grad-norm tracking, clipping, then the real step",
       "kept", ["LM005", "LM302"], [_OPTIMIZE, f"{LM005}:_MultiOptimizerMigration._clipping"],
       ["two_optimizers_schedulers_clip.py", "track_grad_norm_clip_accumulate.py"],
       seen_to_fail='two_optimizers_schedulers_clip.py mismatches (losses from step 0, weights) when LM005 adds no clipping to on_before_optimizer_step (configure_gradient_clipping_optimizer_idx.py and track_grad_norm_clip_accumulate.py have one optimizer, where 2.x clips itself: they still matched)'),
    _f("B5.9", "B.5", "grad-norm tracking only for optimizer index 0",
       "kept", ["LM302"], [f"{LM302}:_statements"], ["track_grad_norm_two_optimizers.py"],
       seen_to_fail="track_grad_norm_two_optimizers.py mismatches (22 differences: grad norms logged for optimizer 1's steps too) when LM302's hook logs for every optimizer (track_grad_norm_clip_accumulate.py, named here before, has one optimizer: it still matched and is left out)"),
    _f("B5.10", "B.5", "clipping goes through configure_gradient_clipping(opt, i, val, algo)",
       "kept", ["LM005", "LM004"], [f"{LM005}:_MultiOptimizerMigration._clipping", f"{LM004}:_plan_module_hook"],
       ["configure_gradient_clipping_optimizer_idx.py", "two_optimizers_schedulers_clip.py"],
       seen_to_fail="configure_gradient_clipping_optimizer_idx.py mismatches (the run fails on 2.x) when LM004 leaves configure_gradient_clipping in its 1.x signature (the LM005 path, clip_gradients instead of the user's configure_gradient_clipping, has no case with several optimizers that overrides it: that mutation left every case matching)"),
    _f("B5.11", "B.5", "the optimizer steps (and global_step increases) even when the step returned None",
       "kept", ["LM005"], [_OPTIMIZE], ["gan_skipped_steps_batch_end.py"],
       seen_to_fail="gan_skipped_steps_batch_end.py mismatches (global_step 16 vs 20) when LM005's loop steps an optimizer only when its closure returned a loss"),
    _f("B5.12", "B.5", "accumulating batch: closure called directly: no optimizer_step hook, no on_before_optimizer_step, no clipping",
       "kept", ["LM005"], [_OPTIMIZE], ["two_optimizers_accumulate.py", "track_grad_norm_clip_accumulate.py"],
       seen_to_fail="two_optimizers_accumulate.py mismatches (epoch-end losses, weights) when LM005's loop steps the optimizers on accumulating batches too (track_grad_norm_clip_accumulate.py has one optimizer and still matched)"),
    _f("B5.13", "B.5", "accumulating batch runs inside DDP no_sync",
       "kept", ["LM005"], [_LOOP], reason=DDP_ONLY + " (no_sync only changes when gradients are all-reduced, not "
       "their values: nothing one process records differs; the loop's toggle_model(sync_grad=should_step) toggles as "
       "toggle_optimizer did, which two_optimizers_accumulate.py and track_grad_norm_clip_accumulate.py match)"),
    _f("B5.14", "B.5", "step-interval schedulers of the active optimizers step after all optimizers, unless accumulating",
       "kept", ["LM005"], [_SCHED, _LOOP], ["two_optimizers_schedulers_clip.py", "two_optimizers_accumulate.py"],
       seen_to_fail='two_optimizers_accumulate.py mismatches (losses, LR) when LM005 steps the step-interval schedulers on accumulating batches too'),
    _f("B5.15", "B.5", "global_step counts every optimizer step (3 batches x 2 optimizers = 6; one per batch with frequencies)",
       "kept", ["LM005"], [_LOOP], ["gan_two_optimizers.py", "optimizer_frequencies.py"],
       seen_to_fail="gan_two_optimizers.py and optimizer_frequencies.py mismatch (global_step 12 vs 0, 10 vs 0) when "
                    "LM005's closure steps the torch optimizer (optimizer.optimizer.step) instead of the "
                    "LightningOptimizer, whose steps 2.x counts"),
    _f("B5.16", "B.5", "frequencies pick the optimizer from the per-epoch batch_idx; the cycle restarts every epoch",
       "kept", ["LM005"], [_LOOP, f"{LM005}:_read_optimizers"], ["optimizer_frequencies.py", "frequencies_with_schedulers.py"],
       seen_to_fail='optimizer_frequencies.py mismatches when LM005 picks the optimizer by total_batch_idx'),
    _f("B5.17", "B.5", "the scheduler's active-optimizer check uses total_batch_idx (across epochs)",
       "kept", ["LM005"], [_LOOP], ["frequencies_with_schedulers.py"],
       seen_to_fail='frequencies_with_schedulers.py mismatches (lr) when LM005 picks the stepped schedulers by the per-epoch batch_idx'),
    _f("B5.18", "B.5", "interval=\"step\" schedulers step when (batch_idx+1) % frequency == 0, not on accumulating batches",
       "kept", ["LM005"], [_SCHED], ["step_scheduler_frequency_two_optimizers.py", "gradient_clipping_with_scheduler.py", "two_optimizers_schedulers_clip.py"],
       blind="two_optimizers_schedulers_clip.py still matched with the scheduler helper ignoring the config's frequency (its step schedulers have frequency 1); gradient_clipping_with_scheduler.py has one optimizer (2.x steps it)",
       seen_to_fail="step_scheduler_frequency_two_optimizers.py mismatches (lr_0 0.05 vs 0.1 from step 1, weights) when LM005's scheduler helper ignores the config's frequency"),
    _f("B5.19", "B.5", "interval=\"epoch\" non-plateau schedulers step after the last batch, before validation, "
                       "when (epoch+1) % frequency == 0",
       "kept", ["LM005"], [_LOOP, _SCHED], ["two_optimizers_epoch_end_early_return.py", "frequencies_with_schedulers.py"],
       seen_to_fail="two_optimizers_epoch_end_early_return.py mismatches (lr_gen 0.2 vs 0.1) when LM005's loop never steps the epoch-interval schedulers; frequencies_with_schedulers.py mismatches (optimizer 1's lr 0.05 vs 0.1) when the scheduler helper ignores the config's frequency"),
    _f("B5.20", "B.5", "ReduceLROnPlateau with a missing monitor raises when strict (default), warns and skips otherwise",
       "marked", ["LM005"], [f"{LM005}:_read_optimizers"], reason=RAISES + " for the strict default",
       gap="a scheduler config that sets \"strict\" is marked; the default still raises (KeyError instead of "
           "MisconfigurationException)"),
    _f("B5.21", "B.5", "no scheduler is stepped automatically under manual optimization",
       "kept", cases=["manual_step_without_closure.py"], by_lightning=True),
    _f("B5.22", "B.5", "Trainer(gradient_clip_val/algorithm) applied where 1.9 clipped; it raises under 2.x manual optimization",
       "kept", ["LM005", "LM006"], [f"{LM005}:_StripTrainerArgs", f"{LM006}:_Tbptt._add_clipping"],
       ["two_optimizers_schedulers_clip.py", "tbptt_lstm_scheduler_clip.py"],
       seen_to_fail="two_optimizers_schedulers_clip.py mismatches when LM005 adds no clipping (see B5.8); tbptt_lstm_scheduler_clip.py mismatches (36 differences) when LM006's split loop does not apply the Trainer's gradient_clip_val"),
    _f("B5.23", "B.5", "the last batch of the epoch always steps, even in a short accumulation window",
       "kept", ["LM005"], [_LOOP], ["two_optimizers_accumulate.py", "accumulate_three_max_steps.py"],
       seen_to_fail='two_optimizers_accumulate.py mismatches when LM005 does not step after the short last window'),
    _f("B5.24", "B.5", "an optimizer_step override that only ran the closure still counted a step (global_step, max_steps)",
       "kept", ["LM005"], [_OPTIMIZE], ["gan_optimizer_step_closure_only.py", "optimizer_step_closure_only.py"],
       seen_to_fail='gan_optimizer_step_closure_only.py mismatches when LM005 does not count a closure-only optimizer_step (optimizer_step_closure_only.py has one optimizer: 2.x itself keeps it there)'),
    _f("B5.25", "B.5", "callbacks' on_train_batch_end got 1.9's per-optimizer list",
       "kept", ["LM005"], [_LOOP, f"{LM005}:_CallbackOutputs"], ["gan_callback_zero_grad_outputs.py"],
       seen_to_fail="gan_callback_zero_grad_outputs.py errors (the callback unpacks 2 per-optimizer outputs, gets {}) when LM005 leaves callbacks' on_train_batch_end as they are"),
    # ---- B.6 TBPTT -------------------------------------------------------------------------------
    _f("B6.1", "B.6", "each root-level tensor is sliced x[:, t:t+k] along dim 1: chunks of length k, the last shorter",
       "kept", ["LM006"], [f"{LM006}:_Tbptt._default_split"], ["tbptt_hiddens.py", "tbptt_lstm_scheduler_clip.py"],
       seen_to_fail="tbptt_hiddens.py mismatches when LM006's split takes k+1 time steps per chunk"),
    _f("B6.2", "B.6", "a user tbptt_split_batch override does the splitting",
       "kept", ["LM006"], [_TBPTT], ["tbptt_custom_split_step_end.py"],
       seen_to_fail='tbptt_custom_split_step_end.py mismatches when LM006 splits with its default split although the module overrides tbptt_split_batch'),
    _f("B6.3", "B.6", "the first split gets hiddens=None, the next the previous split's \"hiddens\", detached",
       "kept", ["LM006"], [_TBPTT], ["tbptt_hiddens.py", "tbptt_lstm_scheduler_clip.py"],
       seen_to_fail='tbptt_hiddens.py and tbptt_lstm_scheduler_clip.py mismatch when LM006 passes hiddens=None to every split'),
    _f("B6.4", "B.6", "with several optimizers the hiddens chain passes across optimizers within a split",
       "marked", ["LM006"], [f"{LM006}:_Tbptt._blocked"], reason=MARKED, gap="as B1.14"),
    _f("B6.5", "B.6", "every split is a full optimizer step; global_step counts splits",
       "kept", ["LM006"], [_TBPTT], ["tbptt_hiddens.py"],
       seen_to_fail="tbptt_hiddens.py mismatches (global_step 12 vs 0) when LM006's split loop steps the torch "
                    "optimizer (opt.optimizer.step), which 2.x does not count, and (chunk losses, epoch losses, weights: "
                    "37 differences) when each split only backpropagates and the batch steps once after the last split"),
    _f("B6.6", "B.6", "\"hiddens\" is required in the return value and removed from outputs",
       "kept", ["LM006"], [_TBPTT, f"{LM006}:_Tbptt._convert_epoch_end"], ["tbptt_hiddens.py"],
       seen_to_fail='tbptt_hiddens.py mismatches (the epoch end receives an unexpected "hiddens" key per split) when LM006 keeps "hiddens" in the collected outputs'),
    _f("B6.7", "B.6", "LR schedulers step per batch, not per split",
       "kept", ["LM006"], [_TBPTT], ["tbptt_lstm_scheduler_clip.py"],
       seen_to_fail='tbptt_lstm_scheduler_clip.py mismatches when LM006 never steps the step-interval scheduler (a per-split stepping was not tried)'),
    _f("B6.8", "B.6", "each split zeroes the gradients after its forward pass",
       "kept", ["LM006"], [_TBPTT], ["tbptt_hiddens.py"],
       seen_to_fail="tbptt_hiddens.py mismatches when LM006's closure does not zero the gradients"),
    # ---- B.7 the rewrite merges with existing hooks ----------------------------------------------
    _f("B7.1", "B.7", "a module's own on_*_epoch_start / on_*_batch_end / on_*_epoch_end keep running around the buffer work",
       "kept", ["LM001"], [f"{LM001}:_ClassMigration._with_collect", f"{LM001}:_ClassMigration._merge_safe"],
       ["merge_existing_hooks.py", "mixin_shadows_buffer_hooks.py", "mixin_shadows_base_hooks.py"],
       seen_to_fail="merge_existing_hooks.py mismatches (14 differences: the module's own batch-end work lost) when LM001 replaces an existing on_*_batch_end body by the collecting code instead of prepending it (mixin_shadows_buffer_hooks.py and mixin_shadows_base_hooks.py go through the mixin injection and still matched)"),
    # ---- B.8 LBFGS ---------------------------------------------------------------------------------
    _f("B8.1", "B.8", "LBFGS evaluates the closure up to max_eval times: training_step runs once per evaluation",
       "kept", cases=["lbfgs_single_optimizer.py"], by_lightning=True),
    _f("B8.2", "B.8", "on_before_optimizer_step and clipping run after every LBFGS evaluation",
       "kept", cases=["lbfgs_clipping_before_step_hook.py"], by_lightning=True),
    _f("B8.3", "B.8", "global_step moves once per LBFGS batch; outputs[\"loss\"] is the last evaluation's",
       "kept", cases=["lbfgs_single_optimizer.py"], by_lightning=True),
    _f("B8.4", "B.8", "a custom optimizer_step's using_lbfgs / on_tpu parameters go (2.x passes neither)",
       "kept", ["LM004"], [f"{LM004}:_plan_module_hook"], ["optimizer_hooks_old_signatures.py", "optimizer_step_warmup_override.py"],
       seen_to_fail="optimizer_hooks_old_signatures.py and optimizer_step_warmup_override.py mismatch (the run fails on 2.x) when LM004 leaves the module's optimizer_step in its 1.x signature"),
    _f("B8.5", "B.8", "manual LBFGS: the closure zeroes, computes, backpropagates and returns the loss",
       "kept", ["LM004"], [f"{LM004}:_closure_rewrite"],
       reason=("a bare opt.step() under LBFGS raised on 1.9.5 (a probe: TypeError in LBFGS, which got None from "
               "Lightning's do-nothing closure), so LM004's closure rewrite has no 1.9 run to keep under LBFGS; with "
               "any other optimizer the closure runs once and the rewrite changes nothing; a closure the user wrote "
               "runs on 2.x as on 1.9"),
       blind="manual_step_without_closure.py still matched with LM004's closure rewrite off (it uses SGD, which evaluates the closure once: only LBFGS could tell, and there the original raised)"),
    _f("B8.6", "B.8", "LBFGS inside the several-optimizer loop gets a closure that returns the loss",
       "kept", ["LM005"], [_OPTIMIZE], ["adam_and_lbfgs.py"],
       seen_to_fail="adam_and_lbfgs.py errors (LBFGS gets None from the closure) when LM005's closure returns None instead of the loss"),
    _f("B8.7", "B.8", "precision=\"16-mixed\" (GradScaler) with LBFGS raises",
       "kept", reason=RAISES, by_lightning=True),
    # ---- B.9 / B.10 --------------------------------------------------------------------------------
    _f("B9.1", "B.9", "self.log in *_epoch_end: on_step=False, on_epoch=True, the same as in on_*_epoch_end",
       "kept", ["LM001"], [f"{LM001}:_ClassMigration._migrate_top"],
       ["train_epoch_end_reads_validation.py", "log_dict_at_epoch_end.py", "validation_single_loader.py"],
       seen_to_fail="train_epoch_end_reads_validation.py mismatches (generalisation_gap never reaches the logger, "
                    "log_every_n_steps=50) when the migrated training body runs in the last on_train_batch_end, where "
                    "2.x's self.log defaults to on_step=True, on_epoch=False, instead of in on_train_epoch_end "
                    "(log_dict_at_epoch_end.py still matched then: with log_every_n_steps=1 a value logged once per "
                    "epoch is recorded at the same step either way; eval batch-end hooks have the epoch defaults)"),
    _f("B9.2", "B.9", "with several eval loaders epoch-end logging has no /dataloader_idx_N suffix",
       "kept", ["LM001"], [f"{LM001}:_ClassMigration._migrate_top"], ["validation_two_loaders.py"],
       seen_to_fail="validation_two_loaders.py mismatches (val_mae_epoch_0 logged as val_mae_epoch_0/dataloader_idx_1) "
                    "when the migrated validation body runs in the last loader's last on_validation_batch_end, where "
                    "2.x adds the loader's suffix, instead of in on_validation_epoch_end"),
    _f("B10.1", "B.10", "one optimizer: hook order with accumulation, clipping and step schedulers is the same in 2.x",
       "kept", cases=["gradient_clipping_with_scheduler.py", "track_grad_norm_clip_accumulate.py"], by_lightning=True),
    # ---- new: read from 1.9.5's loops ------------------------------------------------------------
    _f("L1", "loops/fit_loop.py::on_advance_end",
       "training_epoch_end is not called for an epoch that processed no batch (on_train_batch_start returned -1 "
       "on its first batch)", "kept", ["LM001"], [f"{LM001}:_call_old", f"{LM001}:_may_skip_epochs"], new=True,
       reason=("the comparison reports a false difference: a probe (-1 at batch 0 of epoch 1) matches 1.9.5 in "
               "metrics and state, but the comparison counts the module's on_train_epoch_end run in that epoch as an "
               "epoch-end body call; rule tests test_epoch_end_is_skipped_after_an_epoch_without_batches and "
               "test_on_train_batch_start_in_a_subclass_file_guards_the_base_epoch_end")),
    _f("L2", "loops/fit_loop.py::on_advance_end",
       "training_epoch_end is still called with the batches run so far when max_steps stops the epoch midway",
       "kept", ["LM001"], [_GATHER, f"{LM001}:_call_old"], ["accumulate_three_max_steps.py"], new=True,
       seen_to_fail="accumulate_three_max_steps.py mismatches (epoch 1's train_batches and train_loss_sum never "
                    "logged) when the migrated training body runs only after an epoch that reached its last batch (a "
                    "guard like LM005's for ReduceLROnPlateau, L4): LM001 adds none (_call_old's guard for L1 counts "
                    "completed batches), and 2.x calls on_train_epoch_end after a max_steps stop"),
    _f("L3", "loops/epoch/training_epoch_loop.py::update_lr_schedulers",
       "schedulers are stepped only under automatic optimization (1.9 manual optimization steps none either)",
       "kept", cases=["manual_step_without_closure.py", "manual_running_loss_for_lr_finder.py"], new=True,
       by_lightning=True),
    _f("L4", "loops/fit_loop.py::on_advance_end",
       "epoch-interval ReduceLROnPlateau steps only when the epoch reached its last batch (not after max_steps "
       "or on_train_batch_start -1 ended it early)", "kept", ["LM005"], [_EPOCH_END5],
       ["reduce_lr_on_plateau_max_steps.py"], new=True,
       seen_to_fail=("reduce_lr_on_plateau_max_steps.py mismatches on main, before LM005's last-batch guard "
                     "(final lr 0.001 vs 0.01)")),
    _f("L5", "loops/epoch/training_epoch_loop.py::on_advance_end",
       "interval=\"step\" ReduceLROnPlateau steps after every stepping batch's validation check, so it sees a "
       "mid-epoch validation's metrics", "marked", ["LM005"], [f"{LM005}:_read_optimizers"], new=True,
       reason=RAISES.replace("the original raises on 1.9.5", "the class is marked, not migrated"),
       gap="LM005 marks a ReduceLROnPlateau config whose interval is not \"epoch\" (a probe with interval \"step\" "
           "mismatched 1.9.5 before: the loop stepped it once per epoch)"),
    _f("L6", "loops/dataloader/evaluation_loop.py::on_run_start",
       "every evaluation run starts with module.zero_grad(): a validation inside an accumulation window "
       "(val_check_interval) discards the gradients accumulated so far", "kept", ["LM101"],
       ["lightmigrate.catalog.trainer_args:map_arguments", "lightmigrate.catalog.trainer_args:_may_check_mid_epoch"],
       ["validation_inside_accumulation_window.py"], new=True,
       seen_to_fail=("validation_inside_accumulation_window.py mismatches 1.9.5 (train_loss 2.667 vs 3.078 at step 2, "
                     "val_loss, weights) on main, where the Trainer dict gets no callback zeroing the gradients at "
                     "validation start")),
    _f("L7", "loops/epoch/evaluation_epoch_loop.py::_on_evaluation_batch_end",
       "on_validation_batch_end receives the step_end result, None for a step that returned None",
       "kept", ["LM003"], [_INLINE], ["step_end_logs_only_or_none.py"], new=True,
       seen_to_fail="step_end_logs_only_or_none.py mismatches (val_loss_mix 0.51 vs 1.03) when LM003's step wrapper returns the step's output instead of the hook's result"),
    _f("L8", "loops/dataloader/evaluation_loop.py::skip",
       "no eval epoch hook runs when every eval loader has 0 batches (num_sanity_val_steps=0, limit_val_batches=0)",
       "kept", cases=["no_sanity_then_validate_test.py"], new=True, by_lightning=True),
    _f("L9", "loops/dataloader/evaluation_loop.py::num_dataloaders",
       "the single-loader flattening counts loaders, not the container: [loader] gives a flat list",
       "kept", ["LM001"], [_RESET, _GATHER], ["module_dataloaders_list_of_one.py"], new=True,
       seen_to_fail="module_dataloaders_list_of_one.py errors (a list of one loader's list reached the body) when LM001 flattens a single loader only when it is not given in a list"),
    _f("L10", "loops/optimization/optimizer_loop.py::ClosureResult",
       "automatic optimization: training_step returning anything but a tensor, a dict or None raises",
       "kept", reason=RAISES, new=True, by_lightning=True),
    _f("L11", "loops/optimization/manual_loop.py::ManualResult",
       "manual optimization: a return that is not a tensor, a dict or None raises; a dict's \"loss\" must be a tensor",
       "kept", reason=RAISES, new=True, by_lightning=True),
    _f("L12", "loops/utilities.py::_extract_hiddens",
       "\"hiddens\" returned without truncated_bptt_steps raises; truncated_bptt_steps without \"hiddens\" raises",
       "kept", reason=RAISES, new=True, by_lightning=True),
    _f("L13", "loops/epoch/training_epoch_loop.py::advance",
       "a max_steps stop inside an epoch skips that epoch's validation",
       "kept", cases=["accumulate_three_max_steps.py"], new=True, by_lightning=True),
    _f("L14", "loops/epoch/training_epoch_loop.py::advance",
       "on_train_batch_start returning -1 ends the epoch; that batch leaves no outputs",
       "kept", cases=["train_batch_start_ends_epoch.py"], new=True, by_lightning=True),
    _f("L15", "loops/optimization/optimizer_loop.py::_optimizer_step",
       "optimizer_step got using_native_amp only when its signature named it",
       "kept", ["LM004"], [f"{LM004}:_plan_module_hook"], ["optimizer_hooks_old_signatures.py"], new=True,
       seen_to_fail="optimizer_hooks_old_signatures.py mismatches (the run fails on 2.x) when LM004 leaves the module's optimizer_step, which names using_native_amp, in its 1.x signature"),
    _f("L16", "loops/epoch/evaluation_epoch_loop.py::_on_evaluation_batch_end",
       "on_validation_batch_end / on_test_batch_end got dataloader_idx=0 even with one loader",
       "kept", ["LM303"], [f"{LM303}:needs_default"], ["dataloader_idx_no_default.py"], new=True,
       seen_to_fail='dataloader_idx_no_default.py errors (2.x: "You provided only a single val_dataloader, but have included dataloader_idx") when LM303 gives dataloader_idx no default'),
    _f("L17", "loops/dataloader/evaluation_loop.py::reset",
       "each trainer.validate / trainer.test call starts with empty outputs",
       "kept", ["LM001"], [_RESET], ["standalone_validate_and_test.py", "no_sanity_then_validate_test.py"], new=True,
       seen_to_fail="standalone_validate_and_test.py, no_sanity_then_validate_test.py and test_epoch_end_reuses_validation.py mismatch (val_num_outputs 4 vs 2, losses) when LM001 creates the eval buffers once instead of resetting them at each run's start"),
    _f("L18", "loops/optimization/optimizer_loop.py::_training_step",
       "with self.log in training_step_end and two optimizers, no metric optimizer 0 logged (in training_step or "
       "training_step_end) at an epoch's first batch reached the logger", "marked", ["LM005"],
       [f"{LM005}:_logs", _OPTIMIZE], new=True,
       reason=("no case can match: a probe (corpus/step_end_per_optimizer.py with `self.log(f\"scaled_loss_{i}\", "
               "scaled)` in training_step_end) mismatches 1.9.5, which lost raw_loss_0 and scaled_loss_0 at steps 0 and "
               "3; the migrated loop logs them"),
       gap=("the cause (traced in 1.9.5): LightningModule.log resets the values already logged under the current "
            "hook's name whenever LoggerConnector.should_reset_tensors says so, i.e. the hook name changed during "
            "an epoch's first batch (meant for a hook's first call of the epoch); with two optimizers the hooks "
            "alternate there (training_step, training_step_end, training_step...), so optimizer 1's calls wipe "
            "optimizer 0's values (patching should_reset_tensors to False on 1.9.5 brings raw_loss_0 and "
            "scaled_loss_0 back at steps 0 and 3 of the probe: corpus/step_end_per_optimizer.py with "
            "`self.log(f\"scaled_loss_{i}\", scaled)` in training_step_end). LM005's loop calls training_step_end "
            "inside the 2.x training_step, under one hook name, so nothing is reset; reproducing the loss would "
            "mean logging under a hook name 2.x's fx validator rejects or resetting the trainer's private results: "
            "LM005 marks a training_step_end that logs (unless optimizer frequencies run one optimizer per batch). "
            "Other hooks that log between two optimizers' steps on the first batch (on_after_backward...) lost "
            "values the same way in 1.9.5; 2.x keeps the same reset for the hooks it calls, so those may match, "
            "but no probe checked it")),
)


def facts() -> List[Fact]:
    return list(FACTS)


def facts_for_rule(code: str) -> List[Fact]:
    return [f for f in FACTS if code in f.rules]


def totals(items=FACTS) -> Dict[str, int]:
    items = list(items)
    out = {"facts": len(items)}
    for s in STATUSES:
        out[s] = sum(f.status == s for f in items)
    out["with a case"] = sum(f.has_case for f in items)
    out["with a reason"] = sum(not f.has_case and bool(f.reason) and not f.case_to_write for f in items)
    out["case to write"] = sum(f.case_to_write for f in items)
    out["new from the loops"] = sum(f.new for f in items)
    out["seen to fail"] = sum(bool(f.seen_to_fail) for f in items)
    out["case not seen to fail"] = sum(f.not_seen_to_fail for f in items)
    out["kept by 2.x itself"] = sum(f.by_lightning for f in items)
    return out
