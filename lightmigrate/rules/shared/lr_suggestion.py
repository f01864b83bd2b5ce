"""1.9's learning-rate suggestion, written into the user's file (LM102, T-meth1/T-meth2).

1.9's ``_LRFinder.suggestion(skip_begin=10, skip_end=1)`` took the steepest loss drop per step
(``np.gradient(losses)``); 2.x's takes it per unit of learning rate (``torch.gradient`` with the
rates as spacing), with no option for the old rule. Both skip the same points and drop the
non-finite losses, so they agree on when there is no suggestion (None) and can differ on the
value. A migrated ``lr_finder.suggestion()`` becomes ``lr_suggestion_19(lr_finder)``, a short
function added to the file once; where 1.9 set the model's learning rate from its suggestion
(``trainer.tune()`` with ``auto_lr_find``), ``apply_lr_suggestion_19(model, lr_finder)`` sets it
again after 2.x's ``lr_find(update_attr=True)`` (which checked the attribute and set 2.x's value).

The helpers use torch (a Lightning dependency; numpy is not one of 2.x's): ``torch.gradient`` with
its default spacing and edge order is ``np.gradient``, and float64 keeps numpy's precision.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterable, List, Optional, Tuple

import libcst as cst

from lightmigrate.cst.helpers import insert_top_level, is_docstring, parse_statements
from lightmigrate.analysis.ast_nodes import ast_nodes

SUGGEST = "lr_suggestion_19"
APPLY = "apply_lr_suggestion_19"

SUGGEST_CODE = f'''def {SUGGEST}(lr_finder, skip_begin=10, skip_end=1):
    """The learning rate Lightning 1.9's `lr_finder.suggestion()` gave: where the loss falls
    fastest per step (2.x's suggestion() measures the fall per unit of learning rate)."""
    losses = torch.tensor(lr_finder.results["loss"][skip_begin:-skip_end], dtype=torch.float64)
    losses = losses[torch.isfinite(losses)]
    if len(losses) < 2:
        return None
    return lr_finder.results["lr"][int(torch.gradient(losses)[0].argmin()) + skip_begin]
'''

APPLY_CODE = f'''def {APPLY}(model, lr_finder, attr_name=""):
    """Set the learning rate Lightning 1.9's tuner set (1.9's suggestion; 2.x's lr_find sets its own)."""
    lr = {SUGGEST}(lr_finder) if lr_finder is not None else None
    if lr is not None:
        attr_name = attr_name or ("lr" if lightning_hasattr(model, "lr") else "learning_rate")
        lightning_setattr(model, attr_name, lr)
'''


# --- find: which ``.suggestion()`` receivers are a 1.x LR finder --------------------------------

Binding = Tuple[Tuple[int, int], str]  # (scope place, name)


def single_bindings(tree: ast.Module, names: Iterable[str]) -> Dict[Binding, Optional[ast.Assign]]:
    """For each of ``names``, per function scope ((0, 0): module level): the one ``name = ...``
    statement that binds it there, or None when it is bound otherwise or more than once
    (a parameter, a loop target, a second assignment...)."""
    wanted = set(names)
    out: Dict[Binding, Optional[ast.Assign]] = {}
    seen: Dict[Binding, int] = {}

    def walk(body: List[ast.stmt], scope: Tuple[int, int]) -> None:
        todo: List[ast.AST] = list(body)
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner = (node.lineno, node.col_offset)
                for arg in ast_nodes(node.args):
                    if isinstance(arg, ast.arg) and arg.arg in wanted:
                        seen[(inner, arg.arg)] = seen.get((inner, arg.arg), 0) + 2
                if isinstance(node, ast.Lambda):
                    walk([ast.Expr(node.body)], inner)
                else:
                    walk(node.body, inner)
                continue
            if isinstance(node, ast.Name) and node.id in wanted and not isinstance(node.ctx, ast.Load):
                key = (scope, node.id)
                seen[key] = seen.get(key, 0) + 1
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id in wanted):
                out[(scope, node.targets[0].id)] = node
            todo.extend(ast.iter_child_nodes(node))

    walk(tree.body, (0, 0))
    return {key: (node if seen.get(key) == 1 else None) for key, node in out.items()}


# --- fix: the helpers in the file ------------------------------------------------------------------

def _top_function_names(module: cst.Module) -> set:
    return {st.name.value for st in module.body if isinstance(st, cst.FunctionDef)}


def _binds_torch(module: cst.Module) -> bool:
    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Import) and any(
                        a.asname is None and isinstance(a.name, cst.Name) and a.name.value == "torch"
                        for a in small.names):
                    return True
    return False


def ensure_helpers(module: cst.Module, names: Iterable[str]) -> Tuple[cst.Module, bool]:
    """``module`` with the helper functions ``names`` (SUGGEST, APPLY; the suggestion helper comes
    with the other) after the imports at its head, once, and ``import torch``; and whether
    ``apply`` needs the parsing imports (the caller adds them with its Lightning root)."""
    wanted = set(names)
    if APPLY in wanted:
        wanted.add(SUGGEST)
    have = _top_function_names(module)
    todo = [code for name, code in ((SUGGEST, SUGGEST_CODE), (APPLY, APPLY_CODE)) if name in wanted and name not in have]
    if not todo:
        return module, False
    body = list(module.body)
    at = 1 if body and is_docstring(body[0]) else 0
    while at < len(body) and _is_import_line(body[at]):
        at += 1
    insert_top_level(body, at, [parse_statements(code)[0] for code in todo])
    module = module.with_changes(body=body)
    if not _binds_torch(module):
        module = _insert_import(module, "import torch")
    return module, APPLY in wanted and APPLY not in have


def _is_import_line(st: cst.CSTNode) -> bool:
    return isinstance(st, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in st.body)


def _insert_import(module: cst.Module, line: str) -> cst.Module:
    """``line`` before the first top-level import (after ``from __future__`` ones)."""
    body = list(module.body)
    at = next((i for i, st in enumerate(body) if _is_import_line(st) and not _is_future(st)), len(body))
    new = parse_statements(line)[0]
    if at < len(body):
        # the new line takes the blank lines and comments above the import it goes before
        new, body[at] = new.with_changes(leading_lines=body[at].leading_lines), body[at].with_changes(leading_lines=[])
    body.insert(at, new)
    return module.with_changes(body=body)


def _is_future(st: cst.SimpleStatementLine) -> bool:
    return any(isinstance(s, cst.ImportFrom) and isinstance(s.module, cst.Name) and s.module.value == "__future__"
               for s in st.body)
