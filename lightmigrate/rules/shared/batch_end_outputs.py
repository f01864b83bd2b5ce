"""What ``on_train_batch_end`` got after a training step that returned None (spec B.4, ledger
fact B4.3): 1.9.5 passed ``[]`` (``_prepare_outputs_training_batch_end`` turned any empty batch
output into an empty list), 2.x passes ``{}``. Both are empty, so ``if outputs:``, ``len`` and
iteration mean the same; a hook that compares ``outputs`` with a list or dict display
(``outputs == []``) or asks its type (``isinstance(outputs, list)``, ``type(outputs)``) does
not. Such a hook gets ``GUARD`` as its first statement, which hands it 1.9's ``[]`` again."""

from __future__ import annotations

import ast
from lightmigrate.analysis.ast_nodes import ast_nodes
from typing import Optional

HOOK = "on_train_batch_end"
GUARD = "if isinstance({p}, dict) and not {p}:  # 1.x passed [] after a step that returned None\n    {p} = []"

# where ``outputs`` sits among the hook's parameters (self first)
_POSITION = {"module": 1, "callback": 3}


def _is_param(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


# the classes an ``isinstance`` test can tell a list from a dict by (a test against a tensor
# class only sees neither)
_CONTAINER_TYPES = frozenset({"list", "dict", "tuple", "Mapping", "MutableMapping", "Sequence", "MutableSequence",
                              "Dict", "List", "Tuple", "Collection", "Iterable", "Sized", "Container"})


def _names_container_type(node: ast.AST) -> bool:
    if isinstance(node, ast.Tuple):
        return any(_names_container_type(e) for e in node.elts)
    last = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    return last is None or last in _CONTAINER_TYPES  # (a computed class: maybe)


def _type_sensitive(node: ast.AST, name: str) -> bool:
    if isinstance(node, ast.Compare) and all(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
        sides = [node.left, *node.comparators]
        displays = (ast.List, ast.Dict, ast.Tuple, ast.ListComp, ast.DictComp)
        return any(_is_param(s, name) for s in sides) and any(isinstance(s, displays) for s in sides)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
        return bool(node.args) and _is_param(node.args[0], name)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
        return len(node.args) == 2 and _is_param(node.args[0], name) and _names_container_type(node.args[1])
    return False


def _has_guard(func: ast.FunctionDef, name: str) -> bool:
    """Whether a top-level statement of ``func`` is ``GUARD`` already (other rules may have put
    statements before it: LM001's collecting code, LM003's moved step_end body)."""
    want = ast.dump(ast.parse(GUARD.format(p=name)).body[0])
    return any(isinstance(st, ast.If) and ast.dump(st) == want for st in func.body)


def empty_outputs_param(func: ast.AST, kind: Optional[str]) -> Optional[str]:
    """The name of ``outputs`` when ``func``, a module's or callback's ``on_train_batch_end``
    (``kind`` "module" / "callback"), tells 1.9's ``[]`` from 2.x's ``{}`` and has no guard yet."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or func.name != HOOK:
        return None
    at = _POSITION.get(kind or "")
    params = [*func.args.posonlyargs, *func.args.args]
    if at is None or len(params) <= at:
        return None
    name = params[at].arg
    if not any(_type_sensitive(n, name) for st in func.body for n in ast_nodes(st)):
        return None
    return None if _has_guard(func, name) else name
