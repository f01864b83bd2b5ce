"""Shared machinery for rules that rewrite Lightning classes: finding the classes a rule
applies to, knowing their hierarchy across the project, and editing a class body.

A rule subclasses :class:`ClassEditor` (one instance per class) and runs it through
:func:`migrate_classes`, which visits every class of a module, resolves it in the project
index, skips classes that are not Lightning modules, and marks the ones it cannot recognise.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate.cst.helpers import (
    code_of,
    module_text,
    add_marker,
    blank_lines,
    fresh_name,
    insert_before,
    leading_blank_count,
    parse_method,
    self_name,
    super_call_attr,
)
from lightmigrate.output.findings import Kind
from lightmigrate.rules.shared.aliases import (
    Alias,
    alias_of,
    aliased_names,
    class_aliases,
    forward_args,
    keep_aliases_valid,
    rename_alias_target,
    retarget_alias as _retarget_one,
)
from lightmigrate.analysis.project import CALLBACK_NAMES, LIGHTNING_MODULE_NAMES, ClassInfo, ProjectIndex
from lightmigrate.rules.base import RuleContext, Site, SourceFile
from lightmigrate.cst.walk import transform, PrunedTransformer, walk
from lightmigrate.rules.shared.method_sites import imports_lightning as ast_imports_lightning, imports_lightning_anywhere

LIGHTNING_HOOK_HINTS = frozenset(
    {"training_step", "validation_step", "test_step", "predict_step", "configure_optimizers"}
)


# ---------------------------------------------------------------------------------------------
# Hierarchy questions


@dataclass
class Hierarchy:
    """One class and the classes known around it."""

    info: ClassInfo
    ancestors: List[ClassInfo]  # nearest first
    complete: bool  # every base resolved
    descendants: List[ClassInfo]

    @classmethod
    def of(cls, index: ProjectIndex, info: ClassInfo) -> "Hierarchy":
        ancestors, complete = index.ancestors(info)
        return cls(info, ancestors, complete, index.descendants(info))

    def ancestor_defines(self, name: str) -> bool:
        return any(name in a.methods for a in self.ancestors)

    def may_inherit(self, name: str) -> bool:
        """Whether ``super().name`` may reach user code: a known ancestor defines it, or a base
        could not be resolved."""
        return not self.complete or self.ancestor_defines(name)

    def top_definer(self, name: str) -> ClassInfo:
        """The farthest class in this class's line (itself included) that defines ``name``."""
        top = self.info
        for a in self.ancestors:
            if name in a.methods:
                top = a
        return top


def family(index: ProjectIndex, top: ClassInfo) -> List[ClassInfo]:
    ancestors, _ = index.ancestors(top)
    return [top, *ancestors, *index.descendants(top)]


def taken_names(index: ProjectIndex, top: ClassInfo) -> Set[str]:
    """Attributes and methods used anywhere in ``top``'s family: names a rule must not reuse.
    The same wherever it is asked from, so every file of a hierarchy picks the same new names."""
    taken: Set[str] = set()
    for c in family(index, top):
        taken |= c.attributes | c.methods
    return taken


def calls_super(func: cst.FunctionDef, name: str) -> bool:
    found = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if super_call_attr(node) == name:
                found.append(node)

    walk(func, V())
    return bool(found)


class CallRenamer(PrunedTransformer):
    """Renames ``self.OLD(...)`` / ``super().OLD(...)`` calls inside one method."""

    def __init__(self, self_param: str, renames: Dict[str, str], supers: bool = True) -> None:
        self.self_param = self_param
        self.renames = renames
        self.supers = supers  # False: only ``self.OLD(...)``

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in self.renames:
            return updated
        target = func.value
        is_self = isinstance(target, cst.Name) and target.value == self.self_param
        if is_self or (self.supers and super_call_attr(cst.Call(func=func)) is not None):
            return updated.with_changes(func=func.with_changes(attr=cst.Name(self.renames[func.attr.value])))
        return updated


