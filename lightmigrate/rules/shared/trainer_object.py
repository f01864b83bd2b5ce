"""Whether ``<x>.trainer.<attr>`` is Lightning's Trainer or a user's configuration object.

Projects keep their Trainer arguments in a configuration (``config.trainer.devices = 1``,
``cfg.trainer.gpus``, ``self.hparams.trainer.max_epochs``, then ``Trainer(**config.trainer)``):
those attributes are the user's, and a removed Trainer attribute of the same name there is not
a removed API. Both sides of a rule ask the same questions: on Python's ``ast`` (``find``) and
on libcst (``fix``).

- a store or delete (``config.trainer.devices = 1``) is never Lightning's: the 1.9 Trainer's
  removed attributes (``gpus``, ``devices``, ``num_processes``, ...) were read-only properties,
  so assigning one raised already on 1.9;
- ``.trainer`` reached from a name or attribute that names a configuration (``config``,
  ``cfg``, ``args``, ``hparams``, ...) is the configuration's section.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

CONFIG_NAMES = frozenset({
    "config", "configs", "cfg", "cfgs", "conf", "args", "hparams", "hparams_", "hp", "hyperparams",
    "hyper_params", "opt", "opts", "options", "params", "settings", "flags", "FLAGS", "yaml_config",
    "trainer_config", "trainer_cfg", "run_config", "exp_config", "experiment_config",
})


def _names_config(name: Optional[str]) -> bool:
    return name is not None and name in CONFIG_NAMES


def ast_config_trainer(trainer: ast.AST) -> bool:
    """Whether ``trainer`` (the ``<x>.trainer`` in ``<x>.trainer.<attr>``) is a configuration's
    ``trainer`` section: ``<x>`` names a configuration."""
    if type(trainer) is not ast.Attribute or trainer.attr != "trainer":  # type: ignore[attr-defined]
        return False
    owner = trainer.value  # type: ignore[attr-defined]
    if type(owner) is ast.Name:
        return _names_config(owner.id)  # type: ignore[attr-defined]
    if type(owner) is ast.Attribute:
        return _names_config(owner.attr)  # type: ignore[attr-defined]
    return False


def ast_not_lightning(node: ast.Attribute) -> bool:
    """Whether ``node`` (``<x>.trainer.<attr>`` or ``trainer.<attr>``) is surely not an attribute
    of Lightning's Trainer: it is stored or deleted, or ``<x>`` names a configuration."""
    return type(getattr(node, "ctx", None)) in (ast.Store, ast.Del) or ast_config_trainer(node.value)


def cst_config_trainer(trainer: cst.BaseExpression) -> bool:
    """``ast_config_trainer`` on libcst."""
    if not isinstance(trainer, cst.Attribute) or trainer.attr.value != "trainer":
        return False
    owner = trainer.value
    if isinstance(owner, cst.Name):
        return _names_config(owner.value)
    if isinstance(owner, cst.Attribute):
        return _names_config(owner.attr.value)
    return False


class StoreTargets:
    """The ids of the libcst expressions a statement stores to or deletes (what ``ast`` gives
    a ``Store`` or ``Del`` context), collected by a visitor's ``visit_*`` hooks calling
    :meth:`add`."""

    def __init__(self) -> None:
        self.ids: set = set()

    def add(self, target: cst.BaseExpression) -> None:
        self.ids.add(id(target))
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.add(element.value)
        elif isinstance(target, cst.StarredElement):
            self.add(target.value)
