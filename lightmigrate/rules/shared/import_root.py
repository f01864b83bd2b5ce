"""The Lightning package a class belongs to, for the imports a rule adds next to it.

A file may import both ``pytorch_lightning`` and ``lightning.pytorch`` (during a migration, or
because a helper library uses the other one). An import that a rule adds for a class, such as
``XLAAccelerator`` for an ``isinstance`` test on the class's Trainer, must come from the package
of that class's own Lightning base: a class of the other package is a different class, and the
test would always be False. :func:`class_lightning_root` finds that package by following the
class's bases through the file's imports (and through the classes the file defines); when the
bases lead elsewhere, it falls back to what the file imports, like
``cst.helpers.lightning_root``.
"""

from __future__ import annotations

import ast
from lightmigrate.analysis.ast_nodes import ast_nodes
from typing import Dict, Iterator, Optional, Set

OLD_ROOT = "pytorch_lightning"
NEW_ROOT = "lightning.pytorch"


def _root_of(dotted: str) -> Optional[str]:
    """The import root of a dotted module or object name, None when it is not Lightning's."""
    first = dotted.split(".", 1)[0]
    if first == "pytorch_lightning":
        return OLD_ROOT
    if first == "lightning":
        return NEW_ROOT
    return None


def _module_level_imports(tree: ast.Module) -> Iterator[ast.stmt]:
    """The imports that bind module-level names: at the top level, or inside ``if``, ``try``
    and ``with`` blocks there (not inside functions or classes), in source order."""
    todo = list(tree.body)
    while todo:
        st = todo.pop(0)
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            yield st
        elif isinstance(st, (ast.If, ast.Try, ast.With, ast.AsyncWith)):
            inner = [*st.body, *getattr(st, "orelse", ()), *getattr(st, "finalbody", ())]
            for handler in getattr(st, "handlers", ()):
                inner.extend(handler.body)
            todo[:0] = inner


def _bindings(tree: ast.Module) -> Dict[str, str]:
    """Local name -> the dotted module or object it is bound to by an import (the first
    import of a name wins: the preferred branch of a ``try``/``except ImportError``)."""
    bound: Dict[str, str] = {}
    for st in _module_level_imports(tree):
        if isinstance(st, ast.Import):
            for alias in st.names:
                if alias.asname:
                    bound.setdefault(alias.asname, alias.name)
                else:
                    first = alias.name.split(".", 1)[0]
                    bound.setdefault(first, first)
        elif st.module is not None and not st.level:
            for alias in st.names:
                if alias.name != "*":
                    bound.setdefault(alias.asname or alias.name, f"{st.module}.{alias.name}")
    return bound


def _dotted(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Subscript):  # Generic[T] and the like
        return _dotted(node.value)
    return None


def file_lightning_root(tree: ast.Module) -> str:
    """``cst.helpers.lightning_root`` on Python's ``ast``: ``"lightning.pytorch"`` when the file
    imports ``lightning`` and not ``pytorch_lightning``, else ``"pytorch_lightning"``."""
    roots: Set[str] = set()
    for node in ast_nodes(tree):
        if isinstance(node, ast.Import):
            roots.update(_root_of(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and not node.level:
            roots.add(_root_of(node.module))
    return NEW_ROOT if NEW_ROOT in roots and OLD_ROOT not in roots else OLD_ROOT


def class_lightning_root(tree: ast.Module, cls: ast.ClassDef) -> str:
    """``"pytorch_lightning"`` or ``"lightning.pytorch"``: the package of the Lightning class
    that ``cls`` (a class statement of ``tree``) derives from, followed through the file's
    imports and the classes it defines (the first base that leads to Lightning decides). When
    no base leads to Lightning within the file, :func:`file_lightning_root`."""
    bound = _bindings(tree)
    defined: Dict[str, ast.ClassDef] = {}
    for node in ast_nodes(tree):
        if isinstance(node, ast.ClassDef):
            defined.setdefault(node.name, node)
    seen: Set[str] = set()

    def search(node: ast.ClassDef) -> Optional[str]:
        for base in node.bases:
            dotted = _dotted(base)
            if dotted is None:
                continue
            first, _, rest = dotted.partition(".")
            if first in bound:
                root = _root_of(bound[first])
                if root is not None:
                    return root
            elif first in defined and not rest and first not in seen:
                seen.add(first)
                root = search(defined[first])
                if root is not None:
                    return root
        return None

    seen.add(cls.name)
    return search(cls) or file_lightning_root(tree)
