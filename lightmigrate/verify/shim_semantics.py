"""Pure helpers that reproduce pytorch-lightning 1.9.5 data handling for the v1 shim.

Nothing here touches a Trainer: these functions take plain values and return what 1.9 would
have built from them. They are used by :mod:`lightmigrate.verify.shim`, and are small enough to
unit-test directly. Spec references are to ``shared/spec/lightning-1-to-2.md`` (B.1, B.5, B.6).

Imports torch and numpy lazily, so importing this module is cheap.
"""

from __future__ import annotations

import collections.abc
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

# --------------------------------------------------------------------------------------------
# Output nesting (B.1 / B.4): per-batch [split][optimizer] lists, padded, squeezed, unpadded.


def optimizer_dict_to_list(outputs: Dict[int, Any], num_optimizers: int) -> List[Any]:
    """``{0: a, 2: c}`` with 3 optimizers -> ``[a, None, c]`` (the key is the position)."""
    return [outputs.get(i) for i in range(num_optimizers)]


def _convert_optimizer_dicts(value: Any, num_optimizers: int) -> Any:
    """Replace every optimizer dict (int keys -> step result) found in nested lists by a list."""
    if isinstance(value, list):
        return [_convert_optimizer_dicts(v, num_optimizers) for v in value]
    if isinstance(value, dict) and all(isinstance(k, int) for k in value):
        return optimizer_dict_to_list(value, num_optimizers)
    return value


def _max_shape(nested: List[Any]) -> List[int]:
    """Largest size at every nesting depth of a ragged list of lists."""
    sizes: Dict[int, int] = {}

    def walk(items: List[Any], depth: int) -> None:
        sizes[depth] = max(sizes.get(depth, 0), len(items))
        if all(isinstance(item, list) for item in items):
            for item in items:
                walk(item, depth + 1)

    walk(nested, 0)
    return [sizes[d] for d in sorted(sizes)]


def _leaf_rows(nested: List[Any], index: Tuple[Any, ...] = ()) -> Iterator[Tuple[Tuple[Any, ...], List[Any]]]:
    """Yield (index of a row, row) for every innermost list (a list not made only of lists)."""
    if all(isinstance(item, list) for item in nested):
        for i, item in enumerate(nested):
            yield from _leaf_rows(item, index + (i,))
    else:
        yield index + (slice(len(nested)),), nested


def pad_to_array(nested: List[Any], fill: Any = None) -> Any:
    """A numpy object array of the ragged nested list, padded at the ends with ``fill``."""
    import numpy as np

    out = np.full(_max_shape(nested), fill, dtype=object)
    for index, row in _leaf_rows(nested):
        out[index] = row
    return out


def remove_value(nested: Any, value: Any = None) -> Any:
    """Drop every element equal to ``value`` from nested lists (everywhere, not only the ends)."""
    if not isinstance(nested, list):
        return nested
    return [remove_value(item, value) for item in nested if item != value]


def batch_end_outputs(batch_output: List[Any], automatic: bool, num_optimizers: int) -> Any:
    """What 1.9 passed to ``on_train_batch_end`` for one batch.

    ``batch_output`` is the batch's list over TBPTT splits; each split is ``{optimizer_idx:
    result dict}`` (automatic optimization) or the manual step's result dict. A batch with no
    result gives ``[]``.
    """
    import numpy as np

    if not batch_output:
        return []
    if automatic:
        batch_output = _convert_optimizer_dicts(batch_output, num_optimizers)
    array = np.array(batch_output, dtype=object).squeeze().tolist()
    return remove_value(array)


def epoch_end_outputs(batch_outputs: List[Any], automatic: bool, num_optimizers: int) -> List[Any]:
    """What 1.9 passed to ``training_epoch_end`` given every batch's ``batch_output``."""
    if not batch_outputs:
        return []
    if automatic:
        batch_outputs = _convert_optimizer_dicts(batch_outputs, num_optimizers)
    array = pad_to_array(batch_outputs).squeeze().tolist()
    array = remove_value(array)
    if not isinstance(array, list):  # everything squeezed into one element
        array = [array]
    return [item for item in array if not isinstance(item, list) or len(item)]


