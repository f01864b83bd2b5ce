"""Rewriting references to moved Lightning names, in every form code uses to reach them.

A file reaches a Lightning name through its imports: ``from a.b import C [as D]``,
``import a.b [as m]`` followed by ``m.C`` or ``a.b.C``, ``from a import b`` followed by
``b.C``. This module resolves each such reference to its full dotted name, looks it up in
:mod:`lightmigrate.catalog.imports` and rewrites the import and every use:

- an import of a moved name is rewritten in place (same position, same alias; aliases that
  move to another module become a new ``from`` statement right after the old one);
- a renamed name (``LightningLoggerBase`` -> ``Logger``) is renamed at every use, unless the
  new name is already taken in the file, in which case the import keeps the old local name
  (``from pytorch_lightning.loggers.logger import Logger as LightningLoggerBase``);
- a dotted use (``pl.profiler.SimpleProfiler``) becomes the new dotted path through the same
  binding when the package imports that module eagerly, or a name imported for it;
- an import that only served uses that were rewritten is dropped; an import this module adds
  is never a duplicate of one already there;
- references to removed names get a ``# TODO(lightmigrate)`` marker on their statement.

The project's root is kept: a name reached through ``pytorch_lightning`` maps to
``pytorch_lightning.*`` and ``lightning_fabric.*``, one reached through ``lightning.pytorch``
to ``lightning.pytorch.*`` and ``lightning.fabric.*``.

Private helpers here (root detection, adding an import) overlap with the generic
``lightning_root``/``ensure_import`` being added to ``cst_helpers``; they are kept local until
the two are unified.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from lightmigrate.cst.helpers import dotted_name, fresh_name, marker_text
from lightmigrate.catalog.imports import (  # noqa: F401 - the path helpers, re-exported for the rules
    FABRIC_FOR,
    GUIDE,
    LAZY_MODULES,
    Entry,
    mapped,
    new_path,
    to_absolute,
    to_relative,
)
from lightmigrate.cst.walk import transform, PrunedTransformer, walk

PL_ROOTS = ("pytorch_lightning", "lightning.pytorch")


# ---------------------------------------------------------------------------------------------
# Dotted names and roots


dotted = dotted_name  # the shared helper, under the name the import rules use


def build_dotted(path: str) -> Union[cst.Name, cst.Attribute]:
    parts = path.split(".")
    node: Union[cst.Name, cst.Attribute] = cst.Name(parts[0])
    for p in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(p))
    return node


def add_marker_once(node, code: str, why: str):
    """``add_marker`` that allows several different markers of one rule on a statement (one
    per removed name), each added once."""
    text = marker_text(code, why)
    if any(line.comment is not None and line.comment.value == text for line in node.leading_lines):
        return node
    return node.with_changes(leading_lines=[*node.leading_lines, cst.EmptyLine(comment=cst.Comment(text))])


def display(path: str) -> str:
    """``path`` without its Lightning root (``utilities.distributed.sync_ddp``), so that a
    marker reads the same whichever root the file uses (and after ``--unified-imports``)."""
    rel = to_relative(path)
    if rel is None:
        return path
    return rel[1][3:] if rel[1].startswith("pl.") else rel[1]


def marker_why(old: str, entry: Entry) -> str:
    return f"`{display(old)}` was removed ({entry.row}): {entry.why}; see {GUIDE}"


def caveat_why(old: str, entry: Entry) -> str:
    return f"`{display(old)}` moved ({entry.row}); {entry.why}; see {GUIDE}"


def _reachable(path: str, explicit_modules: Set[str]) -> bool:
    """Whether ``root.x.y`` resolves as attributes after importing the root package."""
    rel = to_relative(path)
    if rel is None:
        return any(path == m or path.startswith(m + ".") for m in explicit_modules)
    for lazy in LAZY_MODULES:
        if rel[1] == lazy or rel[1].startswith(lazy + "."):
            return any(path.startswith(m + ".") or path == m for m in explicit_modules
                       if to_relative(m) and to_relative(m)[1].startswith(lazy))
    return True


# ---------------------------------------------------------------------------------------------
# What the file binds and uses


@dataclass
class Binding:
    name: str  # local name
    path: str  # full dotted path it stands for
    node: Union[cst.ImportAlias]  # the alias that binds it
    is_module_import: bool  # ``import a.b`` (binds ``a``) / ``import a.b as m``
    stmt: int = 0  # id of the Import/ImportFrom node
    top: bool = True  # bound at module level (not inside an if/try/def block)
    original: str = ""  # ``path`` before the rewrite

    def __post_init__(self) -> None:
        self.original = self.original or self.path


class _Collect(cst.CSTVisitor):
    def __init__(self) -> None:
        self.bindings: Dict[str, Binding] = {}  # local name -> its (first module-level, else last) import
        self.all_bindings: List[Binding] = []  # every import alias, in order
        self.names: Set[str] = set()  # every identifier in the file
        self.uses: Dict[str, int] = {}  # loads of each local name outside imports
        self.explicit_modules: Set[str] = set()
        self.depth = 0
        self.not_uses: Set[int] = set()  # ids of the names an attribute or a keyword argument carries
        # names the file binds other than by an import where renaming them would change what
        # other code sees: a parameter (its keyword), a function or class name, a class attribute
        self.shadowing: Set[str] = set()
        self.scopes: List[str] = []  # "class" / "def" around the node being visited

    def visit_Param(self, node: cst.Param) -> None:
        self.shadowing.add(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.shadowing.add(node.name.value)
        self.scopes.append("def")

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.append("def")

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.scopes.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.shadowing.add(node.name.value)
        self.scopes.append("class")

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.scopes.pop()

    def _class_target(self, target: cst.BaseExpression) -> None:
        if self.scopes and self.scopes[-1] == "class" and isinstance(target, cst.Name):
            self.shadowing.add(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._class_target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._class_target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._class_target(node.target)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.depth += 1

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.depth -= 1

    def _bind(self, b: Binding) -> None:
        self.all_bindings.append(b)
        current = self.bindings.get(b.name)
        if current is None or not current.top:
            self.bindings[b.name] = b

    def visit_Import(self, node: cst.Import) -> bool:
        for a in node.names:
            full = dotted(a.name) or ""
            self.explicit_modules.add(full)
            if a.asname is not None and isinstance(a.asname.name, cst.Name):
                self._bind(Binding(a.asname.name.value, full, a, True, id(node), self.depth == 0))
            else:
                head = full.split(".")[0]
                if head not in self.bindings:
                    self._bind(Binding(head, head, a, True, id(node), self.depth == 0))
                else:
                    self.all_bindings.append(Binding(head, head, a, True, id(node), self.depth == 0))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return False
        mod = dotted(node.module) or ""
        for a in node.names:
            name = dotted(a.name) or ""
            local = a.asname.name.value if a.asname is not None and isinstance(a.asname.name, cst.Name) else name
            self._bind(Binding(local, f"{mod}.{name}", a, False, id(node), self.depth == 0))
            self.explicit_modules.add(f"{mod}.{name}")
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) in self.not_uses:  # ``x.NAME`` and ``f(NAME=...)`` name no variable
            return
        self.names.add(node.value)
        self.uses[node.value] = self.uses.get(node.value, 0) + 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.not_uses.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_uses.add(id(node.keyword))


# The collections of the last few modules, by identity (each held, so its id stays its own):
# one rule's output is the next rule's input, and LM201, LM202 and LM203 all collect it.
_COLLECTED: Dict[int, Tuple[cst.Module, _Collect]] = {}


def collect(module: cst.Module) -> _Collect:
    """The imports and names of ``module`` (shared: do not change the result)."""
    hit = _COLLECTED.get(id(module))
    if hit is not None and hit[0] is module:
        return hit[1]
    c = _Collect()
    walk(module, c)
    if len(_COLLECTED) >= 4:
        _COLLECTED.pop(next(iter(_COLLECTED)))
    _COLLECTED[id(module)] = (module, c)
    return c


# ---------------------------------------------------------------------------------------------
# The rewrite

CallFix = Callable[[cst.Call, str], Tuple[cst.Call, Optional[str]]]


@dataclass
class _Plan:
    """Decisions taken before the transform: how each import alias changes."""

    # id(alias) -> the new alias nodes grouped by module ("" = stays in the same statement)
    aliases: Dict[int, Tuple[str, cst.ImportAlias]] = field(default_factory=dict)
    removed_aliases: Set[int] = field(default_factory=set)
    renames: Dict[str, str] = field(default_factory=dict)  # local name -> new local name
    marks: Dict[int, str] = field(default_factory=dict)  # id(alias) -> marker text


class ImportRewriter(PrunedTransformer):
    """Rewrites one module. ``handles(entry)`` says whether this rule acts on a table entry
    (LM201 takes the moved ones and rewrites them, LM202 the removed ones and marks them).
    ``call_fixes`` maps an old name's last part to a function that fixes a call's arguments
    after the rename; it returns the call and an optional marker text. ``non_call_whys`` maps
    an old name's last part to a marker for its uses that are not calls. ``only``, when
    given, holds the old full paths to act on (the targets of the rule's sites); the imports
    and uses of the others are left as they are."""

    def __init__(self, code: str, module: cst.Module, handles: Callable[[Entry], bool],
                 call_fixes: Optional[Dict[str, CallFix]] = None, non_call_whys: Optional[Dict[str, str]] = None,
                 only: Optional[FrozenSet[str]] = None) -> None:
        super().__init__()
        self.code = code
        self.only = only
        # old name (last part) -> marker for a use that is not a call (isinstance, a base class)
        self.non_call_whys = non_call_whys or {}
        self.call_funcs: Set[int] = set()
        self.not_refs: Set[int] = set()  # ids of names that are not references (see visit_Arg)
        self.bodies: Dict[int, FrozenSet[str]] = {}  # id(function or lambda body) -> its parameters' names
        self.params: List[FrozenSet[str]] = []  # the parameters of the functions around the node
        self.handles = handles
        self.call_fixes = call_fixes or {}
        self.info = collect(module)
        self.taken: Set[str] = set(self.info.names) | set(self.info.bindings)
        self.new_imports: List[Tuple[str, str, Optional[str]]] = []  # (module, name, asname)
        self.new_bindings: Dict[str, str] = {}  # path -> local name of an import we add
        self.mark_stack: List[List[str]] = []  # markers for each statement being visited
        self.header: Set[str] = set()  # comments above the first statement (the module header)
        self.fixes_by_node: Dict[int, Tuple[str, Entry]] = {}  # id(original func) -> (old path, entry)
        self.touched: Set[str] = set()  # local names whose uses we rewrote
        self.changed = False
        # local name -> the full path it had before the rewrite
        self.original_paths: Dict[str, str] = {b.name: b.path for b in self.info.bindings.values()}
        self.planned_aliases: Set[int] = set()  # ids of aliases the plan rewrites
        self.plan = _Plan()
        self._plan(self.plan)

    # --- planning imports --------------------------------------------------------------------

    @property
    def planned_renames(self) -> Dict[str, str]:
        return self.plan.renames

    def _plan(self, plan: _Plan) -> None:
        for b in self.info.all_bindings:
            if b.is_module_import:
                self._plan_module_import(b, plan)
            else:
                self._plan_from_import(b, plan)

    def _allowed(self, path: str) -> bool:
        return self.only is None or path in self.only

    def _plan_module_import(self, b: Binding, plan: _Plan) -> None:
        full = dotted(b.node.name) or ""
        if not self._allowed(full):
            return
        res = new_path(full)
        if res is None or not self.handles(res[1]):
            return
        new, entry = res
        if new is None:
            plan.marks[id(b.node)] = marker_why(full, entry)
            return
        if b.node.asname is None and new.split(".")[0] != full.split(".")[0]:
            return  # ``import pytorch_lightning.metrics``: the root binding stays, uses move
        plan.aliases[id(b.node)] = ("", b.node.with_changes(name=build_dotted(new)))
        self.planned_aliases.add(id(b.node))
        if entry.why:
            plan.marks[id(b.node)] = caveat_why(full, entry)
        if b.node.asname is not None:
            b.path = new
        self.changed = True

    def _plan_from_import(self, b: Binding, plan: _Plan) -> None:
        if not self._allowed(b.path):
            return
        res = new_path(b.path)
        if res is None or not self.handles(res[1]):
            return
        new, entry = res
        if new is None:
            plan.marks[id(b.node)] = marker_why(b.path, entry)
            return
        old_mod, old_name = b.path.rsplit(".", 1)
        new_mod, new_name = new.rsplit(".", 1) if "." in new else ("import ", new)
        local = b.name
        existing = self._reusable_binding(new, b)
        if existing is not None and existing != local and local not in self.info.shadowing:
            # the new name is already imported: use it and drop this alias
            plan.removed_aliases.add(id(b.node))
            plan.renames[local] = existing
        else:
            asname = b.node.asname
            if b.node.asname is None and new_name != old_name and local in self.info.shadowing:
                # a parameter, function, class or class attribute of that name: keep the name
                asname = cst.AsName(name=cst.Name(local))
            elif b.node.asname is None and new_name != old_name:
                if new_name not in self.taken or self._is_bound_to(new_name, new):
                    plan.renames[local] = new_name
                    self.taken.add(new_name)
                else:
                    asname = cst.AsName(name=cst.Name(local))
            alias = b.node.with_changes(name=cst.Name(new_name), asname=asname)
            plan.aliases[id(b.node)] = ("" if new_mod == old_mod else new_mod, alias)
            self.planned_aliases.add(id(b.node))
        if entry.why:
            plan.marks[id(b.node)] = caveat_why(b.path, entry)
        b.path = new
        self.changed = True

    def _binding_for(self, path: str) -> Optional[str]:
        """A module-level local name that already stands for ``path`` (after the rewrite)."""
        for b in self.info.all_bindings:
            if b.top and b.path == path and (b.original == path or id(b.node) in self.planned_aliases):
                return b.name
        return self.new_bindings.get(path)

    def _reusable_binding(self, path: str, alias: Binding) -> Optional[str]:
        """A binding of ``path`` that ``alias``'s uses can share: at module level, or in the
        same import statement (a binding in another branch of an ``if``/``try`` is not visible)."""
        for b in self.info.all_bindings:
            if b is alias or b.path != path or not (b.top or b.stmt == alias.stmt):
                continue
            if b.original == path or id(b.node) in self.planned_aliases:
                return self.planned_renames.get(b.name, b.name)
        return None

    def _is_bound_to(self, name: str, path: str) -> bool:
        """Every import of ``name`` in the file is of ``path`` (so importing it again is harmless)."""
        found = [b for b in self.info.all_bindings if b.name == name]
        return bool(found) and all(b.original == path for b in found)

    # --- names for new paths -----------------------------------------------------------------

    def expression_for(self, path: str) -> cst.BaseExpression:
        """An expression that evaluates to ``path`` in this file, importing it when needed."""
        local = self._binding_for(path)
        if local is not None:
            return cst.Name(self.plan.renames.get(local, local))
        best: Optional[Binding] = None
        for b in self.info.bindings.values():
            if path.startswith(b.path + ".") and b.name not in self.plan.renames:
                if best is None or len(b.path) > len(best.path):
                    best = b
        if best is not None and _reachable(path, self.info.explicit_modules):
            return build_dotted(best.name + path[len(best.path):])
        mod, name = path.rsplit(".", 1)
        local = name if name not in self.taken else fresh_name(name, self.taken)
        self.taken.add(local)
        self.new_imports.append((mod, name, None if local == name else local))
        self.new_bindings[path] = local
        return cst.Name(local)

    # --- imports -------------------------------------------------------------------------------

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Module(self, node: cst.Module) -> None:
        # libcst keeps the comments above a file's first statement in the module header
        self.header = {line.comment.value for line in node.header if line.comment is not None}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            self.mark_stack.append([])
        params = self.bodies.get(id(node))
        if params is not None:
            self.params.append(params)
        return super().on_visit(node)

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):
        out = super().on_leave(original, updated)
        if id(original) in self.bodies:
            self.params.pop()
        if isinstance(original, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            marks = self.mark_stack.pop()
            if marks:
                if isinstance(out, cst.FlattenSentinel):
                    nodes = list(out.nodes)
                    for why in marks:
                        nodes[0] = add_marker_once(nodes[0], self.code, why)
                    out = cst.FlattenSentinel(nodes)
                elif isinstance(out, cst.CSTNode):
                    for why in marks:
                        out = add_marker_once(out, self.code, why)
        return out

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine):
        if not any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in updated.body):
            return updated
        return self._rewrite_import_line(updated, self.mark_stack[-1])

    def _rewrite_import_line(self, line: cst.SimpleStatementLine, marks: List[str]):
        body: List[cst.BaseSmallStatement] = []
        extra: List[cst.SimpleStatementLine] = []
        for small in line.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                kept, moved = self._split_aliases(small.names, marks)
                groups: Dict[str, List[Tuple[cst.ImportAlias, cst.ImportAlias]]] = {}
                for mod, pair in moved:
                    groups.setdefault(mod, []).append(pair)
                if kept:
                    body.append(with_aliases(small, kept))
                for mod, pairs in groups.items():
                    if mod == "import ":  # the new name is a top-level package: no parentheses
                        stmt: cst.BaseSmallStatement = cst.Import(names=_commas(pairs, small.names))
                    else:
                        # the layout of the original statement; the comment after its ``(``
                        # goes with the statement that takes its place
                        first = not kept and not extra
                        stmt = with_aliases(small, pairs, build_dotted(mod), keep_lpar=first).with_changes(
                            semicolon=cst.MaybeSentinel.DEFAULT, relative=[])
                    extra.append(cst.SimpleStatementLine(body=[stmt]))
            elif isinstance(small, cst.Import):
                kept, _ = self._split_aliases(small.names, marks)
                if kept:
                    body.append(small.with_changes(names=_commas(kept, small.names)))
            else:
                body.append(small)
        if body:
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            out: List[cst.SimpleStatementLine] = [line.with_changes(body=body), *extra]
        elif extra:
            out = [extra[0].with_changes(leading_lines=line.leading_lines, trailing_whitespace=line.trailing_whitespace),
                   *extra[1:]]
        else:
            return cst.RemovalSentinel.REMOVE
        return cst.FlattenSentinel(out) if len(out) > 1 else out[0]

    def _split_aliases(self, names, marks: List[str]):
        """The aliases that stay in the statement and those that move to another module's
        statement, each as (original alias, new alias)."""
        kept: List[Tuple[cst.ImportAlias, cst.ImportAlias]] = []
        moved: List[Tuple[str, Tuple[cst.ImportAlias, cst.ImportAlias]]] = []
        for a in names:
            key = id(a)
            if key in self.plan.marks and self.plan.marks[key] not in marks and \
                    marker_text(self.code, self.plan.marks[key]) not in self.header:
                marks.append(self.plan.marks[key])
            if key in self.plan.removed_aliases:
                continue
            if key in self.plan.aliases:
                mod, alias = self.plan.aliases[key]
                if mod:
                    moved.append((mod, (a, alias)))
                else:
                    kept.append((a, alias))
            else:
                kept.append((a, a))
        return kept, moved

    # --- uses ---------------------------------------------------------------------------------

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if dotted(node) is not None:
            return False  # a whole dotted chain is handled in leave_Attribute
        self.not_refs.add(id(node.attr))
        return True

    # names that refer to no variable (``f(NAME=...)``, ``x().NAME``) or that bind one of
    # their own (``def NAME``, a parameter): neither renamed nor marked
    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.not_refs.add(id(node.keyword))

    def visit_Param(self, node: cst.Param) -> None:
        self.not_refs.add(id(node.name))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.not_refs.add(id(node.name))
        self.bodies[id(node.body)] = _param_names(node.params)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.bodies[id(node.body)] = _param_names(node.params)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.not_refs.add(id(node.name))

    def visit_Call(self, node: cst.Call) -> None:
        self.call_funcs.add(id(node.func))

    def _check_non_call(self, original: cst.CSTNode, old_path: str) -> None:
        why = self.non_call_whys.get(old_path.rsplit(".", 1)[-1])
        if why and id(original) not in self.call_funcs and to_relative(old_path) is not None and self._allowed(old_path):
            self._mark(why)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if id(original) in self.not_refs:
            return updated
        if updated.value in self.original_paths and not any(updated.value in p for p in self.params):
            # (a parameter of that name is another variable: no marker)
            self._check_non_call(original, self.original_paths[updated.value])
        new = self.plan.renames.get(updated.value)
        if new is not None and updated.value in self.info.bindings:
            self.touched.add(updated.value)
            return updated.with_changes(value=new)
        return updated  # a removed name imported by name: its import line carries the marker

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        path = dotted(original)
        if path is None:
            return updated
        head, _, rest = path.partition(".")
        if head not in self.original_paths:
            return updated
        full = self.original_paths[head] + "." + rest
        self._check_non_call(original, full)
        res = new_path(full)
        head_res = new_path(self.original_paths[head])
        if res is None or not self.handles(res[1]) or (head_res is not None and head_res[1] is res[1]) \
                or not self._allowed(full):
            # not mapped, or mapped only through the head binding, which the import rewrite renames
            renamed = self.plan.renames.get(head)
            if renamed is None:
                return updated
            self.touched.add(head)
            return build_dotted(renamed + "." + rest)
        new_full, entry = res
        if new_full is None:
            self._mark(marker_why(full, entry))
            return updated
        if entry.why:
            self._mark(caveat_why(full, entry))
        self.fixes_by_node[id(original)] = (full, entry)
        if new_full == full:
            return updated
        self.touched.add(head)
        self.changed = True
        return self.expression_for(new_full)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = self._old_path_of(original.func)
        if key is None:
            return updated
        fix = self.call_fixes.get(key.rsplit(".", 1)[-1])
        if fix is None or not self._allowed(key):
            return updated
        new_call, why = fix(updated, key)
        if why:
            self._mark(why)
        if new_call is not updated:
            self.changed = True
        return new_call

    def _old_path_of(self, func: cst.BaseExpression) -> Optional[str]:
        """The full 1.x path a callee referred to, before any rewrite."""
        if id(func) in self.fixes_by_node:
            return self.fixes_by_node[id(func)][0]
        path = dotted(func)
        if path is None:
            return None
        head, _, rest = path.partition(".")
        if head not in self.original_paths:
            return None
        return self.original_paths[head] + ("." + rest if rest else "")

    def _mark(self, why: str) -> None:
        if marker_text(self.code, why) in self.header:
            return
        if self.mark_stack and why not in self.mark_stack[-1]:
            self.mark_stack[-1].append(why)

    # --- the module -----------------------------------------------------------------------------

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if not self.new_imports:
            return updated
        return add_imports(updated, self.new_imports)


def _param_names(params: cst.Parameters) -> FrozenSet[str]:
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    kwargs = [params.star_kwarg] if params.star_kwarg is not None else []
    return frozenset(p.name.value for p in [*params.posonly_params, *params.params, *star,
                                             *params.kwonly_params, *kwargs])


def _commas(kept: Sequence[Union[cst.ImportAlias, Tuple[cst.ImportAlias, cst.ImportAlias]]],
            original) -> List[cst.ImportAlias]:
    """The aliases ``kept`` (each an alias of ``original``, or a pair (original alias, its new
    form)) with ``", "`` between them (or a comma's own whitespace when it is valid outside
    parentheses) and no comma after the last."""
    out: List[cst.ImportAlias] = []
    pairs = [p if isinstance(p, tuple) else (p, p) for p in kept]
    for i, (_, a) in enumerate(pairs):
        if i == len(pairs) - 1:
            out.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        elif isinstance(a.comma, cst.Comma) and isinstance(a.comma.whitespace_after, cst.SimpleWhitespace):
            out.append(a)  # (a backslash continuation is valid here too)
        else:
            out.append(a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
    return out


def with_aliases(stmt: cst.ImportFrom, kept: Sequence[Union[cst.ImportAlias, Tuple[cst.ImportAlias, cst.ImportAlias]]],
                 module: Optional[cst.BaseExpression] = None, keep_lpar: bool = True) -> cst.ImportFrom:
    """``stmt`` (or a statement importing from ``module`` in its layout) with the aliases
    ``kept`` (each an alias of ``stmt``, or a pair (alias of ``stmt``, its new form)).

    Inside parentheses (``from a import (\\n    B,  # why\\n)``) each alias keeps its comma and
    the comment after it, and the last one ends as ``stmt``'s last did: with a trailing comma
    or without, on the closing line, keeping its own comment. ``keep_lpar`` False leaves out
    the comment after ``stmt``'s ``(`` (it stays with ``stmt``)."""
    pairs = [p if isinstance(p, tuple) else (p, p) for p in kept]
    changes: Dict[str, object] = {} if module is None else {"module": module}
    if stmt.lpar is None or isinstance(stmt.names, cst.ImportStar):
        return stmt.with_changes(names=_commas(pairs, stmt.names), **changes)
    lpar = stmt.lpar if keep_lpar else stmt.lpar.with_changes(whitespace_after=_without_comment(stmt.lpar.whitespace_after))
    rpar = stmt.rpar if stmt.rpar is not None else cst.RightParen()
    names = list(stmt.names)
    last = names[-1]
    out = [a for _, a in pairs]
    orig, alias = pairs[-1]
    if orig is not last:  # the original last alias went: this one ends the statement
        own = orig.comma.whitespace_after if isinstance(orig.comma, cst.Comma) else None
        comment = own.first_line if isinstance(own, cst.ParenthesizedWhitespace) and \
            own.first_line.comment is not None else None
        if isinstance(last.comma, cst.Comma):  # a trailing comma, then the original's closing line
            closing = last.comma.whitespace_after
            if isinstance(closing, cst.ParenthesizedWhitespace):
                ws: cst.BaseParenthesizableWhitespace = closing.with_changes(
                    first_line=comment or cst.TrailingWhitespace(), empty_lines=[])
            elif comment is not None:
                ws = cst.ParenthesizedWhitespace(first_line=comment, indent=True, last_line=cst.SimpleWhitespace(""))
            else:
                ws = closing
            out[-1] = alias.with_changes(comma=cst.Comma(whitespace_after=ws))
        else:  # no trailing comma: the comment (if any) goes before ``)``
            out[-1] = alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)
            before = rpar.whitespace_before
            if isinstance(before, cst.ParenthesizedWhitespace):
                before = before.with_changes(first_line=comment or cst.TrailingWhitespace(), empty_lines=[])
            elif comment is not None:
                before = cst.ParenthesizedWhitespace(first_line=comment, indent=True,
                                                     last_line=cst.SimpleWhitespace(""))
            rpar = rpar.with_changes(whitespace_before=before)
    return stmt.with_changes(names=out, lpar=lpar, rpar=rpar, **changes)


def _without_comment(ws: cst.BaseParenthesizableWhitespace) -> cst.BaseParenthesizableWhitespace:
    if isinstance(ws, cst.ParenthesizedWhitespace) and ws.first_line.comment is not None:
        return ws.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=[])
    return ws


def _is_import_line(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def add_imports(module: cst.Module, imports: List[Tuple[str, str, Optional[str]]]) -> cst.Module:
    """Add ``from MOD import NAME [as ASNAME]`` lines after the last top-level import of the
    file's head, merging into an existing ``from MOD import ...`` line there."""
    body = list(module.body)
    last = None
    for i, stmt in enumerate(body):
        if _is_import_line(stmt):
            last = i
        elif last is not None:
            break
    at = 0 if last is None else last + 1
    if last is None and body and isinstance(body[0], cst.SimpleStatementLine) and body[0].body and \
            isinstance(body[0].body[0], cst.Expr) and isinstance(body[0].body[0].value, cst.SimpleString):
        at = 1
    new_lines: List[cst.SimpleStatementLine] = []
    grouped: Dict[str, List[cst.ImportAlias]] = {}
    for mod, name, asname in imports:
        alias = cst.ImportAlias(name=cst.Name(name), asname=cst.AsName(name=cst.Name(asname)) if asname else None)
        merged = False
        for i in range(0, at):
            stmt = body[i]
            if _is_import_line(stmt) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.ImportFrom):
                imp = stmt.body[0]
                if imp.module is not None and not imp.relative and dotted(imp.module) == mod and \
                        not isinstance(imp.names, cst.ImportStar) and imp.rpar is None:
                    names = list(imp.names)
                    names[-1] = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                    body[i] = stmt.with_changes(body=[imp.with_changes(names=[*names, alias])])
                    merged = True
                    break
        if not merged:
            grouped.setdefault(mod, []).append(alias)
    for mod, aliases in grouped.items():
        new_lines.append(cst.SimpleStatementLine(body=[cst.ImportFrom(module=build_dotted(mod),
                                                                      names=_commas(aliases, aliases))]))
    if new_lines:
        if last is None and at < len(body):
            nxt = body[at]
            body[at] = nxt.with_changes(leading_lines=[cst.EmptyLine(indent=False), *nxt.leading_lines]) \
                if hasattr(nxt, "leading_lines") else nxt
        body[at:at] = new_lines
    return module.with_changes(body=body)


def drop_unused(module: cst.Module, before: _Collect, touched: Set[str]) -> cst.Module:
    """Remove import aliases whose local name was used before the rewrite and is not any more
    (all their uses were rewritten)."""
    after = collect(module)
    dead = {name for name in touched
            if before.uses.get(name, 0) > 0 and after.uses.get(name, 0) == 0 and name in after.bindings}
    if not dead:
        return module

    class Drop(PrunedTransformer):
        def leave_SimpleStatementLine(self, original, updated):
            if not any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in updated.body):
                return updated
            body = []
            for small in updated.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    kept = [a for a in small.names if _local(a) not in dead]
                    if kept and isinstance(small, cst.ImportFrom):
                        body.append(with_aliases(small, kept))
                    elif kept:
                        body.append(small.with_changes(names=_commas(kept, small.names)))
                else:
                    body.append(small)
            if not body:
                return cst.RemovalSentinel.REMOVE
            body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(body=body)

    return transform(module, Drop())


def _local(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return (dotted(alias.name) or "").split(".")[0]
