"""The 1.9 -> 2.x mapping of Trainer constructor arguments, on a neutral list of entries.

Used by LM101 (``Trainer(...)`` calls and Trainer-kwarg dict literals in Python) and by the
LightningCLI YAML editor (``trainer:`` sections), so both apply exactly the same mapping.

An entry is ``(name, value)`` where ``value`` is a :class:`Value`: the literal Python value when
the source gives one (``literal`` set), else only its source text. The mapping returns the new
entries (unchanged ones keep their identity so callers can keep the original formatting),
markers (why a human must act), imports the new code needs and facts for notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, FrozenSet, List, Optional, Sequence, Tuple

GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"

NOT_LITERAL = object()

# T0: the 1.9.5 positional order of Trainer.__init__.
POSITIONAL_ORDER = tuple("""
logger enable_checkpointing callbacks default_root_dir gradient_clip_val gradient_clip_algorithm
num_nodes num_processes devices gpus auto_select_gpus tpu_cores ipus enable_progress_bar
overfit_batches track_grad_norm check_val_every_n_epoch fast_dev_run accumulate_grad_batches
max_epochs min_epochs max_steps min_steps max_time limit_train_batches limit_val_batches
limit_test_batches limit_predict_batches val_check_interval log_every_n_steps accelerator strategy
sync_batchnorm precision enable_model_summary num_sanity_val_steps resume_from_checkpoint profiler
benchmark deterministic reload_dataloaders_every_n_epochs auto_lr_find replace_sampler_ddp
detect_anomaly auto_scale_batch_size plugins amp_backend amp_level move_metrics_to_cpu
multiple_trainloader_mode inference_mode
""".split())

# A.8: arguments removed before 1.9 (1.x code older than 1.9 still passes them).
LEGACY_ARGS = frozenset("""
checkpoint_callback weights_summary progress_bar_refresh_rate process_position stochastic_weight_avg
terminate_on_nan log_gpu_memory gpu_metrics flush_logs_every_n_steps prepare_data_per_node
weights_save_path distributed_backend
""".split())

# T23: the 1.9 default of find_unused_parameters was True; keep it.
STRATEGY_RENAMES = {
    "ddp": "ddp_find_unused_parameters_true",
    "ddp_spawn": "ddp_spawn_find_unused_parameters_true",
    "ddp_fork": "ddp_fork_find_unused_parameters_true",
    "ddp_notebook": "ddp_notebook_find_unused_parameters_true",
    "fsdp_native": "fsdp",  # T21
    "fsdp_native_full_shard_offload": "fsdp_cpu_offload",  # T21
    "tpu_spawn": "xla",  # T24
    "tpu_spawn_debug": "xla_debug",  # T24
}
STRATEGY_MARKS = {
    "dp": "T18: DataParallel was removed in 2.0; use strategy=\"ddp\" (outputs are no longer gathered, "
          "so *_step_end reductions lose their purpose)",
    "ddp2": "A.8: the ddp2 strategy was removed; use strategy=\"ddp\"",
    "ddp_cpu": "A.8: accelerator=\"ddp_cpu\" was removed; use accelerator=\"cpu\", devices=N, "
               "strategy=\"ddp_spawn_find_unused_parameters_true\"",
    "ddp_sharded": "T19: FairScale sharding was removed; use strategy=\"fsdp\" (native, different numerics)",
    "ddp_sharded_spawn": "T19: FairScale sharding was removed; use strategy=\"fsdp\"",
    "ddp_sharded_find_unused_parameters_false": "T19: FairScale sharding was removed; use strategy=\"fsdp\"",
    "ddp_fully_sharded": "T19: FairScale fully-sharded DDP was removed; use strategy=\"fsdp\"",
    "horovod": "T25: Horovod support was removed; use the external lightning-Horovod package or \"ddp\"",
    "colossalai": "T26: moved to the external lightning-colossalai package",
    "bagua": "T26: moved to the external lightning-bagua package",
    "hivemind": "T26: moved to the external lightning-hivemind package",
    "hpu_parallel": "T27: HPU support moved to the external lightning-habana package",
    "hpu_single": "T27: HPU support moved to the external lightning-habana package",
    "ipu_strategy": "T27: IPU support moved to the external lightning-graphcore package",
}
# Names that 1.x (< 1.5) accepted in ``accelerator=`` but are strategies (A.8).
LEGACY_ACCELERATOR_STRATEGIES = frozenset(
    {"ddp", "ddp_spawn", "ddp_fork", "ddp_notebook", "dp", "ddp2", "ddp_cpu", "ddp_sharded",
     "ddp_sharded_spawn", "ddp_fully_sharded", "horovod", "tpu_spawn", "fsdp"}
)
PRECISION = {16: "16-mixed", "16": "16-mixed", 32: "32-true", "32": "32-true", 64: "64-true",
             "64": "64-true", "bf16": "bf16-mixed"}
# T9: the ``precision=`` values 2.x warns about ("supported for historical reasons"); it takes 32,
# 64, "32" and "64" as they are, without a warning (checked on 2.6.6), so those stay.
PRECISION_ARG = {k: v for k, v in PRECISION.items() if k in (16, "16", "bf16")}
# Trainer arguments removed before 1.9 (1.9.5 rejected them already): what replaced them.
NOT_ARGUMENTS = {
    "early_stop_callback": "pass an EarlyStopping(monitor=...) callback in `callbacks`",
    "row_log_interval": "use `log_every_n_steps`",
    "log_save_interval": "pass `flush_logs_every_n_steps` to the logger",
    "reload_dataloaders_every_epoch": "use `reload_dataloaders_every_n_epochs=1`",
}

MARK_ALWAYS = {
    "flush_logs_every_n_steps": "A.8: `flush_logs_every_n_steps` was removed; pass it to the logger "
                                "(e.g. CSVLogger(flush_logs_every_n_steps=...))",
    "prepare_data_per_node": "A.8: `prepare_data_per_node` was removed; set `self.prepare_data_per_node` "
                             "on the LightningModule or DataModule",
    "weights_save_path": "A.8: `weights_save_path` was removed; use ModelCheckpoint(dirpath=...)",
}


@dataclass
class Value:
    """A Trainer argument's value: its literal Python value when known, its source text always."""

    literal: Any = NOT_LITERAL
    code: str = ""
    simple: bool = False  # a name, attribute or subscript: safe to evaluate twice
    node: Any = None  # the caller's own expression node, reused when the value is unchanged
    kind: str = ""  # what the file says the value is (rules.shared.value_kinds): "" when unknown


