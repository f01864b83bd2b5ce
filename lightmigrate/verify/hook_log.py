"""Which of the model's and the user callbacks' hooks ran, in what order and how often, and
which never ran.

A profile function (``sys.setprofile``: Python calls only, cheap) watches frames of functions
defined in the case file. A *hook call* is a call of a method of the model whose name is a
Lightning hook (1.x or 2.x) and whose caller is not the case file itself: Lightning (or the v1
shim) called it, so ``super()`` chains and helpers count once. Every case-file function call is
also counted by qualified name, which tells the *dead hooks*: hook-like methods of the model's
classes (removed hooks, misspellings, real hooks 2.x cannot reach) that never ran.

With ``callback_base`` (the Lightning ``Callback`` class), calls of the hooks of user callbacks
(instances of it whose methods are defined in the watched files) are recorded the same way, as
``"<Class>.<hook>"`` with their place among the model's hook calls, and the ``outputs`` that
a callback's ``on_*_batch_end`` body saw when it reads them (see :meth:`HookLog.record`).

Import-light: runs inside the 1.9.5 interpreter too.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Iterable, List, Optional, Union

from lightmigrate.catalog.hooks import (
    AFTER_MONITORS_CALLBACK,
    CALLBACK_HOOKS_2X,
    KNOWN_HOOK_NAMES,
    IGNORED_SINCE_1_6,
    REMOVED_CALLBACK_HOOKS,
    REMOVED_MODULE_HOOKS,
    V1_TO_V2_NAME,
    hook_like,
    likely_misspelling,
)
from lightmigrate.verify.recorder import encode, param_is_read

CALLBACK_HOOK_NAMES = frozenset(CALLBACK_HOOKS_2X) | frozenset(REMOVED_CALLBACK_HOOKS)
# callback hooks handed the step's ``outputs`` (after trainer, pl_module), in 1.9 and 2.x alike
OUTPUT_HOOKS = frozenset({"on_train_batch_end", "on_validation_batch_end", "on_test_batch_end",
                          "on_predict_batch_end"})
# what is kept of the outputs: the first calls of each callback hook, a sample of each tensor
OUTPUT_CALLS_KEPT = 32
OUTPUT_VALUES_KEPT = 64


def _written_by_lm001(callback: Any) -> bool:
    """The Checkpoint callback LM001 writes to run a 1.x ``on_train_epoch_end`` body after
    ModelCheckpoint/EarlyStopping (ledger B2.6): part of the module's code, not a user callback
    (1.9 had none)."""
    name = type(callback).__name__
    return name.startswith("_") and name.endswith(AFTER_MONITORS_CALLBACK)


class HookLog:
    """``case_file``: the file (or files: a project's model classes may span several) whose
    functions are watched."""

    def __init__(self, case_file: Union[str, Iterable[str]], model: Any, callback_base: Optional[type] = None) -> None:
        files = [case_file] if isinstance(case_file, str) else list(case_file)
        self.file = os.path.realpath(files[0]) if files else ""
        # code objects carry the path as imported; module files are compared resolved
        self.files = frozenset([*files, *map(os.path.realpath, files)])
        self.model = model
        self.sequence: List[str] = []
        self.called: Dict[str, int] = {}
        self._previous: Any = None
        self._aliases: Optional[Dict[Any, List[str]]] = None
        self.callback_base = callback_base
        self.callback_calls: List[List[Any]] = []  # [model hook calls before it, "<Class>.<hook>"]
        self.callback_outputs: Dict[str, List[Any]] = {}
        self._callback_keys: Dict[int, str] = {}
        self._reads_outputs: Dict[Any, bool] = {}
        self._taking: Dict[Any, str] = {}  # frame of a callback's on_*_batch_end -> its entry

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "return":
            if self._taking:
                entry = self._taking.pop(frame, None)
                if entry is not None:
                    self._take_outputs(frame, entry)
            return
        if event != "call":
            return
        code = frame.f_code
        if code.co_filename not in self.files:
            return
        qual = getattr(code, "co_qualname", code.co_name)
        self.called[qual] = self.called.get(qual, 0) + 1
        name = code.co_name
        module_hook = name in KNOWN_HOOK_NAMES
        callback_hook = self.callback_base is not None and name in CALLBACK_HOOK_NAMES
        if not (module_hook or callback_hook) or not code.co_varnames:
            return
        caller = frame.f_back
        by_user = caller is not None and caller.f_code.co_filename in self.files
        obj = frame.f_locals.get(code.co_varnames[0])
        if obj is self.model:
            if module_hook and not by_user:  # (not the user's own code: super(), delegation)
                self.sequence.append(self._hook_name(code))
        elif callback_hook and isinstance(obj, self.callback_base) and not _written_by_lm001(obj):  # type: ignore[arg-type]
            # A callback's own super() chain or self-call does not count; the module's code
            # calling it does (a migrated loop calling the callbacks' hooks as 1.9 did)
            if not (by_user and caller.f_code.co_varnames
                    and caller.f_locals.get(caller.f_code.co_varnames[0]) is obj):
                self._callback_call(obj, frame, code)

    def _callback_call(self, callback: Any, frame: Any, code: Any) -> None:
        key = self._callback_keys.get(id(callback))
        if key is None:  # the class name; a second instance of the class is "<Class>#2"
            base = type(callback).__qualname__
            taken = set(self._callback_keys.values())
            key, n = base, 1
            while key in taken:
                n += 1
                key = f"{base}#{n}"
            self._callback_keys[id(callback)] = key
        entry = f"{key}.{code.co_name}"
        self.callback_calls.append([len(self.sequence), entry])
        if code.co_name not in OUTPUT_HOOKS or code.co_argcount < 4:
            return
        reads = self._reads_outputs.get(code)
        if reads is None:
            reads = self._reads_outputs[code] = param_is_read(code, code.co_varnames[3])
        if reads and len(self.callback_outputs.setdefault(entry, [])) < OUTPUT_CALLS_KEPT:
            self._taking[frame] = entry

    def _take_outputs(self, frame: Any, entry: str) -> None:
        """What the body saw as ``outputs``: the local when the hook returns, so a line the
        migration put in front of the body (``outputs = <1.9's value>``) counts."""
        try:
            value = encode(frame.f_locals.get(frame.f_code.co_varnames[3]), max_values=OUTPUT_VALUES_KEPT)
        except Exception as exc:  # pragma: no cover - recording must never break the run
            value = {"repr": f"<unencodable: {exc!r}>"}
        self.callback_outputs[entry].append(value)

    # A function the class body binds under several hook names (``test_step = validation_step``)
    # has one code name; the hook Lightning called is the one of the running stage.
    _STAGE_PREFIXES = {"train": ("train", "on_train"), "sanity_check": ("validation", "on_validation"),
                       "validate": ("validation", "on_validation"), "test": ("test", "on_test"),
                       "predict": ("predict", "on_predict")}

    def _hook_name(self, code: Any) -> str:
        if self._aliases is None:
            self._aliases = {}
            for cls in type(self.model).__mro__:
                for name, value in vars(cls).items():
                    c = getattr(getattr(value, "__func__", value), "__code__", None)
                    if c is not None and name in KNOWN_HOOK_NAMES:
                        names = self._aliases.setdefault(c, [])
                        if name not in names:
                            names.append(name)
        names = self._aliases.get(code, ())
        if len(names) < 2:
            return code.co_name
        stage = getattr(getattr(getattr(self.model, "_trainer", None), "state", None), "stage", None)
        prefixes = self._STAGE_PREFIXES.get(getattr(stage, "value", stage), ())
        chosen = [n for n in names if n.startswith(prefixes)] if prefixes else []
        return chosen[0] if len(chosen) == 1 else code.co_name

    def __enter__(self) -> "HookLog":
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.setprofile(self._previous)

    # -- results -------------------------------------------------------------------------------

    def defined_hooks(self) -> Dict[str, str]:
        """Hook-like methods of the model's classes defined in the case file: name -> qualname
        of the definition Python would call."""
        out: Dict[str, str] = {}
        for cls in type(self.model).__mro__:
            module = sys.modules.get(cls.__module__)
            if module is None or os.path.realpath(getattr(module, "__file__", "") or "") not in self.files:
                continue
            for name, value in vars(cls).items():
                func = getattr(value, "__func__", value)
                while hasattr(func, "__wrapped__"):  # decorated: the user's function is inside
                    func = func.__wrapped__
                code = getattr(func, "__code__", None)
                if name in out or code is None or not hook_like(name):
                    continue
                out[name] = getattr(code, "co_qualname", name)
        return out

    def dead_hooks(self) -> List[Dict[str, str]]:
        out = []
        for name, qual in sorted(self.defined_hooks().items()):
            if self.called.get(qual, 0):
                continue
            out.append({"name": name, "qualname": qual, "reason": dead_reason(name)})
        return out

    def record(self) -> Dict[str, Any]:
        counts: Dict[str, int] = {}
        for name in self.sequence:
            counts[name] = counts.get(name, 0) + 1
        return {
            "sequence": self.sequence,
            "counts": counts,
            "defined": sorted(self.defined_hooks()),
            "dead": self.dead_hooks(),
            # the user callbacks' hook calls: ``calls`` as ``[model hook calls before it,
            # "<Class>.<hook>"]`` in call order; ``outputs``: "<Class>.<hook>" -> what the first
            # OUTPUT_CALLS_KEPT calls of an ``on_*_batch_end`` that reads its ``outputs`` saw
            "callbacks": {"calls": self.callback_calls, "outputs": self.callback_outputs},
        }


def certainly_dead(name: str) -> bool:
    """Removed and misspelt hooks can never run on 2.x, whatever the run exercised."""
    return name in REMOVED_MODULE_HOOKS or likely_misspelling(name) is not None


def dead_reason(name: str) -> str:
    if name in IGNORED_SINCE_1_6:
        return f"not called since Lightning 1.6 (1.9 ignored it too); to run it: {REMOVED_MODULE_HOOKS[name]}"
    if name in REMOVED_MODULE_HOOKS:
        return f"removed in Lightning 2.0; instead: {REMOVED_MODULE_HOOKS[name]}"
    meant = likely_misspelling(name)
    if meant:
        return f"not a Lightning hook; did you mean {meant}?"
    return "Lightning never called it in this run"


def normalized_sequence(hooks: Dict[str, Any], keep: Optional[List[str]] = None) -> List[str]:
    """The hook sequence in 2.x names (1.x epoch-end hooks count as the 2.x hook that now does
    their work; step-end hooks are dropped: their work is part of the step), restricted to
    ``keep`` (names, 1.x or 2.x) when given, with consecutive repeats collapsed (1.9 called
    ``training_epoch_end`` and then ``on_train_epoch_end``; a migration merges them)."""
    allowed = None if keep is None else {V1_TO_V2_NAME.get(n, n) for n in keep} - {None}
    out: List[str] = []
    for name in hooks.get("sequence", []):
        name = V1_TO_V2_NAME.get(name, name)
        if name is None or (allowed is not None and name not in allowed):
            continue
        if not out or out[-1] != name:
            out.append(name)
    return out


def callback_timeline(hooks: Dict[str, Any], keep: Optional[List[str]] = None, with_module: bool = True) -> List[str]:
    """The user callbacks' hook calls (``"<Class>.<hook>"``) interleaved with the model's, the
    model's normalised as in :func:`normalized_sequence` (2.x names, restricted to ``keep``,
    a repeat of the model's hook collapsed also across callbacks' calls: 1.9 called
    ``training_step`` once per optimizer, a migrated loop once per batch). A 1.x epoch-end hook (``training_epoch_end``...) counts as
    the 2.x ``on_*_epoch_end`` that now does its work, at the place where 2.x calls that: 1.9
    called it before the callbacks' ``on_*_epoch_end``, 2.x calls the module's hook after them
    (whether a callback still sees the body's results is compared on the values). Without
    ``with_module``, the callbacks' calls alone."""
    calls = (hooks.get("callbacks") or {}).get("calls") or []
    sequence = (hooks.get("sequence") or []) if with_module else []
    allowed = None if keep is None else {V1_TO_V2_NAME.get(n, n) for n in keep} - {None}
    out: List[str] = []
    pending: List[Optional[str]] = [None]  # a 1.x epoch-end hook waiting for the callbacks' hooks
    last: List[Optional[str]] = [None]  # the model's hook last kept

    def module(name: str) -> None:
        if last[0] != name:
            out.append(name)
            last[0] = name

    def flush() -> None:
        if pending[0] is not None:
            module(pending[0])
            pending[0] = None

    k = 0
    for i in range(len(sequence) + 1):
        while k < len(calls) and (i == len(sequence) or calls[k][0] <= i):
            entry = calls[k][1]
            if pending[0] is not None and entry.rsplit(".", 1)[-1] != pending[0]:
                flush()
            out.append(entry)
            k += 1
        if i == len(sequence):
            break
        name = sequence[i]
        new = V1_TO_V2_NAME.get(name, name)
        if new is None or (allowed is not None and new not in allowed):
            continue
        flush()
        if new != name and new.endswith("_epoch_end"):
            pending[0] = new
        else:
            module(new)
    flush()
    return out
