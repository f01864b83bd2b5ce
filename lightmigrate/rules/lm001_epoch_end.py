"""LM001: ``*_epoch_end(outputs)`` hooks become ``on_*_epoch_end`` with explicit output buffers.

Lightning 2.0 removed ``training_epoch_end``, ``validation_epoch_end`` and ``test_epoch_end``
(it raises ``NotImplementedError`` at ``fit``/``validate``/``test`` when they exist) and
changed ``on_predict_epoch_end(self, results)`` to take no argument. The rewrite hands the old
body exactly what 1.9 handed it (spec B.1, B.7):

- training: the dict each batch passed to ``on_train_batch_end`` (loss detached and divided by
  ``accumulate_grad_batches``, a bare tensor wrapped as ``{"loss": ...}``), skipping batches
  whose step returned None;
- validation/test: the raw step outputs without Nones, a flat list for one dataloader and a
  list per dataloader otherwise, reset at each epoch start so sanity-check outputs never leak;
- predict: one list per dataloader, as ``results`` was.

Two shapes of output code:

- *inline* (the common case): the old body becomes the body of ``on_*_epoch_end`` and reads
  the buffer into the old parameter name; when the body never used ``outputs``, a plain rename.
- *helper*: when the hook takes part in inheritance (a subclass overrides it or calls
  ``super()``), is called directly (``self.validation_epoch_end(outputs)``), or cannot be merged
  into an existing ``on_*_epoch_end`` safely, the old method keeps its body and signature under
  a private name (``_validation_epoch_end``) and ``on_*_epoch_end`` calls it. Dispatch then works
  exactly as it did in 1.9.
- *run-once* (issue 21 kind 6, spec B.2): 1.9 ran the body before every callback's
  ``on_*_epoch_end``, 2.x runs the module's hook after them. When a callback of the project reads
  there what the body computed, or changes what it reads (``rules/shared/epoch_end_readers.py``
  decides which), the body
  (or the call of the helper) moves into ``_finish_validation_epoch()`` (...), which returns at
  once when it ran already since the epoch started (its buffer, reset then, is None): the
  callback's hook calls it first, the module's ``on_*_epoch_end`` calls it too.

When the class's line defines ``on_train_batch_start`` (which can return -1 and end an epoch
before its first batch), the training body is kept as a helper and called only after an epoch
that completed a batch: 1.9 did not call ``training_epoch_end`` for an epoch without one.

*after the monitors* (ledger B2.6, ``rules/shared/after_monitors.py``): 1.9 ran ModelCheckpoint's
and EarlyStopping's ``on_train_epoch_end`` before the module's, 2.x after it. In a class whose
removed epoch-end hook this run migrates (the evidence that its ``on_train_epoch_end`` is 1.x
code), in a project that monitors a metric, an ``on_train_epoch_end`` that logs becomes
``_train_epoch_end_after_monitors()``, which a ``Checkpoint`` callback returned by a new
``configure_callbacks`` calls (2.x runs Checkpoint callbacks last); what LM001 moves there from
``training_epoch_end`` stays in ``on_train_epoch_end`` (1.9's callbacks saw it the same epoch).

Two more 1.9 facts (issue 26, ledger B1.18 and B4.3):

- 1.9 raised ``MisconfigurationException`` when ``training_epoch_end`` returned anything but
  None; 2.x ignores what ``on_train_epoch_end`` returns, so each ``return <value>`` of the moved
  body gets a marker (the 1.9 code crashed there: nothing is rewritten);
- after a training step that returned None 1.9 passed ``[]`` to ``on_train_batch_end``, 2.x
  passes ``{}``: a module's or callback's ``on_train_batch_end`` that compares ``outputs`` with a
  list/dict or asks its type starts by turning ``{}`` into ``[]``
  (``shared/batch_end_outputs.py``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import partial
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from lightmigrate.cst.helpers import (
    BodyFacts,
    Statement,
    add_marker,
    append_statements,
    blank_lines,
    body_of,
    drop_docstring,
    ensure_import,
    fresh_name,
    has_star_params,
    insert_before,
    insert_top_level,
    keep_only_params,
    param_names,
    parse_method,
    parse_statements,
    prepend_statements,
    self_name,
    set_param_default,
    split_docstring,
    super_call_attr,
    with_body,
)
from lightmigrate.output.findings import Kind
from lightmigrate.analysis.project import CALLBACK_NAMES, ClassInfo, ProjectIndex
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import (
    Hierarchy,
    ast_class_defs,
    calls_super,
    class_defs_with_ordinals,
    class_kind,
    hook_classes,
    migrate_classes,
    taken_names,
)
from lightmigrate.rules.shared.mro import injection_covers, injection_point, mixin_shadowing
from lightmigrate.rules.shared.aliases import ast_alias_bound
from lightmigrate.rules.shared.epoch_end_readers import (
    CALLBACK_HOOK,
    RUN_ONCE,
    ReadPlan,
    calls_run_once,
    describe,
    library_callback_first,
    module_param,
    plain,
    read_plan,
)
from lightmigrate.rules.shared.predict_results import predict_results
from lightmigrate.rules.shared.after_monitors import HOOK as AFTER_HOOK, can_defer, callback_name
from lightmigrate.rules.shared.import_root import class_lightning_root
from lightmigrate.catalog.hooks import AFTER_MONITORS_METHOD
from lightmigrate.rules.shared.batch_end_outputs import GUARD as EMPTY_GUARD, HOOK as BATCH_END_HOOK, empty_outputs_param
from lightmigrate.rules.shared.stage_hooks import (
    AstFunction,
    StageHookEditor,
    ast_calls_super,
    ast_method,
    ast_yields,
    class_methods,
    inherited_methods,
    stage_changes,
)
from lightmigrate.cst.walk import transform, PrunedTransformer, walk
from lightmigrate.analysis.ast_nodes import ast_nodes

CODE = "LM001"
GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"


@dataclass(frozen=True)
class Stage:
    old: str  # the removed 1.x hook
    new: str  # the 2.x epoch-end hook
    start: str  # epoch-start hook that resets the buffer
    batch_end: str  # batch-end hook that fills it
    buffer: str  # preferred buffer attribute name
    loaders: Optional[str]  # trainer attribute listing the dataloaders (None: training)


TRAIN = Stage("training_epoch_end", "on_train_epoch_end", "on_train_epoch_start", "on_train_batch_end",
              "training_step_outputs", None)
VALIDATION = Stage("validation_epoch_end", "on_validation_epoch_end", "on_validation_epoch_start",
                   "on_validation_batch_end", "validation_step_outputs", "val_dataloaders")
TEST = Stage("test_epoch_end", "on_test_epoch_end", "on_test_epoch_start", "on_test_batch_end",
             "test_step_outputs", "test_dataloaders")
STAGES = (TRAIN, VALIDATION, TEST)
PREDICT_HOOK = "on_predict_epoch_end"
OLD_HOOKS = frozenset(s.old for s in STAGES)
HOOKS = OLD_HOOKS | {PREDICT_HOOK}
UNKNOWN_CLASS = ("looks like a Lightning 1.x epoch-end hook, but the class is not recognisably a "
                 "LightningModule; migrate it by hand if it is one")


# ---------------------------------------------------------------------------------------------
# Code templates. ``S`` is the name of the method's first parameter (usually ``self``).


def _reset(stage: Stage, s: str, buf: str, local: str) -> List[Statement]:
    if stage.loaders is None:
        return parse_statements(f"{s}.{buf} = []")
    return parse_statements(
        f"""
        {local} = {s}.trainer.{stage.loaders}
        {s}.{buf} = [[] for _ in {local}] if isinstance({local}, (list, tuple)) else [[]]
        """
    )


def _collect(stage: Stage, s: str, buf: str, out: str, dl_idx: str) -> List[Statement]:
    if stage.loaders is None:
        # 2.x passes {} for a step that returned None; 1.9 left such batches out.
        return parse_statements(f"if {out}:\n    {s}.{buf}.append({out})")
    return parse_statements(f"if {out} is not None:\n    {s}.{buf}[{dl_idx}].append({out})")


def _gather_once(stage: Stage, s: str, buf: str, local: Optional[str], readers: Sequence[str]) -> List[Statement]:
    """The start of the run-once method: bind ``local`` (None: the body never reads it) to what
    1.9 passed as ``outputs``, unless the method ran already since the epoch started (the
    buffer, reset at each epoch start, is then None)."""
    who = ", ".join(readers)
    head = [cst.EmptyLine(comment=cst.Comment(f"# 1.x ran {stage.old} before the callbacks' {stage.new}:")),
            cst.EmptyLine(comment=cst.Comment(
                f"# {who} {'calls' if len(readers) == 1 else 'call'} this first; it runs once per epoch"))]
    if local is None:
        stmts = parse_statements(f"""
            if {s}.{buf} is None:
                return
            {s}.{buf} = None
            """)
    else:
        unwrap = "" if stage.loaders is None else f"if len({local}) == 1:\n    {local} = {local}[0]\n"
        stmts = parse_statements(f"""
            {local} = {s}.{buf}
            if {local} is None:
                return
            {s}.{buf} = None
            """) + (parse_statements(unwrap) if unwrap else [])
    stmts[0] = stmts[0].with_changes(leading_lines=[*head, *stmts[0].leading_lines])
    return stmts


def _gather(stage: Stage, s: str, buf: str, local: str) -> List[Statement]:
    """Bind ``local`` to what 1.9 passed as ``outputs``."""
    if stage.loaders is None:
        return parse_statements(f"{local} = {s}.{buf}")
    return parse_statements(
        f"""
        {local} = {s}.{buf}
        if len({local}) == 1:
            {local} = {local}[0]
        """
    )




# ---------------------------------------------------------------------------------------------
# Per-class facts


def _names_for(index: ProjectIndex, top: ClassInfo, stage: Stage) -> Tuple[str, str]:
    """Buffer attribute and helper method names for ``top``'s family, the same wherever asked."""
    taken = taken_names(index, top)
    buf = fresh_name(stage.buffer, taken)
    helper = fresh_name("_" + stage.old, taken | {buf})
    return buf, helper


