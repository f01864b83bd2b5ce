"""In-process recording of what a Lightning run observably does.

Runs inside both interpreters: real pytorch-lightning 1.9.5 (side ``v1``) and Lightning 2.x
(side ``v2``). Only torch and the Lightning package are imported, and only lazily, so this
module also imports in a plain interpreter (the JSON encoder then handles no tensors).

Three pieces:

* :func:`encode` turns tensors, containers and arbitrary objects into JSON-able data.
* :func:`make_logger` builds an in-memory subclass of ``<root>.loggers.Logger`` that records
  every ``log_metrics`` call as ``[step, key, value]`` rows.
* :class:`EpochEndTracer` watches, with ``sys.settrace``, the epoch-end hooks defined in one
  case file and records what each invocation received (see its docstring).
"""

from __future__ import annotations

import dis
import importlib
import linecache
import re
import sys
import threading
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple

from lightmigrate.catalog.hooks import RUN_ONCE_EPOCH_END
from lightmigrate.verify.hooks import V1_HOOKS, V2_HOOKS

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


# --------------------------------------------------------------------------------------------
# JSON encoding


def _is_tensor(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _float(x: Any) -> Any:
    """A JSON number for ``x``; non-finite values stay floats (json writes NaN/Infinity)."""
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, int):
        return x
    return float(x)


