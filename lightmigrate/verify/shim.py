"""The v1 shim: run an UN-migrated Lightning 1.x LightningModule on Lightning 2.x with the
runtime semantics of pytorch-lightning 1.9.5.

``lightmigrate verify`` compares "original code under the shim" with "migrated code on plain
2.x" in one interpreter. The shim is checked against real 1.9.5 on every corpus case
(``tests/verify/test_shim_oracle.py``).

API
---

``apply_v1_shim(model, trainer_kwargs=None) -> (model, trainer_kwargs)``
    Switches ``model`` (an instance of a 1.x-style subclass of ``pytorch_lightning`` or
    ``lightning.pytorch`` 2.x ``LightningModule``) to a generated subclass of its class and
    returns new Trainer kwargs to build the 2.x Trainer with. The model object is the same one
    (``model.__class__`` is replaced); ``isinstance`` and ``state_dict`` keys are unchanged, no
    parameter, buffer or submodule is added. ``accumulate_grad_batches``,
    ``gradient_clip_val`` and ``gradient_clip_algorithm`` leave the kwargs (the shim re-applies
    them after 2.x's configuration checks) and a shim callback is put first in ``callbacks``.
    Other 1.9 Trainer arguments get their 1.9 meaning (``shim_trainer.v1_trainer_kwargs``;
    ``track_grad_norm`` is emulated through the module's ``log_grad_norm``). The model gets 1.9's
    ``precision`` attribute and 1.9's ``model.train()`` at the start of training and after each
    evaluation loop.
    Applying it twice is a no-op. Use the returned kwargs for every Trainer that runs the model.
    User callbacks in ``callbacks`` (and those returned by ``configure_callbacks``) whose hooks
    have 1.9 signatures are adapted the same way (see :func:`adapt_v1_callback`).

``adapt_v1_callback(callback) -> callback``
    Switches a user ``Callback`` to a generated subclass that receives 2.x's hook calls and
    calls the user's 1.x hooks with 1.9's arguments: ``opt_idx`` for
    ``on_before_optimizer_step``, ``dataloader_idx`` always for the evaluation/predict batch
    hooks (2.x drops it with one dataloader), the predictions for
    ``on_predict_epoch_end(trainer, pl_module, outputs)``, and 1.9's ``outputs`` for
    ``on_train_batch_end`` of a shimmed module. A callback with nothing to adapt is unchanged.

``hook_log(model) -> dict``
    ``{hook name: number of calls}`` for the user's 1.x hooks that the shim invoked (epoch-end
    and step-end hooks, old-signature hooks, ``tbptt_split_batch``...), so a caller can tell
    which 1.x hooks were live under 1.9 semantics.

``legacy_hooks(model_or_class) -> list``
    The 1.x-only hooks (removed or re-signed in 2.x) that the user's classes define.

How it works
------------

The generated class has the MRO ``Shim -> user classes -> Adapter -> LightningModule``:

* ``Adapter`` gives the 1.9 default implementations with 1.9 signatures
  (``optimizer_step(epoch, batch_idx, optimizer, optimizer_idx, closure, ...)``,
  ``training_epoch_end(outputs)``...), so ``super()`` calls in user code keep working.
* ``Shim`` receives the 2.x calls and translates them to 1.9 calls on the user's methods,
  wraps the steps (``*_step_end``), buffers outputs for the epoch-end hooks, and hides the
  1.x epoch-end hooks from 2.x's configuration validator only (they stay callable).
* The shim callback (first callback) calls ``training_epoch_end`` / ``validation_epoch_end`` /
  ``test_epoch_end`` at 1.9's point: before every other callback's ``on_*_epoch_end``.
* Automatic optimization with several optimizers, ``optimizer_idx`` in ``training_step``, or
  TBPTT is EMULATED: the module runs in 2.x manual optimization and its ``training_step``
  replays 1.9's optimizer loop (toggling, closure with step/step_end/zero_grad/backward,
  accumulation, ``optimizer_step`` hook, clipping, frequencies, TBPTT splits and hiddens); the
  Trainer's LR-scheduler and logging decisions are replaced on the trainer instance by the 1.9
  ones. Single-optimizer automatic models keep 2.x automatic optimization (identical to 1.9,
  spec B.10) with their old hook signatures adapted.

Must not import libcst, click or rich. Lightning and torch are imported lazily.
"""

from __future__ import annotations

import collections
import importlib
import inspect
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from lightmigrate.verify import shim_semantics as v1
from lightmigrate.verify.shim_trainer import (
    TRACK_GRAD_NORM_ATTR,
    TRAIN_MODE_ATTR,
    combine_v1,
    grad_norm_v1,
    precision_v1,
    v1_trainer_kwargs,
)

SHIM_ATTR = "_v1shim"

# Hooks whose 1.x form does not exist (or has another signature) in 2.x.
LEGACY_HOOKS = (
    "training_step_end",
    "validation_step_end",
    "test_step_end",
    "training_epoch_end",
    "validation_epoch_end",
    "test_epoch_end",
    "tbptt_split_batch",
)
RESIGNED_HOOKS = (
    "optimizer_step",
    "optimizer_zero_grad",
    "lr_scheduler_step",
    "on_before_optimizer_step",
    "backward",
    "configure_gradient_clipping",
    "toggle_optimizer",
    "untoggle_optimizer",
    "on_predict_epoch_end",
)
EVAL_BATCH_HOOKS = tuple(
    f"on_{stage}_batch_{when}" for stage in ("validation", "test", "predict") for when in ("start", "end")
)
EPOCH_END_HOOKS = ("training_epoch_end", "validation_epoch_end", "test_epoch_end")

# 1.9 logging options of the hooks 2.x no longer knows (v1 fx_validator.py).
_V1_LOG_OPTIONS = {
    "training_step_end": ((False, True), (False, True), True, False),
    "validation_step_end": ((False, True), (False, True), False, True),
    "test_step_end": ((False, True), (False, True), False, True),
    "training_epoch_end": ((False,), (True,), False, True),
    "validation_epoch_end": ((False,), (True,), False, True),
    "test_epoch_end": ((False,), (True,), False, True),
}


# --------------------------------------------------------------------------------------------
# per-model state


class _State:
    """Everything the shim keeps for one model (a plain object: never registered by nn.Module)."""

    def __init__(self, user_cls: type, accumulate: Any, clip_val: Any, clip_algo: Any) -> None:
        self.user_cls = user_cls
        self.accumulate = accumulate
        self.clip_val = clip_val
        self.clip_algo = clip_algo
        self.emulate = False
        self.frequencies: List[int] = []
        self.schedulers: List[v1.SchedulerConfig] = []
        self.train_outputs: List[Any] = []
        self.train_batches = 0
        self.eval_outputs: Dict[int, List[Any]] = {}
        self.batch_output: List[Any] = []
        self.current: Optional[Tuple[Any, int]] = None
        self.hiddens: Any = None
        self.calls: collections.Counter = collections.Counter()
        self.saved_trainer: Dict[int, Dict[str, Any]] = {}
        self.step_depth = 0  # > 0 while a shim step wrapper runs: nested calls are the user's own
        self.track_grad_norm: Any = -1  # 1.9's Trainer(track_grad_norm=...), -1: off
        self.train_mode = "max_size_cycle"  # 1.9's Trainer(multiple_trainloader_mode=...)
        self.iter_fetched = 0  # batches a 1.9 ``dataloader_iter`` step fetched this epoch


