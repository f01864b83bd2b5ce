"""User callbacks that read, in their own ``on_*_epoch_end``, what a 1.x ``*_epoch_end`` computed
(issue 21 kind 6, spec B.2).

1.9 ran ``training_epoch_end`` before every callback's ``on_train_epoch_end``, and
``validation_epoch_end`` / ``test_epoch_end`` before every callback's ``on_validation_epoch_end``
/ ``on_test_epoch_end``. 2.x runs the callbacks' hooks first (for training: all but
``ModelCheckpoint`` / ``EarlyStopping``, which come after the module's hook), then the module's
``on_*_epoch_end``, where LM001 puts the old body. A callback that reads an attribute the body
sets (``pl_module.val_mean``, also through a module method: ``pl_module.score()``), or the
metrics it logged (``trainer.callback_metrics``), would see the previous epoch's value; a body that
reads an attribute such a callback changes (``pl_module.noise_scale *= 0.5``) would see the
changed value.

LM001 keeps the 1.x order: the module gets a method (``RUN_ONCE_EPOCH_END``) that runs the old
body once per epoch; such a callback calls it first, and the module's ``on_*_epoch_end`` calls
it too (a no-op once it ran). This module decides, on Python's ``ast`` over the project index,
which callbacks read what which module families compute (:func:`read_plan`); the module side
and the callback side of LM001 ask the same question and get the same answer.
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass, replace
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from lightmigrate import MARKER_PREFIX
from lightmigrate.analysis.project import CALLBACK_NAMES, ClassInfo, ProjectIndex
from lightmigrate.catalog.hooks import RUN_ONCE_EPOCH_END
from lightmigrate.rules.shared.class_edit import (
    Hierarchy,
    class_defs_with_ordinals,
    taken_names,
)
from lightmigrate.rules.shared.stage_hooks import class_methods
from lightmigrate.analysis.ast_nodes import ast_nodes

# the 1.x hook -> the callbacks' 2.x hook that used to run after it, and the run-once method
CALLBACK_HOOK = {"training_epoch_end": "on_train_epoch_end", "validation_epoch_end": "on_validation_epoch_end",
                 "test_epoch_end": "on_test_epoch_end"}
RUN_ONCE = {old: name for name, stage in RUN_ONCE_EPOCH_END.items()
            for old in CALLBACK_HOOK if old.startswith(stage)}
# 2.x runs these callbacks' on_train_epoch_end after the module's (monitoring callbacks)
MONITORING_NAMES = frozenset({"ModelCheckpoint", "EarlyStopping", "Checkpoint"})
# What a body "sets" when it logs, and a callback "reads" when it reads the trainer's metrics:
# ``LOGGED + name`` for a metric named by a literal, ``ANY_LOGGED`` otherwise (which matches any).
LOGGED = "<logged>"
ANY_LOGGED = LOGGED + "*"
# A callback that reads the module's attributes under names that are not literals
# (``getattr(pl_module, name)``, ``vars(pl_module)``) reads ``ANY_ATTR``, which matches any
# attribute a body sets; a body that sets attributes so (``setattr(self, name, value)``) sets it,
# which matches any attribute a callback reads.
ANY_ATTR = "<attribute>*"
# A callback that changes a module attribute (``pl_module.X = ...``, ``pl_module.X.append(...)``)
# gets ``CHANGED + X`` too: it matters when a body reads ``X`` (1.x ran the body before the
# change). A callback that calls a module method (``pl_module.score()``) reads ``score()``, which
# a body "sets" when the method reads (also through the module's methods it calls) an attribute
# the body sets.
CHANGED = "<changed>"
_METRICS = frozenset({"callback_metrics", "logged_metrics", "progress_bar_metrics"})
_MUTATORS = frozenset({"append", "extend", "insert", "update", "add", "pop", "clear", "remove", "setdefault",
                       "copy_", "add_", "zero_", "fill_", "reset", "__setitem__"})


@dataclass(frozen=True)
class Reader:
    """A callback class whose ``hook`` reads ``attrs``, which the 1.x bodies of ``families`` set."""

    callback: ClassInfo
    hook: str
    attrs: Tuple[str, ...]
    families: Tuple[ClassInfo, ...]  # the topmost definers of the 1.x hook whose bodies set them
    linked: bool  # those families were found used with the callback (``_used_together``)
    why: Optional[str]  # a marker instead of the call: why the order cannot be kept
    guarded: bool = False  # some module it may be used with reads these attributes without the method


@dataclass(frozen=True)
class ReadPlan:
    families: FrozenSet[ClassInfo]  # the classes that get the run-once method
    readers: Tuple[Reader, ...]

    def reader(self, info: ClassInfo) -> Optional[Reader]:
        return next((r for r in self.readers if r.callback == info), None)


EMPTY = ReadPlan(frozenset(), ())
_PLANS: "weakref.WeakKeyDictionary[ProjectIndex, Dict[Tuple[str, int], ReadPlan]]" = weakref.WeakKeyDictionary()


def read_plan(index: ProjectIndex, old: str, blocked: Callable[[ClassInfo], bool]) -> ReadPlan:
    """Which callbacks of the project read, in their ``on_*_epoch_end`` for the stage of ``old``
    (``validation_epoch_end``...), what a body of ``old`` sets, and which module families
    (topmost definers of ``old``; ``blocked`` ones keep their marked hook) get the run-once
    method. Files are parsed only when a callback of the project defines the hook."""
    plans = _PLANS.setdefault(index, {})
    key = (old, index.size())
    plan = plans.get(key)
    if plan is None:
        hook = CALLBACK_HOOK[old]
        callbacks = [c for c in index.classes(mentioning=hook)
                     if hook in c.methods and index.in_lightning_hierarchy(c, CALLBACK_NAMES)]
        plan = _read_plan(index, old, hook, callbacks, blocked) if callbacks else EMPTY
        plans[key] = plans[(old, index.size())] = plan  # (listing the classes may parse lazy files)
    return plan


def _read_plan(index: ProjectIndex, old: str, hook: str, callbacks: List[ClassInfo],
               blocked: Callable[[ClassInfo], bool]) -> ReadPlan:
    reads: Dict[ClassInfo, Set[str]] = {}
    for cb in callbacks:
        if old == "training_epoch_end" and index.is_lightning_module(cb, MONITORING_NAMES):
            continue  # (2.x runs it after the module's on_train_epoch_end, as 1.x did)
        node = class_node(index, cb)
        methods = class_methods(node) if node is not None else {}
        func = methods.get(hook)
        found = (_callback_reads(func, _first_param(func, 1), _first_param(func, 2), methods, kept=_kept(methods))
                 if func is not None else set())
        if found:
            reads[cb] = found
    if not reads:
        return EMPTY
    # what each family's bodies of ``old`` set
    sets: Dict[ClassInfo, Set[str]] = {}
    held: Set[ClassInfo] = set()  # families whose hook LM001 leaves (marked, or for LM005/LM006)
    changes = {x[len(CHANGED):] for found in reads.values() for x in found if x.startswith(CHANGED)}
    calls = {x[:-2] for found in reads.values() for x in found if x.endswith("()")}
    for m in index.classes(mentioning=old):
        if old not in m.methods or not index.in_lightning_hierarchy(m):
            continue
        func_set, func_uses = _body_effects(index, m, old)
        if not func_set and not func_uses & changes:
            continue
        top = Hierarchy.of(index, m).top_definer(old)
        if blocked(top):
            held.add(top)
        got = sets.setdefault(top, set())
        got.update(func_set)
        got.update(CHANGED + x for x in func_uses & changes)
        if calls and func_set:
            got.update(f"{name}()" for name in _methods_reading(index, m, calls, func_set))
    readers = []
    families: Set[ClassInfo] = set()
    name = RUN_ONCE[old]
    for cb, attrs in reads.items():
        matched = {t: m for t, m in ((t, _matched(attrs, s)) for t, s in sets.items()) if m}
        # The families used with the callback (one file defines both, or names both); when none
        # is, those that set an attribute it reads (a metric's name says too little).
        tops = [t for t in matched if _used_together(index, cb, t)]
        linked = bool(tops)
        if not linked:
            tops = [t for t, m in matched.items() if _attributes(m) - {ANY_ATTR}]
            unsure = sorted((t for t, m in matched.items() if m & {ANY_ATTR, ANY_LOGGED}),
                            key=lambda t: (t.path, t.name, t.ordinal))
            if not tops and unsure:
                # it may read what they compute, under names built at run time: no file names it
                # with them, so whether it is used with them (and must run their body first) is
                # not known
                read = tuple(sorted(set().union(*(matched[t] for t in unsure)) & {ANY_ATTR, ANY_LOGGED}))
                why = (f"this {hook} reads {', '.join(describe(r) for r in read)}, under names built at run time, "
                       f"and {old} of {', '.join(t.name for t in unsure)} computed such values before it in 1.x "
                       f"(2.x runs the module's {hook} after it); lightmigrate cannot tell whether it reads them, and "
                       f"no file of the project uses the callback with those modules: if it does, call "
                       f"pl_module.{name}() first in this hook")
                readers.append(Reader(cb, hook, read, tuple(unsure), False, why))
                continue
        tops.sort(key=lambda t: (t.path, t.name, t.ordinal))
        if not tops:
            continue
        read = tuple(sorted(set().union(*(matched[t] for t in tops))))
        clash = [t.name for t in tops if name in taken_names(index, t)]
        kept = [t.name for t in tops if t in held]
        what = ", ".join(describe(r) for r in read)
        start = (f"this {hook} reads {what}, which {old} of {', '.join(t.name for t in tops)} computed before it "
                 f"in 1.x, and 2.x runs the module's {hook} after it")
        why = None
        if kept:
            why = (f"{start}; {', '.join(kept)} trains with several optimizers or TBPTT, whose epoch-end is "
                   f"migrated apart (or marked): run that code before this hook by hand")
        elif clash:
            why = f"{start}; {', '.join(clash)} already has a {name}: run the old body before this hook by hand"
        else:
            families.update(tops)
        readers.append(Reader(cb, hook, read, tuple(tops), linked, why))
    readers = [replace(r, guarded=_others_use(index, r.callback, families, set(r.attrs), r.linked))
               if r.why is None else r for r in readers]
    return ReadPlan(frozenset(families), tuple(readers))


def _attributes(found: Set[str]) -> Set[str]:
    """The attributes among what ``_matched`` found (not the logged metrics)."""
    return {x for x in found if not x.startswith(LOGGED)}


def _used_together(index: ProjectIndex, callback: ClassInfo, top: ClassInfo) -> bool:
    """Whether the callback may be attached to a module of ``top``'s family: they are defined in
    one file, or some file of the project (a training script, a config) names both."""
    family = [top, *index.descendants(top)]
    if any(c.path == callback.path for c in family):
        return True
    words = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in sorted({c.name for c in family})) + r")\b")
    return any(words.search(text) for text in texts_naming(index, callback.name))


_NAMING: "weakref.WeakKeyDictionary[ProjectIndex, Dict[Tuple[str, int], List[str]]]" = weakref.WeakKeyDictionary()


def texts_naming(index: ProjectIndex, name: str) -> List[str]:
    """The texts of the project's files that hold the word ``name`` (worked out once per name)."""
    key = (name, len(index.paths()))
    found = _NAMING.setdefault(index, {}).get(key)
    if found is None:
        word = re.compile(rf"\b{re.escape(name)}\b")
        texts = (_without_markers(index.text_of(path)) for path in index.paths())
        found = _NAMING[index][key] = [t for t in texts if t and name in t and word.search(t)]
    return found