@dataclass
class Entry:
    name: Optional[str]  # None for ``**kwargs`` (or ``*args``) spreads
    value: Value
    origin: Any = None  # the caller's node; kept when the entry is unchanged
    changed: bool = False
    renamed: bool = False  # only the name changed (its value is the caller's, as written)


@dataclass
class Mapped:
    entries: List[Entry]
    markers: List[str] = field(default_factory=list)
    imports: List[Tuple[str, str]] = field(default_factory=list)  # (module suffix, name)
    callbacks: List[str] = field(default_factory=list)  # callback expressions to add
    multi_device: bool = False  # more than one device, or unknown (T22 note)
    has_accelerator: bool = False
    has_strategy: bool = False
    fixed: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    # (name, expression, comment) to bind before the statement
    locals: List[Tuple[str, str, str]] = field(default_factory=list)


def lit(value: Any) -> Value:
    return Value(literal=value, code=py_repr(value))


def code(text: str) -> Value:
    return Value(code=text)


def py_repr(value: Any, quote: str = '"') -> str:
    if isinstance(value, str):
        r = repr(value)
        if quote == '"' and r.startswith("'") and '"' not in value:
            r = '"' + r[1:-1] + '"'
        return r
    if isinstance(value, list):
        return "[" + ", ".join(py_repr(v, quote) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_repr(k, quote)}: {py_repr(v, quote)}" for k, v in value.items()) + "}"
    return repr(value)


def _is_multi(v: Any) -> bool:
    """Whether a devices value means more than one device (unknown counts as more)."""
    if v is NOT_LITERAL:
        return True
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return v == -1 or v > 1
    if isinstance(v, str):
        s = v.strip()
        return s == "-1" or "," in s.strip(",") or (s.isdigit() and int(s) > 1)
    if isinstance(v, (list, tuple)):
        return len(v) > 1
    return True


def _falsy_device_flag(v: Any) -> bool:
    """1.9 ignored a device-specific flag that was None, 0, "0" or []."""
    return v is None or v is False or v == [] or v == "0" or (type(v) is int and v == 0)


class _Builder:
    def __init__(self, entries: Sequence[Entry], quote: str) -> None:
        self.entries = list(entries)
        self.quote = quote
        self.out = Mapped(entries=[])

    def s(self, value: str) -> Value:
        return Value(literal=value, code=py_repr(value, self.quote))

    def get(self, name: str) -> Optional[Entry]:
        return next((e for e in self.entries if e.name == name), None)

    def drop(self, name: str) -> None:
        self.entries = [e for e in self.entries if e.name != name]

    def replace(self, name: str, new: Sequence[Entry]) -> None:
        for i, e in enumerate(self.entries):
            if e.name == name:
                for n in new:
                    if n.origin is None:
                        n.origin = e.origin
                    n.changed = True
                self.entries[i:i + 1] = list(new)
                return

    def set_value(self, name: str, value: Value) -> None:
        self.replace(name, [Entry(name, value)])

    def rename(self, old: str, new: str) -> None:
        e = self.get(old)
        if e is not None:
            self.replace(old, [Entry(new, e.value, renamed=True)])

    def mark(self, why: str) -> None:
        text = f"{why} ({GUIDE})"
        if text not in self.out.markers:
            self.out.markers.append(text)


