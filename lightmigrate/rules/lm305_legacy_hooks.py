"""LM305: legacy hooks with a 2.x equivalent are renamed (with the parameters 2.x passes).

Lightning removed these hooks in 1.6-1.9, and 2.x silently never calls them (spec M25, M27,
A.8 "Hooks"). Where the replacement runs at the same point with the same meaning, the method is
renamed:

- ``configure_sharded_model`` -> ``configure_model`` (module; deprecated in 2.1, the same hook);
- ``on_pretrain_routine_start`` / ``on_pretrain_routine_end`` -> ``on_fit_start`` (module and
  callback; both ran once per ``fit`` before training);
- callback ``on_batch_start`` / ``on_batch_end`` -> ``on_train_batch_start`` /
  ``on_train_batch_end`` (they ran around each training batch), gaining ``batch, batch_idx``
  (and ``outputs``);
- callback ``on_keyboard_interrupt`` -> ``on_exception`` with the body under
  ``if isinstance(exception, KeyboardInterrupt):`` (1.7-1.9 already ignored it silently; this
  brings back what 1.6 did);
- callback ``on_configure_sharded_model`` / ``on_before_accelerator_backend_setup`` ->
  ``setup(trainer, pl_module, stage)``.

Nothing is renamed when the class already defines the target or when two old hooks map to one
target: LM002 then marks the old hook. A ``super()`` call with the old name inside the renamed
method becomes one to the new name, when the base it reaches is Lightning's (whose 1.x hook did
nothing), a class outside the run, or a class of the run whose own hook is renamed the same way;
otherwise nothing is renamed and LM002 marks the hook. Hooks whose mapping is a human's choice
(``on_epoch_start/end``: train, validation or test? ``on_init_*``, ``on_hpc_save/load``,
``get_progress_bar_dict``) stay marked by LM002.

``super()`` calls to a legacy hook from other methods (``super().on_epoch_start(trainer,
pl_module)`` in a callback's ``on_train_epoch_start``): 1.x's base classes defined these hooks
as no-ops, 2.x's raise ``AttributeError``. Such a call is dropped when every base it may reach
is known and none of the run defines the hook (it reaches Lightning's ``Callback`` or
``LightningModule``); it follows a base hook of the run that this rule renames (without new
parameters); it stays when it reaches a user's own method; and it is marked when a base outside
the run (or a Lightning subclass such as ``ModelCheckpoint``) may define it.

A class whose bases lie outside the run (``class Model(BaseModel)``, ``from mylib import
BaseModel``) is taken as a LightningModule or Callback when one of its methods, named after a
hook and taking that hook's parameters, calls ``super()`` with its own name
(``rules/shared/legacy_super.inferred_kinds``); its legacy hooks are then renamed the same way.
A module's ``on_batch_start/end`` are not renamed: 1.6-1.9 never called them (LM002 marks them).
"""

from __future__ import annotations

from collections import Counter
import ast
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from lightmigrate.cst.helpers import (
    body_of,
    fresh_name,
    param_names,
    parse_statements,
    self_name,
    with_body,
)
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.aliases import keep_aliases_valid
from lightmigrate.rules.shared.class_edit import CallRenamer, KindTransformer, kind_classes
from lightmigrate.rules.shared.method_sites import (
    calls_super, class_line, has_star_params, index_source, methods, positional,
)
from lightmigrate.rules.shared.hooksa_ast import char_col
from lightmigrate.catalog.hooks import removed_table
from lightmigrate.rules.shared.legacy_super import LEGACY_NOOP_HOOKS, SUPER_TRIGGERS, inferred_kinds, super_calls
from lightmigrate.cst.helpers import add_markers, marker_text, super_call_attr
from lightmigrate.cst.walk import transform, find_all, PrunedTransformer
from lightmigrate.analysis.ast_nodes import ast_nodes

CODE = "LM305"