def imports_lightning(module: cst.Module) -> bool:
    for st in module.body:
        if not isinstance(st, cst.SimpleStatementLine):
            continue
        for small in st.body:
            names = []
            if isinstance(small, cst.Import):
                names = [alias.name for alias in small.names]
            elif isinstance(small, cst.ImportFrom) and small.module is not None:
                names = [small.module]
            for name in names:
                if code_of(name).split(".")[0] in ("pytorch_lightning", "lightning"):
                    return True
    return False


# ---------------------------------------------------------------------------------------------
# Editing one class


class ClassEditor:
    """The body of one class as a list of statements, with helpers to find, replace, insert
    and mark methods, and to report what changed. Subclasses implement :meth:`migrate`."""

    code: str = ""

    def __init__(self, cls: cst.ClassDef, original: cst.ClassDef, info: ClassInfo, index: ProjectIndex,
                 ctx: RuleContext, module: cst.Module, position: Tuple[int, int]) -> None:
        self.cls = cls
        self.original = original
        self.info = info
        self.index = index
        self.ctx = ctx
        self.module = module
        self.position = position
        self.items: List[cst.CSTNode] = list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []
        self.h = Hierarchy.of(index, info)
        self.renames: Dict[str, str] = {}  # method -> new name, for self./super() calls in this class
        self.keep_calls: Set[str] = set()  # generated methods whose calls must not be renamed
        self.changed = False

    def migrate(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def run(self) -> cst.ClassDef:
        self.migrate()
        if self.renames:
            for i, item in enumerate(self.items):
                if isinstance(item, cst.FunctionDef) and item.name.value not in self.keep_calls:
                    self.items[i] = transform(item, CallRenamer(self_name(item), self.renames))  # type: ignore[assignment]
        if self.changed:
            self._keep_aliases_valid()
        if not self.changed:
            return self.cls
        return self.cls.with_changes(body=self.cls.body.with_changes(body=self.items))

    # -- class-body aliases (``test_epoch_end = validation_epoch_end``) ------------------------

    def alias_of(self, name: str) -> Optional[Alias]:
        """The alias statement that finally binds ``name`` in the class body (None when a
        ``def`` or nothing does)."""
        return alias_of(self.items, name)

    def aliased(self, name: str) -> bool:
        """Whether an alias of the class body points at ``name``."""
        return name in aliased_names(self.items)

    def rename_alias(self, name: str, new: str) -> None:
        """``name = f`` binds ``new`` instead; ``self.name(...)``/``super().name(...)`` calls
        follow, as for a renamed method."""
        alias = self.alias_of(name)
        assert alias is not None
        rename_alias_target(self.items, alias, name, new)
        self.renames[name] = new
        self.changed = True

    def editable(self, name: str) -> Optional[cst.FunctionDef]:
        """The method ``name``, ready for the rule to change in place (None when the class does
        not bind it). A change must not reach an alias:

        - ``def on_validation_epoch_end`` that an alias binds too (``on_test_epoch_end =
          on_validation_epoch_end``): the user's method moves to a private name the alias now
          binds, and ``on_validation_epoch_end`` becomes a method that calls it;
        - ``on_test_epoch_end = f`` itself: the alias binds a private name instead
          (``_on_test_epoch_end = f``), and a method ``on_test_epoch_end`` calling it follows.

        The rule then changes that calling method, and the aliases keep the 1.x functions."""
        func = self.get(name)
        alias = self.alias_of(name)
        if func is None and alias is None:
            return None
        if alias is None and not self.aliased(name):
            return func
        assert func is not None or alias is not None
        private = fresh_name("_" + name, taken_names(self.index, self.info) | {
            item.name.value for item in self.items if isinstance(item, cst.FunctionDef)} | {
            t for a in class_aliases(self.items) for t in a.targets})
        if alias is not None:  # ``name = value``
            value = self.get(alias.value)
            params = value.params if value is not None else parse_method(
                "def f(self, *args, **kwargs):\n    pass").params
            rename_alias_target(self.items, alias, name, private)
            signature = parse_method("def f():\n    pass").with_changes(params=params)
            s = self_name(signature)
            thin = parse_method(f"def {name}():\n    return {s}.{private}({forward_args(signature)})\n")
            thin = thin.with_changes(params=params)
            at = alias.item + 1
            if at < len(self.items):
                insert_before(self.items, at, [thin])
            else:
                self.items.append(thin.with_changes(leading_lines=blank_lines(1)))
        else:
            assert func is not None
            s = self_name(func)
            thin = parse_method(f"def {name}():\n    return {s}.{private}({forward_args(func)})\n")
            thin = thin.with_changes(params=func.params)
            i = self.find(name)
            assert i is not None
            self.items[i] = func.with_changes(name=cst.Name(private))
            insert_before(self.items, i, [thin])
            for a in class_aliases(self.items):
                if a.value == name:
                    _retarget_one(self.items, a, private)
        self.changed = True
        return self.get(name)

    def _keep_aliases_valid(self) -> None:
        original = [item.name.value for item in getattr(self.original.body, "body", ())
                    if isinstance(item, cst.FunctionDef)]
        keep_aliases_valid(self.items, self.renames, original, self.code)

    def find(self, name: str) -> Optional[int]:
        found = None
        for i, item in enumerate(self.items):
            if isinstance(item, cst.FunctionDef) and item.name.value == name:
                found = i  # the last definition wins, as in Python
        return found

    def get(self, name: str) -> Optional[cst.FunctionDef]:
        i = self.find(name)
        return None if i is None else self.items[i]  # type: ignore[return-value]

    def set(self, name: str, func: Optional[cst.FunctionDef]) -> None:
        i = self.find(name)
        assert i is not None
        if func is not None:
            self.items[i] = func
            return
        gone = self.items.pop(i)
        if i < len(self.items):  # the next statement takes over the spacing the removed one had
            nxt = self.items[i]
            own = list(nxt.leading_lines)[leading_blank_count(nxt):]
            spacing = blank_lines(leading_blank_count(gone))
            self.items[i] = nxt.with_changes(leading_lines=[*spacing, *own])

    def insert_before(self, name: str, funcs: Sequence[cst.FunctionDef]) -> None:
        """Insert ``funcs`` before the ``def`` of ``name`` (or the alias that binds it)."""
        i = self.find(name)
        if i is None:
            alias = self.alias_of(name)
            assert alias is not None
            i = alias.item
        insert_before(self.items, i, funcs)

    def rename(self, old: str, new: str) -> None:
        """Rename method ``old`` and every ``self.old(...)``/``super().old(...)`` call in the class."""
        func = self.get(old)
        assert func is not None
        self.set(old, func.with_changes(name=cst.Name(new)))
        self.renames[old] = new

    def mark(self, name: str, why: str) -> None:
        i = self.find(name)
        if i is None:
            return
        self.items[i] = add_marker(self.items[i], self.code, why)
        self.changed = True

    def pos(self, name: str) -> Tuple[int, int]:
        """Where method ``name`` is in the original source (the class when it is new)."""
        for item in getattr(self.original.body, "body", ()):
            if isinstance(item, cst.FunctionDef) and item.name.value == name:
                return self.ctx.position(self.module, item)
        return self.position

    def fixed(self, message: str, name: str = "") -> None:
        line, col = self.pos(name) if name else self.position
        self.ctx.report(self.code, f"{self.info.name}: {message}", Kind.FIXED, line, col)
        self.changed = True

    def fresh(self, base: str, top: Optional[ClassInfo] = None) -> str:
        return fresh_name(base, taken_names(self.index, top or self.info))


# ---------------------------------------------------------------------------------------------
# Visiting the classes of a module

EditorFactory = Callable[..., ClassEditor]


class _Classes(PrunedTransformer):
    def __init__(self, module: cst.Module, ctx: RuleContext, code: str, hooks: FrozenSet[str],
                 editor: EditorFactory, unknown_why: str, only: Optional[FrozenSet[str]] = None) -> None:
        self.only = only
        self.module = module
        self.ctx = ctx
        self.index = ctx.project
        self.code = code
        self.hooks = hooks
        self.editor = editor
        self.unknown_why = unknown_why
        self.imports_lightning = imports_lightning(module)
        self.ordinals: Dict[int, int] = {}
        self.seen: Dict[str, int] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # (its place among the file's classes of that name: see ClassInfo.ordinal)
        name = node.name.value
        self.ordinals[id(node)] = self.seen.get(name, 0)
        self.seen[name] = self.ordinals[id(node)] + 1

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        if self.only is not None and original.name.value not in self.only:
            return updated
        info = self.index.local_class(original.name.value, self.ctx.path, self.ordinals.get(id(original), 0))
        if info is None or info.path != self.ctx.path:
            return updated
        ancestors, _ = self.index.ancestors(info)
        if not (self.hooks & info.methods) and not any(self.hooks & a.methods for a in ancestors):
            return updated
        lightning = self.index.in_lightning_hierarchy(info)
        if lightning is False:
            return updated
        position = self.ctx.position(self.module, original)
        if lightning is None and not (self.imports_lightning or LIGHTNING_HOOK_HINTS & info.methods):
            items = list(updated.body.body)
            for i, item in enumerate(items):
                if isinstance(item, cst.FunctionDef) and item.name.value in self.hooks:
                    items[i] = add_marker(item, self.code, self.unknown_why)
            return updated.with_changes(body=updated.body.with_changes(body=items))
        return self.editor(updated, original, info, self.index, self.ctx, self.module, position).run()


def migrate_classes(module: cst.Module, ctx: RuleContext, code: str, hooks: FrozenSet[str],
                    editor: EditorFactory, unknown_why: str, only: Optional[FrozenSet[str]] = None) -> cst.Module:
    """Run ``editor`` on every Lightning class of ``module`` that defines or inherits one of
    ``hooks``; mark the hooks of classes that cannot be recognised with ``unknown_why``.
    ``only``: the names of the classes to visit (those of the rule's sites), None for all."""
    if not ctx.project.has_path(ctx.path):
        ctx.project.add_source(module_text(module), ctx.path)
    return transform(module, _Classes(module, ctx, code, hooks, editor, unknown_why, only))


# ---------------------------------------------------------------------------------------------
# The same choices on Python's ``ast``, for the rules' ``find``


def ast_class_defs(tree: ast.AST) -> Tuple[ast.ClassDef, ...]:
    """Every class statement of ``tree``, at any depth, in source order. (Classes are
    statements: only statement bodies are searched, without recursion, so deeply nested
    expressions cost nothing.) Several rules and the index ask about the same tree, in turns
    with other trees: the answer is kept on the tree itself."""
    known = getattr(tree, _CLASSES_ATTR, None)
    if known is not None:
        return known
    out: List[ast.ClassDef] = []
    stack: List[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            out.append(node)
        inner: List[ast.AST] = []
        for name in _STATEMENT_FIELDS:
            inner.extend(getattr(node, name, ()))
        stack.extend(reversed(inner))
    found = tuple(out)
    setattr(tree, _CLASSES_ATTR, found)
    return found


def class_defs_with_ordinals(tree: ast.AST) -> List[Tuple[ast.ClassDef, int]]:
    """``ast_class_defs`` with each class's place among the file's classes of its name
    (``ClassInfo.ordinal``)."""
    seen: Dict[str, int] = {}
    out = []
    for node in ast_class_defs(tree):
        ordinal = seen.get(node.name, 0)
        seen[node.name] = ordinal + 1
        out.append((node, ordinal))
    return out


# the attribute of a tree that holds its ``ast_class_defs``
_CLASSES_ATTR = "_lightmigrate_class_defs"

# the fields of ast nodes that hold statements (or handlers and match cases, which hold them)
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


@dataclass(frozen=True)
class HookClass:
    """A class statement ``migrate_classes`` would hand to its editor (``known``) or whose
    hooks it would mark as unrecognised (not ``known``)."""

    node: ast.ClassDef
    info: ClassInfo
    known: bool

    def site(self, action: str = "", data: object = None) -> Site:
        return Site(self.node.lineno, self.node.col_offset, self.info.name, action, data)


def hook_classes(source: SourceFile, ctx: RuleContext, hooks: FrozenSet[str]) -> List[HookClass]:
    """The classes of ``source`` that ``migrate_classes(..., hooks, ...)`` would visit: defined
    in this file, defining or inheriting one of ``hooks``, and not known to be outside a
    LightningModule hierarchy (the file is indexed first when the index has not seen it)."""
    index = ctx.project
    if not index.has_path(ctx.path):
        index.add_source(source.text, ctx.path, tree=source.tree)
    found: List[HookClass] = []
    imports = None
    for node, ordinal in class_defs_with_ordinals(source.tree):
        info = index.local_class(node.name, ctx.path, ordinal)
        if info is None or info.path != ctx.path:
            continue
        if not (hooks & info.methods) and not (index.may_inherit(info, hooks) and any(
                hooks & a.methods for a in index.ancestors(info)[0])):
            continue
        lightning = index.in_lightning_hierarchy(info)
        if lightning is False:
            continue
        if lightning is None:
            if imports is None:
                imports = ast_imports_lightning(source.tree)
            found.append(HookClass(node, info, imports or bool(LIGHTNING_HOOK_HINTS & info.methods)))
        else:
            found.append(HookClass(node, info, True))
    return found


# ---------------------------------------------------------------------------------------------
# What kind of Lightning class a class statement is

DATAMODULE_NAMES = frozenset({"LightningDataModule"})
HOOK_KINDS = frozenset({"module", "callback"})  # the kinds whose classes have Lightning hooks
FINETUNING_NAMES = frozenset({"BaseFinetuning", "BackboneFinetuning"})
TQDM_BAR_NAMES = frozenset({"TQDMProgressBar"})
PROGRESS_BAR_NAMES = frozenset({"ProgressBarBase", "ProgressBar", "TQDMProgressBar", "RichProgressBar"})
# The base names that make each kind, in the order ``class_kind`` asks about them.
KIND_NAMES: Dict[str, FrozenSet[str]] = {
    "module": LIGHTNING_MODULE_NAMES, "callback": CALLBACK_NAMES, "datamodule": DATAMODULE_NAMES,
}


def class_kind(ctx: RuleContext, name: str, ordinal: int = 0) -> Optional[str]:
    """"module", "callback" or "datamodule" when the class ``name`` defined in ``ctx.path`` is
    known (through its bases, across files) to be one; None otherwise (also for a class that
    only looks like one). ``ordinal``: which of the file's classes called ``name``, in source
    order (see ``ClassInfo.ordinal``)."""
    index = ctx.project
    info = index.local_class(name, ctx.path, ordinal)
    if info is None or info.path != ctx.path:
        return None
    for kind, names in KIND_NAMES.items():
        # (``may_be_in_hierarchy`` first: it says no without parsing the files that cannot matter)
        if index.may_be_in_hierarchy(info, names) and index.in_lightning_hierarchy(info, names):
            return kind
    return None


def derives_from(ctx: RuleContext, name: str, names: FrozenSet[str]) -> bool:
    """Whether the class ``name`` of ``ctx.path`` has one of ``names`` among its bases' names."""
    info = ctx.project.resolve(name, ctx.path)
    return bool(info is not None and ctx.project.is_lightning_module(info, names))


def may_define_kind(ctx: RuleContext, kinds: Optional[FrozenSet[str]] = None) -> bool:
    """False only when the index knows that ``ctx.path`` defines no class of ``kinds`` (every
    kind by default), which it answers from the text of a lazily indexed file."""
    index = ctx.project
    wanted = sorted(KIND_NAMES if kinds is None else kinds)
    return not index.has_path(ctx.path) or index.may_define_in_hierarchy(ctx.path, [KIND_NAMES[k] for k in wanted])


def uses_lightning(source: SourceFile, ctx: RuleContext) -> bool:
    """Whether ``source`` imports Lightning (anywhere) or may define a class of a Lightning kind
    (through its bases, across files): code in any other file has nothing to do with Lightning."""
    return imports_lightning_anywhere(source) or may_define_kind(ctx)


def kind_classes(source: SourceFile, ctx: RuleContext,
                 kinds: Optional[FrozenSet[str]] = None) -> List[Tuple[ast.ClassDef, str]]:
    """Every class statement of ``source`` (any depth, in source order) whose ``class_kind`` is
    known, and in ``kinds`` when given, with that kind: the classes ``KindTransformer`` hands to
    ``edit_class``. A file the index knows has none is not parsed (the lazy index answers from
    its text where that settles it)."""
    if not may_define_kind(ctx, kinds):
        return []
    out = []
    for node, ordinal in class_defs_with_ordinals(source.tree):
        kind = class_kind(ctx, node.name, ordinal)
        if kind is not None and (kinds is None or kind in kinds):
            out.append((node, kind))
    return out


class KindTransformer(PrunedTransformer):
    """Visits a module keeping a stack of the Lightning kind of each enclosing class; subclasses
    override :meth:`edit_class` (called for classes of a known kind) or read ``self.kind``.
    ``only``: the names of the classes to edit (those of the rule's sites), None for all."""

    def __init__(self, ctx: RuleContext, module: cst.Module, only: Optional[FrozenSet[str]] = None,
                 inferred: Optional[Dict[Tuple[str, int], str]] = None) -> None:
        self.ctx = ctx
        self.module = module
        self.only = only
        # (class name, line of its ``class`` statement) -> the kind ``find`` inferred for a class
        # whose kind the index cannot know (``legacy_super.inferred_kinds``)
        self.inferred = inferred or {}
        self.kinds: List[Tuple[Optional[str], str]] = []
        self.seen: Dict[str, int] = {}  # classes of each name visited (their ClassInfo.ordinal)

    @property
    def kind(self) -> Optional[str]:
        return self.kinds[-1][0] if self.kinds else None

    @property
    def class_name(self) -> str:
        return self.kinds[-1][1] if self.kinds else ""

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        name = node.name.value
        ordinal = self.seen.get(name, 0)
        self.seen[name] = ordinal + 1
        kind = class_kind(self.ctx, name, ordinal)
        if kind is None and self.inferred:
            kind = self.inferred.get((name, self.ctx.position(self.module, node)[0]))
        self.kinds.append((kind, name))

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        kind, _ = self.kinds[-1]
        try:
            if kind is None or not isinstance(updated.body, cst.IndentedBlock):
                return updated
            if self.only is not None and original.name.value not in self.only:
                return updated
            return self.edit_class(kind, original, updated)
        finally:
            self.kinds.pop()

    def edit_class(self, kind: str, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        return updated

    def report(self, code: str, node: cst.CSTNode, message: str, kind: Kind = Kind.FIXED) -> None:
        line, col = self.ctx.position(self.module, node)
        self.ctx.report(code, message, kind, line, col)


def may_have_kind(ctx: RuleContext, kinds: FrozenSet[str]) -> bool:
    """False only when no class of ``ctx.path`` is of one of ``kinds`` (see :func:`class_kind`),
    so a rule that acts only inside such classes has nothing to do. A file the index has not
    seen yet (``ensure_indexed`` would add it) may have any."""
    if not ctx.project.has_path(ctx.path):
        return True
    return any(class_kind(ctx, c.name, c.ordinal) in kinds for c in ctx.project.classes_in(ctx.path))


def ensure_indexed(module: cst.Module, ctx: RuleContext) -> None:
    if not ctx.project.has_path(ctx.path):
        ctx.project.add_source(module_text(module), ctx.path)