# ledger L6, read from 1.9.5's EvaluationLoop.on_run_start (module.zero_grad() after the model-eval hook, before
# every on_validation_start hook): 2.x does not zero the gradients there
ZERO_GRAD_AT_VALIDATION = "LambdaCallback(on_validation_start=lambda trainer, pl_module: pl_module.zero_grad())"


def _may_accumulate(value: Value) -> bool:
    """``accumulate_grad_batches`` that may be more than 1 (a schedule, a name...)."""
    return not (value.literal is not NOT_LITERAL and not isinstance(value.literal, dict)
                and value.literal in (None, 0, 1))


def _may_check_mid_epoch(value: Value) -> bool:
    """``val_check_interval`` that may validate inside an epoch: a fraction below 1, a batch count,
    or a value not known."""
    v = value.literal
    if v is NOT_LITERAL:
        return True
    if isinstance(v, bool) or v is None:
        return False
    if isinstance(v, float):
        return v < 1.0
    return isinstance(v, int)


def map_arguments(entries: Sequence[Entry], quote: str = '"', has_tune: bool = False,
                  resume_handled: bool = False, local: Optional[Callable[[], Optional[str]]] = None,
                  tuned: bool = False, combined: bool = False,
                  known: Optional[FrozenSet[str]] = None) -> Mapped:
    """Apply the 1.9 -> 2.x mapping to Trainer arguments given by name (``entries`` must be
    keyword entries plus ``name=None`` spreads; positional arguments are named by the caller).
    ``has_tune``: the file still calls ``trainer.tune()``; ``tuned``: this Trainer is handed to
    ``Tuner(...)`` in its own function (what LM102 made of its ``tune()``), which runs what the
    tuner flags asked for. ``combined``: the file's ``train_dataloader`` returns get wrapped in
    ``CombinedLoader(..., mode=<this multiple_trainloader_mode>)`` (LM101, T17). ``known``: the
    caller knows the entries reach Lightning's own Trainer; a name outside ``known`` (the 1.9 and
    2.x Trainer arguments) is marked: 1.9.5 raised TypeError for it too (``early_stop_callback``)."""
    b = _Builder(entries, quote)
    b.local = local  # gives a free name the caller can bind before the statement (None: there is none)
    for e in entries if known is not None else ():
        if e.name is not None and e.name not in known:
            b.mark(f"T-args: `{e.name}` is not a Trainer argument of 1.9.5 or 2.x (both raise TypeError)"
                   + (f"; {NOT_ARGUMENTS[e.name]}" if e.name in NOT_ARGUMENTS else ""))

    # --- explicit defaults / values 2.x rejects or ignores (T7, T12, T28, A.8)
    drops = {
        "strategy": (None,), "accelerator": (None,), "devices": (None,), "accumulate_grad_batches": (None,),
        "amp_backend": ("native",), "amp_level": (None,), "auto_select_gpus": (False, None),
        "move_metrics_to_cpu": (False, None), "multiple_trainloader_mode": ("max_size_cycle",),
        "stochastic_weight_avg": (False,), "terminate_on_nan": (False,), "log_gpu_memory": (None, False),
        "gpu_metrics": (None, False), "resume_from_checkpoint": (None,), "weights_save_path": (None,),
        "flush_logs_every_n_steps": (), "prepare_data_per_node": (), "distributed_backend": (None,),
        "auto_lr_find": (False,), "auto_scale_batch_size": (False,), "num_processes": (None,),
        "tpu_cores": (None,), "ipus": (None,), "gpus": (None,),
    }
    for name, values in drops.items():
        e = b.get(name)
        if e is not None and e.value.literal is not NOT_LITERAL and any(
            e.value.literal is v or (e.value.literal == v and type(e.value.literal) is type(v)) for v in values
        ):
            b.drop(name)
            b.out.fixed.append(f"dropped `{name}={e.value.code}`")

    # --- A.8 renames
    if b.get("distributed_backend") is not None and b.get("strategy") is None:
        b.rename("distributed_backend", "strategy")
    acc = b.get("accelerator")
    if acc is not None and acc.value.literal in LEGACY_ACCELERATOR_STRATEGIES:
        if b.get("strategy") is None:
            b.rename("accelerator", "strategy")
        else:
            b.mark(f"A.8: accelerator={acc.value.code} names a strategy; choose one strategy")
    cc = b.get("checkpoint_callback")
    if cc is not None:
        if isinstance(cc.value.literal, bool) and b.get("enable_checkpointing") is None:
            b.rename("checkpoint_callback", "enable_checkpointing")
        else:
            b.mark("A.8: `checkpoint_callback` was removed; use enable_checkpointing=True/False and "
                   "pass a ModelCheckpoint in callbacks")
    ms = b.get("max_steps")
    if ms is not None and ms.value.literal is None:
        b.set_value("max_steps", lit(-1))
    ws = b.get("weights_summary")
    if ws is not None:
        if ws.value.literal is None:
            b.replace("weights_summary", [Entry("enable_model_summary", lit(False))])
        elif ws.value.literal in ("top", "full"):
            depth = 1 if ws.value.literal == "top" else -1
            b.out.callbacks.append(f"ModelSummary(max_depth={depth})")
            b.out.imports.append(("callbacks", "ModelSummary"))
            b.drop("weights_summary")
        else:
            b.mark("A.8: `weights_summary` was removed; use the ModelSummary(max_depth=...) callback")
    rate, pos = b.get("progress_bar_refresh_rate"), b.get("process_position")
    if rate is not None or pos is not None:
        r = rate.value.literal if rate is not None else 1
        p = pos.value.literal if pos is not None else 0
        if r == 0 and not isinstance(r, bool) and p == 0:
            b.drop("process_position")
            b.replace("progress_bar_refresh_rate", [Entry("enable_progress_bar", lit(False))])
        elif isinstance(r, int) and not isinstance(r, bool) and isinstance(p, int) and not isinstance(p, bool) and r > 0:
            args = [f"refresh_rate={r}"] if rate is not None else []
            args += [f"process_position={p}"] if pos is not None else []
            b.out.callbacks.append(f"TQDMProgressBar({', '.join(args)})")
            b.out.imports.append(("callbacks", "TQDMProgressBar"))
            b.drop("progress_bar_refresh_rate")
            b.drop("process_position")
        else:
            b.mark("A.8: `progress_bar_refresh_rate`/`process_position` were removed; use "
                   "TQDMProgressBar(refresh_rate=..., process_position=...) in callbacks")
    if b.get("stochastic_weight_avg") is not None:
        b.mark("A.8: `stochastic_weight_avg` was removed; add StochasticWeightAveraging(swa_lrs=...) to callbacks")
    if b.get("terminate_on_nan") is not None:
        b.mark("A.8: `terminate_on_nan` was removed; use detect_anomaly=True or check the loss in training_step")
    for name in ("log_gpu_memory", "gpu_metrics"):
        if b.get(name) is not None:
            b.mark(f"A.8: `{name}` was removed; add the DeviceStatsMonitor callback")
    for name, why in MARK_ALWAYS.items():
        if b.get(name) is not None:
            b.mark(why)

    # --- T15, T9
    if b.get("replace_sampler_ddp") is not None:
        b.rename("replace_sampler_ddp", "use_distributed_sampler")
    prec = b.get("precision")
    if prec is not None:
        v = prec.value.literal
        if not isinstance(v, bool) and v in PRECISION_ARG and type(v) in (int, str):
            b.set_value("precision", b.s(PRECISION_ARG[v]))
        elif v is NOT_LITERAL:
            pass  # 2.x still accepts 16/32/64/"bf16" (with a warning), so an unknown value still runs
    # --- T8, T16, T17
    if b.get("amp_backend") is not None or b.get("amp_level") is not None:
        b.mark("T8: apex AMP (`amp_backend`/`amp_level`) was removed; use precision=\"16-mixed\" "
               "(native AMP, numerics change)")
    if b.get("move_metrics_to_cpu") is not None:
        b.mark("T16: `move_metrics_to_cpu` was removed; drop it (logged tensors stay on their device)")
    mtm = b.get("multiple_trainloader_mode")
    if mtm is not None and combined:
        b.drop("multiple_trainloader_mode")
        b.out.fixed.append(f"moved `multiple_trainloader_mode={mtm.value.code}` to CombinedLoader(..., "
                           f"mode={mtm.value.code}) in train_dataloader")
    elif mtm is not None:
        b.mark("T17: `multiple_trainloader_mode` was removed; return CombinedLoader(loaders, mode=...) "
               "from train_dataloader")

    # --- ledger L6: 1.9 zeroed the module's gradients at every validation start
    agb = b.get("accumulate_grad_batches")
    vci = b.get("val_check_interval")
    calls = b.get("callbacks")
    if (agb is not None and vci is not None and _may_accumulate(agb.value) and _may_check_mid_epoch(vci.value)
            and not (calls is not None and "zero_grad()" in calls.value.code)):
        b.out.callbacks.append(ZERO_GRAD_AT_VALIDATION)
        b.out.imports.append(("callbacks", "LambdaCallback"))
        b.out.fixed.append("a callback zeroes the gradients at each validation start, as 1.9 did (a validation "
                           "inside an accumulation window discarded the gradients accumulated so far)")
    # --- T11: accumulate_grad_batches as a schedule
    if agb is not None and isinstance(agb.value.literal, dict):
        sched = agb.value.literal
        if all(isinstance(k, int) and isinstance(v, int) for k, v in sched.items()):
            b.out.callbacks.append(f"GradientAccumulationScheduler(scheduling={py_repr(sched, quote)})")
            b.out.imports.append(("callbacks", "GradientAccumulationScheduler"))
            b.drop("accumulate_grad_batches")
    # --- T14: the tuner flags did nothing without trainer.tune()
    for name in ("auto_lr_find", "auto_scale_batch_size"):
        if b.get(name) is not None:
            if tuned:
                b.drop(name)  # 2.x rejects it; the Tuner calls that replaced tune() do its work
                b.out.fixed.append(f"dropped `{name}` (the Tuner calls that replaced trainer.tune() run it)")
            elif has_tune:
                b.mark(f"T14: `{name}` was removed; call Tuner(trainer).lr_find / scale_batch_size "
                       "(from pytorch_lightning.tuner) where trainer.tune() was called")
            else:
                b.drop(name)  # 1.9 ignored it: nothing called trainer.tune()
                b.out.fixed.append(f"dropped `{name}` (it had no effect without trainer.tune())")
    # --- T6 (when the caller could not move it to fit)
    if b.get("resume_from_checkpoint") is not None and not resume_handled:
        b.mark("T6: `resume_from_checkpoint` was removed; pass ckpt_path=... to trainer.fit() "
               "(1.9 applied it to fit only)")

    # --- devices: T1-T5
    device_flags = any(b.get(n) is not None for n in ("gpus", "tpu_cores", "ipus", "num_processes"))
    _map_devices(b)

    # --- strategies: T18-T27
    st = b.get("strategy")
    if st is not None:
        v = st.value.literal
        if isinstance(v, str):
            if v in STRATEGY_RENAMES:
                b.set_value("strategy", b.s(STRATEGY_RENAMES[v]))
            elif v in STRATEGY_MARKS:
                b.mark(STRATEGY_MARKS[v])
            elif v == "fsdp":  # T20: same name, new meaning; nothing to rewrite
                b.out.notes.append("T20: strategy=\"fsdp\" meant FairScale's fully sharded DDP in 1.9 and means "
                                   "native torch FSDP in 2.x; FairScale-specific settings no longer apply")
    acc = b.get("accelerator")
    if acc is not None and acc.value.literal in ("hpu", "ipu"):
        b.mark(f"T27: accelerator={acc.value.code} moved to an external package "
               "(lightning-habana / lightning-graphcore)")

    # --- values known only at run time (issue 25): 1.9 read None as the default, 2.x raises
    _runtime_defaults(b, device_flags)

    b.out.entries = b.entries
    b.out.has_accelerator = b.get("accelerator") is not None
    b.out.has_strategy = b.get("strategy") is not None
    return b.out


