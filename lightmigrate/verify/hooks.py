"""Names of the 1.x epoch-end hooks and of the parameter each one receives.

Pure stdlib (``ast``): used by the runner inside the 1.9.5 interpreter and by the oracle in the
parent process, which reads the ORIGINAL case file and tells the v2 runner which local variable
name holds what the 1.x hook received.
"""

from __future__ import annotations

import ast
from typing import Dict, List

STAGES = ("train", "validation", "test", "predict")

# 1.x hook name -> stage. Each receives one argument after ``self``.
V1_HOOKS: Dict[str, str] = {
    "training_epoch_end": "train",
    "validation_epoch_end": "validation",
    "test_epoch_end": "test",
    "on_predict_epoch_end": "predict",
}

# 2.x module hook name -> stage. The migrated epoch-end bodies live in (or are called from) these.
V2_HOOKS: Dict[str, str] = {
    "on_train_epoch_end": "train",
    "on_validation_epoch_end": "validation",
    "on_test_epoch_end": "test",
    "on_predict_epoch_end": "predict",
}


def epoch_end_param_names(source: str) -> Dict[str, List[str]]:
    """Map stage -> the parameter names the 1.x epoch-end hooks in ``source`` use.

    Only functions defined directly in a class body count, and only when they take a parameter
    after ``self``: a 2.x-style ``on_predict_epoch_end(self)`` has nothing to watch. Stages with
    no such hook are absent. Names keep first-seen order and are unique per stage.
    """
    tree = ast.parse(source)
    found: Dict[str, List[str]] = {}
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        defs: Dict[str, ast.AST] = {}
        for item in cls.body:
            if isinstance(item, ast.Assign) and isinstance(item.value, ast.Name):
                # ``test_epoch_end = validation_epoch_end``: the aliased method under another name
                aliased = defs.get(item.value.id)
                for target in item.targets:
                    if aliased is not None and isinstance(target, ast.Name) and target.id in V1_HOOKS:
                        _add_param(found, V1_HOOKS[target.id], aliased)
                continue
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            defs[item.name] = item
            stage = V1_HOOKS.get(item.name)
            if stage is None:
                continue
            _add_param(found, stage, item)
    return found


def _add_param(found: Dict[str, List[str]], stage: str, func: ast.AST) -> None:
    positional = list(func.args.posonlyargs) + list(func.args.args)  # type: ignore[attr-defined]
    if len(positional) < 2:
        return
    name = positional[1].arg
    names = found.setdefault(stage, [])
    if name not in names:
        names.append(name)


def _first_statement(func: ast.AST) -> "ast.stmt | None":
    body = list(getattr(func, "body", []))
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        if isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring compiles to no code: no line event
    return body[0] if body else None


def epoch_end_anchors(source: str) -> List[str]:
    """The first line (stripped) of the first statement of every 1.x epoch-end hook body.

    The v2 runner captures the watched local when execution reaches one of these lines: that
    is where the ORIGINAL body starts, after whatever set-up the migration put before it (for
    example ``outputs = buffer`` followed by ``outputs = outputs[0]`` for one dataloader).
    """
    lines = source.splitlines()
    tree = ast.parse(source)
    anchors: List[str] = []
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in V1_HOOKS:
                first = _first_statement(item)
                if first is None or isinstance(first, ast.Pass):
                    continue
                text = lines[first.lineno - 1][first.col_offset :].strip()
                if text and text not in anchors:
                    anchors.append(text)
    return anchors


def epoch_end_watch(source: str) -> Dict[str, object]:
    """What the v2 runner needs to know about an ORIGINAL case file:
    ``{"names": epoch_end_param_names(source), "anchors": epoch_end_anchors(source)}``."""
    return {"names": epoch_end_param_names(source), "anchors": epoch_end_anchors(source)}


def helper_param_names(source: str) -> List[str]:
    """Second-parameter names of every function whose name ends with ``_epoch_end``.

    The fallback when nobody says which name to watch: a migrated file that kept the old body
    in a helper with the old signature still names the parameter there.
    """
    tree = ast.parse(source)
    names: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.endswith("_epoch_end"):
            positional = list(node.args.posonlyargs) + list(node.args.args)
            if len(positional) >= 2 and positional[1].arg not in names:
                names.append(positional[1].arg)
    return names