_MARKER_LINE = re.compile(r"^[ \t]*#[ \t]*" + re.escape(MARKER_PREFIX) + r".*$", re.MULTILINE)


def library_callback_first(index: ProjectIndex, old: str) -> Optional[str]:
    """Why a marker goes on the module's hook that runs the 1.x body of ``old``, when the project
    uses a Lightning callback that changes the module in its own hook of that stage: 1.9.5's
    ``ModelPruning`` prunes the weights in ``on_train_epoch_end`` (in ``on_validation_epoch_end``
    with ``prune_on_train_epoch_end=False``). 1.x ran the body before it, 2.x runs it after; the
    callback is Lightning's, so it cannot be made to call the run-once method (ledger B2.2, B2.4)."""
    if old not in ("training_epoch_end", "validation_epoch_end"):
        return None
    texts = texts_naming(index, "ModelPruning")
    if old == "validation_epoch_end":
        texts = [t for t in texts if "prune_on_train_epoch_end" in t]
    if not texts:
        return None
    hook = CALLBACK_HOOK[old]
    return (f"(ledger {'B2.4' if old == 'training_epoch_end' else 'B2.2'}) ModelPruning prunes the weights in its "
            f"{hook}, which 2.x runs before this one and 1.x ran after {old}: if the body reads the weights (or runs "
            f"the model), it now sees them pruned")