# Arguments whose 1.9 value None meant "the default" and that 2.x rejects when None: the 2.x
# spelling of that default. (1.9: accelerator=None ran on the CPU, strategy=None chose the
# strategy, devices=None took the accelerator's device count, as 2.x's "auto" does.)
RUNTIME_NONE_DEFAULTS = (("accelerator", "cpu"), ("strategy", "auto"), ("devices", "auto"))


def _runtime_defaults(b: _Builder, device_flags: bool) -> None:
    """``name=<expression>`` for the arguments of RUNTIME_NONE_DEFAULTS becomes
    ``<expression> or "<default>"``: written once, evaluated once. The other falsy values
    (0, "0", [], "") were errors in 1.9.5 for all three, so only None's meaning matters. The
    accelerator is left alone next to a 1.9 device flag (gpus=... chose it then)."""
    for name, default in RUNTIME_NONE_DEFAULTS:
        e = b.get(name)
        if e is None or (e.changed and not e.renamed) or e.value.literal is not NOT_LITERAL \
                or (name == "accelerator" and device_flags):
            continue
        operand = _or_operand(e.value.code, default)
        if operand is None:
            continue
        b.set_value(name, code(f"{operand} or {py_repr(default, b.quote)}"))
        b.out.fixed.append(f"`{name}={e.value.code}` keeps 1.9's meaning of None")


