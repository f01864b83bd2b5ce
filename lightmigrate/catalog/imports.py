"""The 1.x -> 2.x import table, as data: old dotted name -> new dotted name, or -> what a human
must do.

Names are written root-relative: ``pl.`` stands for the project's Lightning root
(``pytorch_lightning`` or ``lightning.pytorch``) and ``fabric.`` for the matching Fabric root
(``lightning_fabric`` or ``lightning.fabric``); any other name (``torchmetrics.``,
``lightning_utilities.``) is absolute. An entry's ``old`` may be a module (every name under it
moves with it) or a single name; the longest matching entry wins.

Used by LM201 (moves), LM202 (removals) and the tests that import every ``new`` name on
Lightning 2.x and every ``old`` 1.9 name on pytorch-lightning 1.9.5.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, FrozenSet, List, Optional, Tuple

GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"


@dataclass(frozen=True)
class Entry:
    old: str  # root-relative dotted name in 1.x
    new: Optional[str]  # root-relative dotted name in 2.x; None: removed, needs a human
    row: str  # spec row id (A.5/A.6 row or A.8 bullet id)
    why: str = ""  # for removals: what to do instead; for moves: a caveat marked next to the new name
    legacy: bool = False  # already gone in 1.9.5 (A.8): only the 2.x side can be checked


def _moves(row: str, pairs: List[Tuple[str, str]], legacy: bool = False, why: str = "") -> List[Entry]:
    return [Entry(old, new, row, why, legacy) for old, new in pairs]


def _gone(row: str, names: List[str], why: str, legacy: bool = False) -> List[Entry]:
    return [Entry(old, None, row, why, legacy) for old in names]


P = "pl.plugins."
S = "pl.strategies."
PP = "pl.plugins.precision."

ENTRIES: List[Entry] = [
    # --- A.5 ---------------------------------------------------------------------------------
    *_moves("R1", [("pl.profiler", "pl.profilers")]),
    *_gone("R2", ["pl.lite"], "`LightningLite` became `lightning_fabric.Fabric` with a different programming "
           "model (no `run()` subclassing): port the loop by hand"),
    *_moves("R3", [("pl.utilities.apply_func.apply_to_collection", "lightning_utilities.core.apply_func.apply_to_collection"),
                   ("pl.utilities.apply_func.apply_to_collections", "lightning_utilities.core.apply_func.apply_to_collections")]),
    *_moves("R4", [("pl.utilities.apply_func.move_data_to_device", "fabric.utilities.apply_func.move_data_to_device"),
                   ("pl.utilities.apply_func.convert_to_tensors", "fabric.utilities.apply_func.convert_to_tensors"),
                   ("pl.utilities.move_data_to_device", "fabric.utilities.apply_func.move_data_to_device")]),
    *_gone("R5", ["pl.utilities.apply_func.from_numpy", "pl.utilities.apply_func.to_dtype_tensor",
                  "pl.utilities.apply_func.TransferableDataType"],
           "removed in 2.0: use `torch.from_numpy(x).to(device)` / `torch.tensor(value, dtype=...)`, or keep a copy "
           "of `TransferableDataType` in your code"),
    *_moves("R6", [("pl.utilities.cloud_io.get_filesystem", "fabric.utilities.cloud_io.get_filesystem")]),
    *_gone("R7", ["pl.utilities.cloud_io.load", "pl.utilities.cloud_io.atomic_save"],
           "removed in 2.0 (now private): use `torch.load` / `torch.save` with an fsspec file"),
    *_moves("R8", [("pl.utilities.data.has_len", "fabric.utilities.data.has_len"),
                   ("pl.utilities.data.has_iterable_dataset", "fabric.utilities.data.has_iterable_dataset")]),
    *_gone("R9", ["pl.utilities.data.get_len"],
           "removed in 2.0: `lightning_fabric.utilities.data.sized_len` returns None (not inf) for an unsized "
           "dataloader, adapt the caller"),
    *_gone("R10", ["pl.utilities.data.CaptureIterableDataset", "pl.utilities.data.CaptureMapDataset",
                   "pl.utilities.data.FastForwardSampler", "pl.utilities.auto_restart"],
           "fault-tolerant training was removed in 2.0: drop this code"),
    *_moves("R11", [("pl.utilities.device_parser.is_cuda_available", "fabric.accelerators.cuda.is_cuda_available"),
                    ("pl.utilities.device_parser.num_cuda_devices", "fabric.accelerators.cuda.num_cuda_devices")]),
    *_gone("R12", ["pl.utilities.device_parser"],
           "the device parsers became private in 2.0: pass `devices=` to the Trainer, or use "
           "`torch.cuda.device_count()`"),
    *_moves("R13", [("pl.utilities.distributed.rank_zero_only", "pl.utilities.rank_zero.rank_zero_only"),
                    ("pl.utilities.distributed.rank_zero_info", "pl.utilities.rank_zero.rank_zero_info"),
                    ("pl.utilities.distributed.rank_zero_debug", "pl.utilities.rank_zero.rank_zero_debug"),
                    ("pl.utilities.distributed.rank_zero_deprecation", "pl.utilities.rank_zero.rank_zero_deprecation")]),
    *_gone("R14", ["pl.utilities.distributed.sync_ddp", "pl.utilities.distributed.sync_ddp_if_available",
                   "pl.utilities.distributed.gather_all_tensors", "pl.utilities.distributed.all_gather_ddp_if_available",
                   "pl.utilities.distributed.distributed_available", "pl.utilities.distributed.init_dist_connection",
                   "pl.utilities.distributed.get_default_process_group_backend_for_device",
                   "pl.utilities.distributed.tpu_distributed"],
           "private in 2.0: use `self.all_gather`, `self.trainer.strategy.reduce` or `torch.distributed`"),
    *_gone("R15", ["pl.utilities.AllGatherGrad", "pl.utilities.distributed.AllGatherGrad"],
           "removed in 2.0: use `torch.distributed.nn.functional.all_gather` (returns a tuple of tensors)"),
    *_moves("R16", [("pl.utilities.seed.seed_everything", "pl.seed_everything"),
                    ("pl.utilities.seed.reset_seed", "fabric.utilities.seed.reset_seed"),
                    ("pl.utilities.seed.pl_worker_init_function", "fabric.utilities.seed.pl_worker_init_function")]),
    *_gone("R17", ["pl.utilities.optimizer.optimizers_to_device", "pl.utilities.optimizer.optimizer_to_device"],
           "private in 2.0: move the optimizer state yourself, or let the strategy do it"),
    *_gone("R18", ["pl.utilities.xla_device"],
           "removed in 2.0: use `XLAAccelerator.is_available()` from `accelerators` instead of `XLADeviceUtils`"),
    *_gone("R19", ["pl.core.mixins.DeviceDtypeModuleMixin", "pl.core.mixins.device_dtype_mixin"],
           "private in 2.0: subclass `LightningModule`, or track device/dtype yourself"),
    *_gone("R20", ["pl.utilities.parsing.flatten_dict", "pl.utilities.flatten_dict"],
           "removed in 2.0: define a small flatten helper in your code"),
    *_moves("R21", [("pl.utilities.metrics.metrics_to_scalars", "fabric.utilities.apply_func.convert_tensors_to_scalars")]),
    *_gone("R22", ["pl.utilities.memory.get_model_size_mb", "pl.utilities.finite_checks"],
           "removed in 2.0: compute it yourself (e.g. sum of parameter sizes; `torch.isfinite` checks)"),
    *_moves("R23", [("pl.trainer.supporters.CombinedLoader", "pl.utilities.combined_loader.CombinedLoader")],
            why="2.x `CombinedLoader` takes `iterables=` and has `.iterables` instead of `.loaders`; from 2.1 "
                "iterating it yields (batch, batch_idx, dataloader_idx)"),
    *_gone("R24", ["pl.trainer.supporters"],
           "removed or private in 2.0 (`TensorRunningAccum`, `CombinedDataset`, ...): keep your own copy"),
    *_gone("R25", ["pl.trainer.progress", "pl.utilities.fetching", "pl.loops.batch", "pl.loops.epoch",
                   "pl.loops.dataloader", "pl.loops.optimization", "pl.loops.utilities"],
           "the loop internals became protected or were removed in 2.0: customise through hooks, a callback "
           "or manual optimization"),
    *_gone("R26", ["pl.overrides.base.unwrap_lightning_module", "pl.overrides.distributed.LightningDistributedModule",
                   "pl.overrides.data_parallel.LightningParallelModule", "pl.overrides.fairscale"],
           "removed in 2.0: use `trainer.lightning_module` / `trainer.strategy.lightning_module`; wrappers take "
           "`forward_module=`"),
    *_gone("R27", ["pl.overrides.distributed.IndexBatchSamplerWrapper"],
           "protected in 2.0 (`_IndexBatchSamplerWrapper`): do not depend on it"),
    *_moves("R28", [(P + "NativeMixedPrecisionPlugin", P + "MixedPrecision"),
                    (PP + "NativeMixedPrecisionPlugin", PP + "MixedPrecision")]),
    *_moves("R29", [(PP + "native_amp.NativeMixedPrecisionPlugin", PP + "amp.MixedPrecision"),
                    (PP + "native_amp", PP + "amp")]),
    *_gone("R30", [P + "ApexMixedPrecisionPlugin", PP + "ApexMixedPrecisionPlugin", PP + "apex_amp",
                   "pl.utilities.enums.AMPType", "pl.utilities.AMPType"],
           "NVIDIA apex support was removed in 2.0: use `precision=\"16-mixed\"` (torch.amp)"),
    *_gone("R31", ["pl.utilities.enums.PrecisionType"],
           "removed in 2.0: use the plain precision strings (\"32-true\", \"16-mixed\", \"bf16-mixed\", \"64-true\")"),
    *_moves("R32", [(P + "NativeSyncBatchNorm", P + "TorchSyncBatchNorm"),
                    (P + "layer_sync.NativeSyncBatchNorm", P + "layer_sync.TorchSyncBatchNorm")]),
    *_moves("R33", [(S + "DDPFullyShardedNativeStrategy", S + "FSDPStrategy"),
                    (S + "fully_sharded_native.DDPFullyShardedNativeStrategy", S + "fsdp.FSDPStrategy"),
                    (S + "fully_sharded_native", S + "fsdp")]),
    *_gone("R33", [P + "FullyShardedNativeNativeMixedPrecisionPlugin", PP + "FullyShardedNativeNativeMixedPrecisionPlugin",
                   PP + "fsdp_native_native_amp"],
           "became `plugins.precision.FSDPPrecision(precision=\"16-mixed\"|\"bf16-mixed\", scaler=)` (no `device`): "
           "port the arguments"),
    *_gone("R34", [S + "DDPShardedStrategy", S + "DDPSpawnShardedStrategy", S + "DDPFullyShardedStrategy",
                   S + "sharded", S + "sharded_spawn", S + "fully_sharded", "pl.overrides.fairscale.LightningShardedDataParallel",
                   P + "ShardedNativeMixedPrecisionPlugin", PP + "ShardedNativeMixedPrecisionPlugin",
                   P + "FullyShardedNativeMixedPrecisionPlugin", PP + "FullyShardedNativeMixedPrecisionPlugin",
                   PP + "sharded_native_amp", PP + "fully_sharded_native_amp"],
           "FairScale support was removed in 2.0: use `FSDPStrategy` (strategy=\"fsdp\") or DeepSpeed"),
    *_moves("R35", [(S + "DDPSpawnStrategy", S + "DDPStrategy"), (S + "ddp_spawn.DDPSpawnStrategy", S + "ddp.DDPStrategy")]),
    *_moves("R36", [(S + "TPUSpawnStrategy", S + "XLAStrategy"), (S + "tpu_spawn.TPUSpawnStrategy", S + "xla.XLAStrategy")]),
    *_moves("R37", [("pl.accelerators.TPUAccelerator", "pl.accelerators.XLAAccelerator"),
                    ("pl.accelerators.tpu.TPUAccelerator", "pl.accelerators.xla.XLAAccelerator"),
                    (S + "SingleTPUStrategy", S + "SingleDeviceXLAStrategy"),
                    (S + "single_tpu.SingleTPUStrategy", S + "single_xla.SingleDeviceXLAStrategy"),
                    (P + "TPUPrecisionPlugin", P + "XLAPrecision"), (PP + "TPUPrecisionPlugin", PP + "XLAPrecision")]),
    *_gone("R37", [P + "TPUBf16PrecisionPlugin", PP + "TPUBf16PrecisionPlugin", PP + "tpu_bf16"],
           "became `plugins.precision.XLAPrecision(precision=\"bf16-true\")`"),
    *_gone("R38", [S + "HorovodStrategy", S + "horovod", S + "ColossalAIStrategy", S + "colossalai",
                   S + "BaguaStrategy", S + "bagua", S + "HivemindStrategy", S + "hivemind",
                   S + "DataParallelStrategy", S + "dp", S + "IPUStrategy", S + "ipu", S + "HPUParallelStrategy",
                   S + "SingleHPUStrategy", S + "hpu_parallel", S + "single_hpu",
                   "pl.accelerators.IPUAccelerator", "pl.accelerators.HPUAccelerator", "pl.accelerators.ipu",
                   "pl.accelerators.hpu", P + "IPUPrecisionPlugin", P + "HPUPrecisionPlugin", P + "HPUCheckpointIO",
                   P + "ColossalAIPrecisionPlugin", PP + "IPUPrecisionPlugin", PP + "HPUPrecisionPlugin",
                   PP + "ColossalAIPrecisionPlugin", PP + "ipu", PP + "hpu", PP + "colossalai"],
           "removed from Lightning 2.0 (moved to external packages such as `lightning-habana`, "
           "`lightning-graphcore`, `lightning-colossalai`, `lightning-bagua`, `lightning-hivemind`, or dropped "
           "like Horovod and DP): install the package or switch to DDP"),
    *_moves("R39", [("pl.tuner.auto_gpu_select.pick_multiple_gpus", "pl.accelerators.find_usable_cuda_devices")]),
    *_gone("R39", ["pl.tuner.auto_gpu_select.pick_single_gpu"],
           "removed in 2.0: use `accelerators.find_usable_cuda_devices(1)[0]`"),
    *_gone("R40", [S + "utils.on_colab_kaggle"], "removed in 2.0: check the environment yourself"),
    *_gone("R41", ["pl.core.saving.ModelIO"],
           "removed in 2.0: inherit from `LightningModule` / `LightningDataModule`, which have the checkpoint methods"),
    *_moves("R42", [("pl.utilities.exceptions.ExitGracefullyException", "pl.utilities.exceptions.SIGTERMException")]),
    *_gone("R42", ["pl.utilities.exceptions.DeadlockDetectedException"], "removed in 2.0: drop the handler"),
    *_gone("R43", ["pl.utilities.types.EPOCH_OUTPUT"],
           "removed in 2.0: define `EPOCH_OUTPUT = List[STEP_OUTPUT]` locally"),
    # R44 (Accelerator.setup_environment), R45 (dispatch, optimizer_idx in plugin methods): see LM204.
    *_moves("R46", [(P + "PrecisionPlugin", P + "Precision"), (PP + "PrecisionPlugin", PP + "Precision"),
                    (P + "MixedPrecisionPlugin", P + "MixedPrecision"), (PP + "MixedPrecisionPlugin", PP + "MixedPrecision"),
                    (P + "DoublePrecisionPlugin", P + "DoublePrecision"), (PP + "DoublePrecisionPlugin", PP + "DoublePrecision"),
                    (P + "DeepSpeedPrecisionPlugin", P + "DeepSpeedPrecision"),
                    (PP + "DeepSpeedPrecisionPlugin", PP + "DeepSpeedPrecision"),
                    (PP + "precision_plugin.PrecisionPlugin", PP + "precision.Precision"),
                    (PP + "precision_plugin", PP + "precision"),
                    (PP + "double.DoublePrecisionPlugin", PP + "double.DoublePrecision"),
                    (PP + "deepspeed.DeepSpeedPrecisionPlugin", PP + "deepspeed.DeepSpeedPrecision"),
                    (PP + "tpu.TPUPrecisionPlugin", PP + "xla.XLAPrecision"), (PP + "tpu", PP + "xla")]),
    # --- A.6 ---------------------------------------------------------------------------------
    *_gone("L1", ["pl.loggers.NeptuneLogger", "pl.loggers.neptune"],
           "`NeptuneLogger` raises on construction in recent 2.x: use the logger shipped by `neptune` "
           "(`neptune.integrations.pytorch_lightning.NeptuneLogger`)"),
    *_moves("L3", [("pl.loggers.base.LightningLoggerBase", "pl.loggers.logger.Logger"),
                   ("pl.loggers.LightningLoggerBase", "pl.loggers.Logger"),
                   ("pl.loggers.base.rank_zero_experiment", "pl.loggers.logger.rank_zero_experiment"),
                   ("pl.loggers.base.DummyLogger", "pl.loggers.logger.DummyLogger"),
                   ("pl.loggers.base", "pl.loggers.logger")]),
    *_gone("L3", ["pl.loggers.base.LoggerCollection"],
           "removed in 2.0: pass a list of loggers to the Trainer (`trainer.loggers`)"),
    *_gone("L3", ["pl.loggers.LoggerCollection"],
           "removed in 1.8: pass a list of loggers to the Trainer (`trainer.loggers`)", legacy=True),
    *_moves("CLI4", [("pl.utilities.cli", "pl.cli")]),
    *_gone("CLI4", ["pl.utilities.cli.CALLBACK_REGISTRY", "pl.utilities.cli.MODEL_REGISTRY",
                    "pl.utilities.cli.DATAMODULE_REGISTRY", "pl.utilities.cli.OPTIMIZER_REGISTRY",
                    "pl.utilities.cli.LR_SCHEDULER_REGISTRY", "pl.utilities.cli.LOGGER_REGISTRY"],
           "the LightningCLI registries were removed in 1.9: subclasses are found automatically"),
    # --- A.8 imports --------------------------------------------------------------------------
    *_moves("A8-imports", [("pl.core.lightning", "pl.core.module"), ("pl.callbacks.base", "pl.callbacks.callback"),
                           ("pl.profiler.base.BaseProfiler", "pl.profilers.Profiler"),
                           ("pl.profiler.base.AbstractProfiler", "pl.profilers.Profiler"),
                           ("pl.profiler.BaseProfiler", "pl.profilers.Profiler"),
                           ("pl.profiler.AbstractProfiler", "pl.profilers.Profiler"),
                           ("pl.accelerators.GPUAccelerator", "pl.accelerators.CUDAAccelerator"),
                           ("pl.accelerators.gpu.GPUAccelerator", "pl.accelerators.cuda.CUDAAccelerator"),
                           ("pl.accelerators.gpu", "pl.accelerators.cuda"),
                           ("pl.core.memory.ModelSummary", "pl.utilities.model_summary.ModelSummary"),
                           ("pl.core.memory", "pl.utilities.model_summary"),
                           ("pl.utilities.warnings.rank_zero_warn", "pl.utilities.rank_zero.rank_zero_warn"),
                           ("pl.utilities.warnings.rank_zero_deprecation", "pl.utilities.rank_zero.rank_zero_deprecation"),
                           ("pl.utilities.distributed.rank_zero_warn", "pl.utilities.rank_zero.rank_zero_warn"),
                           ("pl.plugins.TrainingTypePlugin", S + "Strategy"),
                           ("pl.plugins.training_type.TrainingTypePlugin", S + "Strategy"),
                           ("pl.plugins.DDPPlugin", S + "DDPStrategy"),
                           ("pl.plugins.training_type.DDPPlugin", S + "DDPStrategy"),
                           ("pl.plugins.DDPSpawnPlugin", S + "DDPStrategy"),
                           ("pl.plugins.training_type.DDPSpawnPlugin", S + "DDPStrategy"),
                           ("pl.plugins.DeepSpeedPlugin", S + "DeepSpeedStrategy"),
                           ("pl.plugins.training_type.DeepSpeedPlugin", S + "DeepSpeedStrategy"),
                           ("pl.plugins.SingleDevicePlugin", S + "SingleDeviceStrategy"),
                           ("pl.plugins.training_type.SingleDevicePlugin", S + "SingleDeviceStrategy"),
                           ("pl.plugins.ParallelPlugin", S + "ParallelStrategy"),
                           ("pl.plugins.training_type.ParallelPlugin", S + "ParallelStrategy"),
                           ("pl.plugins.TPUSpawnPlugin", S + "XLAStrategy"),
                           ("pl.plugins.SingleTPUPlugin", S + "SingleDeviceXLAStrategy")]),
    *_moves("A8-imports", [("pl.metrics", "torchmetrics")], legacy=True,
            why="`pytorch_lightning.metrics` became the torchmetrics package, whose API moved on (classification "
                "metrics need `task=`): check each metric"),
    *_gone("A8-imports", ["pl.utilities.memory.get_gpu_memory_map"],
           "removed in 2.0: use `accelerators.cuda.get_nvidia_gpu_stats(device)` (returns a stats dict per device)"),
    *_gone("A8-imports", ["pl.loops.base", "pl.loops.Loop", "pl.loops.loop"],
           "the `Loop` base class became protected (`_Loop`) in 2.0: customise through hooks or a callback"),
    *_gone("A8-imports", [S + "DDP2Strategy", "pl.plugins.DDP2Plugin", "pl.plugins.training_type.DDP2Plugin"],
           "DDP2 was removed in 1.7: use `strategy=\"ddp\"`"),
    *_gone("A8-imports", ["pl.plugins.DDPShardedPlugin", "pl.plugins.DDPSpawnShardedPlugin", "pl.plugins.DDPFullyShardedPlugin",
                          "pl.plugins.HorovodPlugin", "pl.plugins.DataParallelPlugin", "pl.plugins.IPUPlugin",
                          "pl.plugins.training_type"],
           "this training-type plugin has no 2.x strategy: use DDP or FSDP"),
    *_gone("A8-imports", ["pl.utilities.enums.DistributedType", "pl.utilities.enums.DeviceType",
                          "pl.utilities.DistributedType", "pl.utilities.DeviceType", "pl.utilities.enums._StrategyType"],
           "removed in 1.8: compare `trainer.strategy` / `trainer.accelerator` with isinstance instead", legacy=True),
    # --- A.8 callbacks and loggers -----------------------------------------------------------
    # The 1.5 ``ProgressBar`` (now ``TQDMProgressBar``) shares its name with 2.x's base class
    # (1.9's ``ProgressBarBase``), so it cannot be a table entry: LM201 renames only its calls.
    *_gone("A8-callbacks-loggers", ["pl.callbacks.GPUStatsMonitor", "pl.callbacks.gpu_stats_monitor",
                                    "pl.callbacks.XLAStatsMonitor", "pl.callbacks.xla_stats_monitor"],
           "removed in 1.7: use `callbacks.DeviceStatsMonitor()` (other arguments, other metric names)", legacy=True),
    *_gone("A8-callbacks-loggers", ["pl.loggers.TestTubeLogger", "pl.loggers.test_tube"],
           "removed in 1.7: use `TensorBoardLogger`", legacy=True),
]


# The loop modules the table removes (R25, A8-imports) still exist in 2.x, with fewer names.
# Importing one of them works, so only the names used from it are looked up (``KEPT_MODULES``:
# those modules and their 2.x submodules). ``KEPT``: the names they still bind, which no rule
# marks, nor any attribute of them: 1.9 helpers and closure classes 2.x kept with the same
# signatures (``loops.utilities._parse_loop_limits``, ``loops.optimization.closure.OutputResult``),
# and the protected classes 2.x code imports instead of the 1.x ones (``loops.loop._Loop``).
# Both are read off Lightning 2.6.6 by tests/rules/test_import_table.py.
KEPT_MODULES: FrozenSet[str] = frozenset({
    "pl.loops.loop", "pl.loops.optimization", "pl.loops.optimization.automatic",
    "pl.loops.optimization.closure", "pl.loops.optimization.manual", "pl.loops.utilities"
})
KEPT: FrozenSet[str] = frozenset({
    "pl.loops.loop._Loop", "pl.loops.optimization._AutomaticOptimization",
    "pl.loops.optimization._ManualOptimization", "pl.loops.optimization.automatic.Closure",
    "pl.loops.optimization.automatic.ClosureResult", "pl.loops.optimization.automatic._AutomaticOptimization",
    "pl.loops.optimization.automatic._OUTPUTS_TYPE", "pl.loops.optimization.closure.AbstractClosure",
    "pl.loops.optimization.closure.OutputResult", "pl.loops.optimization.closure.T",
    "pl.loops.optimization.manual.ManualResult", "pl.loops.optimization.manual._ManualOptimization",
    "pl.loops.optimization.manual._OUTPUTS_TYPE", "pl.loops.utilities._block_parallel_sync_behavior",
    "pl.loops.utilities._is_max_limit_reached", "pl.loops.utilities._no_grad_context",
    "pl.loops.utilities._parse_loop_limits", "pl.loops.utilities._reset_progress",
    "pl.loops.utilities._select_data_fetcher", "pl.loops.utilities._verify_dataloader_idx_requirement",
    "pl.loops.utilities.check_finite_loss"
})

# Names that a package's ``__init__`` does not import: a dotted use ``root.<module>.X`` of
# these needs its own import (checked by tests/rules/test_import_table.py).
LAZY_MODULES = ("pl.cli",)


# Old names the table lists that pytorch-lightning 1.9.5 no longer had (removed in 1.6-1.8,
# spec A.8): only their 2.x side can be checked.
_GONE_BEFORE_19 = frozenset({
    "pl.core.memory", "pl.core.memory.ModelSummary", "pl.core.mixins.DeviceDtypeModuleMixin",
    "pl.profiler.AbstractProfiler", "pl.profiler.BaseProfiler", "pl.strategies.DDP2Strategy",
    "pl.utilities.AMPType", "pl.utilities.distributed.rank_zero_warn", "pl.utilities.warnings.rank_zero_deprecation",
    "pl.utilities.warnings.rank_zero_warn", "pl.loggers.LightningLoggerBase",
    *(f"pl.utilities.cli.{kind}_REGISTRY" for kind in ("CALLBACK", "MODEL", "DATAMODULE", "OPTIMIZER", "LR_SCHEDULER",
                                                         "LOGGER")),
})
ENTRIES = [Entry(e.old, e.new, e.row, e.why, True) if e.old in _GONE_BEFORE_19 else e for e in ENTRIES]


def _index() -> Dict[str, Entry]:
    return {e.old: e for e in ENTRIES}


BY_OLD: Dict[str, Entry] = _index()


def lookup(rel: str) -> Optional[Tuple[Entry, str]]:
    """The entry for a root-relative dotted name, by longest prefix, and the name's part after
    the entry's ``old`` ("" for an exact match); None when no entry covers it, when it is one
    of the ``KEPT_MODULES``, or when the name (or the name it is an attribute of) is ``KEPT``."""
    if rel in KEPT_MODULES:
        return None
    parts = rel.split(".")
    for n in range(len(parts), 1, -1):
        prefix = ".".join(parts[:n])
        if prefix in KEPT:  # (every kept name is longer than the removal entry it sits under)
            return None
        entry = BY_OLD.get(prefix)
        if entry is not None:
            return entry, ".".join(parts[n:])
    return None


def mapped(rel: str) -> Optional[Tuple[Optional[str], Entry]]:
    """The new root-relative name of ``rel`` (None when removed) and its entry."""
    found = lookup(rel)
    if found is None:
        return None
    entry, rest = found
    if entry.new is None:
        return None, entry
    return (entry.new + "." + rest if rest else entry.new), entry


# ---------------------------------------------------------------------------------------------
# absolute names (the import rules and the v1 shim's import layer use these; no libcst here)

FABRIC_FOR = {"pytorch_lightning": "lightning_fabric", "lightning.pytorch": "lightning.fabric"}


def to_relative(path: str) -> Optional[Tuple[str, str]]:
    """(root, root-relative name) for a name under a Lightning root, else None."""
    for root, short in (("pytorch_lightning", "pl"), ("lightning.pytorch", "pl"),
                        ("lightning_fabric", "fabric"), ("lightning.fabric", "fabric")):
        if path == root or path.startswith(root + "."):
            pl_root = root if short == "pl" else ("pytorch_lightning" if root == "lightning_fabric" else "lightning.pytorch")
            return pl_root, short + path[len(root):]
    return None


def to_absolute(rel: str, pl_root: str) -> str:
    if rel == "pl" or rel.startswith("pl."):
        return pl_root + rel[2:]
    if rel == "fabric" or rel.startswith("fabric."):
        return FABRIC_FOR[pl_root] + rel[6:]
    return rel


@lru_cache(maxsize=4096)  # (the import rules ask about each dotted use of a file: the same few names)
def new_path(path: str) -> Optional[Tuple[Optional[str], Entry]]:
    """The 2.x absolute path of ``path`` (None when removed) and its table entry, or None when
    ``path`` is not in the table."""
    rel = to_relative(path)
    if rel is None:
        return None
    found = mapped(rel[1])
    if found is None:
        return None
    new_rel, entry = found
    return (to_absolute(new_rel, rel[0]) if new_rel is not None else None), entry