def _state(model: Any) -> _State:
    return model.__dict__[SHIM_ATTR]


# --------------------------------------------------------------------------------------------
# class inspection helpers


def _lightning_base(cls: type) -> type:
    """The ``LightningModule`` class (of whichever package) that ``cls`` derives from."""
    for klass in cls.__mro__:
        if klass.__name__ == "LightningModule" and klass.__module__.endswith("core.module"):
            return klass
    raise TypeError(f"{cls.__name__} is not a LightningModule subclass")


def _root_of(base: type) -> str:
    return base.__module__[: -len(".core.module")]


def _user_classes(cls: type) -> List[type]:
    """The classes of ``cls``'s MRO that come before Lightning's own (the user's code)."""
    base = _lightning_base(cls)
    out = []
    for klass in cls.__mro__:
        if klass is base:
            break
        if getattr(klass, "_v1shim_generated", False):
            continue
        out.append(klass)
    return out


def _user_defines(cls: type, name: str) -> bool:
    return any(name in klass.__dict__ for klass in _user_classes(cls))


def _user_function(cls: type, name: str) -> Optional[Callable]:
    for klass in _user_classes(cls):
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _positional_names(fn: Any) -> List[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _has_param(fn: Any, name: str, explicit: bool = True) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    if name in params:
        return True
    return not explicit and any(p.kind == p.VAR_POSITIONAL for p in params.values())


def legacy_hooks(model_or_class: Any) -> List[str]:
    """1.x-only hooks (removed, or re-signed in 2.x) that the user's classes define."""
    cls = model_or_class if isinstance(model_or_class, type) else type(model_or_class)
    found = [n for n in LEGACY_HOOKS + RESIGNED_HOOKS if _user_defines(cls, n)]
    fn = _user_function(cls, "on_predict_epoch_end")
    if fn is not None and len(_positional_names(fn)) < 2 and "on_predict_epoch_end" in found:
        found.remove("on_predict_epoch_end")  # already the 2.x form
    return found


def hook_log(model: Any) -> Dict[str, int]:
    """``{hook: calls}`` for the user's 1.x hooks the shim invoked (empty if not shimmed)."""
    st = model.__dict__.get(SHIM_ATTR)
    return dict(st.calls) if st is not None else {}


# --------------------------------------------------------------------------------------------
# calling user hooks with 1.9 arguments


def _lightning(model: Any, sub: str) -> Any:
    return importlib.import_module(_root_of(_lightning_base(type(model))) + sub)


def _monitors_first(model: Any) -> None:
    """Run the trainer's EarlyStopping / checkpoint callbacks' ``on_train_epoch_end`` now, before
    the module's, and make 2.x's call of them after the module's hook (its "monitoring" pass,
    ``trainer/call.py::_call_callback_hooks``) skip them once."""
    callbacks = _lightning(model, ".callbacks")
    kinds = (callbacks.EarlyStopping, callbacks.Checkpoint)
    trainer = model.trainer
    for callback in trainer.callbacks:
        if isinstance(callback, kinds) and "on_train_epoch_end" not in vars(callback):
            type(callback).on_train_epoch_end(callback, trainer, model)
            callback.on_train_epoch_end = _skip_once(callback)


def _skip_once(callback: Any) -> Callable[..., None]:
    def skipped(*args: Any, **kwargs: Any) -> None:
        del callback.on_train_epoch_end  # (the class's hook again from the next epoch on)

    return skipped


def _call_user(model: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """Call ``name`` as resolved BELOW the shim class (the user's method, else the 1.9 default
    of the adapter) with 1.9 arguments, with ``_current_fx_name`` set like 1.9 did."""
    fn = getattr(super(type(model), model), name)
    st = _state(model)
    if _user_defines(st.user_cls, name):
        st.calls[name] += 1
    previous = model._current_fx_name
    model._current_fx_name = name
    try:
        return fn(*args, **kwargs)
    finally:
        model._current_fx_name = previous


def _note(model: Any, name: str) -> None:
    st = _state(model)
    if _user_defines(st.user_cls, name):
        st.calls[name] += 1


def _raw(optimizer: Any) -> Any:
    return getattr(optimizer, "_optimizer", None) or getattr(optimizer, "optimizer", None) or optimizer


def _optimizer_index(trainer: Any, optimizer: Any) -> int:
    raw = _raw(optimizer)
    for idx, opt in enumerate(trainer.optimizers):
        if opt is raw or opt is optimizer:
            return idx
    return 0


# --------------------------------------------------------------------------------------------
# the adapter: 1.9 default implementations with 1.9 signatures


_ADAPTERS: Dict[type, type] = {}


def _adapter_for(base: type) -> type:
    if base in _ADAPTERS:
        return _ADAPTERS[base]

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_idx=0, optimizer_closure=None, on_tpu=False,
                       using_lbfgs=False):
        optimizer.step(closure=optimizer_closure)

    def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
        optimizer.zero_grad()

    def lr_scheduler_step(self, scheduler, optimizer_idx, metric):
        base.lr_scheduler_step(self, scheduler, metric)

    def on_before_optimizer_step(self, optimizer, optimizer_idx):
        pass

    def backward(self, loss, optimizer, optimizer_idx, *args, **kwargs):
        base.backward(self, loss, *args, **kwargs)

    def configure_gradient_clipping(self, optimizer, optimizer_idx, gradient_clip_val=None,
                                    gradient_clip_algorithm=None):
        self.clip_gradients(optimizer, gradient_clip_val=gradient_clip_val,
                            gradient_clip_algorithm=gradient_clip_algorithm)

    def toggle_optimizer(self, optimizer, optimizer_idx=None):
        base.toggle_optimizer(self, optimizer)

    def untoggle_optimizer(self, optimizer_idx):
        optimizer = self.trainer.optimizers[optimizer_idx] if isinstance(optimizer_idx, int) else optimizer_idx
        base.untoggle_optimizer(self, optimizer)

    def on_predict_epoch_end(self, results=None):
        pass

    def training_step_end(self, step_output):
        return None

    def validation_step_end(self, *args, **kwargs):
        return None

    def test_step_end(self, *args, **kwargs):
        return None

    def training_epoch_end(self, outputs):
        return None

    def validation_epoch_end(self, outputs):
        return None

    def test_epoch_end(self, outputs):
        return None

    def tbptt_split_batch(self, batch, split_size):
        return v1.tbptt_split(batch, split_size)

    def log_grad_norm(self, grad_norm_dict):
        self.log_dict(grad_norm_dict, on_step=True, on_epoch=True, prog_bar=False, logger=True)

    # 1.9 called model.train() after every validation and test loop (2.x restores the modes
    # the submodules had before, and calls no submodule's own train())
    def on_validation_model_train(self):
        self.trainer.model.train()

    def on_test_model_train(self):
        self.trainer.model.train()

    def _get_precision(self):
        return self.__dict__.get("_v1shim_precision", 32)

    def _set_precision(self, value):
        self.__dict__["_v1shim_precision"] = value

    namespace = {
        "__module__": __name__,
        "__doc__": "1.9 default hooks with 1.9 signatures, below the user's classes (v1 shim).",
        "_v1shim_generated": True,
        "truncated_bptt_steps": 0,
        # 1.9's LightningModule.precision: 32 until a Trainer sets it (the shim callback's setup)
        "precision": property(_get_precision, _set_precision),
    }
    for fn in (optimizer_step, optimizer_zero_grad, lr_scheduler_step, on_before_optimizer_step, backward,
               configure_gradient_clipping, toggle_optimizer, untoggle_optimizer, on_predict_epoch_end,
               training_step_end, validation_step_end, test_step_end, training_epoch_end, validation_epoch_end,
               test_epoch_end, tbptt_split_batch, log_grad_norm, on_validation_model_train, on_test_model_train):
        namespace[fn.__name__] = fn
    adapter = type("V1HooksAdapter", (base,), namespace)
    _ADAPTERS[base] = adapter
    return adapter


# --------------------------------------------------------------------------------------------
# attributes that only Lightning sees: user code keeps seeing its own 1.x classes


_FRAMEWORK_PREFIXES = ("pytorch_lightning", "lightning", "lightning_fabric", "torch")


def _called_by_framework(frame: Any) -> bool:
    """True when ``frame`` (the code doing the attribute lookup) is Lightning, torch or the
    shim itself, as opposed to the user's code."""
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    return name == __name__ or name.split(".", 1)[0] in _FRAMEWORK_PREFIXES


def _next_in_mro(obj: Any, owner: type, name: str, after: Any) -> Any:
    mro = owner.__mro__
    start = next((i for i, k in enumerate(mro) if k.__dict__.get(name) is after), 0)
    for klass in mro[start + 1 :]:
        if name in klass.__dict__:
            attr = klass.__dict__[name]
            return attr.__get__(obj, owner) if hasattr(attr, "__get__") else attr
    raise AttributeError(name)


class _ForLightning:
    """A shim method that Lightning (and the shim) gets, while the user's own code gets the
    next definition in the MRO - its 1.x method - exactly as under 1.9."""

    def __init__(self, func: Callable, name: str) -> None:
        self.func = func
        self.name = name

    def __get__(self, obj: Any, owner: Optional[type] = None) -> Any:
        if obj is None:
            return self.func
        if _called_by_framework(sys._getframe(1)):
            return self.func.__get__(obj, owner)
        return _next_in_mro(obj, owner or type(obj), self.name, self)


class _ForLightningProperty:
    """A data descriptor version of :class:`_ForLightning` (``automatic_optimization``)."""

    def __init__(self, shim_get: Callable, name: str) -> None:
        self.shim_get = shim_get
        self.name = name

    def _next(self, owner: type) -> Any:
        mro = owner.__mro__
        start = next((i for i, k in enumerate(mro) if k.__dict__.get(self.name) is self), 0)
        for klass in mro[start + 1 :]:
            if self.name in klass.__dict__:
                return klass.__dict__[self.name]
        return None

    def __get__(self, obj: Any, owner: Optional[type] = None) -> Any:
        if obj is None:
            return self
        if _called_by_framework(sys._getframe(1)):
            return self.shim_get(obj)
        attr = self._next(type(obj))
        return attr.__get__(obj, type(obj)) if hasattr(attr, "__get__") else attr

    def __set__(self, obj: Any, value: Any) -> None:
        attr = self._next(type(obj))
        if hasattr(attr, "__set__"):
            attr.__set__(obj, value)
        else:
            obj.__dict__[self.name] = value


class _HiddenFromValidator:
    """Resolves to the next definition in the MRO, except for 2.x's configuration validator,
    which gets None (it raises NotImplementedError when it sees a callable ``*_epoch_end``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, objtype: Optional[type] = None) -> Any:
        caller = sys._getframe(1)
        if caller.f_globals.get("__name__", "").endswith("trainer.configuration_validator"):
            return None
        return _next_in_mro(obj, objtype if obj is None else type(obj), self.name, self)


# --------------------------------------------------------------------------------------------
# the generated class


_SHIMS: Dict[type, type] = {}


def _signature_stub(fn: Callable, drop: Tuple[str, ...]) -> Callable:
    """A function whose signature is ``fn``'s without the ``drop`` parameters (for 2.x's
    signature inspection through ``__wrapped__``)."""
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.name not in drop]

    def stub(*args: Any, **kwargs: Any) -> None:  # pragma: no cover - never called
        raise NotImplementedError

    stub.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    stub.__name__ = getattr(fn, "__name__", "stub")
    return stub


def _shim_class(user_cls: type) -> type:
    if user_cls in _SHIMS:
        return _SHIMS[user_cls]
    base = _lightning_base(user_cls)
    adapter = _adapter_for(base)
    ns: Dict[str, Any] = {
        # not the user's module: tools that list "methods defined in the case file" (hook_log)
        # must not mistake the shim's wrappers for user hooks
        "__module__": __name__,
        "__qualname__": user_cls.__qualname__,
        "__doc__": user_cls.__doc__,
        "_v1shim_generated": True,
    }
    shim_ref: Dict[str, type] = {}

    def sup(self: Any) -> Any:
        return super(shim_ref["cls"], self)

    # ---- automatic_optimization: False while 1.9's automatic loop is emulated -------------
    def _real_auto(self: Any) -> bool:
        return sup(self).automatic_optimization

    def _get_auto(self: Any) -> bool:
        st = self.__dict__.get(SHIM_ATTR)
        if st is not None and st.emulate:
            return False
        return _real_auto(self)

    ns["automatic_optimization"] = _ForLightningProperty(_get_auto, "automatic_optimization")

    # ---- configure_optimizers: learn frequencies/schedulers, decide emulation -------------
    user_step = _user_function(user_cls, "training_step")

    def configure_optimizers(self: Any) -> Any:
        conf = sup(self).configure_optimizers()
        st = _state(self)
        optimizers, schedulers, frequencies = v1.parse_optimizer_config(conf)
        tbptt = int(getattr(self, "truncated_bptt_steps", 0) or 0)
        wants_idx = user_step is not None and _has_param(user_step, "optimizer_idx")
        st.emulate = bool(_real_auto(self) and (len(optimizers) > 1 or wants_idx or tbptt > 0))
        st.frequencies = list(frequencies) if len(optimizers) > 1 else []
        st.schedulers = schedulers
        if not st.emulate:
            return conf
        if schedulers:
            return list(optimizers), [s.as_2x_dict() for s in schedulers]
        return list(optimizers)

    ns["configure_optimizers"] = configure_optimizers

    # ---- training_step (+ training_step_end, or the emulated 1.9 optimizer loop) ----------
    if user_step is not None:
        # 1.9: training_step(dataloader_iter, batch_idx); 2.x passes the iterator alone
        iter_step = _positional_names(user_step)[1:3] == ["dataloader_iter", "batch_idx"]

        def training_step(self: Any, *args: Any, **kwargs: Any) -> Any:
            st = _state(self)
            if st.step_depth:  # the user's code calling its own step: no 1.9 wrapping
                return sup(self).training_step(*args, **kwargs)
            st.step_depth += 1
            try:
                if iter_step and len(args) + len(kwargs) == 1:
                    args, kwargs = _v1_dataloader_iter(self, *args, *kwargs.values()), {}
                if st.emulate:
                    return _emulated_training_step(self, args, kwargs)
                out = sup(self).training_step(*args, **kwargs)
                if _user_defines(st.user_cls, "training_step_end"):
                    end = _call_user(self, "training_step_end", out)
                    out = out if end is None else end
                return out
            finally:
                st.step_depth -= 1

        training_step.__wrapped__ = _signature_stub(user_step, ("optimizer_idx", "hiddens"))  # type: ignore[attr-defined]
        ns["training_step"] = training_step

    # ---- evaluation steps (+ *_step_end) and their outputs ---------------------------------
    for step_name, end_name in (("validation_step", "validation_step_end"), ("test_step", "test_step_end")):
        user_fn = _user_function(user_cls, step_name)
        if user_fn is None:
            continue
        ns[step_name] = _make_eval_step(step_name, end_name, user_fn, sup)

    # ---- training batch end: 1.9 outputs, epoch buffer ------------------------------------
    def on_train_batch_end(self: Any, outputs: Any, batch: Any, batch_idx: int, *rest: Any) -> Any:
        st = _state(self)
        batch_output, automatic = _train_batch_output(self, outputs)
        st.batch_output = []
        prepared = v1.batch_end_outputs(batch_output, automatic, len(self.trainer.optimizers))
        st.train_batches += 1
        if _user_defines(st.user_cls, "training_epoch_end"):
            st.train_outputs.append((batch_output, automatic))
        return sup(self).on_train_batch_end(prepared, batch, batch_idx, *rest)

    ns["on_train_batch_end"] = on_train_batch_end

    # ---- 1.9 ran every callback's on_train_epoch_end, EarlyStopping's and ModelCheckpoint's
    # included, before the module's; 2.x runs those two after it (ledger B2.6) ----------------
    if _user_defines(user_cls, "on_train_epoch_end"):

        def on_train_epoch_end(self: Any) -> Any:
            _monitors_first(self)
            return sup(self).on_train_epoch_end()

        ns["on_train_epoch_end"] = on_train_epoch_end

    # ---- evaluation batch hooks: 1.9 always passed dataloader_idx -------------------------
    for hook in EVAL_BATCH_HOOKS:
        if _user_defines(user_cls, hook):
            ns[hook] = _make_eval_batch_hook(hook, sup)

    # ---- old signatures: 2.x calls are translated; 1.9-style calls (user code) pass through --
    def optimizer_step(self: Any, epoch: int, batch_idx: int, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        if len(args) >= 2 or {"optimizer_idx", "on_tpu", "using_lbfgs", "using_native_amp"} & set(kwargs):
            return sup(self).optimizer_step(epoch, batch_idx, optimizer, *args, **kwargs)
        closure = args[0] if args else kwargs.pop("optimizer_closure", None)
        idx = _optimizer_index(self.trainer, optimizer)
        return _call_user(self, "optimizer_step", epoch, batch_idx, optimizer, idx, closure,
                          **_optimizer_step_flags(self, optimizer))

    def optimizer_zero_grad(self: Any, epoch: int, batch_idx: int, optimizer: Any, *args: Any) -> Any:
        if args:
            return sup(self).optimizer_zero_grad(epoch, batch_idx, optimizer, *args)
        return _call_user(self, "optimizer_zero_grad", epoch, batch_idx, optimizer,
                          _optimizer_index(self.trainer, optimizer))

    def lr_scheduler_step(self: Any, scheduler: Any, *args: Any, **kwargs: Any) -> Any:
        if len(args) >= 2:
            return sup(self).lr_scheduler_step(scheduler, *args, **kwargs)
        metric = args[0] if args else kwargs.get("metric")
        owner = getattr(scheduler, "optimizer", None)
        idx = _optimizer_index(self.trainer, owner) if owner is not None else 0
        return _call_user(self, "lr_scheduler_step", scheduler, idx, metric)

    def on_before_optimizer_step(self: Any, optimizer: Any, *args: Any) -> Any:
        if args:
            return sup(self).on_before_optimizer_step(optimizer, *args)
        idx = _optimizer_index(self.trainer, optimizer)
        _call_user(self, "on_before_optimizer_step", optimizer, idx)
        if idx == 0:
            _track_grad_norm(self)
        if _state(self).emulate:
            # 2.x does not clip in manual optimization; 1.9 clipped right here.
            trainer = self.trainer
            _call_user(self, "configure_gradient_clipping", optimizer, idx,
                       gradient_clip_val=trainer.gradient_clip_val,
                       gradient_clip_algorithm=trainer.gradient_clip_algorithm)

    def backward(self: Any, loss: Any, *args: Any, **kwargs: Any) -> Any:
        st = _state(self)
        if st.emulate:
            optimizer, idx = st.current if st.current is not None else (None, None)
        elif _real_auto(self) and self.trainer.optimizers:
            optimizer, idx = self.trainer.optimizers[0], 0
        else:
            optimizer, idx = None, None  # 1.9 manual_backward passed no optimizer
        return _call_user(self, "backward", loss, optimizer, idx, *args, **kwargs)

    def configure_gradient_clipping(self: Any, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        if args:
            return sup(self).configure_gradient_clipping(optimizer, *args, **kwargs)
        return _call_user(self, "configure_gradient_clipping", optimizer, _optimizer_index(self.trainer, optimizer),
                          **kwargs)

    for fn in (optimizer_step, optimizer_zero_grad, lr_scheduler_step, on_before_optimizer_step, backward,
               configure_gradient_clipping):
        ns[fn.__name__] = fn

    predict_end = _user_function(user_cls, "on_predict_epoch_end")
    if predict_end is not None and len(_positional_names(predict_end)) >= 2:

        def on_predict_epoch_end(self: Any) -> Any:
            _note(self, "on_predict_epoch_end")
            results = self.trainer.predict_loop._predictions
            return sup(self).on_predict_epoch_end(results)

        ns["on_predict_epoch_end"] = on_predict_epoch_end

    if _user_defines(user_cls, "configure_callbacks"):

        def configure_callbacks(self: Any) -> Any:
            found = sup(self).configure_callbacks()
            if isinstance(found, (list, tuple)):
                for callback in found:
                    adapt_v1_callback(callback)
            elif found is not None:
                adapt_v1_callback(found)
            return found

        ns["configure_callbacks"] = configure_callbacks

    for name in EPOCH_END_HOOKS:
        ns[name] = _HiddenFromValidator(name)

    for name, value in list(ns.items()):
        if inspect.isfunction(value) and not name.startswith("__"):
            ns[name] = _ForLightning(value, name)
    shim = type(user_cls.__name__, (user_cls, adapter), ns)
    shim_ref["cls"] = shim
    _SHIMS[user_cls] = shim
    return shim


class _V1DataLoaderIter:
    """1.9's ``dataloader_iter``: ``next()`` gives the batch alone (2.x: ``(batch, batch_idx,
    dataloader_idx)``) and counts the batches fetched in this epoch."""

    def __init__(self, state: "_State", iterator: Any) -> None:
        self.state = state
        self.iterator = iterator

    def __iter__(self) -> "_V1DataLoaderIter":
        return self

    def __next__(self) -> Any:
        batch, _, _ = next(self.iterator)
        self.state.iter_fetched += 1
        return batch


def _v1_dataloader_iter(model: Any, iterator: Any) -> Tuple[Any, int]:
    """The 1.9 arguments of ``training_step(dataloader_iter, batch_idx)``: the iterator, and as
    ``batch_idx`` the number of batches fetched so far in the epoch (1.9's fetcher count)."""
    st = _state(model)
    return _V1DataLoaderIter(st, iterator), st.iter_fetched


def _track_grad_norm(model: Any) -> None:
    """1.9's ``Trainer(track_grad_norm=p)``: after ``on_before_optimizer_step`` of the first
    optimizer, before clipping, the gradient norms go to ``log_grad_norm`` (logged as if from
    ``on_before_optimizer_step``)."""
    norm_type = _state(model).track_grad_norm
    if norm_type == -1:  # not given to the case's Trainer: perhaps to one the user's code built
        norm_type = getattr(model.trainer, TRACK_GRAD_NORM_ATTR, -1)
    if norm_type == -1:
        return
    loggers = model.trainer.loggers
    separator = loggers[0].group_separator if len(loggers) == 1 else "/"
    norms = grad_norm_v1(model, norm_type, separator)
    if norms:
        previous = model._current_fx_name
        model._current_fx_name = "on_before_optimizer_step"
        try:
            model.log_grad_norm(norms)
        finally:
            model._current_fx_name = previous


def _train_batch_output(model: Any, outputs: Any) -> Tuple[List[Any], bool]:
    """This batch's 1.9 ``batch_output`` (list over TBPTT splits) and whether it came from
    automatic optimization; nothing is consumed (user callbacks see it before the module)."""
    st = _state(model)
    if st.emulate:
        return st.batch_output, True
    if super(type(model), model).automatic_optimization:
        return ([{0: outputs}] if outputs else []), True
    return ([outputs] if outputs else []), False


def _make_eval_step(step_name: str, end_name: str, user_fn: Callable, sup: Callable) -> Callable:
    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        st = _state(self)
        if st.step_depth:  # e.g. test_step calling self.validation_step: the raw 1.x method
            return getattr(sup(self), step_name)(*args, **kwargs)
        st.step_depth += 1
        try:
            out = getattr(sup(self), step_name)(*args, **kwargs)
            if _user_defines(st.user_cls, end_name):
                end = _call_user(self, end_name, out)
                out = out if end is None else end
        finally:
            st.step_depth -= 1
        if out is not None:
            loader = args[2] if len(args) > 2 else kwargs.get("dataloader_idx", 0)
            st.eval_outputs.setdefault(int(loader), []).append(out)
        return out

    step.__name__ = step_name
    step.__wrapped__ = user_fn  # type: ignore[attr-defined]
    return step


def _make_eval_batch_hook(hook: str, sup: Callable) -> Callable:
    if hook.endswith("_end"):

        def end_hook(self: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
            _note(self, hook)
            return getattr(sup(self), hook)(outputs, batch, batch_idx, dataloader_idx)

        end_hook.__name__ = hook
        return end_hook

    def start_hook(self: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
        _note(self, hook)
        return getattr(sup(self), hook)(batch, batch_idx, dataloader_idx)

    start_hook.__name__ = hook
    return start_hook


def _optimizer_step_flags(model: Any, optimizer: Any) -> Dict[str, Any]:
    """The keyword arguments 1.9 gave ``optimizer_step`` after the closure."""
    import torch

    flags: Dict[str, Any] = {"on_tpu": False}
    fn = getattr(super(type(model), model), "optimizer_step")
    if _has_param(fn, "using_native_amp"):
        precision = str(getattr(model.trainer, "precision", ""))
        flags["using_native_amp"] = precision in ("16-mixed", "bf16-mixed")
    flags["using_lbfgs"] = isinstance(_raw(optimizer), torch.optim.LBFGS)
    return flags


# --------------------------------------------------------------------------------------------
# the emulated 1.9 automatic optimization loop (runs inside 2.x's manual training_step)


def _emulated_training_step(model: Any, args: Tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    trainer = model.trainer
    st = _state(model)
    batch = args[0] if args else kwargs.get("batch")
    batch_idx = trainer.fit_loop.epoch_loop.batch_idx
    optimizers = trainer.optimizers
    active = v1.active_optimizers(optimizers, st.frequencies, batch_idx)
    tbptt = int(getattr(model, "truncated_bptt_steps", 0) or 0)
    if tbptt > 0:
        splits = _call_user(model, "tbptt_split_batch", batch, tbptt)
    else:
        splits = [batch]
    st.hiddens = None
    batch_output: List[Any] = []
    for split in splits:
        results: Dict[int, Any] = {}
        for idx, opt in active:
            result = _run_optimization(model, split, batch_idx, idx, opt, tbptt)
            if result.loss is not None:
                results[idx] = result.asdict()
        if results:
            batch_output.append(results)
    st.hiddens = None
    st.batch_output = batch_output
    return None


def _run_optimization(model: Any, batch: Any, batch_idx: int, idx: int, optimizer: Any, tbptt: int) -> Any:
    trainer = model.trainer
    st = _state(model)
    call = _lightning(model, ".trainer.call")
    optimizers = trainer.optimizers
    user_step = getattr(super(type(model), model), "training_step")

    step_args = [batch]
    if _has_param(user_step, "batch_idx", explicit=False) or len(_positional_names(user_step)) >= 2:
        step_args.append(batch_idx)
    if len(optimizers) > 1:
        if not _has_param(user_step, "optimizer_idx", explicit=False):
            raise ValueError(
                f"Your LightningModule defines {len(optimizers)} optimizers but `training_step` is missing the"
                " `optimizer_idx` argument."
            )
        step_args.append(idx)
    accumulate = int(trainer.accumulate_grad_batches)
    hiddens_in = st.hiddens  # 1.9 built the step kwargs once per optimizer

    def step_fn() -> Any:
        call_args = list(step_args)
        if tbptt > 0:
            call_args.append(hiddens_in)
        out = user_step(*call_args)
        if _user_defines(st.user_cls, "training_step_end"):
            end = _call_user(model, "training_step_end", out)
            out = out if end is None else end
        hiddens = v1.extract_hiddens(out, tbptt)
        if tbptt > 0:
            st.hiddens = hiddens
        return v1.StepResult.automatic(out, accumulate)

    def zero_grad_fn() -> None:
        call._call_callback_hooks(trainer, "on_before_zero_grad", optimizer)
        call._call_lightning_module_hook(trainer, "on_before_zero_grad", optimizer)
        _call_user(model, "optimizer_zero_grad", trainer.current_epoch, batch_idx, optimizer, idx)

    def backward_fn(loss: Any) -> None:
        call._call_strategy_hook(trainer, "backward", loss, optimizer)

    closure = v1.V1Closure(step_fn, backward_fn, zero_grad_fn if batch_idx % accumulate == 0 else None)
    previous = st.current
    st.current = (optimizer, idx)
    try:
        if len(optimizers) > 1:
            _call_user(model, "toggle_optimizer", optimizer, idx)
        if trainer.fit_loop.epoch_loop._should_accumulate():
            closure()
        else:
            _optimizer_step(model, optimizer, idx, batch_idx, closure)
        result = closure.consume_result()
        if len(optimizers) > 1:
            _call_user(model, "untoggle_optimizer", idx)
    finally:
        st.current = previous
    return result


def _noop() -> None:
    return None


def _optimizer_step(model: Any, optimizer: Any, idx: int, batch_idx: int, closure: Any) -> None:
    """1.9 ``OptimizerLoop._optimizer_step``: the ``optimizer_step`` hook counts as ONE step
    (``global_step``), however often the user's override really steps."""
    trainer = model.trainer
    lightning_opt = trainer.strategy._lightning_optimizers[idx]
    progress = trainer.fit_loop.epoch_loop.manual_optimization.optim_step_progress
    saved = (lightning_opt._on_before_step, lightning_opt._on_after_step)
    lightning_opt._on_before_step = _noop
    lightning_opt._on_after_step = _noop
    progress.increment_ready()
    try:
        _call_user(model, "optimizer_step", trainer.current_epoch, batch_idx, lightning_opt, idx, closure,
                   **_optimizer_step_flags(model, optimizer))
    finally:
        lightning_opt._on_before_step, lightning_opt._on_after_step = saved
    progress.increment_completed()


def _update_learning_rates_v1(model: Any, epoch_loop: Any, original: Callable) -> Callable:
    """Replacement for the epoch loop's ``_update_learning_rates`` while emulating: 1.9's
    version (schedulers of the active optimizers only, chosen with ``total_batch_idx``)."""

    def update(interval: str, update_plateau_schedulers: bool) -> None:
        st = model.__dict__.get(SHIM_ATTR)
        if st is None or not st.emulate:
            return original(interval=interval, update_plateau_schedulers=update_plateau_schedulers)
        trainer = model.trainer
        if not st.schedulers:
            return None
        active = v1.active_optimizers(trainer.optimizers, st.frequencies, epoch_loop.total_batch_idx)
        indices = [i for i, _ in active]
        for config in st.schedulers:
            if config.opt_idx not in indices:
                continue
            if update_plateau_schedulers ^ config.reduce_on_plateau:
                continue
            current = (epoch_loop.batch_idx if interval == "step" else trainer.current_epoch) + 1
            if config.interval != interval or current % config.frequency != 0:
                continue
            metric = None
            if config.reduce_on_plateau:
                metric = trainer.callback_metrics.get(config.monitor)
                if metric is None:
                    if config.strict:
                        raise v1._misconfiguration(
                            f"ReduceLROnPlateau conditioned on metric {config.monitor} which is not available."
                            f" Available metrics are: {list(trainer.callback_metrics)}. Condition can be set using"
                            " `monitor` key in lr scheduler dict"
                        )
                    continue
            _call_user(model, "lr_scheduler_step", config.scheduler, config.opt_idx, metric)
        return None

    return update


def _train_step_metrics_v1(model: Any, trainer: Any, original: Callable) -> Callable:
    """1.9 automatic optimization sent no step metrics to the loggers on accumulating batches."""

    def update() -> None:
        st = model.__dict__.get(SHIM_ATTR)
        if st is not None and st.emulate and trainer.fit_loop.epoch_loop._should_accumulate():
            return None
        return original()

    return update


# --------------------------------------------------------------------------------------------
# the callback


_CALLBACKS: Dict[str, type] = {}


def _callback_class(root: str) -> type:
    if root in _CALLBACKS:
        return _CALLBACKS[root]
    base = importlib.import_module(root + ".callbacks").Callback
    enums = importlib.import_module(root + ".utilities.enums")

    class V1ShimCallback(base):  # type: ignore[misc, valid-type]
        """Applies the shim's Trainer settings after 2.x's checks and calls the 1.x epoch-end
        hooks before every other callback, where 1.9 called them."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            self._model = model

        @property
        def state_key(self) -> str:
            return "V1ShimCallback"

        def _mine(self, pl_module: Any) -> Optional[_State]:
            return pl_module.__dict__.get(SHIM_ATTR)

        def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
            st = self._mine(pl_module)
            if st is None:
                return
            pl_module.precision = precision_v1(trainer.precision)  # 1.9 set it for every stage
            if stage != "fit":
                return
            mode = getattr(trainer, TRAIN_MODE_ATTR, st.train_mode)
            source = trainer.fit_loop._data_source
            if mode != "max_size_cycle" and "dataloader" not in source.__dict__:
                get_loaders = source.dataloader
                source.dataloader = lambda: combine_v1(get_loaders(), mode, root)
            st.saved_trainer[id(trainer)] = {
                "accumulate_grad_batches": trainer.accumulate_grad_batches,
                "gradient_clip_val": trainer.gradient_clip_val,
                "gradient_clip_algorithm": trainer.gradient_clip_algorithm,
            }
            trainer.accumulate_grad_batches = v1.accumulation_for_epoch(st.accumulate, trainer.current_epoch)
            trainer.gradient_clip_val = st.clip_val
            trainer.gradient_clip_algorithm = (
                enums.GradClipAlgorithmType(str(st.clip_algo).lower()) if st.clip_algo is not None else None
            )
            epoch_loop = trainer.fit_loop.epoch_loop
            epoch_loop._update_learning_rates = _update_learning_rates_v1(
                pl_module, epoch_loop, type(epoch_loop)._update_learning_rates.__get__(epoch_loop)
            )
            connector = trainer._logger_connector
            connector.update_train_step_metrics = _train_step_metrics_v1(
                pl_module, trainer, type(connector).update_train_step_metrics.__get__(connector)
            )

        def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
            st = self._mine(pl_module)
            if st is None or stage != "fit":
                return
            for name, value in st.saved_trainer.pop(id(trainer), {}).items():
                setattr(trainer, name, value)
            trainer.fit_loop.epoch_loop.__dict__.pop("_update_learning_rates", None)
            trainer.fit_loop._data_source.__dict__.pop("dataloader", None)
            trainer._logger_connector.__dict__.pop("update_train_step_metrics", None)

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            if self._mine(pl_module) is not None:
                trainer.model.train()  # 1.9 did this after the sanity check, before training

        def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
            st = self._mine(pl_module)
            if st is None or not st.emulate:
                return
            # 2.x kept only interval/frequency for manual optimization: restore 1.9's view
            for config, mine in zip(trainer.lr_scheduler_configs, st.schedulers):
                config.reduce_on_plateau = mine.reduce_on_plateau
                config.monitor = mine.monitor
                config.strict = mine.strict

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            st = self._mine(pl_module)
            if st is None:
                return
            st.train_outputs = []
            st.train_batches = 0
            st.iter_fetched = 0
            if isinstance(st.accumulate, dict):
                trainer.accumulate_grad_batches = v1.accumulation_for_epoch(st.accumulate, trainer.current_epoch)

        def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            st = self._mine(pl_module)
            if st is None or not _user_defines(st.user_cls, "training_epoch_end") or not st.train_batches:
                return
            buffered, st.train_outputs = st.train_outputs, []
            automatic = all(auto for _, auto in buffered) if buffered else True
            outputs = v1.epoch_end_outputs([b for b, _ in buffered], automatic, len(trainer.optimizers))
            if _call_user(pl_module, "training_epoch_end", outputs) is not None:
                raise v1._misconfiguration(
                    "`training_epoch_end` expects a return of None. HINT: remove the return statement in"
                    " `training_epoch_end`."
                )

        def _eval_start(self, pl_module: Any) -> None:
            st = self._mine(pl_module)
            if st is not None:
                st.eval_outputs = {}

        def _eval_end(self, trainer: Any, pl_module: Any, hook: str, loaders: Any) -> None:
            st = self._mine(pl_module)
            if st is None or not _user_defines(st.user_cls, hook):
                return
            count = len(loaders) if isinstance(loaders, (list, tuple)) else 1
            outputs = [st.eval_outputs.get(i, []) for i in range(count)]
            st.eval_outputs = {}
            _call_user(pl_module, hook, outputs[0] if outputs and count == 1 else outputs)

        def _zero_grad(self, pl_module: Any) -> None:
            # 1.9.5's EvaluationLoop.on_run_start (and PredictionLoop's) zeroed the module's gradients
            # after the model-eval hook, before every on_*_start hook (ledger L6); this callback is first
            if self._mine(pl_module) is not None:
                pl_module.zero_grad()

        def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
            self._zero_grad(pl_module)

        def on_test_start(self, trainer: Any, pl_module: Any) -> None:
            self._zero_grad(pl_module)

        def on_predict_start(self, trainer: Any, pl_module: Any) -> None:
            self._zero_grad(pl_module)

        def on_validation_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            self._eval_start(pl_module)

        def on_test_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            self._eval_start(pl_module)

        def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            self._eval_end(trainer, pl_module, "validation_epoch_end", trainer.val_dataloaders)

        def on_test_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            self._eval_end(trainer, pl_module, "test_epoch_end", trainer.test_dataloaders)

    _CALLBACKS[root] = V1ShimCallback
    return V1ShimCallback


def _register_log_options(root: str) -> None:
    """Let ``self.log`` work inside the 1.x-only hooks, with 1.9's allowed values and defaults."""
    module = importlib.import_module(root + ".trainer.connectors.logger_connector.fx_validator")
    functions = module._FxValidator.functions
    for name, (on_step, on_epoch, default_step, default_epoch) in _V1_LOG_OPTIONS.items():
        functions.setdefault(
            name,
            {
                "allowed_on_step": on_step,
                "allowed_on_epoch": on_epoch,
                "default_on_step": default_step,
                "default_on_epoch": default_epoch,
            },
        )


# --------------------------------------------------------------------------------------------
# user callbacks with 1.9 hook signatures


_CALLBACK_SHIMS: Dict[type, type] = {}
_NO_CALLBACK_SHIM = object()
EVAL_CALLBACK_BATCH_HOOKS = EVAL_BATCH_HOOKS


def _callback_base(cls: type) -> Optional[type]:
    """Lightning's ``Callback`` class (of whichever package) that ``cls`` derives from."""
    for klass in cls.__mro__:
        if klass.__name__ == "Callback" and klass.__module__.endswith("callbacks.callback"):
            return klass
    return None


def _user_callback_function(cls: type, name: str) -> Optional[Callable]:
    """``name`` as defined by the user's classes of ``cls`` (not Lightning's, not the shim's)."""
    for klass in cls.__mro__:
        if getattr(klass, "_v1shim_generated", False):
            continue
        if klass.__module__.split(".", 1)[0] in _FRAMEWORK_PREFIXES:
            return None  # Lightning's own callbacks have the signatures of the running version
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _accepts_positional(fn: Any, count: int) -> bool:
    """True when ``fn`` (unbound, ``self`` first) takes at least ``count`` positional arguments."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return True
    return len([p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]) >= count


def _callback_translators(user_cls: type, csup: Callable) -> Dict[str, Callable]:
    """The 2.x-facing methods of a callback's shim class, for the hooks the user defines."""
    ns: Dict[str, Callable] = {}

    fn = _user_callback_function(user_cls, "on_before_optimizer_step")
    if fn is not None and _accepts_positional(fn, 5):  # self, trainer, pl_module, optimizer, opt_idx

        def on_before_optimizer_step(self: Any, trainer: Any, pl_module: Any, optimizer: Any, *args: Any) -> Any:
            if args:  # already a 1.9-style call
                return csup(self).on_before_optimizer_step(trainer, pl_module, optimizer, *args)
            idx = _optimizer_index(trainer, optimizer)
            return csup(self).on_before_optimizer_step(trainer, pl_module, optimizer, idx)

        ns["on_before_optimizer_step"] = on_before_optimizer_step

    for hook in EVAL_CALLBACK_BATCH_HOOKS:
        fn = _user_callback_function(user_cls, hook)
        # self, trainer, pl_module, [outputs,] batch, batch_idx, dataloader_idx
        if fn is None or not _accepts_positional(fn, 7 if hook.endswith("_end") else 6):
            continue  # no dataloader_idx parameter: nothing to pass
        if hook.endswith("_end"):

            def end_hook(self: Any, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int,
                         dataloader_idx: int = 0, _hook: str = hook) -> Any:
                # 1.9 always passed dataloader_idx (positionally); 2.x omits it for one loader
                return getattr(csup(self), _hook)(trainer, pl_module, outputs, batch, batch_idx, dataloader_idx)

            end_hook.__name__ = hook
            ns[hook] = end_hook
        else:

            def start_hook(self: Any, trainer: Any, pl_module: Any, batch: Any, batch_idx: int,
                           dataloader_idx: int = 0, _hook: str = hook) -> Any:
                return getattr(csup(self), _hook)(trainer, pl_module, batch, batch_idx, dataloader_idx)

            start_hook.__name__ = hook
            ns[hook] = start_hook

    fn = _user_callback_function(user_cls, "on_predict_epoch_end")
    if fn is not None and _accepts_positional(fn, 4):  # self, trainer, pl_module, outputs

        def on_predict_epoch_end(self: Any, trainer: Any, pl_module: Any, *args: Any) -> Any:
            if args:
                return csup(self).on_predict_epoch_end(trainer, pl_module, *args)
            # 1.9 passed the predictions, one list per dataloader (as the module hook got them)
            return csup(self).on_predict_epoch_end(trainer, pl_module, trainer.predict_loop._predictions)

        ns["on_predict_epoch_end"] = on_predict_epoch_end

    fn = _user_callback_function(user_cls, "finetune_function")
    if fn is not None and _accepts_positional(fn, 5):  # self, pl_module, epoch, optimizer, opt_idx

        def finetune_function(self: Any, pl_module: Any, epoch: int, optimizer: Any, *args: Any) -> Any:
            if args:
                return csup(self).finetune_function(pl_module, epoch, optimizer, *args)
            # 1.9's BaseFinetuning passed the optimizer's index too
            idx = _optimizer_index(pl_module.trainer, optimizer)
            return csup(self).finetune_function(pl_module, epoch, optimizer, idx)

        ns["finetune_function"] = finetune_function

    if _user_callback_function(user_cls, "write_on_epoch_end") is not None:

        def write_on_epoch_end(self: Any, trainer: Any, pl_module: Any, predictions: Any, batch_indices: Any) -> Any:
            if len(trainer.num_predict_batches) == 1:
                # 1.9 nested the predictions per dataloader even with one; 2.x flattens them then
                predictions = [predictions]
            return csup(self).write_on_epoch_end(trainer, pl_module, predictions, batch_indices)

        ns["write_on_epoch_end"] = write_on_epoch_end

    if _user_callback_function(user_cls, "on_train_batch_end") is not None:

        def on_train_batch_end(self: Any, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                               batch_idx: int, *rest: Any) -> Any:
            if is_shimmed(pl_module):
                # 1.9 gave callbacks the same ``outputs`` as the module's on_train_batch_end
                batch_output, automatic = _train_batch_output(pl_module, outputs)
                outputs = v1.batch_end_outputs(batch_output, automatic, len(trainer.optimizers))
            return csup(self).on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx, *rest)

        ns["on_train_batch_end"] = on_train_batch_end

    return ns


def _callback_shim_class(user_cls: type) -> Any:
    if user_cls in _CALLBACK_SHIMS:
        return _CALLBACK_SHIMS[user_cls]
    shim_ref: Dict[str, type] = {}

    def csup(self: Any) -> Any:
        return super(shim_ref["cls"], self)

    translators = _callback_translators(user_cls, csup)
    if not translators:
        _CALLBACK_SHIMS[user_cls] = _NO_CALLBACK_SHIM
        return _NO_CALLBACK_SHIM
    ns: Dict[str, Any] = {
        "__module__": __name__,
        "__qualname__": user_cls.__qualname__,  # Callback.state_key is built from the qualname
        "__doc__": user_cls.__doc__,
        "_v1shim_generated": True,
    }
    for name, func in translators.items():
        ns[name] = _ForLightning(func, name)
    shim = type(user_cls.__name__, (user_cls,), ns)
    shim_ref["cls"] = shim
    _CALLBACK_SHIMS[user_cls] = shim
    return shim


def adapt_v1_callback(callback: Any) -> Any:
    """Give a user ``Callback`` its 1.9 hook signatures on 2.x (in place; returns it).

    Only hooks the user's own classes define are translated; Lightning's built-in callbacks and
    callbacks with nothing to adapt are left as they are. Applying it twice is a no-op.
    """
    cls = type(callback)
    if getattr(cls, "_v1shim_generated", False) or _callback_base(cls) is None:
        return callback
    shim = _callback_shim_class(cls)
    if shim is not _NO_CALLBACK_SHIM:
        callback.__class__ = shim
    return callback


# --------------------------------------------------------------------------------------------
# entry point


def apply_v1_shim(model: Any, trainer_kwargs: Optional[Mapping[str, Any]] = None) -> Tuple[Any, Dict[str, Any]]:
    """Give ``model`` 1.9.5 semantics on Lightning 2.x; return ``(model, trainer_kwargs)``.

    See the module docstring. The returned kwargs must be used to build the Trainer.
    """
    kwargs, emulated = v1_trainer_kwargs(trainer_kwargs or {})
    st = model.__dict__.get(SHIM_ATTR)
    if st is None:
        user_cls = type(model)
        base = _lightning_base(user_cls)
        root = _root_of(base)
        _register_log_options(root)
        st = _State(
            user_cls,
            kwargs.pop("accumulate_grad_batches", 1),
            kwargs.pop("gradient_clip_val", None),
            kwargs.pop("gradient_clip_algorithm", None),
        )
        model.__dict__[SHIM_ATTR] = st
        model.__class__ = _shim_class(user_cls)
    else:
        root = _root_of(_lightning_base(type(model)))
        for key in ("accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm"):
            if key in kwargs:
                setattr(st, {"accumulate_grad_batches": "accumulate", "gradient_clip_val": "clip_val",
                             "gradient_clip_algorithm": "clip_algo"}[key], kwargs.pop(key))
    st.track_grad_norm = emulated["track_grad_norm"]
    st.train_mode = emulated["multiple_trainloader_mode"]
    callback_cls = _callback_class(root)
    callbacks = kwargs.get("callbacks")
    if callbacks is None:
        callbacks = []
    elif not isinstance(callbacks, (list, tuple)):
        callbacks = [callbacks]
    callbacks = [adapt_v1_callback(cb) for cb in callbacks if not isinstance(cb, callback_cls)]
    kwargs["callbacks"] = [callback_cls(model)] + list(callbacks)
    return model, kwargs


def is_shimmed(model: Any) -> bool:
    return SHIM_ATTR in getattr(model, "__dict__", {})