def _or_operand(text: str, default: str) -> Optional[str]:
    """``text`` as the left operand of ``or`` (parenthesized when needed), or None when its value
    cannot be None (``x or "auto"`` of a second run, a conditional choosing between non-None
    values, a number) or it is not an expression."""
    import ast

    try:
        node = ast.parse(f"(\n{text}\n)", mode="eval").body
    except SyntaxError:
        return None
    if not _may_be_none(node):
        return None
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) and "\n" not in text:
        return text
    return f"({text})"


# Calls that never return None (builtins, and what LM101 itself writes).
_NEVER_NONE_CALLS = frozenset({"int", "str", "len", "list", "tuple", "range", "max", "min", "sum", "abs", "round",
                               "find_usable_cuda_devices"})

# Attributes of a Trainer (``trainer.x``, ``self.trainer.x``) that are never None (what LM101
# writes for 1.9's ``trainer.gpus``); a config's ``cfg.num_devices`` may well be.
_NEVER_NONE_ATTRS = frozenset({"device_ids", "num_devices"})


def _may_be_none(node) -> bool:
    """Whether the expression ``node`` may evaluate to None: a name, attribute, item, call or
    await may; a conditional may when one of its branches is None; ``a or b`` when ``b`` may."""
    import ast

    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name not in _NEVER_NONE_CALLS and not name[:1].isupper()  # a class makes an object
    if isinstance(node, ast.Attribute) and node.attr in _NEVER_NONE_ATTRS and (
            (isinstance(node.value, ast.Name) and node.value.id == "trainer")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "trainer")):
        return False
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Await)):
        return True
    if isinstance(node, ast.Constant):
        return node.value is None
    if isinstance(node, ast.IfExp):
        return any(isinstance(b, ast.Constant) and b.value is None or isinstance(b, ast.IfExp) and _may_be_none(b)
                   for b in (node.body, node.orelse))
    if isinstance(node, ast.BoolOp):
        return isinstance(node.op, ast.And) or _may_be_none(node.values[-1])
    return False