def _without_markers(text: Optional[str]) -> Optional[str]:
    """``text`` without lightmigrate's marker comments (a marker that names a module does not
    link it with the callback it is on: a second run decides as the first did)."""
    return _MARKER_LINE.sub("", text) if text and MARKER_PREFIX in text else text


def _matched(reads: Set[str], sets: Set[str]) -> Set[str]:
    """What of ``reads`` (a callback's) ``sets`` (a body's) produces; a metric read or logged
    under a name that is not a literal matches every logged metric."""
    found = reads & sets
    if ANY_LOGGED in reads and any(x.startswith(LOGGED) for x in sets):
        found.add(ANY_LOGGED)
    if ANY_LOGGED in sets:
        found.update(x for x in reads if x.startswith(LOGGED))
    if ANY_ATTR in reads and any(not x.startswith(LOGGED) for x in sets):
        found.add(ANY_ATTR)
    if ANY_ATTR in sets:
        found.update(x for x in reads if not x.startswith(LOGGED))
    return found


def describe(read: str) -> str:
    """How a report names what a callback reads."""
    if read == ANY_LOGGED:
        return "the metrics it logs"
    if read == ANY_ATTR:
        return "the module's attributes"
    if read.startswith(LOGGED):
        return f"the metric {read[len(LOGGED):]!r} it logs"
    if read.startswith(CHANGED):
        return f"{read[len(CHANGED):]} (which it changes)"
    return read