def _family_blocked(index: ProjectIndex, top: ClassInfo, stage: Stage) -> Optional[str]:
    """Why the hook ``stage.old`` of ``top`` (its topmost definer) cannot be migrated for a
    class below it: a subclass trains with several optimizers or TBPTT, so the hook receives
    outputs nested per optimizer or split for it. (The class's own training_step and its
    ancestors' are ``_blocked``'s.) One answer for the whole family, so that no class of it is
    migrated while another keeps the 1.x hook, and a second run finds the same."""
    if stage is not TRAIN:
        return None
    for c in index.descendants(top):
        step = c.params.get("training_step", ())
        if "optimizer_idx" in step:
            return (f"{c.name}, in this hierarchy, takes optimizer_idx: {stage.old} gets its outputs nested "
                    "per optimizer; migrate the hierarchy together by hand (manual optimization)")
        if "hiddens" in step or "truncated_bptt_steps" in c.attributes | c.methods:
            return (f"{c.name}, in this hierarchy, uses TBPTT: {stage.old} gets its outputs nested per split; "
                    "migrate the hierarchy together by hand")
    return None


def _may_skip_epochs(index: ProjectIndex, info: ClassInfo) -> bool:
    """Whether a class of ``info``'s line (it, its ancestors, its descendants) defines
    ``on_train_batch_start``, which may return -1 and end an epoch before its first batch: 1.9
    then did not call ``training_epoch_end`` at all (``FitLoop.on_advance_end`` needs a batch's
    outputs; ledger fact L1), where 2.x still calls ``on_train_epoch_end``."""
    ancestors, _ = index.ancestors(info)
    return any(SKIPS_EPOCHS in c.methods for c in [info, *ancestors, *index.descendants(info)])


SKIPS_EPOCHS = "on_train_batch_start"


def _call_old(stage: Stage, s: str, helper: str, local: str, guarded: bool) -> List[Statement]:
    """``s.helper(local)``; for training, when ``guarded``, only after an epoch that completed a
    batch, as 1.9 called ``training_epoch_end``."""
    if not (guarded and stage is TRAIN):
        return parse_statements(f"{s}.{helper}({local})")
    return parse_statements(
        f"if {s}.trainer.fit_loop.epoch_loop.batch_progress.current.completed:  # 1.x skipped {stage.old} "
        f"after an epoch that ran no batch (on_train_batch_start returned -1)\n    {s}.{helper}({local})")


def _uses_helper(index: ProjectIndex, top: ClassInfo, stage: Stage) -> bool:
    """Whether the family of ``top`` needs the old hook kept as a callable helper."""
    if stage is TRAIN and _may_skip_epochs(index, top):
        return True  # the call gets a guard (_call_old)
    hooks = {stage.old, stage.new, stage.start, stage.batch_end}
    for c in index.descendants(top):
        if hooks & c.methods or injection_point(index, c, stage.new, stage.old):
            return True
    return any(stage.old in c.self_calls for c in [top, *index.descendants(top)])


# ---------------------------------------------------------------------------------------------
# The class rewrite