# old name -> (new name, parameters to append after the old ones, old positional count after self)
MODULE_RENAMES: Dict[str, Tuple[str, Tuple[str, ...], int]] = {
    "configure_sharded_model": ("configure_model", (), 0),
    "on_pretrain_routine_start": ("on_fit_start", (), 0),
    "on_pretrain_routine_end": ("on_fit_start", (), 0),
}
CALLBACK_RENAMES: Dict[str, Tuple[str, Tuple[str, ...], int]] = {
    "on_pretrain_routine_start": ("on_fit_start", (), 2),
    "on_pretrain_routine_end": ("on_fit_start", (), 2),
    "on_batch_start": ("on_train_batch_start", ("batch", "batch_idx"), 2),
    "on_batch_end": ("on_train_batch_end", ("outputs", "batch", "batch_idx"), 2),
    "on_keyboard_interrupt": ("on_exception", ("exception",), 2),
    "on_configure_sharded_model": ("setup", ("stage",), 2),
    "on_before_accelerator_backend_setup": ("setup", ("stage",), 2),
}


def _add_params(func: cst.FunctionDef, names: Tuple[str, ...]) -> Tuple[cst.FunctionDef, List[str]]:
    taken = set(param_names(func))
    body_names = {n.value for n in _names(func)}
    added = []
    params = list(func.params.params)
    if params:
        params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    for base in names:
        name = fresh_name(base, taken | body_names)
        taken.add(name)
        added.append(name)
        params.append(cst.Param(cst.Name(name)))
    return func.with_changes(params=func.params.with_changes(params=params)), added


def _names(func: cst.FunctionDef) -> List[cst.Name]:
    return list(find_all(func.body, cst.Name))  # type: ignore[arg-type]


_KINDS = frozenset({"module", "callback"})
_DEPTH = 30  # how far up a hierarchy the super() questions follow
_CORE_BASES = frozenset({"LightningModule", "Callback"})


def _table(kind: str) -> Dict[str, Tuple[str, Tuple[str, ...], int]]:
    return MODULE_RENAMES if kind == "module" else CALLBACK_RENAMES


def _renames(cls, kind: str, ctx: Optional[RuleContext] = None, path: str = "") -> List[Tuple[object, str, str]]:
    """The methods of the class statement ``cls`` (of ``kind``) that are renamed, as (the ``def``
    node, old name, new name): those in the kind's table whose target the class does not
    define, that no other old hook of the class maps to, carry no decorator, and take exactly
    the positional parameters 1.x passed. One that calls ``super()`` with the old name is
    renamed only when that call can follow it (:func:`_super_follows`: the ``super()`` call
    becomes one to the new name)."""
    table = _table(kind)
    funcs = methods(cls)
    defined = {f.name for f in funcs}
    targets = Counter(table[f.name][0] for f in funcs if f.name in table)
    info = ctx.project.resolve(cls.name, path) if ctx is not None else None
    out = []
    for func in funcs:
        if func.name not in table:
            continue
        new, _, count = table[func.name]
        if new in defined or targets[new] > 1 or func.decorator_list:
            continue
        if has_star_params(func) or len(positional(func)) != count + 1:
            continue
        if calls_super(func, func.name) and (info is None or not _super_follows(ctx, info, func.name, new, kind)):
            continue
        out.append((func, func.name, new))
    return out


def _info_renames(ctx: RuleContext, info, kind: str, depth: int) -> Dict[str, str]:
    """What :func:`_renames` renames in the class ``info`` of the index (old -> new), read from
    the index's record of it (its methods, their parameters and ``super()`` calls; decorators
    are not recorded there)."""
    table = _table(kind)
    olds = [name for name in info.methods if name in table and name in info.params]
    targets = Counter(table[name][0] for name in olds)
    out = {}
    for old in olds:
        new, _, count = table[old]
        params = info.params[old]
        if new in info.methods or targets[new] > 1 or any(p.startswith("*") for p in params):
            continue
        if len(params) != count + 1:
            continue
        if old in info.super_calls.get(old, ()) and not _super_follows(ctx, info, old, new, kind, depth + 1):
            continue
        out[old] = new
    return out