def plain(read: str) -> str:
    """The attribute or method name of what a callback reads (``CHANGED + X``, ``X()``: ``X``)."""
    if read.startswith(CHANGED):
        return read[len(CHANGED):]
    return read[:-2] if read.endswith("()") else read





def _others_use(index: ProjectIndex, callback: ClassInfo, families: Set[ClassInfo], attrs: Set[str],
                linked: bool) -> bool:
    """Whether a LightningModule of the project uses one of ``attrs`` (any module may log) and
    has no run-once method (a callback written for it too must not call one). ``linked``: the
    callback's families were found used with it; so must such a module be."""
    logs = any(a.startswith(LOGGED) for a in attrs) or ANY_ATTR in attrs  # (any module may have them)
    names = {plain(a) for a in attrs}
    for c in index.kind_classes():
        if (not logs and not names & (c.attributes | c.methods)) or c in families:
            continue
        if not any(a in families for a in index.ancestors(c)[0]) and (
                not linked or _used_together(index, callback, c)):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# Reading the classes


def class_node(index: ProjectIndex, info: ClassInfo) -> Optional[ast.ClassDef]:
    """The class statement of ``info`` in the text its file was indexed from."""
    tree = index.tree_of(info.path)
    if tree is None:
        return None
    for node, ordinal in class_defs_with_ordinals(tree):
        if node.name == info.name and ordinal == info.ordinal:
            return node
    return None