# --------------------------------------------------------------------------------------------
# Step results (v1 loops/optimization/{optimizer,manual}_loop.py)


class StepResult:
    """The 1.9 ``ClosureResult``: the loss to backpropagate (divided by the accumulation
    factor), its detached clone, and the other keys of a dict output."""

    __slots__ = ("closure_loss", "loss", "extra")

    def __init__(self, closure_loss: Any, extra: Dict[str, Any]) -> None:
        self.closure_loss = closure_loss
        self.loss = closure_loss.detach().clone() if closure_loss is not None else None
        self.extra = extra

    @classmethod
    def automatic(cls, output: Any, accumulate: int) -> "StepResult":
        import torch

        loss, extra = None, {}
        if isinstance(output, dict):
            loss = output.get("loss")
            if loss is None:
                raise _misconfiguration(
                    "In automatic_optimization, when `training_step` returns a dict, the 'loss' key needs to be present"
                )
            extra = {k: v for k, v in output.items() if k not in ("loss", "hiddens")}
        elif isinstance(output, torch.Tensor):
            loss = output
        elif output is not None:
            raise _misconfiguration(
                "In automatic optimization, `training_step` must return a Tensor, a dict, or None (where the step"
                " will be skipped)."
            )
        if loss is not None:
            loss = loss / accumulate
        return cls(loss, extra)

    def asdict(self) -> Dict[str, Any]:
        return {"loss": self.loss, **self.extra}


def manual_result(output: Any) -> Dict[str, Any]:
    """The 1.9 ``ManualResult.asdict()`` of a manual-optimization step output."""
    import torch

    extra: Dict[str, Any] = {}
    if isinstance(output, dict):
        extra = {k: v for k, v in output.items() if k != "hiddens"}
    elif isinstance(output, torch.Tensor):
        extra = {"loss": output}
    elif output is not None:
        raise _misconfiguration(
            "In manual optimization, `training_step` must either return a Tensor, a dict with extras to pass to"
            " `training_epoch_end` or have no return."
        )
    if "loss" in extra:
        extra["loss"] = extra["loss"].detach()
    return extra


class V1Closure:
    """The 1.9 automatic-optimization closure: step -> zero_grad (optional) -> backward.

    Calling it returns the detached loss (what an optimizer such as LBFGS sees) and keeps the
    last :class:`StepResult` for :meth:`consume_result`.
    """

    def __init__(self, step_fn: Any, backward_fn: Any, zero_grad_fn: Any) -> None:
        self._step_fn = step_fn
        self._backward_fn = backward_fn
        self._zero_grad_fn = zero_grad_fn
        self._result: Optional[StepResult] = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result = self._step_fn()
        if self._zero_grad_fn is not None:
            self._zero_grad_fn()
        if self._backward_fn is not None and result.closure_loss is not None:
            self._backward_fn(result.closure_loss)
        self._result = result
        return result.loss

    def consume_result(self) -> StepResult:
        result, self._result = self._result, None
        if result is None:
            raise _misconfiguration(
                "The closure hasn't been executed. HINT: did you call `optimizer_closure()` in your"
                " `optimizer_step` hook? It could also happen because the `optimizer.step(optimizer_closure)` call"
                " did not execute it internally."
            )
        return result


def extract_hiddens(output: Any, tbptt_steps: int) -> Any:
    """The detached ``"hiddens"`` of a step output (1.9 ``_extract_hiddens``)."""
    if not tbptt_steps:
        if isinstance(output, dict) and "hiddens" in output:
            raise _misconfiguration('You returned "hiddens" in your `training_step` but `truncated_bptt_steps` is disabled')
        return None
    if not isinstance(output, dict) or "hiddens" not in output:
        raise _misconfiguration(
            'You enabled `truncated_bptt_steps` but did not `return {..., "hiddens": ...}` in your `training_step`'
        )
    return detach_all(output["hiddens"])