class _ClassMigration(StageHookEditor):
    code = CODE

    # -- entry ---------------------------------------------------------------------------------

    def _note_callback_order(self, stage: Stage) -> None:
        """Spec B.2: 2.x runs user callbacks' epoch-end hooks before the module's, so a callback
        that reads what this body computes now sees the previous epoch's value."""
        callbacks = sorted(
            c.name for c in self.index.classes(mentioning=stage.new)
            if stage.new in c.methods and self.index.in_lightning_hierarchy(c, CALLBACK_NAMES)
        )
        if callbacks:
            line, col = self.pos(stage.old)
            self.ctx.report(
                CODE,
                f"{self.info.name}.{stage.old}: callbacks' own {stage.new} ({', '.join(callbacks)}) now run "
                f"before this body; in 1.x they ran after it. Check what they read (spec B.2)",
                Kind.NOTE, line, col,
            )

    def migrate(self) -> None:
        if self.after_monitors is not None and self._migrates_an_old_hook():
            self._defer_after_monitors(self.after_monitors)
        for stage in STAGES:
            self._migrate_stage(stage)
        self._migrate_predict()

    # -- ledger B2.6: the 1.x on_train_epoch_end after ModelCheckpoint / EarlyStopping ---------

    after_monitors: Optional[str] = None  # the callback class to write (from find), None: nothing to do
    deferred = False  # the body was moved (the callback class is then written after the class)

    def _migrates_an_old_hook(self) -> bool:
        """Whether this run migrates one of the class's own removed epoch-end hooks (not marked
        or left to a class above): the evidence that its on_train_epoch_end is 1.x code, and
        gone after this run, so that a second run does not move the body LM001 puts there."""
        for stage in STAGES:
            func = self.get(stage.old)
            if func is None or stage.old in self.skip or self._blocked(stage, func) is not None:
                continue
            if stage is TRAIN and _family_blocked(self.index, self.h.top_definer(stage.old), stage) is not None:
                continue
            return True
        return False

    def _defer_after_monitors(self, callback: str) -> None:
        """The class's own on_train_epoch_end body becomes ``AFTER_MONITORS_METHOD``, which the
        Checkpoint callback ``callback`` (returned by a new configure_callbacks) calls after
        ModelCheckpoint and EarlyStopping checked, as 1.x ran the hook after them (ledger B2.6)."""
        func = self.get(AFTER_HOOK)
        assert func is not None
        s = self_name(func)
        note = [cst.EmptyLine(comment=cst.Comment(
                    "# 1.x ran on_train_epoch_end after ModelCheckpoint/EarlyStopping checked their monitor, 2.x")),
                cst.EmptyLine(comment=cst.Comment(
                    f"# before: {callback} (configure_callbacks) runs this body after them"))]
        self.set(AFTER_HOOK, func.with_changes(name=cst.Name(AFTER_MONITORS_METHOD),
                                               leading_lines=[*func.leading_lines, *note]))
        configure = parse_method(f"def configure_callbacks({s}):\n    return [{callback}()]\n")
        at = self.find(AFTER_MONITORS_METHOD)
        assert at is not None
        if at + 1 < len(self.items):
            insert_before(self.items, at + 1, [configure])
        else:
            self.items.append(configure.with_changes(leading_lines=blank_lines(1)))
        self.deferred = True
        self.fixed(f"{AFTER_HOOK} -> {AFTER_MONITORS_METHOD}(), run by {callback} (configure_callbacks) after "
                   "ModelCheckpoint/EarlyStopping checked, as 1.x ran the hook after them", AFTER_HOOK)

    # -- one stage -----------------------------------------------------------------------------

    def _blocked(self, stage: Stage, old: cst.FunctionDef) -> Optional[str]:
        names = param_names(old)
        if has_star_params(old) or len(names) != 2 or any(
            p.default is not None for p in old.params.params[1:2]
        ):
            return f"unusual signature for {stage.old}; move its body to {stage.new}(self) by hand"
        if stage is TRAIN:
            for c in [self.info, *self.h.ancestors]:
                step = c.params.get("training_step", ())
                if "optimizer_idx" in step:
                    return ("outputs are nested per optimizer (optimizer_idx); this needs the "
                            "multiple-optimizer migration (manual optimization)")
                if "hiddens" in step or "truncated_bptt_steps" in c.attributes | c.methods:
                    return "outputs are nested per TBPTT split; this needs the TBPTT migration"
        facts = BodyFacts(body_of(old))
        if facts.has_yield:
            return f"{stage.old} is a generator; port it by hand"
        return None

    skip: FrozenSet[str] = frozenset()  # stages whose owner above keeps its (marked) hook (from find)
    # stages whose family runs the old body through a run-once method that callbacks reading its
    # results call first (from find): old hook -> the names of those callbacks
    once: Dict[str, Tuple[str, ...]] = {}

    def _migrate_stage(self, stage: Stage) -> None:
        if stage.old in self.skip:
            return
        alias = self.alias_of(stage.old)
        if alias is not None:
            self._migrate_alias(stage, alias)
            return
        found = self.stage_hook(stage.old, partial(self._blocked, stage))
        if found is None:
            return
        old, top = found
        why = _family_blocked(self.index, top, stage)
        if why is not None:  # the whole hierarchy stays as it is: marked, never half-migrated
            if old is not None:
                self.mark(stage.old, why)
            return
        buf, helper = _names_for(self.index, top, stage)
        if old is not None and stage is TRAIN:
            old = _mark_value_returns(old)
        if old is not None and stage.old not in self.once:
            self._note_callback_order(stage)
        if old is not None and top is self.info:
            self._migrate_top(stage, old, buf, helper)
            why = library_callback_first(self.index, stage.old)
            if why is not None:
                self.mark(stage.new, why)
        else:
            if old is not None:
                # A subclass override: keep it as an override of the parent's helper.
                self.set(stage.old, old.with_changes(name=cst.Name(helper)))
                self.renames[stage.old] = helper
                self.fixed(f"{stage.old} kept as {helper}(), called from the inherited {stage.new}", stage.old)
            self._inject_into_own_hooks(stage, buf, helper)

    def _migrate_top(self, stage: Stage, old: cst.FunctionDef, buf: str, helper: str) -> None:
        old = self._strip_super_old(old, stage)
        self.set(stage.old, old)
        s = self_name(old)
        param = param_names(old)[1]
        old_facts = BodyFacts(body_of(old))
        existing_end = self.editable(stage.new)
        # an alias of the hook (``test_epoch_end = validation_epoch_end``) needs it callable
        use_helper = _uses_helper(self.index, self.info, stage) or self.aliased(stage.old)
        once = stage.old in self.once  # (the body then keeps a method of its own: nothing is merged)
        if once and old.decorators:
            use_helper = True  # (a decorator stays on the body, which runs once; the guard runs before it)
        if not use_helper and existing_end is not None and not once:
            use_helper = not self._merge_safe(old, existing_end, param)
        if (not use_helper and existing_end is None and self.inherits_hook(stage.new) and old_facts.has_return
                and not once):
            use_helper = True
        needs_buffer = use_helper or old_facts.uses(param) or once

        if needs_buffer:
            self._add_buffer_hooks(stage, s, buf, before=stage.old)
            old = self.get(stage.old)  # spacing before it may have changed
            assert old is not None

        super_tail = (
            parse_statements(f"super().{stage.new}()")
            if existing_end is None and self.inherits_hook(stage.new) else []
        )
        if use_helper:
            self._dispatch(stage, s, param, buf, helper, existing_end, super_tail, before=stage.old)
            self.set(stage.old, old.with_changes(name=cst.Name(helper)))
            self.renames[stage.old] = helper
            self.fixed(f"{stage.old} kept as {helper}(outputs) and called from {stage.new} "
                        f"with the outputs collected in self.{buf}", stage.old)
            return
        if once:
            self._migrate_top_once(stage, old, s, param, buf, existing_end, super_tail)
            return

        body = body_of(old)
        gather = _gather(stage, s, buf, param) if needs_buffer else []
        new = keep_only_params(old, 1).with_changes(name=cst.Name(stage.new))
        if existing_end is not None:
            doc, old_rest = split_docstring(body)
            merged = [*doc, *gather, *old_rest, *drop_docstring(body_of(existing_end))]
            new = with_body(new, merged)
            self.set(stage.new, None)
        else:
            new = with_body(new, [*split_docstring(body)[0], *gather, *drop_docstring(body), *super_tail])
        self.set(stage.old, new)
        how = "with the outputs collected in self." + buf if needs_buffer else "(outputs was unused)"
        merged_note = f", merged with the existing {stage.new}" if existing_end is not None else ""
        self.fixed(f"{stage.old} -> {stage.new} {how}{merged_note}", stage.old)

    def _skips(self) -> bool:
        return _may_skip_epochs(self.index, self.info)

    def _dispatch(self, stage: Stage, s: str, param: str, buf: str, helper: str,
                  existing_end: Optional[cst.FunctionDef], super_tail: List[Statement], before: str) -> None:
        """``on_*_epoch_end`` hands the collected outputs to ``helper`` first: prepended to the
        existing hook, or a new hook inserted before ``before`` (in run-once mode, through the
        run-once method, inserted before ``before`` too)."""
        if existing_end is not None:
            facts = BodyFacts(body_of(existing_end))
            local = fresh_name(param, facts.loaded | facts.bound)
            es = self_name(existing_end)
            self.set(stage.new, prepend_statements(existing_end, self._end_call(stage, es, buf, helper, local)))
            new_funcs = []
        else:
            local = fresh_name(param, [])
            new = parse_method(f"def {stage.new}({s}):\n    pass")
            new_funcs = [with_body(new, [*self._end_call(stage, s, buf, helper, local), *super_tail])]
        if stage.old in self.once:
            local = fresh_name(param, [])
            finish = parse_method(f"def {RUN_ONCE[stage.old]}({s}):\n    pass")
            new_funcs.append(with_body(finish, [*_gather_once(stage, s, buf, local, self.once[stage.old]),
                                                *parse_statements(f"{s}.{helper}({local})")]))
        self.insert_before(before, new_funcs)

    def _end_call(self, stage: Stage, s: str, buf: str, helper: str, local: str) -> List[Statement]:
        """What ``on_*_epoch_end`` runs first: the collected outputs handed to ``helper``, or, in
        run-once mode, the run-once method (which does that once per epoch)."""
        if stage.old in self.once:
            return parse_statements(f"{s}.{RUN_ONCE[stage.old]}()")
        return [*_gather(stage, s, buf, local), *_call_old(stage, s, helper, local, self._skips())]

    def _migrate_top_once(self, stage: Stage, old: cst.FunctionDef, s: str, param: str, buf: str,
                          existing_end: Optional[cst.FunctionDef], super_tail: List[Statement]) -> None:
        """The old body becomes the run-once method (callbacks that read its results call it
        first, as 1.x ran it before them); ``on_*_epoch_end`` calls it first."""
        name = RUN_ONCE[stage.old]
        body = body_of(old)
        doc, _ = split_docstring(body)
        local = param if BodyFacts(body).uses(param) else None
        finish = keep_only_params(old, 1).with_changes(name=cst.Name(name))
        finish = with_body(finish, [*doc, *_gather_once(stage, s, buf, local, self.once[stage.old]),
                                    *drop_docstring(body)])
        self.set(stage.old, finish)
        call = parse_statements(f"{s}.{name}()")
        if existing_end is not None:
            self.set(stage.new, prepend_statements(existing_end, call))
        else:
            new = parse_method(f"def {stage.new}({s}):\n    pass")
            self.insert_before(name, [with_body(new, [*call, *super_tail])])
        self.fixed(f"{stage.old} -> {name}(), run once per epoch: first by the callbacks that read what it "
                   f"computes ({', '.join(self.once[stage.old])}), as 1.x ran it before them, then by {stage.new}",
                   stage.old)

    def _migrate_alias(self, stage: Stage, alias) -> None:
        """The old hook is bound by an alias (``test_epoch_end = validation_epoch_end``): the
        alias binds the helper instead (``_test_epoch_end = _validation_epoch_end``, its value
        following the method's own migration) and ``on_*_epoch_end`` calls it with the collected
        outputs, as 1.9 called the aliased method."""
        value = self.get(alias.value)
        why = self._blocked(stage, value if value is not None else parse_method("def f(self, outputs):\n    pass"))
        if why:
            self.items[alias.item] = add_marker(self.items[alias.item], CODE, f"{stage.old} = {alias.value}: {why}")
            self.changed = True
            return
        top = self.h.top_definer(stage.old)
        buf, helper = _names_for(self.index, top, stage)
        if stage.old not in self.once:
            self._note_callback_order(stage)
        self.rename_alias(stage.old, helper)
        if top is not self.info:
            self.fixed(f"{stage.old} (an alias of {alias.value}) kept as {helper}, called from the inherited "
                       f"{stage.new}")
            self._inject_into_own_hooks(stage, buf, helper)
            return
        s = "self"
        param = "outputs"
        self._add_buffer_hooks(stage, s, buf, before=helper)
        existing_end = self.editable(stage.new)
        super_tail = (parse_statements(f"super().{stage.new}()")
                      if existing_end is None and self.inherits_hook(stage.new) else [])
        self._dispatch(stage, s, param, buf, helper, existing_end, super_tail, before=helper)
        self.fixed(f"{stage.old} (an alias of {alias.value}) kept as {helper} and called from {stage.new} "
                   f"with the outputs collected in self.{buf}")

    def _merge_safe(self, old: cst.FunctionDef, existing: cst.FunctionDef, param: str) -> bool:
        a = BodyFacts(body_of(old))
        b = BodyFacts(body_of(existing))
        if a.has_return or a.has_scope_decl or b.has_scope_decl or self_name(old) != self_name(existing):
            return False
        if param_names(existing)[1:] or has_star_params(existing):
            return False
        clash = (a.bound & (b.loaded - b.bound)) | (b.bound & (a.loaded - a.bound)) | ({param} & b.loaded)
        return not clash

    def _strip_super_old(self, func: cst.FunctionDef, stage: Stage) -> cst.FunctionDef:
        """``super().validation_epoch_end(outputs)`` in the topmost definer reached Lightning's
        empty default; drop it when every base is known, mark it otherwise."""
        if not calls_super(func, stage.old):
            return func
        if self.h.complete:
            stmts = [
                st for st in body_of(func)
                if not (isinstance(st, cst.SimpleStatementLine) and len(st.body) == 1
                        and isinstance(st.body[0], cst.Expr) and super_call_attr(st.body[0].value) == stage.old)
            ]
            return with_body(func, stmts)
        why = f"super().{stage.old}() reaches a base class lightmigrate cannot see; port that call by hand"
        return add_marker(func, CODE, why)

    # -- buffer hooks --------------------------------------------------------------------------

    def _add_buffer_hooks(self, stage: Stage, s: str, buf: str, before: str) -> None:
        new_funcs = []
        start = self.editable(stage.start)
        if start is not None:
            self.set(stage.start, self._with_reset(stage, start, buf))
        else:
            func = parse_method(f"def {stage.start}({s}):\n    pass")
            func = with_body(func, _reset(stage, s, buf, "loaders"))
            if self.inherits_hook(stage.start):
                func = append_statements(func, parse_statements(f"super().{stage.start}()"))
            new_funcs.append(func)
        end = self.editable(stage.batch_end)
        if end is not None:
            self.set(stage.batch_end, self._with_collect(stage, end, buf))
        else:
            sig = (f"{s}, outputs, batch, batch_idx" if stage.loaders is None
                   else f"{s}, outputs, batch, batch_idx, dataloader_idx=0")
            func = parse_method(f"def {stage.batch_end}({sig}):\n    pass")
            func = with_body(func, _collect(stage, s, buf, "outputs", "dataloader_idx"))
            if self.inherits_hook(stage.batch_end):
                args = sig.split(", ", 1)[1].replace("=0", "")
                func = append_statements(func, parse_statements(f"super().{stage.batch_end}({args})"))
            new_funcs.append(func)
        if new_funcs:
            self.insert_before(before, new_funcs)

    def _with_reset(self, stage: Stage, func: cst.FunctionDef, buf: str) -> cst.FunctionDef:
        facts = BodyFacts(body_of(func))
        local = fresh_name("loaders", facts.loaded | facts.bound)
        return prepend_statements(func, _reset(stage, self_name(func), buf, local))

    def _with_collect(self, stage: Stage, func: cst.FunctionDef, buf: str) -> cst.FunctionDef:
        names = param_names(func)
        wanted = 2 if stage.loaders is None else 5
        if has_star_params(func) or len(names) < wanted:
            why = (f"{stage.batch_end} has a signature lightmigrate cannot extend; append its outputs "
                   f"to self.{buf} by hand")
            return add_marker(func, CODE, why)
        dl_idx = names[4] if stage.loaders is not None else ""
        if stage.loaders is not None:
            func = set_param_default(func, dl_idx, "0")  # 2.x omits it with one dataloader
        return prepend_statements(func, _collect(stage, names[0], buf, names[1], dl_idx))

    def _add_buffer_work(self, stage: Stage, name: str, buf: str, helper: str) -> None:
        """Give the class's own ``name`` (a start, batch-end or new epoch-end hook of ``stage``)
        the buffer work: reset it, collect into it, or gather it and call ``helper``."""
        func = self.editable(name)
        assert func is not None
        if name == stage.start:
            func = self._with_reset(stage, func, buf)
        elif name == stage.batch_end:
            func = self._with_collect(stage, func, buf)
        else:
            facts = BodyFacts(body_of(func))
            local = fresh_name("outputs", facts.loaded | facts.bound)
            func = prepend_statements(func, self._end_call(stage, self_name(func), buf, helper, local))
        self.set(name, func)

    def _inject_into_own_hooks(self, stage: Stage, buf: str, helper: str) -> None:
        """A class below the one that owns the buffer overrides one of its hooks without calling
        super(): put the buffer logic into the override too, as 1.9 collected regardless."""
        for name in (stage.start, stage.batch_end, stage.new):
            func = self.get(name)
            if func is None or calls_super(func, name):
                continue
            self._add_buffer_work(stage, name, buf, helper)
            self.fixed(f"{name} overrides the hook that collects outputs for {stage.old}; collection added", name)
        self._inject_before_mixins(stage, buf, helper)

    def _inject_before_mixins(self, stage: Stage, buf: str, helper: str) -> None:
        """A mixin this class lists before the owner of the buffer shadows one of its hooks and
        cannot call super() faithfully (``injection_point``): this class does the work in its own
        hook, then hands on to the mixin's with super(), which ends the chain as in 1.x."""
        added = 0  # new hooks go before the class's first method, in stage order
        for name in (stage.start, stage.batch_end, stage.new):
            mixin = injection_point(self.index, self.info, name, stage.old)
            if mixin is None:
                continue
            func = self.get(name)
            if func is not None and not calls_super(func, name):
                continue  # (done above)
            if func is None:
                s = "self"
                if name == stage.start:
                    func = with_body(parse_method(f"def {name}({s}):\n    pass"), _reset(stage, s, buf, "loaders"))
                    tail = f"super().{name}()"
                elif name == stage.batch_end:
                    sig = ("outputs, batch, batch_idx" if stage.loaders is None
                           else "outputs, batch, batch_idx, dataloader_idx=0")
                    func = with_body(parse_method(f"def {name}({s}, {sig}):\n    pass"),
                                     _collect(stage, s, buf, "outputs", "dataloader_idx"))
                    tail = f"super().{name}({sig.replace('=0', '')})"
                else:
                    func = with_body(parse_method(f"def {name}({s}):\n    pass"),
                                     self._end_call(stage, s, buf, helper, "outputs"))
                    tail = f"super().{name}()"
                func = append_statements(func, parse_statements(tail))
                defs = [i for i, item in enumerate(self.items) if isinstance(item, cst.FunctionDef)]
                if len(defs) > added:
                    insert_before(self.items, defs[added], [func])
                else:
                    self.items.append(func.with_changes(leading_lines=blank_lines(1)))
                added += 1
                self.changed = True
            else:
                self._add_buffer_work(stage, name, buf, helper)
            self.fixed(f"{mixin}.{name} comes first in the MRO and ends the chain without super(): "
                       f"the work for {stage.old} is done in {self.info.name}.{name}, which then calls it")

    # -- predict -------------------------------------------------------------------------------

    def _migrate_predict(self) -> None:
        func = self.get(PREDICT_HOOK)
        if func is None:
            return
        names = param_names(func)
        if len(names) != 2 or has_star_params(func):
            return  # already 2.x (self only), or a callback-style signature
        s, param = names
        facts = BodyFacts(body_of(func))
        new = keep_only_params(func, 1)
        if self._mutates(func, param):
            self.mark(PREDICT_HOOK, f"changes `{param}` in place, which in 1.x also changed what "
                                     "trainer.predict() returned; in 2.x edit "
                                     "self.trainer.predict_loop.predictions instead")
            return
        supers_ok = self._predict_super_calls_ok(func, param)
        if not supers_ok:
            self.mark(PREDICT_HOOK, f"passes something other than `{param}` to super().{PREDICT_HOOK}(); "
                                     "port that call by hand")
            return
        if facts.uses(param):
            loaders = fresh_name("loaders", facts.loaded | facts.bound)
            new = prepend_statements(new, predict_results(s, param, loaders))
        new = transform(new, _DropSuperArgs(PREDICT_HOOK))  # type: ignore[assignment]
        self.set(PREDICT_HOOK, new)
        self.fixed(f"{PREDICT_HOOK}({param}) -> {PREDICT_HOOK}() reading trainer.predict_loop.predictions",
                    PREDICT_HOOK)

    @staticmethod
    def _mutates(func: cst.FunctionDef, name: str) -> bool:
        hits = []

        class V(cst.CSTVisitor):
            def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
                t = node.target
                if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and t.value.value == name:
                    hits.append(t)

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                if isinstance(node.target, cst.Name) and node.target.value == name:
                    hits.append(node)

            def visit_Call(self, node: cst.Call) -> None:
                f = node.func
                if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == name
                        and f.attr.value in {"append", "extend", "insert", "pop", "clear", "remove", "sort",
                                             "reverse"}):
                    hits.append(node)

        walk(func, V())
        return bool(hits)

    @staticmethod
    def _predict_super_calls_ok(func: cst.FunctionDef, param: str) -> bool:
        bad = []

        class V(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                if super_call_attr(node) == PREDICT_HOOK:
                    args = node.args
                    if not (len(args) == 1 and isinstance(args[0].value, cst.Name) and args[0].value.value == param):
                        bad.append(node)

        walk(func, V())
        return not bad


RETURNS_VALUE = ("training_epoch_end returned a value here: 1.9.5 raised MisconfigurationException "
                 "(\"expects a return of None\") when it returned anything but None; 2.x ignores what "
                 "this returns, so that error is now silent (spec B.1)")


# Values that are never None. A call, name or attribute may well be None (``return
# self.helper(outputs)`` delegating to a method that returns nothing): code that ran on 1.9
# returned None there, or 1.9 would have raised, so only the certain cases are marked.
_NEVER_NONE = (cst.BaseNumber, cst.BaseString, cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp,
               cst.DictComp, cst.SetComp, cst.GeneratorExp, cst.BinaryOperation, cst.UnaryOperation,
               cst.Comparison, cst.Lambda)


def _returns_value(node: cst.Return) -> bool:
    return isinstance(node.value, _NEVER_NONE)


class _MarkValueReturns(PrunedTransformer):
    """Marks the statements of one function body that return a value (not those of functions,
    lambdas or classes nested in it)."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_SimpleStatementLine(self, original: cst.SimpleStatementLine,
                                  updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        if any(isinstance(s, cst.Return) and _returns_value(s) for s in updated.body):
            return add_marker(updated, CODE, RETURNS_VALUE)
        return updated


def _mark_value_returns(func: cst.FunctionDef) -> cst.FunctionDef:
    """Spec B.1: 1.9 raised when ``training_epoch_end`` returned anything but None; the migrated
    body's return value is ignored. Each ``return <value>`` of the body gets a marker naming that."""
    return func.with_changes(body=func.body.visit(_MarkValueReturns()))


class _DropSuperArgs(PrunedTransformer):
    def __init__(self, name: str) -> None:
        self.name = name

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if super_call_attr(updated) == self.name:
            return updated.with_changes(args=())
        return updated


# ---------------------------------------------------------------------------------------------


class EpochEndRule(Rule):
    code = CODE
    name = "epoch-end-outputs"
    summary = "`*_epoch_end(outputs)` hooks become `on_*_epoch_end` hooks with explicit output buffers."
    spec_rows = ("M1", "M2", "M3", "M6")
    coverage = {
        "M1": Handling.REWRITTEN,
        "M2": Handling.REWRITTEN,
        "M3": Handling.REWRITTEN,
        "M6": Handling.REWRITTEN,
    }
    guide = (f"{GUIDE} (1.9 advanced rows: 'used training_epoch_end', 'used validation_epoch_end', "
             "'used test_epoch_end', 'used on_predict_epoch_end with results'; PRs 16520, 16655)")
    safety = Safety.PRESERVING
    # ("_epoch_start" and "_batch_end": a mixin's hook that shadows the buffer hooks, issue 21)
    triggers = ("_epoch_end", "_epoch_start", "_batch_end")
    # a subclass elsewhere that overrides a hook the buffers are filled in must fill them too
    linked_hooks = OLD_HOOKS
    description = (
        "Lightning 2.0 removed `training_epoch_end`, `validation_epoch_end` and `test_epoch_end` "
        "(fit/validate/test raise NotImplementedError while they exist) and calls "
        "`on_predict_epoch_end` without `results`. This rule moves each body into the 2.x hook and "
        "collects the step outputs the way 1.9 did: training outputs as the dicts `on_train_batch_end` "
        "receives (loss detached and divided by accumulate_grad_batches, None steps skipped); "
        "validation/test outputs raw, a flat list for one dataloader and one list per dataloader "
        "otherwise, reset at every epoch start so sanity-check outputs never reach epoch 0; "
        "predictions one list per dataloader. Existing hooks are merged, inheritance and "
        "super() calls keep their 1.9 dispatch, and buffer names never collide with existing "
        "attributes. A mixin earlier in a subclass's MRO whose hooks would shadow the buffer hooks "
        "calls super() first (or, where that would run code 1.9 skipped, the subclass does the work "
        "before calling the mixin's hook); class-body aliases such as `test_epoch_end = "
        "validation_epoch_end` follow the migration. Multi-optimizer and TBPTT training outputs get a marker. "
        "1.x ran each body before every callback's `on_*_epoch_end`, 2.x runs the module's hook after "
        "them: when a callback of the project reads in that hook what the body computed (an attribute "
        "it sets, also through a module method, or the metrics it logged), or changes an attribute the "
        "body reads, the body becomes a method that runs once per epoch "
        "(`_finish_validation_epoch`...), which that callback calls first and the module's hook calls "
        "after it (a marker on the callback where that cannot be done; a marker on the module's hook when the "
        "project uses ModelPruning, a Lightning callback that prunes the weights there first). "
        "1.x also ran ModelCheckpoint/EarlyStopping before the module's own `on_train_epoch_end`, 2.x after it: "
        "in a class this rule migrates from 1.x, in a project that monitors a metric, an `on_train_epoch_end` that "
        "logs becomes `_train_epoch_end_after_monitors()`, run by a `Checkpoint` callback the module returns from "
        "`configure_callbacks` (2.x runs Checkpoint callbacks last), so the monitors check the previous epoch's "
        "value as in 1.x (LM309 notes the hooks left as they are)."
    )

    examples = (
        Example(
            title="training outputs, with a buffer",
            before='''\
import pytorch_lightning as pl
import torch


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.layer(batch).sum()

    def training_epoch_end(self, outputs):
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())
''',
            after='''\
import pytorch_lightning as pl
import torch


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.layer(batch).sum()

    def on_train_epoch_start(self):
        self.training_step_outputs = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if outputs:
            self.training_step_outputs.append(outputs)

    def on_train_epoch_end(self):
        outputs = self.training_step_outputs
        self.log("train_mean", torch.stack([o["loss"] for o in outputs]).mean())
''',
        ),
        Example(
            title="validation outputs: flat for one dataloader, nested for several",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.log("n", float(len(outputs)))
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.validation_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.validation_step_outputs[dataloader_idx].append(outputs)

    def on_validation_epoch_end(self):
        outputs = self.validation_step_outputs
        if len(outputs) == 1:
            outputs = outputs[0]
        self.log("n", float(len(outputs)))
''',
        ),
        Example(
            title="outputs never used: a plain rename",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def test_epoch_end(self, outputs):
        self.log("done", 1.0)
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_test_epoch_end(self):
        self.log("done", 1.0)
''',
        ),
        Example(
            title="predict results",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_predict_epoch_end(self, results):
        self.n_predictions = len(results[0])
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_predict_epoch_end(self):
        loaders = self.trainer.predict_dataloaders
        results = self.trainer.predict_loop.predictions
        if not isinstance(loaders, (list, tuple)) or len(loaders) == 1:
            results = [results]
        self.n_predictions = len(results[0])
''',
        ),
        Example(
            title="a callback reads what the body computed: it calls the body first, run once per epoch",
            before='''\
import pytorch_lightning as pl


class Printer(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        print(pl_module.val_mean)


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs):
        self.val_mean = sum(outputs) / len(outputs)
''',
            after='''\
import pytorch_lightning as pl


class Printer(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        pl_module._finish_validation_epoch()
        print(pl_module.val_mean)


class Model(pl.LightningModule):
    def on_validation_epoch_start(self):
        loaders = self.trainer.val_dataloaders
        self.validation_step_outputs = [[] for _ in loaders] if isinstance(loaders, (list, tuple)) else [[]]

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        if outputs is not None:
            self.validation_step_outputs[dataloader_idx].append(outputs)

    def on_validation_epoch_end(self):
        self._finish_validation_epoch()

    def _finish_validation_epoch(self):
        # 1.x ran validation_epoch_end before the callbacks' on_validation_epoch_end:
        # Printer calls this first; it runs once per epoch
        outputs = self.validation_step_outputs
        if outputs is None:
            return
        self.validation_step_outputs = None
        if len(outputs) == 1:
            outputs = outputs[0]
        self.val_mean = sum(outputs) / len(outputs)
''',
        ),
        Example(
            title="already 2.x: left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_validation_epoch_end(self):
        self.log("x", 1.0)
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # One site per class the class walk changes: action "mark" for a class that is not
        # recognisably a LightningModule but defines a hook (its hooks get a marker), "migrate"
        # with the stages to work on otherwise.
        # "once": the stages whose family runs the old body through the run-once method, with
        # the callbacks that call it first (see rules/shared/epoch_end_readers.py).
        sites = []
        plans = _Plans(ctx.project)
        for found in hook_classes(source, ctx, HOOKS):
            methods = class_methods(found.node)
            if not found.known:
                if HOOKS & methods.keys():
                    sites.append(found.site("mark"))
                continue
            work = _class_work(source.text, found.node, methods, inherited_methods(ctx.project, found.info),
                               ctx.project, found.info)
            if TRAIN.old in work and TRAIN.old not in methods and _family_blocked(
                    ctx.project, Hierarchy.of(ctx.project, found.info).top_definer(TRAIN.old), TRAIN):
                work = tuple(w for w in work if w != TRAIN.old)  # (the hook's class is marked, this one kept)
            # Below an owner whose hook is marked (it keeps it: no buffer), this class's own
            # hooks have nothing to collect: the stage is left alone here too.
            skip = tuple(stage.old for stage in STAGES if stage.old in work and stage.old not in methods
                         and _top_blocked(ctx.project, Hierarchy.of(ctx.project, found.info).top_definer(stage.old),
                                          stage))
            work = tuple(w for w in work if w not in skip)
            if work:
                sites.append(found.site("migrate", work))
                if skip:
                    sites.append(found.site("skip", skip))
                once = plans.once(found.info, work)
                if once:
                    sites.append(found.site("once", once))
                if AFTER_HOOK in methods and OLD_HOOKS & methods.keys() & set(work):
                    root = class_lightning_root(source.tree, found.node)
                    if can_defer(ctx.project, found.info, found.node, source, root):
                        sites.append(found.site("after_monitors", (callback_name(found.info), root)))
        return sites + _mixin_sites(source, ctx) + _callback_sites(source, ctx, plans) + _empty_outputs_sites(source, ctx)

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        only = frozenset(site.target for site in sites if site.action not in ("mixin", "callback", "empty_outputs"))
        skip = {site.target: frozenset(site.data) for site in sites if site.action == "skip"}
        once = {site.target: dict(site.data) for site in sites if site.action == "once"}
        after = {site.target: site.data for site in sites if site.action == "after_monitors"}
        editors: List[_ClassMigration] = []

        def editor(*args) -> _ClassMigration:
            ed = _ClassMigration(*args)
            ed.skip = skip.get(ed.info.name, frozenset())
            ed.once = once.get(ed.info.name, {})
            if ed.info.name in after:
                ed.after_monitors = after[ed.info.name][0]
                editors.append(ed)
            return ed

        empty = {(site.target, *site.data[:2]): site.data[2] for site in sites if site.action == "empty_outputs"}
        if empty:  # (it finds its hooks by class name and place, not by line)
            module = transform(module, _EmptyOutputs(module, ctx, empty))  # type: ignore[assignment]
        callbacks = [site for site in sites if site.action == "callback"]
        if callbacks:  # (first: it finds the sites' lines in the text find read)
            module = transform(module, _CallbackCalls(module, ctx, callbacks))  # type: ignore[assignment]
        if only:
            module = migrate_classes(module, ctx, CODE, HOOKS, editor, UNKNOWN_CLASS, only=only)
        for ed in editors:
            if ed.deferred:
                module = _add_after_monitors_callback(module, ed.info.name, *after[ed.info.name])
        mixins = {site.target: site for site in sites if site.action == "mixin"}
        if mixins:
            module = transform(module, _MixinHooks(module, ctx, mixins))  # type: ignore[assignment]
        return module


def _add_after_monitors_callback(module: cst.Module, cls: str, callback: str, root: str) -> cst.Module:
    """The Checkpoint callback that runs ``cls``'s 1.x on_train_epoch_end body (ledger B2.6),
    after the top-level class ``cls``, and the import of ``Checkpoint`` from ``root``."""
    code = (f"class {callback}(Checkpoint):\n"
            f'    """Runs {cls}\'s 1.x on_train_epoch_end body after ModelCheckpoint and EarlyStopping\n'
            f"    checked their monitor, as 1.x did (2.x runs Checkpoint callbacks last).\"\"\"\n\n"
            f"    def on_train_epoch_end(self, trainer, pl_module):\n"
            f"        pl_module.{AFTER_MONITORS_METHOD}()\n")
    body = list(module.body)
    at = next(i for i, st in enumerate(body) if isinstance(st, cst.ClassDef) and st.name.value == cls)
    insert_top_level(body, at + 1, [cst.parse_statement(code)])
    return ensure_import(module.with_changes(body=body), f"{root}.callbacks", "Checkpoint")


# ---------------------------------------------------------------------------------------------
# on_train_batch_end after a step that returned None: 1.x passed [], 2.x passes {} (spec B.4)


def _empty_outputs_sites(source: SourceFile, ctx: RuleContext) -> List[Site]:
    """One site (action "empty_outputs") per ``on_train_batch_end`` of a module or callback of
    ``source`` that tells ``[]`` from ``{}`` (``shared/batch_end_outputs.py``); its target is the
    class name, its data the class's ordinal, the hook's place among the class's definitions of
    it and the name of the ``outputs`` parameter."""
    if BATCH_END_HOOK not in source.text:
        return []
    sites = []
    for node, ordinal in class_defs_with_ordinals(source.tree):
        funcs = [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == BATCH_END_HOOK]
        if not funcs:
            continue
        kind = class_kind(ctx, node.name, ordinal)
        for k, func in enumerate(funcs):
            name = empty_outputs_param(func, kind)
            if name is not None:
                sites.append(Site(func.lineno, func.col_offset, node.name, "empty_outputs", (ordinal, k, name)))
    return sites


class _EmptyOutputs(PrunedTransformer):
    """Carries out the "empty_outputs" sites: the hook starts by turning 2.x's ``{}`` into the
    ``[]`` 1.x passed after a step that returned None."""

    def __init__(self, module: cst.Module, ctx: RuleContext, sites: Dict[Tuple[str, int, int], str]) -> None:
        self.module = module
        self.ctx = ctx
        self.sites = sites
        self.seen: Dict[str, int] = {}  # class name -> classes of that name met so far (source order)
        self.ordinals: List[int] = []  # of the classes being visited, innermost last

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        ordinal = self.seen.get(node.name.value, 0)
        self.seen[node.name.value] = ordinal + 1
        self.ordinals.append(ordinal)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        ordinal = self.ordinals.pop()
        if not isinstance(updated.body, cst.IndentedBlock):
            return updated
        items = list(updated.body.body)
        k = 0
        for i, item in enumerate(items):
            if not (isinstance(item, cst.FunctionDef) and item.name.value == BATCH_END_HOOK):
                continue
            name = self.sites.get((original.name.value, ordinal, k))
            k += 1
            if name is None:
                continue
            line, col = self.ctx.position(self.module, original.body.body[i]) if i < len(original.body.body) else (0, 0)
            self.ctx.report(CODE, f"{original.name.value}.{BATCH_END_HOOK} compares {name} with a list/dict or asks "
                                  "its type: 1.x passed [] after a training step that returned None, 2.x passes {}; "
                                  "the hook turns {} into [] first (spec B.4)", Kind.FIXED, line, col)
            items[i] = prepend_statements(item, parse_statements(EMPTY_GUARD.format(p=name)))
        return updated.with_changes(body=updated.body.with_changes(body=items))


# ---------------------------------------------------------------------------------------------
# Callbacks that read what an epoch-end body computed (issue 21 kind 6, spec B.2)


class _Plans:
    """``read_plan`` of each stage, asked once per file (and only when a class needs it)."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.plans: Dict[str, ReadPlan] = {}

    def __call__(self, stage: Stage) -> ReadPlan:
        plan = self.plans.get(stage.old)
        if plan is None:
            plan = self.plans[stage.old] = read_plan(self.index, stage.old, partial(_plan_blocked, self.index, stage))
        return plan

    def once(self, info: ClassInfo, work: Sequence[str]) -> Tuple[Tuple[str, Tuple[str, ...]], ...]:
        """The stages of ``work`` whose family (the topmost definer of the old hook above
        ``info``) gets the run-once method, with the callbacks that call it."""
        out = []
        for stage in STAGES:
            if stage.old not in work:
                continue
            plan = self(stage)
            if not plan.families:
                continue
            top = Hierarchy.of(self.index, info).top_definer(stage.old)
            if top in plan.families:
                names = sorted({r.callback.name for r in plan.readers if top in r.families and r.why is None})
                out.append((stage.old, tuple(names)))
        return tuple(out)


def _plan_blocked(index: ProjectIndex, stage: Stage, top: ClassInfo) -> bool:
    """Whether the hook of ``top`` stays as it is (marked), so its family gets no run-once method."""
    return _family_blocked(index, top, stage) is not None or _top_blocked(index, top, stage)


def _callback_sites(source: SourceFile, ctx: RuleContext, plans: _Plans) -> List[Site]:
    """One site (action "callback") per hook of a callback class of ``source`` that reads what a
    1.x epoch-end body computed: its data ``(hook, call, module, guarded, why, line, what)``:
    the run-once method to call first on ``module`` (the expression of the LightningModule),
    only when it has one (``guarded``); or, with ``why``, the marker to put on the statement of
    ``line`` instead."""
    index = ctx.project
    hooks = set(CALLBACK_HOOK.values())
    candidates = [c for c in index.classes_in(ctx.path) if hooks & c.methods]
    if not candidates:
        return []
    nodes: Optional[Dict[Tuple[str, int], ast.ClassDef]] = None
    sites = []
    for stage in STAGES:
        hook = CALLBACK_HOOK[stage.old]
        if not any(hook in c.methods for c in candidates):
            continue
        plan = plans(stage)
        for c in candidates:
            reader = plan.reader(c)
            if reader is None:
                continue
            if nodes is None:
                nodes = {(n.name, o): n for n, o in class_defs_with_ordinals(source.tree)}
            node = nodes.get((c.name, c.ordinal))
            func = class_methods(node).get(hook) if node is not None else None
            if func is None or not func.body:
                continue
            call = RUN_ONCE[stage.old]
            if calls_run_once(func, call):
                continue  # (a second run)
            names = [p.arg for p in (*func.args.posonlyargs, *func.args.args)]
            module = module_param(func) or (f"{names[1]}.lightning_module" if len(names) > 1 else None)
            why = reader.why
            if why is None and module is None:
                why = f"{hook} reads what {stage.old} computed before it in 1.x; call {call}() on the module first"
            line = _reading_line(func, reader.attrs) if why is not None else 0
            what = ", ".join(describe(a) for a in reader.attrs)
            owners = ", ".join(t.name for t in reader.families)
            sites.append(Site(node.lineno, node.col_offset, c.name, "callback",  # type: ignore[union-attr]
                              (hook, call, module, reader.guarded, why, line, f"{what} ({owners}.{stage.old})")))
    return sites


def _reading_line(func: AstFunction, attrs: Sequence[str]) -> int:
    """The line of the first statement of ``func``'s body that mentions one of ``attrs`` (the
    first statement when none does)."""
    names = {plain(a) for a in attrs}
    for st in func.body:
        for n in ast_nodes(st):
            if isinstance(n, ast.Attribute) and (n.attr in names or n.attr.endswith("_metrics")):
                return st.lineno
    return func.body[0].lineno


class _CallbackCalls(PrunedTransformer):
    """Carries out the "callback" sites: the hook calls the module's run-once method first, so
    the 1.x epoch-end body runs before it as in 1.x (a marker on the reading statement where
    that cannot be done)."""

    def __init__(self, module: cst.Module, ctx: RuleContext, sites: Sequence[Site]) -> None:
        self.module = module
        self.ctx = ctx
        self.sites = list(sites)
        self.names = {site.target for site in sites}

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        if original.name.value not in self.names or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        line, _ = self.ctx.position(self.module, original)
        mine = [site for site in self.sites if site.target == original.name.value and site.line == line]
        if not mine:
            return updated
        items = list(updated.body.body)
        originals = list(getattr(original.body, "body", ()))
        for site in mine:
            hook, call, module, guarded, why, at, what = site.data
            i = max((k for k, item in enumerate(items) if isinstance(item, cst.FunctionDef)
                     and item.name.value == hook), default=None)
            if i is None:
                continue
            func = items[i]
            hline, hcol = self.ctx.position(self.module, originals[i] if i < len(originals) else original)
            if why is not None:
                body = list(body_of(func))
                for k, st in enumerate(body):
                    orig = body_of(originals[i])[k] if i < len(originals) and k < len(body_of(originals[i])) else st
                    if self.ctx.position(self.module, orig)[0] == at:
                        body[k] = add_marker(st, CODE, why)
                        break
                else:
                    body[0] = add_marker(body[0], CODE, why)
                items[i] = with_body(func, body)
                continue
            stmt = (f"if hasattr({module}, \"{call}\"):\n    {module}.{call}()" if guarded else f"{module}.{call}()")
            items[i] = prepend_statements(func, parse_statements(stmt))
            self.ctx.report(CODE, f"{original.name.value}.{hook} calls {module}.{call}() first: it reads {what}; "
                                  f"1.x ran that body before this hook, 2.x after it", Kind.FIXED, hline, hcol)
        return updated.with_changes(body=updated.body.with_changes(body=items))


def _top_blocked(index: ProjectIndex, top: ClassInfo, stage: Stage) -> bool:
    """Whether ``_ClassMigration._blocked`` marks the hook of ``top`` (the class that owns the
    stage), decided on Python's ``ast`` from ``top``'s file as the run found it (maybe another
    file than the one asking)."""
    func = ast_method(index.tree_of(top.path), top.name, stage.old)
    if func is None:
        return False
    a = func.args  # type: ignore[attr-defined]
    if a.vararg or a.kwarg or a.kwonlyargs or len(a.posonlyargs) + len(a.args) != 2 or a.defaults:
        return True
    if stage is TRAIN:
        for c in [top, *index.ancestors(top)[0]]:
            step = c.params.get("training_step", ())
            if "optimizer_idx" in step or "hiddens" in step or "truncated_bptt_steps" in c.attributes | c.methods:
                return True
    return ast_yields(func)


# ---------------------------------------------------------------------------------------------
# Mixins that shadow the buffer hooks (issue 21 kind 2)

BUFFER_HOOKS = {h: stage for stage in STAGES for h in (stage.start, stage.batch_end, stage.new)}
# what Lightning 2.x passes to each buffer hook after ``self`` (at most)
_HOOK_ARITY = {h: (0 if h in (stage.start, stage.new) else 3 if stage is TRAIN else 4)
               for h, stage in BUFFER_HOOKS.items()}


def _mixin_sites(source: SourceFile, ctx: RuleContext) -> List[Site]:
    """One site (action "mixin") per class of ``source`` whose hook (``on_validation_batch_end``
    ...) comes before, in some LightningModule's MRO, the class whose epoch-end hook this rule
    migrates, and does not call ``super()``: the buffer hooks written there would never run
    (``class Model(LoggingMixin, Base)``). Its data: ``(hook, owner, subclass, super_args, why)``
    per hook, ``super_args`` the arguments ``super().hook(...)`` passes on, ``why`` (None: add
    that call first in the hook) the reason it cannot be added faithfully."""
    index = ctx.project
    if not index.has_path(ctx.path):
        index.add_source(source.text, ctx.path, tree=source.tree)
    candidates = [c for c in index.classes_in(ctx.path)
                  if any(h in c.methods and h not in c.super_calls.get(h, ()) for h in BUFFER_HOOKS)]
    if not candidates:
        return []
    sites = []
    for node in ast_class_defs(source.tree):
        info = index.resolve(node.name, ctx.path)
        if info is None or info not in candidates or not _indented_body(source.text, node):
            continue
        methods = class_methods(node)
        inherited = inherited_methods(index, info)
        work = []
        for hook, stage in BUFFER_HOOKS.items():
            func = methods.get(hook)
            if func is None or ast_calls_super(func, hook) or stage.old in info.methods or stage.old in inherited:
                continue  # (a class that has the old hook is the stage migration's)
            shadow = mixin_shadowing(index, info, hook, stage.old)
            if shadow is None or (shadow.why is not None and injection_covers(index, info, hook, stage.old)):
                continue  # (covered: the classes that list this mixin do the work)
            args = _super_args(func, _HOOK_ARITY[hook])
            why = shadow.why or (None if args is not None else
                                 f"its signature does not take what 2.x passes to {hook}")
            work.append((hook, shadow.owner, shadow.subclass, args, why))
        if work:
            sites.append(Site(node.lineno, node.col_offset, info.name, "mixin", tuple(work)))
    return sites


def _super_args(func: AstFunction, arity: int) -> Optional[str]:
    """The arguments a call ``super().hook(...)`` at the start of ``func`` passes on: its first
    ``arity`` parameters after ``self`` (then ``*args``/``**kwargs`` when it has fewer); None
    when its signature cannot take what Lightning passes."""
    a = func.args
    names = [p.arg for p in (*a.posonlyargs, *a.args)][1:]
    required = len(names) - len(a.defaults)
    if required > arity:
        return None
    if len(names) >= arity:
        return ", ".join(names[:arity])
    if a.vararg is None:
        return None
    return ", ".join([*names, "*" + a.vararg.arg, *(["**" + a.kwarg.arg] if a.kwarg else [])])


class _MixinHooks(PrunedTransformer):
    """Carries out the "mixin" sites: ``super().hook(...)`` first in the mixin's hook, so the
    buffer hook of the class after it runs first, as the epoch-end body ran before the module's
    hooks in 1.x; a marker where that call would run code 1.x skipped."""

    def __init__(self, module: cst.Module, ctx: RuleContext, sites: Dict[str, Site]) -> None:
        self.module = module
        self.ctx = ctx
        self.sites = sites

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        site = self.sites.get(original.name.value)
        if site is None or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        work = {hook: rest for hook, *rest in site.data}  # type: ignore[union-attr]
        items = list(updated.body.body)
        last = {item.name.value: i for i, item in enumerate(items) if isinstance(item, cst.FunctionDef)}
        originals = {item.name.value: item for item in getattr(original.body, "body", ())
                     if isinstance(item, cst.FunctionDef)}
        for hook, (owner, subclass, args, why) in work.items():
            i = last.get(hook)
            if i is None:
                continue
            func = items[i]
            line, col = self.ctx.position(self.module, originals.get(hook, original))
            stage = BUFFER_HOOKS[hook]
            if why is None:
                items[i] = prepend_statements(func, parse_statements(f"super().{hook}({args})"))
                self.ctx.report(CODE, f"{original.name.value}.{hook} now calls super() first: in {subclass} it "
                                      f"comes before {owner}, whose {hook} does the work of {stage.old}",
                                Kind.FIXED, line, col)
            else:
                items[i] = add_marker(func, CODE, f"in {subclass} this {hook} comes before {owner}'s, which "
                                                  f"does the work of {stage.old}, and does not call super(); "
                                                  f"{why}: call both by hand")
        return updated.with_changes(body=updated.body.with_changes(body=items))


def _class_work(text: str, node: ast.ClassDef, methods: Dict[str, AstFunction],
                inherited: FrozenSet[str], index: Optional[ProjectIndex] = None,
                info: Optional[ClassInfo] = None) -> Tuple[str, ...]:
    """What ``_ClassMigration`` changes in the class ``node`` of ``text``: the old hooks of the
    stages it migrates (defined, bound by an alias, or inherited), and PREDICT_HOOK."""
    work = []
    indented = _indented_body(text, node)
    for stage in STAGES:
        if indented and ast_alias_bound(node, stage.old):
            work.append(stage.old)  # bound by an alias: migrated as a helper (or marked)
            continue
        # Below the class that defines the old hook, the hooks that collect its outputs get the
        # collection unless they leave it to super().
        below = [name for name in (stage.start, stage.batch_end, stage.new)
                 if name in methods and not ast_calls_super(methods[name], name)]
        if stage_changes(methods, inherited, stage.old, below):
            work.append(stage.old)
        elif (index is not None and info is not None and stage.old in inherited and indented
              and any(injection_point(index, info, name, stage.old)
                      for name in (stage.start, stage.batch_end, stage.new))):
            work.append(stage.old)  # a mixin it lists shadows the buffer hooks: it does the work
    predict = methods.get(PREDICT_HOOK)
    if predict is not None and _takes_results(predict):
        work.append(PREDICT_HOOK)
    return tuple(work)


def _indented_body(text: str, node: ast.ClassDef) -> bool:
    """Whether the class body is an indented block, not statements on the ``class`` line itself
    (``class A(B): x = f``), which the class walk leaves alone."""
    first = node.body[0]
    line = re.split(r"\r\n|\r|\n", text)[first.lineno - 1]
    return not line.encode("utf-8")[:first.col_offset].strip()


def _takes_results(func: AstFunction) -> bool:
    """Whether ``on_predict_epoch_end`` has the 1.x signature ``(self, results)`` that
    ``_migrate_predict`` rewrites (or marks)."""
    args = func.args
    return (len(args.posonlyargs) + len(args.args) == 2 and args.vararg is None and args.kwarg is None
            and not args.kwonlyargs)