# What the file says a ``gpus=`` value is (``Value.kind``, found by rules.shared.value_kinds):
# an int or None (``add_argument("--gpus", type=int)``, ``gpus: Optional[int]``), or any value
# that selects GPUs in 1.9 exactly when it is truthy (1.9's own ``--gpus`` parser: None, an int,
# or a str holding a comma)
KIND_INT = "int"
KIND_STR = "str"  # a str or None (``add_argument("--gpus", type=str)``, ``gpus: Optional[str]``)
KIND_TRAINER_GPUS = "trainer.gpus"  # 1.9's ``trainer.gpus`` of a Lightning Trainer


def _old_devices(b: _Builder, devices: Optional[Entry]) -> str:
    """What ``devices=`` meant next to a ``gpus=`` 1.9 ignored (no GPU): its value, with None as
    2.x's "auto" (the default 1.9 took then)."""
    auto = py_repr("auto", b.quote)
    if devices is None or devices.value.literal is None:
        return auto
    if devices.value.literal is not NOT_LITERAL:
        return devices.value.code
    operand = _or_operand(devices.value.code, "auto")
    return f"{operand} or {auto}" if operand is not None else devices.value.code


def _after_or(text: str) -> str:
    """``text`` as the right operand of ``or`` (parenthesized when it binds less tightly)."""
    import ast

    try:
        node = ast.parse(f"(\n{text}\n)", mode="eval").body
    except SyntaxError:
        return f"({text})"
    return f"({text})" if isinstance(node, (ast.IfExp, ast.Lambda, ast.NamedExpr)) else text


def _gpus_conditional(b: _Builder, e: Entry, acc: Optional[Entry], devices: Optional[Entry], gpu: str,
                      falsy: str) -> None:
    """``gpus=<value>`` of unknown type: GPUs when ``gpu`` (the test of 1.9's parser) holds, else the
    CPU, the test written once (a local before the statement, when the caller has a name for it)."""
    old = _old_devices(b, devices)
    if " or " in old:
        old = f"({old})"
    local = b.local() if getattr(b, "local", None) else None
    if local:
        # written once: ``use_gpus = args.gpus not in (...)`` before the statement
        b.out.locals.append((local, gpu, f"# 1.9 read gpus={falsy} as no GPU"))
        gpu = local
    _gpus_become(b, e, acc, gpu, f"{e.value.code} if {gpu} else {old}")


def _gpus_become(b: _Builder, e: Entry, acc: Optional[Entry], gpu: str, devices: str) -> None:
    """``gpus=`` replaced by ``accelerator="gpu" if <gpu> else "cpu"`` (unless the call has an
    accelerator) and ``devices=<devices>``."""
    new = []
    if acc is None:
        new.append(Entry("accelerator", code(f"{py_repr('gpu', b.quote)} if {gpu} else {py_repr('cpu', b.quote)}")))
    new.append(Entry("devices", code(devices)))
    b.drop("devices")
    b.replace("gpus", new)
    b.out.multi_device = True
    b.out.fixed.append(f"`gpus={e.value.code}` became accelerator/devices")