def detach_all(value: Any) -> Any:
    """Detach every tensor in nested dicts, lists and tuples (1.9 ``recursive_detach``)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, dict):
        return {k: detach_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [detach_all(v) for v in value]
    if isinstance(value, tuple):
        items = [detach_all(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return value


def tbptt_split(batch: Sequence[Any], split_size: int) -> List[List[Any]]:
    """1.9's default ``tbptt_split_batch``: cut every root tensor along dim 1 into chunks of
    length ``split_size`` (the last one shorter); sequences are cut element-wise."""
    import torch

    lengths = [len(x[0]) for x in batch if isinstance(x, (torch.Tensor, collections.abc.Sequence))]
    assert lengths, "Unable to determine batch time dimension"
    assert all(n == lengths[0] for n in lengths), "Batch time dimension length is ambiguous"
    splits: List[List[Any]] = []
    for start in range(0, lengths[0], split_size):
        piece: List[Any] = []
        for x in batch:
            if isinstance(x, torch.Tensor):
                part: Any = x[:, start : start + split_size]
            elif isinstance(x, collections.abc.Sequence):
                part = [x[i][start : start + split_size] for i in range(len(x))]
            else:
                part = None
            piece.append(part)
        splits.append(piece)
    return splits


# --------------------------------------------------------------------------------------------
# Optimizer configuration (v1 core/optimizer.py) and frequencies (v1 loops/utilities.py)


class SchedulerConfig:
    """What 1.9 knew about one LR scheduler in automatic optimization."""

    __slots__ = ("scheduler", "name", "interval", "frequency", "reduce_on_plateau", "monitor", "strict", "opt_idx")

    def __init__(self, scheduler: Any, name: Optional[str] = None, interval: str = "epoch", frequency: int = 1,
                 reduce_on_plateau: bool = False, monitor: Optional[str] = None, strict: bool = True,
                 opt_idx: Optional[int] = None) -> None:
        self.scheduler = scheduler
        self.name = name
        self.interval = interval
        self.frequency = frequency
        self.reduce_on_plateau = reduce_on_plateau
        self.monitor = monitor
        self.strict = strict
        self.opt_idx = opt_idx

    def as_2x_dict(self) -> Dict[str, Any]:
        """The keys a 2.x manual-optimization scheduler config keeps."""
        return {"scheduler": self.scheduler, "name": self.name, "interval": self.interval, "frequency": self.frequency}


_SCHEDULER_KEYS = set(SchedulerConfig.__slots__)


def _is_optimizer(obj: Any) -> bool:
    return callable(getattr(obj, "step", None)) and callable(getattr(obj, "zero_grad", None)) and hasattr(obj, "param_groups")


def parse_optimizer_config(conf: Any) -> Tuple[List[Any], List[SchedulerConfig], List[int]]:
    """``configure_optimizers()`` output -> (optimizers, scheduler configs, frequencies), as 1.9
    automatic optimization read it (``_configure_optimizers`` + ``_configure_schedulers_automatic_opt``
    + ``_set_scheduler_opt_idx``)."""
    import torch

    optimizers: List[Any] = []
    schedulers: List[Any] = []
    frequencies: List[int] = []
    monitor = None
    if conf is None:
        return [], [], []
    if _is_optimizer(conf):
        optimizers = [conf]
    elif (
        isinstance(conf, (list, tuple))
        and len(conf) == 2
        and isinstance(conf[0], list)
        and all(_is_optimizer(o) for o in conf[0])
    ):
        optimizers = list(conf[0])
        schedulers = conf[1] if isinstance(conf[1], list) else [conf[1]]
    elif isinstance(conf, dict):
        optimizers = [conf["optimizer"]]
        monitor = conf.get("monitor")
        schedulers = [conf["lr_scheduler"]] if "lr_scheduler" in conf else []
    elif isinstance(conf, (list, tuple)) and all(isinstance(d, dict) for d in conf):
        optimizers = [d["optimizer"] for d in conf]
        for idx, d in enumerate(conf):
            if "lr_scheduler" in d:
                sched = d["lr_scheduler"]
                schedulers.append(dict(sched, opt_idx=idx) if isinstance(sched, dict) else {"scheduler": sched, "opt_idx": idx})
        frequencies = [d["frequency"] for d in conf if d.get("frequency") is not None]
        if frequencies and len(frequencies) != len(optimizers):
            raise ValueError("A frequency must be given to each optimizer.")
    elif isinstance(conf, (list, tuple)) and all(_is_optimizer(o) for o in conf):
        optimizers = list(conf)
    else:
        raise _misconfiguration("Unknown configuration for model optimizers.")

    configs: List[SchedulerConfig] = []
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau
    for sched in schedulers:
        if isinstance(sched, dict):
            if "scheduler" not in sched:
                raise _misconfiguration('The lr scheduler dict must have the key "scheduler" with its item being an lr scheduler')
            kept = {k: v for k, v in sched.items() if k in _SCHEDULER_KEYS}
            if kept.get("interval", "epoch") not in ("step", "epoch"):
                raise _misconfiguration('The "interval" key in lr scheduler dict must be "step" or "epoch"')
            kept.setdefault("reduce_on_plateau", isinstance(kept["scheduler"], plateau))
            if kept["reduce_on_plateau"] and kept.get("monitor") is None:
                raise _misconfiguration("The lr scheduler dict must include a monitor when a `ReduceLROnPlateau` scheduler is used.")
            config = SchedulerConfig(**kept)
        elif isinstance(sched, plateau):
            if monitor is None:
                raise _misconfiguration("`configure_optimizers` must include a monitor when a `ReduceLROnPlateau` scheduler is used.")
            config = SchedulerConfig(sched, reduce_on_plateau=True, monitor=monitor)
        else:
            config = SchedulerConfig(sched)
        configs.append(config)
    for config in configs:
        owner = getattr(config.scheduler, "optimizer", None)
        for idx, opt in enumerate(optimizers):
            if owner is opt:
                if config.opt_idx is not None and config.opt_idx != idx:
                    raise _misconfiguration(
                        "`opt_idx` set inside scheduler config does not match with the index of the respective"
                        " optimizer returned from `configure_optimizers`."
                    )
                config.opt_idx = idx
                break
        else:
            raise _misconfiguration("Some schedulers are attached with an optimizer that wasn't returned from `configure_optimizers`.")
    return optimizers, configs, frequencies


def active_optimizers(optimizers: Sequence[Any], frequencies: Sequence[int], batch_idx: int) -> List[Tuple[int, Any]]:
    """(index, optimizer) pairs that run for ``batch_idx``: all of them, or with frequencies the
    first ``k`` with ``batch_idx % sum(f) < cumsum(f)[k]`` (1.9 ``_get_active_optimizers``)."""
    if not frequencies:
        return list(enumerate(optimizers))
    place = batch_idx % sum(frequencies)
    total = 0
    for idx, freq in enumerate(frequencies):
        total += freq
        if place < total:
            return [(idx, optimizers[idx])]
    return [(len(frequencies) - 1, optimizers[-1])]  # pragma: no cover - unreachable for positive frequencies


def accumulation_for_epoch(value: Any, epoch: int) -> int:
    """``accumulate_grad_batches`` for ``epoch``: an int, or a ``{first_epoch: factor}`` schedule."""
    if isinstance(value, dict):
        schedule = dict(value)
        schedule.setdefault(0, 1)
        return int(schedule[max(e for e in schedule if e <= epoch)])
    return int(value)


def _misconfiguration(message: str) -> Exception:
    """A MisconfigurationException of whichever Lightning is loaded (ValueError as a fallback)."""
    import sys

    for name in ("pytorch_lightning.utilities.exceptions", "lightning.pytorch.utilities.exceptions",
                 "lightning_fabric.utilities.exceptions"):
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "MisconfigurationException"):
            return module.MisconfigurationException(message)
    return ValueError(message)
