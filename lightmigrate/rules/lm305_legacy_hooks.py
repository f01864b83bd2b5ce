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

Nothing is renamed when the class already defines the target, when two old hooks map to one
target, or when the body calls ``super()`` with the old name: LM002 then marks the old hook.
Hooks whose mapping is a human's choice (``on_epoch_start/end``: train, validation or test?
``on_init_*``, ``on_hpc_save/load``, ``get_progress_bar_dict``) stay marked by LM002.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, List, Sequence, Tuple

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
from lightmigrate.cst.walk import transform, find_all

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
    import libcst.matchers as m
    return list(find_all(func.body, m.Name()))  # type: ignore[arg-type]


_KINDS = frozenset({"module", "callback"})


def _renames(cls, kind: str) -> List[Tuple[object, str, str]]:
    """The methods of the class statement ``cls`` (of ``kind``) that are renamed, as (the ``def``
    node, old name, new name): those in the kind's table whose target the class does not
    define, that no other old hook of the class maps to, that do not call ``super()`` with the
    old name, carry no decorator, and take exactly the positional parameters 1.x passed."""
    table = MODULE_RENAMES if kind == "module" else CALLBACK_RENAMES
    funcs = methods(cls)
    defined = {f.name for f in funcs}
    targets = Counter(table[f.name][0] for f in funcs if f.name in table)
    out = []
    for func in funcs:
        if func.name not in table:
            continue
        new, _, count = table[func.name]
        if new in defined or targets[new] > 1 or func.decorator_list or calls_super(func, func.name):
            continue
        if has_star_params(func) or len(positional(func)) != count + 1:
            continue
        out.append((func, func.name, new))
    return out


class _Fix(KindTransformer):
    """Renames the methods the sites name (data: the old name, the new one and the line of the
    class statement)."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target for s in sites))
        self.sites = sites

    def edit_class(self, kind, original, updated):
        table = MODULE_RENAMES if kind == "module" else CALLBACK_RENAMES
        line = class_line(self.ctx, self.module, original)
        wanted = {s.data[0] for s in self.sites if s.target == original.name.value and s.data[2] == line}
        items = list(updated.body.body)
        renames: Dict[str, str] = {}
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef) or item.name.value not in wanted:
                continue
            old = item.name.value
            new, extra, _ = table[old]
            func, added = _add_params(item, extra)
            if old == "on_keyboard_interrupt":
                func = self._guard(func, added[0])
            items[i] = func.with_changes(name=cst.Name(new))
            renames[old] = new
            self.report(CODE, original.body.body[i], f"{self.class_name}.{old} -> {new}")
        if not renames:
            return updated
        # other methods calling self.OLD(): only hooks without new parameters keep their call shape
        plain = {o: n for o, n in renames.items() if not table[o][1]}
        if plain:
            items = [transform(it, CallRenamer(self_name(it), plain)) if isinstance(it, cst.FunctionDef) else it
                     for it in items]
        # class-body aliases of a renamed hook follow it (or get a marker when its parameters changed)
        keep_aliases_valid(items, plain, [it.name.value for it in original.body.body if isinstance(it, cst.FunctionDef)],
                           CODE, reshaped={o: n for o, n in renames.items() if o not in plain})
        return updated.with_changes(body=updated.body.with_changes(body=items))

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
                "on_before_accelerator_backend_setup")
    description = (
        "Lightning 2.x silently never calls hooks removed in 1.6-1.9. Where the 2.x hook runs at the same "
        "point, the method is renamed and given the parameters 2.x passes: `configure_sharded_model` -> "
        "`configure_model`, `on_pretrain_routine_start/end` -> `on_fit_start`, callback `on_batch_start/end` "
        "-> `on_train_batch_start/end(trainer, pl_module, [outputs,] batch, batch_idx)`, "
        "`on_keyboard_interrupt` -> `on_exception` guarded by `isinstance(exception, KeyboardInterrupt)`, "
        "`on_configure_sharded_model` / `on_before_accelerator_backend_setup` -> `setup(trainer, pl_module, "
        "stage)`. Needs review: 1.x code with these hooks predates 1.9 (most raised there, and 1.7-1.9 silently "
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
        # One site per renamed method, in the module and callback classes of the file.
        index_source(source, ctx)
        sites = []
        for cls, kind in kind_classes(source, ctx, _KINDS):
            for func, old, new in _renames(cls, kind):
                sites.append(Site(func.lineno, func.col_offset, cls.name, "rename", (old, new, cls.lineno)))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        return transform(module, _Fix(ctx, module, sites))
