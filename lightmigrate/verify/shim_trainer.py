"""The v1 shim's Trainer layer: 1.9 Trainer arguments that 2.x rejects, given their 1.9 meaning.

:func:`v1_trainer_kwargs` turns the Trainer arguments of an un-migrated 1.x case into 2.x ones
for the runner's Trainer (CPU, one device): arguments passed at their 1.9 default (explicit
``None``, ``gpus=0``, ``amp_backend="native"``...) are dropped, renamed ones are renamed, and
``precision`` takes the value that means what 1.9 ran. ``track_grad_norm`` and
``multiple_trainloader_mode`` are taken out and emulated by the shim (:func:`grad_norm_v1`,
logged through the module's ``log_grad_norm``; the training loaders combined in that mode).
What 1.9 meant differently on a CPU (``gpus=2``...) is left for 2.x to reject: verify then says
the shim cannot run the case.

Written from 1.9.5's behaviour, independently of the migration's own Trainer mapping (LM101),
so that a mistake in the migration shows as a difference instead of being repeated here.
Must not import libcst, click or rich; torch is imported lazily.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any, Dict, Mapping, Set, Tuple

TRACK_GRAD_NORM_ATTR = "_v1shim_track_grad_norm"
TRAIN_MODE_ATTR = "_v1shim_multiple_trainloader_mode"
_INSTALLED: Set[str] = set()

# 1.9 arguments that 2.x removed, with the values at which 1.9 ignored them.
_REMOVED_AT_DEFAULT = {
    "gpus": (None, False, 0, "0", []),
    "tpu_cores": (None, False, 0, "0", []),
    "ipus": (None, False, 0),
    "num_processes": (None, False, 0, 1),
    "auto_select_gpus": (None, False),
    "amp_backend": ("native",),
    "amp_level": (None,),
    "move_metrics_to_cpu": (False,),
    "resume_from_checkpoint": (None,),
}
# 1.9 arguments only ``Trainer.tune()`` read (fit ignored them); 2.x has no ``tune()``, so code
# that calls it fails under the shim anyway.
_TUNE_ONLY = ("auto_lr_find", "auto_scale_batch_size")
# 2.x arguments that 1.9 accepted as None (its default), which 2.x rejects.
_NONE_MEANS_DEFAULT = ("strategy", "devices", "accelerator")
_RENAMED = {"replace_sampler_ddp": "use_distributed_sampler"}
# 1.9 precision -> the 2.x precision that runs the same on a CPU (1.9 ran 16 as bf16 there)
_PRECISION = {16: "bf16-mixed", "16": "bf16-mixed", "bf16": "bf16-mixed", 32: "32-true", "32": "32-true",
              64: "64-true", "64": "64-true"}


def v1_trainer_kwargs(kwargs: Mapping[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """``(2.x Trainer kwargs, what the shim emulates itself)``; the latter holds
    ``track_grad_norm`` (-1: off) and ``multiple_trainloader_mode`` (1.9 default "max_size_cycle")."""
    out: Dict[str, Any] = {}
    emulated: Dict[str, Any] = {"track_grad_norm": -1, "multiple_trainloader_mode": "max_size_cycle"}
    for name, value in kwargs.items():
        if name in _REMOVED_AT_DEFAULT and _is_one_of(value, _REMOVED_AT_DEFAULT[name]):
            continue
        if name in _TUNE_ONLY or name in _NONE_MEANS_DEFAULT and value is None:
            continue
        if name in emulated:
            emulated[name] = value
            continue
        if name == "accumulate_grad_batches" and value is None:
            value = 1
        if name == "precision" and _hashable(value) and value in _PRECISION:
            value = _PRECISION[value]
        out[_RENAMED.get(name, name)] = value
    return out, emulated


def _hashable(value: Any) -> bool:
    return isinstance(value, (int, str))


def _is_one_of(value: Any, defaults: Tuple[Any, ...]) -> bool:
    return any(type(value) is type(d) and value == d for d in defaults)


def grad_norm_v1(module: Any, norm_type: Any, group_separator: str = "/") -> Dict[str, float]:
    """1.9's ``grad_norm``: the ``norm_type`` norm of each parameter's gradient and of all of
    them together, rounded to 4 places, keyed ``grad_{p}_norm{sep}{name}`` and ``grad_{p}_norm_total``."""
    import torch

    norm_type = float(norm_type)
    if norm_type <= 0:
        raise ValueError(f"`norm_type` must be a positive number or 'inf' (infinity norm). Got {norm_type}")
    norms = {f"grad_{norm_type}_norm{group_separator}{name}": p.grad.data.norm(norm_type)
             for name, p in module.named_parameters() if p.grad is not None}
    if norms:
        norms[f"grad_{norm_type}_norm_total"] = torch.tensor(list(norms.values())).norm(norm_type)
    return {k: round(v.item(), 4) for k, v in norms.items()}


def precision_v1(trainer_precision: Any) -> Any:
    """1.9's ``LightningModule.precision`` for a 2.x ``trainer.precision`` ("32-true" -> 32,
    "16-mixed" -> 16, "bf16-mixed" -> "bf16")."""
    text = str(trainer_precision)
    if text.startswith("bf16"):
        return "bf16"
    head = text.split("-", 1)[0]
    return int(head) if head.isdigit() else trainer_precision


def amp_backend_v1(trainer: Any) -> Any:
    """1.9's ``Trainer.amp_backend`` (removed in 2.0), apex being gone: "native" under a
    mixed-precision plugin (1.9's ``MixedPrecisionPlugin``: precision 16 or "bf16"), else None."""
    return "native" if str(trainer.precision) in ("16-mixed", "bf16-mixed") else None


def install(root: str) -> None:
    """Make every ``<root>.Trainer(...)`` (the user's own too: a Trainer subclass, a helper
    that builds one) accept 1.9 keyword arguments, through :func:`v1_trainer_kwargs`; the
    Trainer keeps ``track_grad_norm`` for the shim. Idempotent."""
    if root in _INSTALLED:
        return
    _INSTALLED.add(root)
    trainer_cls = importlib.import_module(root).Trainer
    original = trainer_cls.__init__

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs, emulated = v1_trainer_kwargs(kwargs)
        original(self, *args, **kwargs)
        if emulated["track_grad_norm"] != -1:
            setattr(self, TRACK_GRAD_NORM_ATTR, emulated["track_grad_norm"])
        if emulated["multiple_trainloader_mode"] != "max_size_cycle":
            setattr(self, TRAIN_MODE_ATTR, emulated["multiple_trainloader_mode"])

    trainer_cls.__init__ = __init__
    if not hasattr(trainer_cls, "amp_backend"):
        trainer_cls.amp_backend = property(amp_backend_v1)


def combine_v1(loaders: Any, mode: str, root: str) -> Any:
    """1.9's ``multiple_trainloader_mode``: a collection of training loaders combined in ``mode``
    (``root``: the Lightning package, ``pytorch_lightning`` or ``lightning.pytorch``)."""
    if mode == "max_size_cycle" or not isinstance(loaders, (list, tuple, dict)):
        return loaders
    return importlib.import_module(root + ".utilities.combined_loader").CombinedLoader(loaders, mode)
