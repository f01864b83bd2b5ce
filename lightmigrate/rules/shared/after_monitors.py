"""A 1.x ``on_train_epoch_end`` that logs, with ModelCheckpoint / EarlyStopping monitoring
(ledger B2.6, spec B.2, C11).

1.9 ran every callback's ``on_train_epoch_end``, ModelCheckpoint's and EarlyStopping's included,
before the module's: without validation those callbacks checked the value the module logged
there at the previous epoch. 2.x (``FitLoop.on_advance_end``) runs the other callbacks, then the
module's hook, then the "monitoring" callbacks (every ``EarlyStopping`` and ``Checkpoint``, the
Checkpoint ones last), then hands the epoch's metrics to the loggers. LM001 moves such a body
into ``AFTER_MONITORS_METHOD``, which a ``Checkpoint`` callback returned by the module's
``configure_callbacks`` calls: it runs after the monitoring callbacks checked, and what it logs
still reaches the loggers at that epoch, as in 1.9.

Only for a class LM001 migrates from a removed epoch-end hook in the same run (evidence that its
``on_train_epoch_end`` is 1.x code): after that run the class has none, so a second run finds
nothing to do; and ``on_train_epoch_end`` then holds what LM001 moved there from
``training_epoch_end``, which 1.9's callbacks saw the same epoch (B2.5) and which must stay.
A class's own logging ``on_train_epoch_end`` left as it is gets LM309's note.
"""

from __future__ import annotations

import ast
from typing import List

from lightmigrate.analysis.ast_nodes import ast_nodes
from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.base import SourceFile
from lightmigrate.catalog.hooks import AFTER_MONITORS_CALLBACK, AFTER_MONITORS_METHOD
from lightmigrate.rules.shared.epoch_end_readers import texts_naming

HOOK = "on_train_epoch_end"
CONFIGURE = "configure_callbacks"
LOGS = ("log", "log_dict")  # the LightningModule methods that log
MONITORS = ("EarlyStopping", "ModelCheckpoint")  # the callbacks that check a monitored metric


def logs(func: ast.AST) -> bool:
    """A call ``<expr>.log(...)`` or ``<expr>.log_dict(...)`` in ``func``."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in LOGS
               for n in ast_nodes(func))


def deferred(methods) -> bool:
    """Whether a class (its method names) had its 1.x ``on_train_epoch_end`` moved already."""
    return AFTER_MONITORS_METHOD in methods


def callback_name(info: ClassInfo) -> str:
    return f"_{info.name}{AFTER_MONITORS_CALLBACK}"


def project_monitors(index: ProjectIndex, text: str) -> bool:
    """Whether the project (or ``text``) names ModelCheckpoint or EarlyStopping and a ``monitor``."""
    if "monitor" in text and any(name in text for name in MONITORS):
        return True
    return any("monitor" in t for name in MONITORS for t in texts_naming(index, name))


def _plain_hook(func: ast.AST) -> bool:
    """``def on_train_epoch_end(self)``: no decorator, no other parameter, not async."""
    if not isinstance(func, ast.FunctionDef) or func.decorator_list:
        return False
    a = func.args
    return (len(a.posonlyargs) + len(a.args) == 1 and a.vararg is None and a.kwarg is None
            and not a.kwonlyargs)


def _binds(node: ast.ClassDef, name: str) -> bool:
    """Whether a statement of the class body other than a ``def`` names ``name`` (an alias
    ``f = on_train_epoch_end`` or ``on_train_epoch_end = f``)."""
    return any(not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
        isinstance(n, ast.Name) and n.id == name for n in ast_nodes(st)) for st in node.body)


def _named(nodes: List[ast.AST], name: str) -> bool:
    """Whether the code (its ``nodes``) uses or binds ``name``."""
    return any((isinstance(n, ast.Name) and n.id == name)
               or (isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name)
               or (isinstance(n, ast.alias) and (n.asname or n.name) == name) for n in nodes)


def _checkpoint_free(nodes: List[ast.AST], root: str) -> bool:
    """Whether ``Checkpoint`` can be imported from ``root.callbacks`` into the file: its code
    names no ``Checkpoint`` yet, or binds it only by that very import."""
    for n in nodes:
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                if (a.asname or a.name.split(".")[0]) != "Checkpoint" and a.name != "*":
                    continue
                if not (isinstance(n, ast.ImportFrom) and n.module == f"{root}.callbacks" and not n.level
                        and a.name == "Checkpoint" and a.asname is None):
                    return False  # another Checkpoint, or a star import that may bind one
        elif isinstance(n, ast.Name) and n.id == "Checkpoint" and isinstance(n.ctx, ast.Store):
            return False
        elif isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "Checkpoint":
            return False
    return True


def can_defer(index: ProjectIndex, info: ClassInfo, node: ast.ClassDef, source: SourceFile, root: str) -> bool:
    """Whether the module class ``node`` (at the top of ``source``) has its own 1.x-style
    ``on_train_epoch_end`` that logs, the project monitors a metric, and the body can move into
    ``AFTER_MONITORS_METHOD`` with a callback from ``configure_callbacks``: no other class of its
    line defines either hook (or the method), nothing calls ``on_train_epoch_end`` by name or
    binds it, and the names the rewrite adds are free. The hook must be the class's own from the
    start of the run, and training_epoch_end, if the class had one, still there for LM001 to move."""
    if node not in source.tree.body or index.in_lightning_hierarchy(info) is not True:
        return False
    if HOOK not in info.methods or ("training_epoch_end" in info.methods and not any(
            isinstance(st, ast.FunctionDef) and st.name == "training_epoch_end" for st in node.body)):
        # (the index holds the run's original text: an on_train_epoch_end an earlier rule wrote, or
        # one it merged training_epoch_end's body into (LM005), holds what 1.9's callbacks saw, B2.5)
        return False
    func = next((st for st in reversed(node.body) if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and st.name == HOOK), None)
    if func is None or not _plain_hook(func) or not logs(func):
        return False
    ancestors, complete = index.ancestors(info)
    if not complete:
        return False
    line = [info, *ancestors, *index.descendants(info)]
    if any(c is not info and {HOOK, CONFIGURE} & c.methods for c in line):
        return False
    if any({CONFIGURE, AFTER_MONITORS_METHOD} & c.methods or HOOK in c.self_calls for c in line):
        return False
    if _binds(node, HOOK) or _named(source.nodes, callback_name(info)):
        return False
    return _checkpoint_free(source.nodes, root) and project_monitors(index, source.text)