def _super_target(ctx: RuleContext, info, name: str):
    """Where ``super().name`` in the class ``info`` leads: (the nearest known ancestor that
    defines ``name``, None) or (None, whether every base of the hierarchy is known)."""
    index = ctx.project
    complete = True
    seen = {(info.name, info.path)}
    todo = [(info, base) for base in info.bases]
    while todo:  # nearest first, depth-first like a single-inheritance MRO (as ``ancestors``)
        child, base = todo.pop(0)
        last = base.rsplit(".", 1)[-1]
        if last == "object":
            continue
        found = index.resolve(last, child.path)
        if found is None or (found.name, found.path) in seen:
            # Lightning's own base class: its 1.x hook did nothing; any other (a Lightning
            # subclass such as ModelCheckpoint, a class outside the run) may define it
            complete = complete and last in _CORE_BASES
            continue
        seen.add((found.name, found.path))
        if name in found.methods:
            return found, complete
        todo[:0] = [(found, b) for b in found.bases]
    return None, complete


def _super_follows(ctx: RuleContext, info, old: str, new: str, kind: str, depth: int = 0) -> bool:
    """Whether ``super().old(...)`` in the class ``info`` may become ``super().new(...)`` when the
    method holding it is renamed from ``old`` to ``new``: the base it reaches is Lightning's (or
    one outside the run, whose 1.x-era hook would be renamed the same way), or a class of the
    run whose own ``old`` LM305 renames to ``new`` too."""
    if depth > _DEPTH:
        return False
    anc, _ = _super_target(ctx, info, old)
    if anc is None:
        return True
    return _info_renames(ctx, anc, kind, depth + 1).get(old) == new


def _super_sites(cls, kind: str, ctx: RuleContext, path: str, source: SourceFile,
                 renamed: Dict[object, str]) -> List[Site]:
    """One site per ``super().OLD(...)`` call to a legacy hook in a method of ``cls`` that is not
    the method renamed from ``OLD`` (that call follows the rename): ``drop`` when the call
    reaches Lightning's base class, whose 1.x hook did nothing and whose 2.x class has no such
    attribute; ``redirect`` to the new name when it reaches a class of the run whose hook is
    renamed without new parameters; ``mark`` when it reaches a base outside the run or a hook
    renamed with new parameters. A call reaching a class of the run that keeps the hook stays."""
    names = LEGACY_NOOP_HOOKS[kind] | frozenset(_table(kind))
    info = None
    out: List[Site] = []
    lines: Optional[List[str]] = None
    dead = removed_table(kind)
    for func in methods(cls):
        if func.name in dead and func not in renamed:
            continue  # a hook 2.x never calls: LM002 marks the method itself
        parents = None
        for call in super_calls(func, names):
            old = call.func.attr  # type: ignore[attr-defined]
            if renamed.get(func) == old:
                continue
            if info is None:
                info = ctx.project.resolve(cls.name, path)
                if info is None:
                    return []
            anc, complete = _super_target(ctx, info, old)
            if anc is not None:
                new = _info_renames(ctx, anc, kind, 0).get(old)
                if new is None:
                    continue  # the user's own method: the call still works
                if not _table(kind)[old][1]:
                    action, data = "redirect", new
                else:
                    action, data = "mark", (f"`super().{old}(...)` reaches `{anc.name}.{old}`, which LM305 renamed to "
                                            f"`{new}` with new parameters; call `super().{new}(...)` with them")
            elif old not in LEGACY_NOOP_HOOKS[kind]:
                continue
            else:
                if parents is None:
                    parents = _statement_parents(func)
                stmt = parents.get(id(call))
                if complete and stmt is not None:
                    if lines is None:
                        lines = source.text.splitlines()
                    if _alone_on_its_lines(stmt, lines):
                        action, data = "drop", None
                    else:
                        action, data = "mark", _why_missing(old, kind, True)
                else:
                    action, data = "mark", _why_missing(old, kind, complete)
            col = char_col(source, call.lineno, call.col_offset)
            out.append(Site(call.lineno, col, cls.name, "super", (old, action, cls.lineno, data, func.lineno)))
    return out


def _why_missing(old: str, kind: str, complete: bool) -> str:
    base = "LightningModule" if kind == "module" else "Callback"
    why = (f"`super().{old}(...)`: Lightning 2.x's {base} no longer has `{old}` (removed in 1.8), so this call "
           f"raises AttributeError; in 1.x it did nothing")
    if complete:
        return why + "; remove it"
    return why + " unless a base class outside this run defines it; remove it otherwise"


def _statement_parents(func) -> Dict[int, ast.stmt]:
    """id(call) -> the expression statement it is, for ``super()`` calls that make up a whole
    expression statement."""
    out: Dict[int, ast.stmt] = {}
    for node in ast_nodes(func):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            out[id(node.value)] = node
    return out


