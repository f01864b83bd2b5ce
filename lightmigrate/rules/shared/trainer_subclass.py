"""The project's own Trainer subclasses, as the Trainer rules see them in one file.

``class Trainer(pl.Trainer)`` (any name, any depth, in any file) whose ``__init__`` takes some
1.x arguments itself and forwards the rest with ``**kwargs``: a call of it hands Lightning the
keywords no ``__init__`` on the way takes, and its ``super().__init__(...)`` is a Lightning
Trainer call. :func:`subclass_names` finds the names a file uses for such classes (defined in
the file, imported from a project module by any path, or reached as ``module.Name``), and
:func:`plan_for` what a call of one hands Lightning (:class:`Plan`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional, Tuple

from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.analysis.trainer_feeds import from_module, module_patterns
from lightmigrate.rules.shared.trainer_calls import LightningImports, dotted, statements


@dataclass(frozen=True)
class Plan:
    """What a call of a project Trainer subclass hands Lightning's Trainer: every argument
    but the keywords in ``own`` (and the positional arguments when ``positional_own``), which
    the project's ``__init__`` methods take; nothing when ``reaches`` is False (an ``__init__``
    on the way does not forward ``**kwargs`` to ``super().__init__``)."""

    own: FrozenSet[str]
    positional_own: bool
    reaches: bool

    @property
    def plain(self) -> bool:
        """No ``__init__`` of the project on the way: the call is a Lightning Trainer call."""
        return self.reaches and not self.own and not self.positional_own


def plan_for(info: ClassInfo, project: ProjectIndex) -> Optional[Plan]:
    """The plan of a call of the project class ``info``, or None when ``info`` is not known
    to derive from Lightning's Trainer."""
    chain = project.trainer_chain(info)
    if chain is None:
        return None
    own: set = set()
    positional_own = False
    first = True
    for c in chain:
        params = c.params.get("__init__")
        if params is None:
            continue
        explicit = [p for p in params[1:] if not p.startswith("*")]
        own.update(explicit)
        if first and explicit:
            positional_own = True
        first = False
        kwargs = next((p[2:] for p in params if p.startswith("**")), None)
        if kwargs is None or kwargs not in c.init_spreads:
            return Plan(frozenset(own), positional_own, False)
    return Plan(frozenset(own), positional_own, True)


def _local_classes(tree: ast.Module) -> Dict[str, ast.ClassDef]:
    return {s.name: s for s, _ in statements(tree.body) if isinstance(s, ast.ClassDef)}


class SubclassNames:
    """The names of one file that call a project Trainer subclass: :meth:`plan` gives the
    :class:`Plan` of a callee (``MyTrainer``, ``trainers.MyTrainer``), worked out on demand."""

    def __init__(self, tree: ast.Module, path: str, project: ProjectIndex, imports: LightningImports) -> None:
        self._project = project
        self._path = path
        # every class with a base named Trainer, and their subclasses: the only candidates
        self._candidates = set(project.kind_classes(_TRAINER))
        self._cache: Dict[str, Optional[Plan]] = {}
        self.local: Dict[str, ast.ClassDef] = _local_classes(tree) if self._candidates else {}
        self._names: Dict[str, Tuple[str, Tuple[str, ...]]] = {}  # local -> (its name there, module patterns)
        self._modules: Dict[str, Tuple[str, ...]] = {}
        if not self._candidates:
            return
        for node, _ in statements(tree.body):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if not node.level and mod.split(".")[0] in ("pytorch_lightning", "lightning"):
                    continue
                for alias in node.names:
                    local_name = alias.asname or alias.name
                    if alias.name == "*":
                        continue
                    self._names[local_name] = (alias.name, module_patterns(mod, node.level, path))
                    self._modules[local_name] = module_patterns((mod + "." if mod else "") + alias.name,
                                                                node.level, path)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in ("pytorch_lightning", "lightning"):
                        continue
                    self._modules[alias.asname or alias.name] = module_patterns(alias.name, 0, path)

    def any(self) -> bool:
        return bool(self._candidates)

    def _of(self, name: str, patterns: Optional[Tuple[str, ...]]) -> Optional[Plan]:
        """The plan of the class ``name`` of this file (``patterns`` None) or imported from the
        module at ``patterns``."""
        info = self._project.resolve(name, self._path if patterns is None else "")
        if info is None or info not in self._candidates:
            return None
        if patterns is None and info.path != self._path:
            return None
        if patterns is not None and not from_module(info.path, patterns):
            return None
        return plan_for(info, self._project)

    def plan(self, func: ast.expr) -> Optional[Plan]:
        """The plan of a call of ``func``, when it is a project Trainer subclass."""
        if not self._candidates:
            return None
        key = dotted(func)
        if key is None:
            return None
        if key in self._cache:
            return self._cache[key]
        plan = None
        if isinstance(func, ast.Name):
            if key in self.local:
                plan = self._of(key, None)
            elif key in self._names:
                name, patterns = self._names[key]
                plan = self._of(name, patterns)
        elif isinstance(func, ast.Attribute):
            head = key.rsplit(".", 1)[0]
            patterns = self._modules.get(head)
            if patterns is None and head.split(".")[0] in self._modules:  # import a.b; a.b.Name
                patterns = module_patterns(head, 0, self._path)
            if patterns:
                plan = self._of(func.attr, patterns)
        self._cache[key] = plan
        return plan


_TRAINER = frozenset({"Trainer"})