def _first_param(func: ast.AST, i: int = 0) -> Optional[str]:
    a = func.args  # type: ignore[attr-defined]
    names = [p.arg for p in (*a.posonlyargs, *a.args)]
    return names[i] if i < len(names) else None


def _root_attr(node: ast.AST, s: str) -> Optional[str]:
    """``X`` when ``node`` is ``s.X`` or reaches it through attributes and subscripts (``s.X[k].y``)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        inner = node.value
        if isinstance(node, ast.Attribute) and isinstance(inner, ast.Name) and inner.id == s:
            return node.attr
        node = inner
    return None


def _body_effects(index: ProjectIndex, info: ClassInfo, old: str) -> Tuple[Set[str], Set[str]]:
    """What the class's ``old`` sets and what it reads. Sets: the attributes it sets or changes
    in place (``self.X = ...``, ``self.X[k] = ...``, ``self.X.append(...)``), also through the
    class's own methods it calls as ``self.m(...)`` (``setattr(self, "X", ...)`` too;
    ``ANY_ATTR`` when the name is not a literal); ``LOGGED`` when it logs (``self.log``,
    ``self.log_dict``). Reads: the attributes it reads as ``self.X`` (so too)."""
    node = class_node(index, info)
    if node is None:
        return set(), set()
    methods = class_methods(node)
    aliases = {t.id: st.value.id for st in node.body if isinstance(st, ast.Assign) and isinstance(st.value, ast.Name)
               for t in st.targets if isinstance(t, ast.Name)}  # ``test_epoch_end = validation_epoch_end``
    out: Set[str] = set()
    uses: Set[str] = set()
    todo, seen = [old], set()
    while todo:
        name = todo.pop()
        if name not in methods and name in aliases:
            name = aliases[name]
        func = methods.get(name)
        if func is None or name in seen:
            continue
        seen.add(name)
        s = _first_param(func)
        if s is None:
            continue
        for n in ast_nodes(func):
            if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
                root = _root_attr(n, s)
                if root is not None:
                    out.add(root)
            elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == s:
                uses.add(n.attr)
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
                  and len(n.args) >= 2 and isinstance(n.args[0], ast.Name) and n.args[0].id == s):
                key = n.args[1]
                literal = isinstance(key, ast.Constant) and isinstance(key.value, str)
                out.add(key.value if literal else ANY_ATTR)  # type: ignore[union-attr]
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                f = n.func
                if isinstance(f.value, ast.Name) and f.value.id == s:
                    if f.attr in ("log", "log_dict"):
                        key = n.args[0] if n.args and f.attr == "log" else None
                        literal = isinstance(key, ast.Constant) and isinstance(key.value, str)
                        out.add(LOGGED + key.value if literal else ANY_LOGGED)  # type: ignore[union-attr]
                    todo.append(f.attr)
                elif f.attr in _MUTATORS:
                    root = _root_attr(f.value, s) if isinstance(f.value, (ast.Attribute, ast.Subscript)) else None
                    if root is not None:
                        out.add(root)
    return out, uses


def _methods_reading(index: ProjectIndex, info: ClassInfo, names: Set[str], sets: Set[str]) -> List[str]:
    """Those of ``names`` (methods a callback calls on the module) that ``info`` or its project
    ancestors define and that read, as ``self.X`` (also through the methods they call as
    ``self.m(...)``), an attribute of ``sets``."""
    methods: Dict[str, ast.AST] = {}
    for c in reversed([info, *index.ancestors(info)[0]]):
        node = class_node(index, c)
        if node is not None:
            methods.update(class_methods(node))
    out = []
    for name in sorted(names & methods.keys()):
        todo, seen, read = [name], set(), set()
        while todo:
            func = methods.get(todo.pop())
            if func is None or func in seen:
                continue
            seen.add(func)
            s = _first_param(func)
            for n in ast_nodes(func):
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == s:
                    read.add(n.attr)
                    todo.append(n.attr)
        if read & sets:
            out.append(name)
    return out


def _kept(methods: Dict[str, ast.AST]) -> Tuple[FrozenSet[str], FrozenSet[str]]:
    """The attributes a callback keeps the module and the trainer in, set in any of its hooks
    ``(self, trainer, pl_module, ...)`` (``self.module = pl_module``, ``self.model =
    trainer.lightning_module``, ``self.trainer = trainer``): its hooks read them as those."""
    module: Set[str] = set()
    trainer: Set[str] = set()
    for func in methods.values():
        s, t, m = _first_param(func), _first_param(func, 1), _first_param(func, 2)
        if s is None or t is None:
            continue
        for n in ast_nodes(func):
            if not isinstance(n, ast.Assign):
                continue
            value = n.value
            is_module = (isinstance(value, ast.Name) and value.id == m) or (
                isinstance(value, ast.Attribute) and value.attr == "lightning_module"
                and isinstance(value.value, ast.Name) and value.value.id == t)
            is_trainer = isinstance(value, ast.Name) and value.id == t
            for target in n.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == s:
                    if is_module:
                        module.add(target.attr)
                    elif is_trainer:
                        trainer.add(target.attr)
    return frozenset(module), frozenset(trainer)


_NOTHING_KEPT: Tuple[FrozenSet[str], FrozenSet[str]] = (frozenset(), frozenset())


def _callback_reads(func: ast.AST, trainer: Optional[str], module: Optional[str],
                    methods: Dict[str, ast.AST], depth: int = 0,
                    kept: Tuple[FrozenSet[str], FrozenSet[str]] = _NOTHING_KEPT) -> Set[str]:
    """What a callback hook ``(self, trainer, pl_module)`` (``func``, its parameters ``trainer``
    and ``module``) reads of the module: the attributes of ``pl_module`` /
    ``trainer.lightning_module`` (also ``getattr(pl_module, "X")``), and, for
    ``trainer.callback_metrics`` (or the logged / progress-bar ones), ``LOGGED + key`` where it
    reads ``[key]`` or ``.get(key)`` with a literal key, ``ANY_LOGGED`` for any other use; also
    what the callback's own ``methods`` it hands them to read (``self._report(trainer, pl_module)``).
    ``kept``: the attributes of the callback that hold the module and the trainer (``_kept``);
    ``ANY_ATTR`` where it reads the module's attributes by names that are not literals
    (``getattr(pl_module, name)``, ``vars(pl_module)``, ``pl_module.__dict__``)."""
    slf = _first_param(func)
    kept_module, kept_trainer = kept
    if trainer is None and module is None and not (slf and (kept_module or kept_trainer)):
        return set()

    def is_self_attr(n: ast.AST, names: FrozenSet[str]) -> bool:
        return (isinstance(n, ast.Attribute) and n.attr in names and isinstance(n.value, ast.Name)
                and n.value.id == slf)

    def is_module(n: ast.AST) -> bool:
        if isinstance(n, ast.Name):
            return n.id == module
        return (isinstance(n, ast.Attribute) and n.attr == "lightning_module" and is_trainer(n.value)) or \
            is_self_attr(n, kept_module)

    def is_trainer(n: ast.AST) -> bool:
        if isinstance(n, ast.Name):
            return n.id == trainer
        return isinstance(n, ast.Attribute) and (n.attr == "trainer" and is_module(n.value) or
                                                 is_self_attr(n, kept_trainer))

    out: Set[str] = set()
    keyed: Set[int] = set()  # the metrics dicts read with a literal key
    nodes = list(ast_nodes(func))
    for n in nodes:
        inner, key = None, None
        if isinstance(n, ast.Subscript):
            inner, key = n.value, n.slice
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "get" and n.args):
            inner, key = n.func.value, n.args[0]
        if (isinstance(inner, ast.Attribute) and inner.attr in _METRICS and is_trainer(inner.value)
                and isinstance(key, ast.Constant) and isinstance(key.value, str)):
            out.add(LOGGED + key.value)
            keyed.add(id(inner))

    def changed(n: ast.AST) -> Optional[str]:  # X when ``n`` is ``<module>.X`` or reaches it (``.X[k].y``)
        while isinstance(n, (ast.Attribute, ast.Subscript)):
            if isinstance(n, ast.Attribute) and is_module(n.value):
                return n.attr
            n = n.value
        return None

    for n in nodes:
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, (ast.Store, ast.Del)):
            name = changed(n)
            if name is not None:
                out.add(CHANGED + name)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if is_module(n.func.value):
                out.add(n.func.attr + "()")
            elif n.func.attr in _MUTATORS:
                name = changed(n.func.value)
                if name is not None:
                    out.add(CHANGED + name)
        if isinstance(n, ast.Attribute):
            if is_module(n.value):
                out.add(ANY_ATTR if n.attr == "__dict__" else n.attr)
            elif n.attr in _METRICS and is_trainer(n.value) and id(n) not in keyed:
                out.add(ANY_LOGGED)
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr", "setattr")
              and len(n.args) >= 2 and is_module(n.args[0])):
            key = n.args[1]
            literal = isinstance(key, ast.Constant) and isinstance(key.value, str)
            out.add(key.value if literal else ANY_ATTR)  # type: ignore[union-attr]
            if literal and n.func.id == "setattr":
                out.add(CHANGED + key.value)  # type: ignore[union-attr]
        elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "vars"
              and len(n.args) == 1 and is_module(n.args[0])):
            out.add(ANY_ATTR)
        elif (depth < 3 and isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and isinstance(n.func.value, ast.Name) and n.func.value.id == _first_param(func)
              and n.func.attr in methods):
            out |= _handed_on(n, methods[n.func.attr], is_trainer, is_module, methods, depth, kept)
    return out


def _handed_on(call: ast.Call, callee: ast.AST, is_trainer: Callable[[ast.AST], bool],
               is_module: Callable[[ast.AST], bool], methods: Dict[str, ast.AST], depth: int,
               kept: Tuple[FrozenSet[str], FrozenSet[str]] = _NOTHING_KEPT) -> Set[str]:
    """What the callback's method ``callee`` reads of the trainer and module ``call`` hands it
    (positionally or by keyword)."""
    a = callee.args  # type: ignore[attr-defined]
    params = [p.arg for p in (*a.posonlyargs, *a.args)][1:]
    given = [(params[i] if i < len(params) else None, v) for i, v in enumerate(call.args)]
    given += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    trainer = next((p for p, v in given if p is not None and is_trainer(v)), None)
    module = next((p for p, v in given if p is not None and is_module(v)), None)
    return _callback_reads(callee, trainer, module, methods, depth + 1, kept)


def calls_run_once(func: ast.AST, name: str) -> bool:
    """Whether the hook ``func`` already calls ``<module>.name()`` (a second run)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name
               for n in ast_nodes(func))


def module_param(func: ast.AST) -> Optional[str]:
    """The name of the module parameter of a callback hook ``(self, trainer, pl_module)``."""
    return _first_param(func, 2)


__all__ = [
    "ANY_LOGGED",
    "CALLBACK_HOOK",
    "CHANGED",
    "EMPTY",
    "LOGGED",
    "RUN_ONCE",
    "ReadPlan",
    "Reader",
    "calls_run_once",
    "class_node",
    "describe",
    "library_callback_first",
    "module_param",
    "plain",
    "read_plan",
]
