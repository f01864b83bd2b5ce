"""``super()`` calls to legacy hooks, and classes whose Lightning base lies outside the run
(the ``ast`` side, for LM305 and LM002).

Lightning 1.x base classes defined the hooks removed in 1.6-1.8 as methods that did nothing
(``Callback.on_epoch_start``, ``LightningModule.on_pretrain_routine_start`` ...), so a
``super().on_epoch_start(trainer, pl_module)`` in a user's hook was a no-op; on 2.x (and 1.9)
the base no longer has the attribute and the call raises ``AttributeError``.

A class whose bases cannot be followed (``class Model(BaseModel)`` with ``BaseModel`` imported
from a package that is not part of the run) has no known Lightning kind; a method of it that
calls ``super()`` with its own name, a Lightning hook name, with the parameters Lightning passes
that hook, is taken as the sign that the class is a LightningModule or Callback.
"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Tuple

from lightmigrate.catalog.hooks import hook_table, removed_table
from lightmigrate.rules.base import RuleContext, SourceFile
from lightmigrate.rules.shared.class_edit import KIND_NAMES, ast_class_defs
from lightmigrate.rules.shared.method_sites import (
    FuncDef, has_star_params, imports_lightning_anywhere, methods, positional,
)

# 1.x hooks that the 1.5 base classes defined as no-ops and that 2.x no longer defines: a
# ``super()`` call to one did nothing in 1.x and raises ``AttributeError`` on 2.x.
LEGACY_NOOP_HOOKS: Dict[str, FrozenSet[str]] = {
    "module": frozenset({
        "on_epoch_start", "on_epoch_end", "on_pretrain_routine_start", "on_pretrain_routine_end",
        "on_post_move_to_device", "on_train_dataloader", "on_val_dataloader", "on_test_dataloader",
        "on_predict_dataloader", "on_hpc_save", "on_hpc_load",
    }),
    "callback": frozenset({
        "on_epoch_start", "on_epoch_end", "on_batch_start", "on_batch_end", "on_pretrain_routine_start",
        "on_pretrain_routine_end", "on_init_start", "on_init_end", "on_keyboard_interrupt",
        "on_configure_sharded_model", "on_before_accelerator_backend_setup",
    }),
}
# What ``super().NAME(...)`` of these names mean when the enclosing method is not renamed.
SUPER_TRIGGERS: Tuple[str, ...] = tuple(sorted(LEGACY_NOOP_HOOKS["module"] | LEGACY_NOOP_HOOKS["callback"]))

# Hook names other libraries use too (Keras-like, catalyst-like trainers, plain ``setup``): a
# ``super()`` call to one of these is a sign only in a file that imports Lightning.
_GENERIC_NAMES = frozenset({
    "on_epoch_start", "on_epoch_end", "on_batch_start", "on_batch_end", "on_train_start", "on_train_end",
    "on_init_start", "on_init_end", "on_keyboard_interrupt", "on_exception", "setup", "teardown",
    "on_save_checkpoint", "on_load_checkpoint", "state_dict", "load_state_dict",
})
_SKIP = {"module": 1, "callback": 3}  # self; self, trainer, pl_module
# Bases that are certainly not Lightning's (a class deriving only from these is not inferred).
_NOT_LIGHTNING = frozenset({
    "object", "Module", "Sequential", "ModuleList", "ModuleDict", "Dataset", "IterableDataset", "ABC", "Enum",
    "Exception", "NamedTuple", "Protocol", "Generic", "dict", "list",
})


def _base_name(node: ast.expr) -> str:
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def super_calls(func: FuncDef, names: Optional[FrozenSet[str]] = None) -> Iterator[ast.Call]:
    """The calls ``super().NAME(...)`` in ``func`` (``NAME`` in ``names`` when given), outside
    nested functions and classes (where ``super()`` means something else)."""
    todo: List[ast.AST] = list(func.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call) and is_super_call(node) and (names is None or node.func.attr in names):  # type: ignore[attr-defined]
            yield node
        todo.extend(ast.iter_child_nodes(node))


def is_super_call(node: ast.Call) -> bool:
    """``super().NAME(...)`` or ``super(Cls, self).NAME(...)``."""
    func = node.func
    return (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super")


def _hook_kind(func: FuncDef, name: str, kinds: FrozenSet[str]) -> Optional[str]:
    """The kind whose hook ``name`` takes exactly the positional parameters of ``func``."""
    if has_star_params(func) or func.decorator_list:
        return None
    count = len(positional(func))
    for kind in sorted(kinds):
        if name in LEGACY_NOOP_HOOKS[kind]:
            passes = 0
        elif name in hook_table(kind) and name not in removed_table(kind):
            passes = hook_table(kind)[name]
        else:
            continue
        if count == _SKIP[kind] + passes:
            return kind
    return None


# Methods only a LightningModule has: a class defining one is a LightningModule.
_MODULE_ONLY = frozenset({"training_step", "configure_optimizers", "training_epoch_end", "validation_epoch_end",
                          "test_epoch_end", "training_step_end", "validation_step_end", "test_step_end"})


def _plain_sign(cls: ast.ClassDef, kinds: FrozenSet[str]) -> Optional[str]:
    """The kind shown by the class's methods alone, without ``super()``: a LightningModule's own
    methods (``training_step``, ``configure_optimizers``, the 1.x epoch- and step-end hooks), or a
    callback hook whose parameters after ``self`` start with ``trainer, pl_module``."""
    for func in methods(cls):
        if "module" in kinds and func.name in _MODULE_ONLY:
            return "module"
        names = [a.arg for a in positional(func)]
        if ("callback" in kinds and names[1:3] == ["trainer", "pl_module"]
                and (func.name in hook_table("callback") or func.name in removed_table("callback"))):
            return "callback"
    return None


def _has_torch_module_base(index, info) -> bool:
    """Whether a base of ``info`` is a class of the run that derives from torch's ``nn.Module``
    (or another base in ``_NOT_LIGHTNING``) without reaching a Lightning class."""
    for base in info.base_names:
        found = index.resolve(base, info.path)
        if found is None or found is info:
            continue
        seen, todo, torch_base = set(), [found], False
        while todo:
            c = todo.pop()
            if (c.name, c.path) in seen:
                continue
            seen.add((c.name, c.path))
            for name in c.base_names:
                if any(name in names for names in KIND_NAMES.values()):
                    return False
                nxt = index.resolve(name, c.path)
                if nxt is None:
                    torch_base = torch_base or (name in _NOT_LIGHTNING and name != "object")
                else:
                    todo.append(nxt)
        if torch_base:
            return True
    return False


# Words one of which a text holds when one of its classes may show its kind (``_plain_sign``,
# or a hook calling super() with its own name: with a Lightning import, a ``pl_module``
# parameter or a Lightning-only hook name in the text).
_SIGN_WORDS = ("pl_module", "def training_step", "def configure_optimizers", "training_epoch_end",
               "validation_epoch_end", "test_epoch_end", "_step_end(")
_SUPER_SIGN_WORDS = ("ightning", "on_pretrain_routine", "accelerator_backend_setup", "configure_sharded_model",
                     "on_hpc_", "_dataloader(", "on_post_move_to_device", "on_fit_", "on_train_", "on_validation_",
                     "on_test_", "on_predict_", "on_sanity_check_", "on_before_", "on_after_", "configure_",
                     "optimizer_", "lr_scheduler_", "_step(", "backward(", "teardown(", "prepare_data(", "_to_device(")


def may_show_kind(text: str) -> bool:
    """False only when no class of ``text`` can show its kind to :func:`inferred_kinds`."""
    if any(word in text for word in _SIGN_WORDS):
        return True
    return "super(" in text and any(word in text for word in _SUPER_SIGN_WORDS)


def inferred_kinds(source: SourceFile, ctx: RuleContext,
                   kinds: FrozenSet[str] = frozenset({"module", "callback"}),
                   known: Iterable[ast.ClassDef] = ()) -> List[Tuple[ast.ClassDef, str]]:
    """The classes of ``source`` whose kind the index cannot know (a base it cannot follow, none
    it knows as Lightning's) and that show they are a LightningModule or Callback: a method
    named after a hook of the kind, taking that hook's parameters, calls ``super()`` with its
    own name (where the name is one other libraries use too, ``on_epoch_start``, the file must
    import Lightning, or the callback hook's third parameter be called ``pl_module``); or
    :func:`_plain_sign`. With the kind so shown."""
    if not may_show_kind(source.text):
        return []  # (without parsing the file)
    index = ctx.project
    out = []
    lightning_file: Optional[bool] = None
    skip = {id(cls) for cls in known}  # classes whose kind is known already
    for cls in ast_class_defs(source.tree):
        if id(cls) in skip or not cls.bases or all(_base_name(b) in _NOT_LIGHTNING for b in cls.bases):
            continue
        found = _plain_sign(cls, kinds)
        plain = found is not None
        for func in ([] if found else methods(cls)):
            kind = _hook_kind(func, func.name, kinds)
            if kind is None or not any(True for _ in super_calls(func, frozenset({func.name}))):
                continue
            if func.name in _GENERIC_NAMES and not (kind == "callback" and positional(func)[2].arg == "pl_module"):
                if lightning_file is None:
                    lightning_file = imports_lightning_anywhere(source)
                if not lightning_file:
                    continue
            found = kind
            break
        if found is None:
            continue
        # (the index last: it may have to parse other files)
        info = index.resolve(cls.name, ctx.path)
        if info is None or info.path != ctx.path:
            continue
        if any(index.is_lightning_module(info, names) is not None for names in KIND_NAMES.values()):
            continue  # its kind is known (True), or it is known not to be Lightning's (False)
        if plain and found == "module" and _has_torch_module_base(index, info):
            continue  # a plain torch module of the run (an adapter forwarding hooks) is a base
        out.append((cls, found))
    return out
