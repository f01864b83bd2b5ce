"""Which of the model's hooks ran, in what order and how often, and which never ran.

A profile function (``sys.setprofile``: Python calls only, cheap) watches frames of functions
defined in the case file. A *hook call* is a call of a method of the model whose name is a
Lightning hook (1.x or 2.x) and whose caller is not the case file itself: Lightning (or the v1
shim) called it, so ``super()`` chains and helpers count once. Every case-file function call is
also counted by qualified name, which tells the *dead hooks*: hook-like methods of the model's
classes (removed hooks, misspellings, real hooks 2.x cannot reach) that never ran.

Import-light: runs inside the 1.9.5 interpreter too.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Iterable, List, Optional, Union

from lightmigrate.catalog.hooks import (
    KNOWN_HOOK_NAMES,
    IGNORED_SINCE_1_6,
    REMOVED_MODULE_HOOKS,
    V1_TO_V2_NAME,
    hook_like,
    likely_misspelling,
)


class HookLog:
    """``case_file``: the file (or files: a project's model classes may span several) whose
    functions are watched."""

    def __init__(self, case_file: Union[str, Iterable[str]], model: Any) -> None:
        files = [case_file] if isinstance(case_file, str) else list(case_file)
        self.file = os.path.realpath(files[0]) if files else ""
        # code objects carry the path as imported; module files are compared resolved
        self.files = frozenset([*files, *map(os.path.realpath, files)])
        self.model = model
        self.sequence: List[str] = []
        self.called: Dict[str, int] = {}
        self._previous: Any = None
        self._aliases: Optional[Dict[Any, List[str]]] = None

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code.co_filename not in self.files:
            return
        qual = getattr(code, "co_qualname", code.co_name)
        self.called[qual] = self.called.get(qual, 0) + 1
        if code.co_name not in KNOWN_HOOK_NAMES or not code.co_varnames:
            return
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename in self.files:
            return  # the user's own code calling it (super(), delegation)
        if frame.f_locals.get(code.co_varnames[0]) is self.model:
            self.sequence.append(self._hook_name(code))

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
