"""What LM001 (epoch-end hooks) and LM003 (step-end hooks) share: each migrates, per stage
(training, validation, test), one 1.x hook that a class either defines or inherits.

Both start the same way, on libcst (:meth:`StageHookEditor.stage_hook`):

- a class that neither defines nor inherits the hook is left alone;
- a hook the class defines but the rule cannot port (``blocked``) gets a marker;
- otherwise the rule goes on with the class's own definition (or None) and the topmost class
  of its line that defines the hook, which owns the rewrite.

A class below that owner changes only when it defines one of the methods the rewrite hands
down (LM001: the hooks that collect outputs; LM003: the step). :func:`stage_changes` is the
same choice on Python's ``ast``, for the rules' ``find``.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, Iterable, Optional, Tuple, Union

import libcst as cst

from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.shared.class_edit import ClassEditor, ast_class_defs
from lightmigrate.rules.shared.mro import reached_after
from lightmigrate.analysis.ast_nodes import ast_nodes

AstFunction = Union[ast.FunctionDef, ast.AsyncFunctionDef]


class StageHookEditor(ClassEditor):
    """A class editor for rules that migrate one hook per stage."""

    def stage_hook(self, hook: str, blocked: Callable[[cst.FunctionDef], Optional[str]]
                   ) -> Optional[Tuple[Optional[cst.FunctionDef], ClassInfo]]:
        """The class's own ``hook`` (None when it only inherits it) and the topmost class of its
        line that defines it; None when there is nothing more to do: the class neither defines
        nor inherits ``hook``, or ``blocked`` gave a reason not to port it (the hook is marked
        with that reason)."""
        func = self.get(hook)
        if func is None and not self.h.ancestor_defines(hook):
            return None
        if func is not None:
            why = blocked(func)
            if why:
                self.mark(hook, why)
                return None
        return func, self.h.top_definer(hook)

    def inherits_hook(self, name: str) -> bool:
        """Whether a hook ``name`` written into this class must call ``super()``: an ancestor
        may define it, or a class after this one in a subclass's MRO does (a mixin listed after
        it: ``class Model(Base, LoggingMixin)``), whose hook ran in 1.x."""
        return self.h.may_inherit(name) or reached_after(self.index, self.info, name)


# ---------------------------------------------------------------------------------------------
# The same choices on Python's ``ast``


def class_methods(node: ast.ClassDef) -> Dict[str, AstFunction]:
    """The functions defined directly in the class body, by name (the last definition wins, as
    in ``ClassEditor.get``)."""
    methods: Dict[str, AstFunction] = {}
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods[item.name] = item
    return methods


def inherited_methods(index: ProjectIndex, info: ClassInfo) -> FrozenSet[str]:
    """The names the known ancestors of ``info`` define (``Hierarchy.ancestor_defines``)."""
    names: set = set()
    for ancestor in index.ancestors(info)[0]:
        names |= ancestor.methods
    return frozenset(names)


def ast_calls_super(func: AstFunction, name: str) -> bool:
    """``class_edit.calls_super`` on ``ast``: a call ``super(...).name(...)`` anywhere in ``func``."""
    for node in ast_nodes(func):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name
                and isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name)
                and node.func.value.func.id == "super"):
            return True
    return False


def stage_changes(methods: Dict[str, AstFunction], inherited: FrozenSet[str], hook: str,
                  below: Iterable[str]) -> bool:
    """Whether a class changes for one stage: it defines ``hook`` (the hook is migrated or
    marked), or it inherits ``hook`` and defines one of ``below``, the methods the rule rewrites
    in a class under the hook's owner."""
    if hook in methods:
        return True
    return hook in inherited and any(name in methods for name in below)


def ast_method(tree: Optional[ast.AST], class_name: str, name: str) -> Optional[ast.AST]:
    """The last ``def name`` in the body of the one class ``class_name`` of ``tree`` (None when
    there is none, or several such classes, or no tree): how a rule reads a method of a class
    in another file (``ProjectIndex.tree_of``)."""
    if tree is None:
        return None
    classes = [c for c in ast_class_defs(tree) if c.name == class_name]
    if len(classes) != 1:
        return None
    return class_methods(classes[0]).get(name)


def ast_yields(func: ast.AST) -> bool:
    """A ``yield`` in ``func``'s own body (not in a nested function, class or lambda)."""
    todo = list(ast.iter_child_nodes(func))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return False
