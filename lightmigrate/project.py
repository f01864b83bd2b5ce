"""A cheap, project-wide index of class definitions.

Rules need to know what a class inherits: whether a base is a LightningModule, whether an
ancestor defined ``validation_epoch_end`` or a subclass overrides it. Classes are often split
across files, so the engine indexes every file of the run once with the stdlib ``ast`` module
(fast, no libcst) before any rule runs. Names are resolved by their last component, which is
what a file sees after ``from x import Name``; a name defined by several classes is ambiguous
and resolves to nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

LIGHTNING_MODULE_NAMES = frozenset({"LightningModule"})
LIGHTNING_IMPORT_ROOTS = ("pytorch_lightning", "lightning")


@dataclass(frozen=True)
class ClassInfo:
    name: str
    path: str
    bases: Tuple[str, ...]  # dotted base expressions as written, e.g. "pl.LightningModule"
    methods: FrozenSet[str]  # names defined by def (or assigned) in the class body
    super_calls: Dict[str, FrozenSet[str]] = field(default_factory=dict, compare=False, hash=False)
    """method name -> names called as ``super().NAME(...)`` inside it."""

    @property
    def base_names(self) -> Tuple[str, ...]:
        return tuple(b.rsplit(".", 1)[-1] for b in self.bases)


def _dotted(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Subscript):  # Generic[T] and the like
        return _dotted(node.value)
    return None


def _super_calls(func: ast.AST) -> FrozenSet[str]:
    found = set()
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "super"
        ):
            found.add(node.func.attr)
    return frozenset(found)


def classes_in_source(tree: ast.AST, path: str) -> List[ClassInfo]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        methods = set()
        supers: Dict[str, FrozenSet[str]] = {}
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.add(item.name)
                supers[item.name] = _super_calls(item)
            elif isinstance(item, ast.Assign):
                methods.update(t.id for t in item.targets if isinstance(t, ast.Name))
        bases = tuple(b for b in (_dotted(x) for x in node.bases) if b)
        out.append(ClassInfo(node.name, path, bases, frozenset(methods), supers))
    return out


class ProjectIndex:
    """Class name -> definitions, for every file of a run."""

    def __init__(self, classes: Iterable[ClassInfo] = ()) -> None:
        self._by_name: Dict[str, List[ClassInfo]] = {}
        for c in classes:
            self.add(c)

    def add(self, info: ClassInfo) -> None:
        bucket = self._by_name.setdefault(info.name, [])
        if info not in bucket:
            bucket.append(info)

    def add_source(self, text: str, path: str) -> None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return
        for c in classes_in_source(tree, path):
            self.add(c)

    def resolve(self, name: str, prefer_path: str = "") -> Optional[ClassInfo]:
        """The one class called ``name``; a definition in ``prefer_path`` wins over others."""
        found = self._by_name.get(name.rsplit(".", 1)[-1], [])
        local = [c for c in found if c.path == prefer_path]
        if len(local) == 1:
            return local[0]
        return found[0] if len(found) == 1 else None

    def subclasses(self, info: ClassInfo) -> List[ClassInfo]:
        """Direct subclasses of ``info`` anywhere in the project."""
        out = []
        for bucket in self._by_name.values():
            for c in bucket:
                if info.name in c.base_names and self.resolve(info.name, c.path) == info:
                    out.append(c)
        return out

    def descendants(self, info: ClassInfo) -> List[ClassInfo]:
        seen: List[ClassInfo] = []
        todo = [info]
        while todo:
            for sub in self.subclasses(todo.pop()):
                if sub not in seen:
                    seen.append(sub)
                    todo.append(sub)
        return seen

    def ancestors(self, info: ClassInfo) -> Tuple[List[ClassInfo], bool]:
        """Known ancestors (nearest first, depth-first like a single-inheritance MRO) and whether
        every base resolved to a known class or to Lightning itself."""
        out: List[ClassInfo] = []
        complete = True
        todo = [(info, b) for b in info.bases]
        while todo:
            child, base = todo.pop(0)
            last = base.rsplit(".", 1)[-1]
            if last in LIGHTNING_MODULE_NAMES or last == "object":
                continue
            found = self.resolve(last, child.path)
            if found is None or found is info:
                complete = False
                continue
            if found not in out:
                out.append(found)
                todo.extend((found, b) for b in found.bases)
        return out, complete

    def is_lightning_module(self, info: ClassInfo) -> Optional[bool]:
        """True when some ancestor is ``LightningModule``; None when that cannot be known."""
        todo, seen, unknown = [info], set(), False
        while todo:
            c = todo.pop()
            if (c.name, c.path) in seen:
                continue
            seen.add((c.name, c.path))
            for base in c.base_names:
                if base in LIGHTNING_MODULE_NAMES:
                    return True
                found = self.resolve(base, c.path)
                if found is None:
                    unknown = unknown or base != "object"
                else:
                    todo.append(found)
        return None if unknown else False