def encode(obj: Any, _depth: int = 0, max_values: Optional[int] = None) -> Any:
    """Encode ``obj`` as JSON-able data.

    * tensors -> ``{"tensor": shape, "dtype": str, "values": flat list, "requires_grad": bool}``;
      with ``max_values``, a tensor with more elements keeps every k-th value only (at most
      ``max_values`` of them, ``"sampled_every": k``), so a real model's weights stay small
    * dicts -> dicts (keys as str), lists -> lists, tuples -> ``{"tuple": [...]}``
    * None, bool, int, float, str -> themselves (non-finite floats are kept)
    * anything else -> ``{"repr": repr(obj)}`` with memory addresses blanked out
    """
    if _depth > 50:
        return {"repr": "<too deep>"}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj
    if _is_tensor(obj):
        t = obj.detach()
        if t.is_complex():
            t = __import__("torch").view_as_real(t)
        flat = t.to("cpu").reshape(-1)
        every = 1
        if max_values is not None and flat.numel() > max_values:
            every = -(-flat.numel() // max_values)  # ceil
            flat = flat[::every]
        if flat.dtype.is_floating_point:
            values = [float(v) for v in flat.double().tolist()]
        else:
            values = [_float(v) for v in flat.tolist()]
        out = {
            "tensor": list(obj.shape),
            "dtype": str(obj.dtype),
            "values": values,
            "requires_grad": bool(obj.requires_grad),
        }
        if every > 1:
            out["sampled_every"] = every
        return out
    if isinstance(obj, Mapping):
        return {str(k): encode(v, _depth + 1, max_values) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return {"tuple": [encode(v, _depth + 1, max_values) for v in obj]}
    if isinstance(obj, list):
        return [encode(v, _depth + 1, max_values) for v in obj]
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(obj, numpy.generic):
        return encode(obj.item(), _depth + 1, max_values)
    return {"repr": _ADDRESS.sub("0x?", repr(obj))}


def scalar(value: Any) -> Any:
    """A logged metric value as a plain float (tensors and numpy scalars included)."""
    if _is_tensor(value):
        return float(value.detach().to("cpu").double().reshape(-1)[0]) if value.numel() else float("nan")
    if hasattr(value, "item"):
        try:
            return float(value.item())
        except (TypeError, ValueError):
            pass
    if isinstance(value, (int, float)):
        return float(value)
    return encode(value)


# --------------------------------------------------------------------------------------------
# The recording logger


def make_logger(root: str = "pytorch_lightning"):
    """An in-memory logger instance for the Lightning package ``root``.

    ``root`` is ``pytorch_lightning`` or ``lightning.pytorch``; the class is built on the fly so
    this module never imports Lightning at import time. The instance's ``rows`` list receives
    ``[step, key, value]`` for every logged metric, in call order.
    """
    loggers = importlib.import_module(root + ".loggers")
    base = loggers.Logger

    class RecordingLogger(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.rows: List[List[Any]] = []
            self.hyperparams: List[Any] = []

        @property
        def name(self) -> str:
            return "lightmigrate-recorder"

        @property
        def version(self) -> str:
            return "0"

        @property
        def experiment(self) -> None:
            return None

        def log_metrics(self, metrics: Dict[str, Any], step: Optional[int] = None) -> None:
            for key in sorted(metrics):
                self.rows.append([step, key, scalar(metrics[key])])

        def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
            self.hyperparams.append(encode(params) if not hasattr(params, "__dict__") else repr(params))

        def save(self) -> None:
            pass

        def finalize(self, status: str) -> None:
            pass

    return RecordingLogger()


# --------------------------------------------------------------------------------------------
# The epoch-end tracer

_STAGE_BY_RUNNING_STAGE = {
    "train": ("train", False),
    "sanity_check": ("validation", True),
    "validate": ("validation", False),
    "test": ("test", False),
    "predict": ("predict", False),
}

_READ_OPS = ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "DELETE_FAST")


def param_is_read(code: Any, name: str) -> bool:
    """True when the function body of ``code`` reads the local ``name`` at all.

    Any load counts, including closures (comprehensions, lambdas) that capture it. Used on the
    1.x side: a hook that ignores its ``outputs`` argument has nothing observable to compare.
    """
    if name in code.co_cellvars:
        return True
    for ins in dis.get_instructions(code):
        if ins.opname.startswith(_READ_OPS) and ins.argval == name:
            return True
        # 3.12+ superinstructions carry a pair of names
        if ins.opname.startswith("LOAD_FAST") and isinstance(ins.argval, tuple) and name in ins.argval:
            return True
    return False


class _Invocation:
    __slots__ = ("frame", "record", "candidate")

    def __init__(self, frame: Any, record: Dict[str, Any]) -> None:
        self.frame = frame
        self.record = record
        self.candidate: Optional[Tuple[str, Any]] = None  # v2: (name, encoded) first binding


class EpochEndTracer:
    """Records what each epoch-end invocation received, in call order.

    An *invocation* starts when Lightning calls a tracked hook defined in ``filename`` on a
    LightningModule, and lasts until that frame returns. Any call made during it (a helper, a
    ``super()`` call, ``self.validation_epoch_end(outputs)`` from ``test_epoch_end``) belongs to
    the same invocation, so each invocation yields exactly one record:

    ``{"stage", "sanity", "epoch", "hook", "captured", "param", "capture", "value"}``

    * ``stage`` comes from ``trainer.state.stage`` when the invocation starts (the sanity check
      counts as ``validation`` with ``sanity: true``), falling back to the hook's name.
    * side ``v1``: tracked hooks are the 1.x ones (``V1_HOOKS``). The value is the hook's first
      argument after ``self``, taken on entry, but only when the body reads it
      (``param_is_read``); a hook that ignores its argument records ``captured: false``.
    * side ``v2``: tracked hooks are the 2.x module hooks (``V2_HOOKS``) and any function whose
      name ends with ``_epoch_end``, but only for stages listed in ``watch["names"]`` (the
      stages that had a 1.x hook). Every frame of the case file run during the invocation is
      traced line by line until a value is taken. The value is the local named like the 1.x
      parameter (``watch["names"][stage]``, then any watched name) when execution reaches an
      *anchor* line (``watch["anchors"]``: the first statement of an original 1.x body), so
      set-up code the migration put in front of the body - e.g. ``outputs = buf`` then
      ``outputs = outputs[0]`` - is skipped (``capture: "anchor"``). Without an anchor hit, the
      first binding of such a local in the invocation is used (``capture: "first-binding"``).
      LM001's run-once method (``RUN_ONCE_EPOCH_END``: the old body, which a user callback
      reading its results calls before the module's ``on_*_epoch_end`` calls it again, a no-op
      then) starts an invocation too; the module hook's invocation that follows it in the same
      stage and epoch without running the body again is folded into it, so each time the old
      body ran yields one record, as on 1.x.

    Values are encoded (:func:`encode`) when taken, so later mutation does not matter.
    """

    def __init__(
        self,
        filename: str,
        side: str,
        watch: Optional[Mapping[str, Any]] = None,
        module_base: Optional[type] = None,
    ) -> None:
        if side not in ("v1", "v2"):
            raise ValueError("side must be 'v1' or 'v2'")
        watch = watch or {}
        self.filename = filename
        self.side = side
        self.names: Dict[str, List[str]] = {k: list(v) for k, v in (watch.get("names") or {}).items()}
        self.all_names: List[str] = []
        for names in self.names.values():
            self.all_names.extend(n for n in names if n not in self.all_names)
        self.anchors: Set[str] = set(watch.get("anchors") or ())
        self.module_base = module_base
        self.records: List[Dict[str, Any]] = []
        self._active: Optional[_Invocation] = None
        self._previous: Any = None
        self._previous_threading: Any = None
        self._read_cache: Dict[Any, bool] = {}
        self._anchor_lines: Dict[int, bool] = {}
        self.top_hooks = V1_HOOKS if side == "v1" else {**V2_HOOKS, **RUN_ONCE_EPOCH_END}
        self._closed: Set[int] = set()  # run-once records a module hook's invocation was folded into

    # -- installation -------------------------------------------------------------------------

    def __enter__(self) -> "EpochEndTracer":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        self._previous = sys.gettrace()
        self._previous_threading = getattr(threading, "gettrace", lambda: None)()
        threading.settrace(self._global)
        sys.settrace(self._global)

    def stop(self) -> None:
        sys.settrace(self._previous)
        threading.settrace(self._previous_threading)  # type: ignore[arg-type]
        if self._active is not None:
            self._finish(self._active)
        self._active = None

    # -- tracing ------------------------------------------------------------------------------

    def _is_module(self, obj: Any) -> bool:
        if self.module_base is not None:
            return isinstance(obj, self.module_base)
        return hasattr(obj, "training_step") and hasattr(obj, "trainer")

    def _stage(self, obj: Any, hook: str) -> Tuple[Optional[str], bool]:
        trainer = getattr(obj, "_trainer", None)
        stage = getattr(getattr(trainer, "state", None), "stage", None)
        value = getattr(stage, "value", stage)
        if value in _STAGE_BY_RUNNING_STAGE:
            return _STAGE_BY_RUNNING_STAGE[value]
        return (self.top_hooks.get(hook) or V1_HOOKS.get(hook) or V2_HOOKS.get(hook), False)

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        if code.co_filename != self.filename:
            return None
        active = self._active
        if active is None:
            return self._maybe_start(frame, code.co_name)
        if active.record["captured"]:
            return None
        # A nested frame of the case file inside an unfinished invocation.
        if self.side == "v1":
            if code.co_name in V1_HOOKS:
                self._take_v1(frame, active.record)
            return None
        self._look_v2(frame, event, active)
        return None if active.record["captured"] else self._local

    def _maybe_start(self, frame: Any, name: str) -> Any:
        if name not in self.top_hooks:
            return None
        obj = frame.f_locals.get("self")
        if not self._is_module(obj):
            return None
        stage, sanity = self._stage(obj, name)
        if self.side == "v2" and stage not in self.names:
            return None
        trainer = getattr(obj, "_trainer", None)
        record = {
            "stage": stage,
            "sanity": sanity,
            "epoch": getattr(trainer, "current_epoch", None),
            "hook": name,
            "captured": False,
            "param": None,
            "capture": None,
            "value": None,
        }
        self.records.append(record)
        active = self._active = _Invocation(frame, record)
        if self.side == "v1":
            self._take_v1(frame, record)
        else:
            self._look_v2(frame, "call", active)
        return self._local

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        active = self._active
        if active is None:
            return None
        if self.side == "v2" and not active.record["captured"]:
            self._look_v2(frame, event, active)
        if event == "return" and frame is active.frame:
            self._finish(active)
            self._active = None
            return None
        return self._local

    def _finish(self, active: _Invocation) -> None:
        record = active.record
        if not record["captured"] and active.candidate is not None:
            name, value = active.candidate
            record.update(captured=True, param=name, capture="first-binding", value=value)
        if self.side == "v2":
            self._fold(record)

    def _fold(self, record: Dict[str, Any]) -> None:
        """Drop ``record`` (the last one) when it repeats the run-once invocation just before it:
        same stage, sanity check and epoch, and the original body never reached (no anchor hit:
        the run-once method returned at once, maybe after binding the buffer, now None). After
        a module hook's record is folded, the next run-once call starts anew."""
        if record["capture"] == "anchor" or len(self.records) < 2 or self.records[-1] is not record:
            return
        prev = self.records[-2]
        if (prev["hook"] not in RUN_ONCE_EPOCH_END or id(prev) in self._closed
                or any(prev[k] != record[k] for k in ("stage", "sanity", "epoch"))):
            return
        self.records.pop()
        if record["hook"] not in RUN_ONCE_EPOCH_END:
            self._closed.add(id(prev))

    def _take_v1(self, frame: Any, record: Dict[str, Any]) -> None:
        code = frame.f_code
        if code.co_argcount < 2:
            return
        pname = code.co_varnames[1]
        key = (code, pname)
        used = self._read_cache.get(key)
        if used is None:
            used = self._read_cache[key] = param_is_read(code, pname)
        if used:
            local_vars = frame.f_locals
            if pname in local_vars:
                self._capture(record, pname, local_vars[pname], "argument")

    def _is_anchor(self, lineno: int) -> bool:
        hit = self._anchor_lines.get(lineno)
        if hit is None:
            hit = self._anchor_lines[lineno] = linecache.getline(self.filename, lineno).strip() in self.anchors
        return hit

    def _look_v2(self, frame: Any, event: str, active: _Invocation) -> None:
        record = active.record
        preferred = self.names.get(record["stage"], ())
        local_vars = frame.f_locals
        if event == "line" and self.anchors and self._is_anchor(frame.f_lineno):
            for pname in list(preferred) + self.all_names:
                if pname in local_vars:
                    self._capture(record, pname, local_vars[pname], "anchor")
                    return
        if active.candidate is None:
            for pname in preferred:
                if pname in local_vars:
                    active.candidate = (pname, _safe_encode(local_vars[pname]))
                    return

    @staticmethod
    def _capture(record: Dict[str, Any], pname: str, value: Any, how: str) -> None:
        record.update(captured=True, param=pname, capture=how, value=_safe_encode(value))


def _safe_encode(value: Any) -> Any:
    try:
        return encode(value)
    except Exception as exc:  # pragma: no cover - encoding must never break the run
        return {"repr": f"<unencodable: {exc!r}>"}