def _gpus_by_kind(b: _Builder, e: Entry, acc: Optional[Entry], devices: Optional[Entry]) -> bool:
    """``gpus=<value>`` whose type the file gives (``e.value.kind``): the short form exactly right
    for that type. False when the kind gives none (the caller writes the general form)."""
    kind, value = e.value.kind, e.value.code
    if kind == KIND_TRAINER_GPUS and acc is None:
        # 1.9's trainer.gpus was the gpus= that trainer got, else its devices flag (the device
        # count "auto" resolved to): never None, 0 or "0", so this Trainer took GPUs, the ones
        # that trainer used (its device indices: also for gpus=[1, 3] or "-1").
        receiver = value[: -len(".gpus")]
        b.drop("devices")  # 1.9 ignored devices= next to a device flag
        b.replace("gpus", [Entry("accelerator", b.s("gpu")), Entry("devices", code(f"{receiver}.device_ids"))])
        b.out.multi_device = True
        b.out.fixed.append(f"`gpus={value}` became accelerator=\"gpu\", devices={receiver}.device_ids")
        return True
    if not e.value.simple or (acc is not None and acc.value.literal is NOT_LITERAL):
        return False
    if kind == KIND_INT:
        # an int or None: 1.9 took the CPU for None and 0 (the falsy ones), GPUs for any other
        # (2 -> two, -1 -> all; 2.x reads devices=2 / -1 alike)
        _gpus_become(b, e, acc, value, f"{value} or {_after_or(_old_devices(b, devices))}")
        return True
    if kind == KIND_STR:
        # a str or None: 1.9 took the CPU for None, "" and "0"
        _gpus_conditional(b, e, acc, devices, f"{value} not in (None, {py_repr('', b.quote)}, {py_repr('0', b.quote)})",
                          'None, "" and "0"')
        return True
    return False


def _map_devices(b: _Builder) -> None:
    flags = [n for n in ("gpus", "tpu_cores", "ipus", "num_processes") if b.get(n) is not None]
    devices = b.get("devices")
    if devices is not None and flags == []:
        b.out.multi_device = _is_multi(devices.value.literal)
    if not flags:
        return
    acc = b.get("accelerator")
    auto = b.get("auto_select_gpus")
    live = [n for n in flags if not (b.get(n).value.literal is not NOT_LITERAL and _falsy_device_flag(b.get(n).value.literal))]
    for n in flags:
        if n not in live:  # 1.9 ignored a falsy device flag entirely (gpus=0 -> CPU)
            b.out.fixed.append(f"dropped `{n}={b.get(n).value.code}` (1.9 ran on the CPU)")
            b.drop(n)
    if auto is not None and "gpus" not in live:
        b.drop("auto_select_gpus")  # no GPUs requested: 1.9 ignored it
        auto = None
    if not live:
        return
    if len(live) > 1:
        b.mark(f"T1-T4: several device flags ({', '.join(live)}); use accelerator=... and devices=... "
               "(1.9 used the first of num_processes, gpus, ipus, tpu_cores that was set)")
        return
    name = live[0]
    e = b.get(name)
    v = e.value.literal
    accelerator = {"gpus": "gpu", "tpu_cores": "tpu", "ipus": "ipu", "num_processes": "cpu"}[name]
    if v is NOT_LITERAL:
        if name == "gpus" and auto is None and _gpus_by_kind(b, e, acc, devices):
            return
        if name == "gpus" and e.value.simple and auto is None and (acc is None or acc.value.literal is not NOT_LITERAL):
            # 1.9's device parser read None, 0, "0" and [] as "no GPU": the CPU (and devices kept its
            # own value); any other value (2, -1, "0,1", [0]) selected GPUs.
            _gpus_conditional(b, e, acc, devices, f"{e.value.code} not in (None, 0, {py_repr('0', b.quote)}, [])",
                              'None, 0, "0" and []')
        else:
            b.mark(f"T1-T4: `{name}={e.value.code}` was removed; use accelerator=\"{accelerator}\", devices=... "
                   "(with 1.9's meaning: 0 or None meant no such device)")
        return
    if auto is not None:
        if name == "gpus" and auto.value.literal is True and isinstance(v, int) and not isinstance(v, bool):
            b.out.imports.append(("accelerators", "find_usable_cuda_devices"))
            dev_value = code(f"find_usable_cuda_devices({v})")
            b.drop("auto_select_gpus")
        else:
            b.mark("T5: `auto_select_gpus` was removed; use devices=find_usable_cuda_devices(N) "
                   "(from pytorch_lightning.accelerators)")
            return
    else:
        dev_value = lit(v)
        dev_value.code = py_repr(v, b.quote)
        if name == "tpu_cores" and isinstance(v, list):
            if all(isinstance(i, int) and not isinstance(i, bool) for i in v):
                dev_value = lit([i - 1 for i in v])  # T2: 1-based core index in 1.9, 0-based from 2.1
            else:
                b.mark("T2: `tpu_cores` list indices were 1-based in 1.9 and are 0-based in 2.x")
                return
    new = []
    if acc is None:
        new.append(Entry("accelerator", b.s(accelerator)))
    new.append(Entry("devices", dev_value))
    if devices is not None:
        b.drop("devices")  # 1.9 ignored devices= when a device flag was set
    b.replace(name, new)
    b.out.multi_device = _is_multi(v)
    if name == "ipus":
        b.mark("T3: IPU support moved to the external lightning-graphcore package (from 2.1)")