def _alone_on_its_lines(stmt: ast.stmt, lines: List[str]) -> bool:
    """Whether ``stmt`` starts its line and nothing but a comment follows it (no ``;``)."""
    first = lines[stmt.lineno - 1]
    last = lines[stmt.end_lineno - 1] if stmt.end_lineno else ""
    head = first[:stmt.col_offset] if first.isascii() else first.encode("utf-8")[:stmt.col_offset].decode("utf-8", "replace")
    tail = last[stmt.end_col_offset:] if last.isascii() else last.encode("utf-8")[stmt.end_col_offset:].decode("utf-8", "replace")
    return not head.strip() and (not tail.strip() or tail.strip().startswith("#"))


class _SuperCalls(PrunedTransformer):
    """In one method: ``super()`` calls (the original nodes in ``redirect``) get the new name
    there, those in ``drop`` lose their statement (a block left empty gets ``pass``; comment
    lines above a dropped statement move to the next one)."""

    def __init__(self, redirect: Dict[cst.Call, Tuple[str, Tuple[str, ...]]], drop: frozenset) -> None:
        self.redirect = redirect
        self.drop = drop

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        target = self.redirect.get(original)
        if target is None or not isinstance(updated.func, cst.Attribute):
            return updated
        new, extra = target
        args = list(updated.args)
        if extra:
            if args:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            args.extend(cst.Arg(cst.Name(name)) for name in extra)
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name(new)), args=args)

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        if not any(stmt in self.drop for stmt in original.body):
            return updated
        kept: List[cst.BaseStatement] = []
        carried: List[cst.EmptyLine] = []
        for before, after in zip(original.body, updated.body):
            if before in self.drop:
                carried.extend(line for line in after.leading_lines if line.comment is not None)
                continue
            if carried:
                after = after.with_changes(leading_lines=[*after.leading_lines, *carried])
                carried = []
            kept.append(after)
        if not kept:
            kept = [cst.SimpleStatementLine([cst.Pass()], leading_lines=carried)]
        return updated.with_changes(body=kept)