# T-meth3: what 1.9.5's ``Trainer.add_argparse_args`` declared for the Trainer arguments whose
# 1.9 default 2.x reads the same way (name -> the ``type=`` code with 1.9's parsing, the default,
# and whether the option may stand alone as ``True``: ``nargs="?", const=True``). Read from
# 1.9.5 itself. An argument outside this table (accelerator, devices, strategy, num_processes,
# tpu_cores, ipus, accumulate_grad_batches, resume_from_checkpoint, amp_*, plugins, ...) makes a
# script keep its T-meth3 marker: its 1.9 default (None) means something 2.x spells otherwise.
_BOOL = 'lambda x: x.lower() in ("y", "yes", "t", "true", "on", "1")'
_BOOL_OR_INT = ('lambda x: x.lower() in ("y", "yes", "t", "true", "on", "1") if x.lower() in ("y", "yes", "t", '
                '"true", "on", "1", "n", "no", "f", "false", "off", "0") else int(x)')
_BOOL_OR_STR = ('lambda x: x.lower() in ("y", "yes", "t", "true", "on", "1") if x.lower() in ("y", "yes", "t", '
                '"true", "on", "1", "n", "no", "f", "false", "off", "0") else x')
_INT_OR_FLOAT = 'lambda x: float(x) if "." in x else int(x)'
ARGPARSE_19 = {
    "logger": (_BOOL, "True", True),
    "enable_checkpointing": (_BOOL, "True", True),
    "default_root_dir": ("str", "None", False),
    "gradient_clip_val": (_INT_OR_FLOAT, "None", False),
    "gradient_clip_algorithm": ("str", "None", False),
    "num_nodes": ("int", "1", False),
    "gpus": ('lambda x: x if "," in x else int(x)', "None", False),
    "enable_progress_bar": (_BOOL, "True", True),
    "overfit_batches": (_INT_OR_FLOAT, "0.0", False),
    "check_val_every_n_epoch": ("int", "1", False),
    "fast_dev_run": (_BOOL_OR_INT, "False", True),
    "max_epochs": ("int", "None", False),
    "min_epochs": ("int", "None", False),
    "max_steps": ("int", "-1", False),
    "min_steps": ("int", "None", False),
    "max_time": ("str", "None", False),
    "limit_train_batches": (_INT_OR_FLOAT, "None", False),
    "limit_val_batches": (_INT_OR_FLOAT, "None", False),
    "limit_test_batches": (_INT_OR_FLOAT, "None", False),
    "limit_predict_batches": (_INT_OR_FLOAT, "None", False),
    "val_check_interval": (_INT_OR_FLOAT, "None", False),
    "log_every_n_steps": ("int", "50", False),
    "sync_batchnorm": (_BOOL, "False", True),
    "precision": ("lambda x: int(x) if x.isdigit() else x", "32", False),
    "enable_model_summary": (_BOOL, "True", True),
    "num_sanity_val_steps": ("int", "2", False),
    "profiler": ("str", "None", False),
    "benchmark": (_BOOL, "None", True),
    "reload_dataloaders_every_n_epochs": ("int", "0", False),
    "auto_lr_find": (_BOOL_OR_STR, "False", True),
    "replace_sampler_ddp": (_BOOL, "True", True),
    "detect_anomaly": (_BOOL, "False", True),
    "auto_scale_batch_size": (_BOOL_OR_STR, "False", True),
    "inference_mode": (_BOOL, "True", True),
}
# Every option 1.9.5's ``Trainer.add_argparse_args`` declared, in its order.
ARGPARSE_19_ORDER = tuple("""
logger enable_checkpointing default_root_dir gradient_clip_val gradient_clip_algorithm num_nodes
num_processes devices gpus auto_select_gpus tpu_cores ipus enable_progress_bar overfit_batches
track_grad_norm check_val_every_n_epoch fast_dev_run accumulate_grad_batches max_epochs min_epochs
max_steps min_steps max_time limit_train_batches limit_val_batches limit_test_batches
limit_predict_batches val_check_interval log_every_n_steps accelerator strategy sync_batchnorm
precision enable_model_summary num_sanity_val_steps resume_from_checkpoint profiler benchmark
reload_dataloaders_every_n_epochs auto_lr_find replace_sampler_ddp detect_anomaly
auto_scale_batch_size plugins amp_backend amp_level move_metrics_to_cpu multiple_trainloader_mode
inference_mode
""".split())


def add_argument_code(parser: str, name: str) -> str:
    """``parser.add_argument(...)`` for the 1.9 option ``--name``, as 1.9.5 parsed it."""
    kind, default, flag = ARGPARSE_19[name]
    extra = ', nargs="?", const=True' if flag else ""
    return f'{parser}.add_argument("--{name}", type={kind}, default={default}{extra})'