class _Fix(KindTransformer):
    """Renames the methods the sites name (data: the old name, the new one and the line of the
    class statement), with the ``super()`` calls to the old name in them; carries out the
    ``super`` sites (redirect, drop or mark a ``super()`` call to a legacy hook)."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site],
                 inferred: Dict[Tuple[str, int], str]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target for s in sites), inferred=inferred)
        self.sites = sites

    def edit_class(self, kind, original, updated):
        table = _table(kind)
        line = class_line(self.ctx, self.module, original)
        mine = [s for s in self.sites if s.target == original.name.value and s.data[2] == line]
        wanted = {s.data[0] for s in mine if s.action == "rename"}
        supers = {(s.line, s.col + 1): s for s in mine if s.action == "super"}
        items = list(updated.body.body)
        renames: Dict[str, str] = {}
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            before = original.body.body[i]
            old = item.name.value
            renaming = old in wanted
            if supers or renaming:
                item = self._supers(item, before, supers, old if renaming else None, table)
            if not renaming:
                items[i] = item
                continue
            new, extra, _ = table[old]
            func, added = _add_params(item, extra)
            if extra:  # ``super().OLD(args)`` in it became ``super().NEW(args)``: pass the new ones too
                func = self._supers(func, func, {}, None, table, appended={new: tuple(added)})
            if old == "on_keyboard_interrupt":
                func = self._guard(func, added[0])
            items[i] = func.with_changes(name=cst.Name(new))
            renames[old] = new
            self.report(CODE, before, f"{self.class_name}.{old} -> {new}")
        if renames:
            # other methods calling self.OLD(): only hooks without new parameters keep their call shape
            plain = {o: n for o, n in renames.items() if not table[o][1]}
            if plain:
                items = [transform(it, CallRenamer(self_name(it), plain, supers=False))
                         if isinstance(it, cst.FunctionDef) else it for it in items]
            # class-body aliases of a renamed hook follow it (or get a marker when its parameters changed)
            keep_aliases_valid(items, plain, [it.name.value for it in original.body.body
                                              if isinstance(it, cst.FunctionDef)],
                               CODE, reshaped={o: n for o, n in renames.items() if o not in plain})
        if items == list(updated.body.body):
            return updated
        return updated.with_changes(body=updated.body.with_changes(body=items))

    def _supers(self, item: cst.FunctionDef, before: cst.CSTNode, supers: Dict, renamed_from: Optional[str],
                table, appended: Optional[Dict[str, Tuple[str, ...]]] = None) -> cst.FunctionDef:
        """``item`` with its ``super()`` calls edited: those of the ``super`` sites (found by the
        positions of ``before``, the original method: only when ``item`` is still that node),
        those to ``renamed_from`` (the method's old name) redirected to its new name, and, with
        ``appended``, the calls to a new name given the new parameters."""
        redirect: Dict[cst.Call, Tuple[str, Tuple[str, ...]]] = {}
        drop = set()
        marks: List[str] = []
        for call in find_all(item, cst.Call):
            name = super_call_attr(call)
            if name is None:
                continue
            if appended is not None:
                if name in appended:
                    redirect[call] = (name, appended[name])
                continue
            if name == renamed_from:
                redirect[call] = (table[name][0], ())
                continue
            if item is not before:
                continue
            site = supers.get(self.ctx.position(self.module, call))
            if site is None:
                continue
            old, action, _, data = site.data[:4]
            if action == "redirect":
                redirect[call] = (data, ())
                self.report(CODE, call, f"{self.class_name}.{item.name.value}: super().{old}(...) -> super().{data}(...)")
            elif action == "drop":
                drop.add(call)
                self.report(CODE, call, f"{self.class_name}.{item.name.value}: removed super().{old}(...) "
                                        "(a no-op in 1.x; AttributeError on 2.x)")
            else:
                marks.append(data)
        if drop:
            drop = {stmt for stmt in find_all(item, cst.SimpleStatementLine)
                    if len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value in drop}
        if redirect or drop:
            item = transform(item, _SuperCalls(redirect, frozenset(drop)))
        if marks:
            item = add_markers(item, CODE, marks)
        return item

    @staticmethod
    def _guard(func: cst.FunctionDef, exc: str) -> cst.FunctionDef:
        stmts = body_of(func)
        doc: List = []
        if stmts and isinstance(stmts[0], cst.SimpleStatementLine) and isinstance(stmts[0].body[0], cst.Expr) \
                and isinstance(stmts[0].body[0].value, cst.SimpleString):
            doc, stmts = [stmts[0]], stmts[1:]
        (guard,) = parse_statements(f"if isinstance({exc}, KeyboardInterrupt):\n    pass\n")
        assert isinstance(guard, cst.If)
        inner = [s.with_changes(leading_lines=s.leading_lines) for s in stmts] or guard.body.body
        guard = guard.with_changes(body=guard.body.with_changes(body=inner))
        return with_body(func, [*doc, guard])


class LegacyHooksRule(Rule):
    code = CODE
    name = "legacy-hooks"
    summary = "Renames legacy hooks that 2.x never calls to their 2.x equivalents (on_batch_end, on_keyboard_interrupt...)."
    spec_rows = ("M25", "M27", "A8-hooks")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (rows on configure_sharded_model, "
             "on_pretrain_routine_*, on_batch_*, on_keyboard_interrupt, on_configure_sharded_model; the 1.6-1.8 "
             "upgrade tables; PRs 18004, 11578, 12122, 14834)")
    safety = Safety.REVIEW
    triggers = ("configure_sharded_model", "on_pretrain_routine_", "def on_batch_", "on_keyboard_interrupt",
                "on_before_accelerator_backend_setup", *SUPER_TRIGGERS)
    description = (
        "Lightning 2.x silently never calls hooks removed in 1.6-1.9. Where the 2.x hook runs at the same "
        "point, the method is renamed and given the parameters 2.x passes: `configure_sharded_model` -> "
        "`configure_model`, `on_pretrain_routine_start/end` -> `on_fit_start`, callback `on_batch_start/end` "
        "-> `on_train_batch_start/end(trainer, pl_module, [outputs,] batch, batch_idx)`, "
        "`on_keyboard_interrupt` -> `on_exception` guarded by `isinstance(exception, KeyboardInterrupt)`, "
        "`on_configure_sharded_model` / `on_before_accelerator_backend_setup` -> `setup(trainer, pl_module, "
        "stage)`. A `super()` call with the old name follows the rename; one to a legacy hook from another method "
        "is dropped where it reaches Lightning's base class (a no-op in 1.x, AttributeError on 2.x), redirected "
        "where it reaches a base hook renamed here, and marked where a base outside the run may define the hook. "
        "Classes whose Lightning base lies outside the run are recognised by a hook calling `super()` with its own "
        "name. Needs review: 1.x code with these hooks predates 1.9 (most raised there, and 1.7-1.9 silently "
        "ignored `on_keyboard_interrupt`), so no 1.9 run can confirm the timing. When the target already exists (or two old hooks map to it) nothing is "
        "renamed and LM002 marks the old hook; `on_epoch_start/end`, `on_init_*` and `on_hpc_save/load` "
        "need a human's choice and stay marked by LM002."
    )
    coverage = {"M25": Handling.REWRITTEN, "M27": Handling.REWRITTEN, "A8-hooks": Handling.REWRITTEN}
    examples = (
        Example(
            title="callback hooks",
            before='''\
from pytorch_lightning import Callback


class Watch(Callback):
    def on_batch_end(self, trainer, pl_module):
        self.count += 1

    def on_keyboard_interrupt(self, trainer, pl_module):
        print("interrupted")
        trainer.save_checkpoint("last.ckpt")
''',
            after='''\
from pytorch_lightning import Callback


class Watch(Callback):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.count += 1

    def on_exception(self, trainer, pl_module, exception):
        if isinstance(exception, KeyboardInterrupt):
            print("interrupted")
            trainer.save_checkpoint("last.ckpt")
''',
        ),
        Example(
            title="module hooks",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def configure_sharded_model(self):
        self.block = make_block()

    def on_pretrain_routine_start(self):
        self.started = True
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def configure_model(self):
        self.block = make_block()

    def on_fit_start(self):
        self.started = True
''',
        ),
        Example(
            title="super() calls to legacy hooks",
            before='''\
from pytorch_lightning import Callback


class Timer(Callback):
    def on_pretrain_routine_start(self, trainer, pl_module):
        super().on_pretrain_routine_start(trainer, pl_module)
        self.fits = 0

    def on_train_epoch_start(self, trainer, pl_module):
        super().on_epoch_start(trainer, pl_module)
        self.fits += 1
''',
            after='''\
from pytorch_lightning import Callback


class Timer(Callback):
    def on_fit_start(self, trainer, pl_module):
        super().on_fit_start(trainer, pl_module)
        self.fits = 0

    def on_train_epoch_start(self, trainer, pl_module):
        self.fits += 1
''',
        ),
        Example(
            title="the target exists already: left for LM002 to mark",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_pretrain_routine_end(self):
        self.a = 1

    def on_fit_start(self):
        self.b = 2
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # One site per renamed method, and one per ``super()`` call to a legacy hook that must
        # change, in the module and callback classes of the file (also those whose Lightning
        # base lies outside the run: ``inferred_kinds``, then named in the sites' ``data``).
        index_source(source, ctx)
        sites = []
        classes = [(cls, kind, False) for cls, kind in kind_classes(source, ctx, _KINDS)]
        classes += [(cls, kind, True) for cls, kind in inferred_kinds(source, ctx, _KINDS, [c for c, _, _ in classes])]
        for cls, kind, inferred in classes:
            renamed = {}
            for func, old, new in _renames(cls, kind, ctx, ctx.path):
                renamed[func] = old
                sites.append(Site(func.lineno, func.col_offset, cls.name, "rename", (old, new, cls.lineno, kind, inferred)))
            if "super(" in source.text:
                for site in _super_sites(cls, kind, ctx, ctx.path, source, renamed):
                    old, action, line, data, def_line = site.data
                    if action == "mark" and marker_text(CODE, data) in source.text:
                        continue
                    sites.append(Site(site.line, site.col, site.target, "super",
                                      (old, action, line, data, def_line, kind, inferred)))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        inferred = {(s.target, s.data[2]): s.data[-2] for s in sites if s.data[-1]}
        return transform(module, _Fix(ctx, module, sites, inferred))
