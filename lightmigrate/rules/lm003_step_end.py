"""LM003: ``training_step_end``, ``validation_step_end`` and ``test_step_end`` keep running.

Lightning 2.0 stopped calling the step-end hooks and says nothing (spec M4, M5). In 1.9 the hook
ran right after every step (for training inside the optimizer closure, before ``zero_grad`` and
``backward``, once per closure evaluation), and its return value, unless None, replaced the
step's output: it was what got backpropagated, what ``on_*_batch_end`` received and what
``*_epoch_end`` collected (spec B.3).

Two rewrites:

- *inline* (the safe default): the step keeps its name and signature but becomes a small
  wrapper; the old step body moves to ``_training_step``, the old hook to
  ``_training_step_end``, and the wrapper returns the hook's result unless it was None. Classes
  further down the hierarchy override the helpers, as they overrode the hooks in 1.x.
- *batch end*: a hook that only has side effects (logging, metric updates) and returns its
  argument or None becomes ``on_*_batch_end``, as the 2.x docs recommend, merged into an
  existing batch-end hook. ``self.log`` keeps its defaults (step-end hooks used the step's
  defaults, and so do the batch-end hooks; spec B.9). For training this is only done when the
  body cannot see a difference: ``on_train_batch_end`` runs after the optimizer step and gets
  the detached, accumulation-scaled loss, so a body that reads the loss, the weights or
  ``global_step`` is inlined instead, and so is every training hook of a class whose hierarchy
  uses LBFGS (the closure, and 1.9's hook with it, runs several times per batch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Callable, List, Optional, Sequence, Tuple

import libcst as cst

from lightmigrate.cst.helpers import (
    add_marker,
    code_of,
    BodyFacts,
    Statement,
    append_statements,
    body_of,
    fresh_name,
    has_star_params,
    param_names,
    parse_method,
    parse_statements,
    positional_params,
    prepend_statements,
    self_name,
    set_param_default,
    split_docstring,
    with_body,
)
from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.aliases import ast_alias_bound
from lightmigrate.rules.shared.mro import shadowed_by
from lightmigrate.rules.shared.class_edit import Hierarchy, hook_classes, migrate_classes, taken_names
from lightmigrate.rules.shared.stage_hooks import (
    StageHookEditor, ast_method, ast_yields, class_methods, inherited_methods, stage_changes)
from lightmigrate.cst.walk import walk

CODE = "LM003"
GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"


@dataclass(frozen=True)
class Stage:
    step: str
    end: str
    batch_end: str
    batch_end_args: str  # after the outputs parameter

    @property
    def training(self) -> bool:
        return self.step == "training_step"


TRAIN = Stage("training_step", "training_step_end", "on_train_batch_end", "batch, batch_idx")
VALIDATION = Stage("validation_step", "validation_step_end", "on_validation_batch_end",
                   "batch, batch_idx, dataloader_idx=0")
TEST = Stage("test_step", "test_step_end", "on_test_batch_end", "batch, batch_idx, dataloader_idx=0")
STAGES = (TRAIN, VALIDATION, TEST)
HOOKS = frozenset(s.end for s in STAGES)
UNKNOWN_CLASS = ("looks like a Lightning 1.x step-end hook, but the class is not recognisably a "
                 "LightningModule; migrate it by hand if it is one")


def _reduces(code: str, p: str) -> bool:
    """Whether the hook reduces its argument the way DP code reduced gathered outputs."""
    ref = rf"\b{re.escape(p)}\b(\[[^\]]*\])*"
    return bool(re.search(rf"{ref}\.(mean|sum)\(|torch\.(mean|sum|cat|stack)\(\s*{ref}", code))
# Calls that cannot change an argument they are given.
PURE_CALLS = frozenset({"log", "log_dict", "print", "len", "isinstance", "float", "int", "str", "repr"})
# Methods of an output (tensor or dict) that only read it.
READ_METHODS = frozenset({"detach", "item", "keys", "values", "items", "get", "mean", "sum", "size", "numel",
                          "cpu", "float", "clone", "argmax", "argmin", "max", "min", "tolist", "dim", "norm",
                          "abs", "std", "var"})
# What changes across the optimizer step that separates training_step_end from on_train_batch_end:
# the step changes the weights, gradients and global_step, and step-interval LR schedulers step
# in between (spec B.5), so the optimizer's and the schedulers' state are read there too.
STEP_SENSITIVE = re.compile(r"\bglobal_step\b|\.weight\b|\.bias\b|parameters\(|\.grad\b|state_dict\(|\boptimizers\("
                            r"|\btrainer\.optimizers\b|\blr_schedulers\(|\blr_scheduler_configs\b|\bparam_groups\b"
                            r"|\bget_last_lr\(|\bget_lr\(|\blast_epoch\b")


def _names(node: cst.CSTNode, name: str) -> List[cst.Name]:
    found: List[cst.Name] = []

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value == name:
                found.append(n)

    walk(node, V())
    return found


class _ParamUse(cst.CSTVisitor):
    """How a step-end body uses its parameter ``p``: is every use a read?"""

    def __init__(self, p: str, training: bool) -> None:
        self.p = p
        self.training = training
        self.ok = True
        self.allowed: set = set()  # ids of Name nodes used in a harmless way

    def _is_p(self, node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Name) and node.value == self.p

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if not self._is_p(node.value):
            return
        key = node.slice[0].slice if len(node.slice) == 1 else None
        is_str = isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)
        if self.training and (not is_str or key.value.evaluated_value == "loss"):  # type: ignore[union-attr]
            self.ok = False  # on_train_batch_end sees the loss detached and scaled
        self.allowed.add(id(node.value))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._is_p(node.value):
            if self.training:
                self.ok = False
            self.allowed.add(id(node.value))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and self._is_p(func.value) and func.attr.value not in READ_METHODS:
            self.ok = False
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        for arg in node.args:
            if self._is_p(arg.value):
                if name in PURE_CALLS and not self.training:
                    self.allowed.add(id(arg.value))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if _names(node.target, self.p):
            self.ok = False  # rebinds or changes it

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if _names(node.target, self.p):
            self.ok = False

    def visit_Del(self, node: cst.Del) -> None:
        if _names(node.target, self.p):
            self.ok = False


def _not_side_effect_only(func: cst.FunctionDef, p: str, training: bool) -> Optional[str]:
    """Why the hook may change the step's result or see something different in a batch-end
    hook; None when it returns its argument unchanged or None and only reads it."""
    body = body_of(func)
    for ret in _returns(body):
        if ret.value is not None and not (isinstance(ret.value, cst.Name) and ret.value.value in (p, "None")):
            return "it returns a new value"
    use = _ParamUse(p, training)
    for st in body:
        walk(st, use)
    if not use.ok:
        return ("it changes its argument, or reads the loss / the output as a whole, which "
                "on_train_batch_end receives detached and scaled" if training else "it changes its argument")
    for st in body:
        for n in _names(st, p):
            if id(n) not in use.allowed and not _is_returned(st, n):
                return f"it passes `{p}` on to other code, which could change it"
    if training:
        code = code_of(func)
        if STEP_SENSITIVE.search(code):
            return ("it reads weights, gradients, global_step or the optimizer / LR scheduler state, which "
                    "change before on_train_batch_end")
    return None


LBFGS_WHY = ("LBFGS evaluates the optimizer closure several times per batch and 1.x ran the hook on every "
             "evaluation, on_train_batch_end runs once per batch")


def _uses_lbfgs(index: ProjectIndex, family: Sequence[ClassInfo]) -> bool:
    """Whether a file of the class's hierarchy names LBFGS (spec B.3, B.8; ledger fact B3.2).

    LBFGS calls the closure, and with it 1.x's ``training_step_end``, up to ``max_eval`` times per
    batch; ``on_train_batch_end`` runs once. A name in any of those files is enough: inlining is
    faithful whatever the optimizer, moving the hook is only the tidier form. (An optimizer chosen
    at run time from a configuration string is not seen.)"""
    for info in family:
        text = index.text_of(info.path)
        if text is not None and "LBFGS" in text:
            return True
    return False


def _is_returned(stmt: cst.CSTNode, name: cst.Name) -> bool:
    return any(r.value is name for r in _returns([stmt]))


def _returns(stmts) -> List[cst.Return]:
    found: List[cst.Return] = []

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            found.append(node)

    for s in stmts:
        walk(s, V())
    return found


def _strip_final_return(stmts: List[Statement]) -> Tuple[List[Statement], bool]:
    """Drop a trailing ``return`` / ``return p``; report whether other returns remain."""
    stmts = list(stmts)
    if stmts and isinstance(stmts[-1], cst.SimpleStatementLine) and len(stmts[-1].body) == 1 \
            and isinstance(stmts[-1].body[0], cst.Return):
        stmts.pop()
    return stmts, bool(_returns(stmts))


def _call_args(func: cst.FunctionDef) -> str:
    """How to pass a method's own parameters on to another method with the same signature."""
    params = func.params
    parts = [p.name.value for p in positional_params(func)[1:]]
    if isinstance(params.star_arg, cst.Param):
        parts.append("*" + params.star_arg.name.value)
    parts.extend(f"{p.name.value}={p.name.value}" for p in params.kwonly_params)
    if params.star_kwarg is not None:
        parts.append("**" + params.star_kwarg.name.value)
    return ", ".join(parts)


# The training hook of a class with several optimizers or TBPTT: LM005 / LM006 migrate the step
# and the hook together (in their loop), for the whole hierarchy.
PER_OPTIMIZER = ("runs once per optimizer (optimizer_idx) or TBPTT split; this needs the "
                 "multiple-optimizer / TBPTT migration")


def _why_blocked(stage: Stage, unusual_signature: bool, line: Sequence[ClassInfo],
                 is_generator: Callable[[], bool]) -> Optional[str]:
    """Why the stage's hook, defined by ``line[0]`` (``line``: it and its ancestors), is marked
    instead of migrated; None when it is migrated."""
    if unusual_signature:
        return f"unusual signature for {stage.end}; call it from {stage.step} by hand"
    if stage.training:
        for c in line:
            step = c.params.get("training_step", ())
            if "optimizer_idx" in step or "hiddens" in step:
                return PER_OPTIMIZER
    if is_generator():
        return f"{stage.end} is a generator; port it by hand"
    return None


def _top_blocked(index: ProjectIndex, top: ClassInfo, stage: Stage) -> Optional[str]:
    """``_StepEndMigration._blocked`` for the hook of ``top`` (the class that owns the rewrite),
    decided on Python's ``ast`` from ``top``'s file as the run found it: what every class below
    it, in any file, must know (its step is not renamed under a hook that stays)."""
    params = top.params.get(stage.end, ())

    def is_generator() -> bool:
        func = ast_method(index.tree_of(top.path), top.name, stage.end)
        return func is not None and ast_yields(func)

    return _why_blocked(stage, len(params) != 2 or any(p.startswith("*") for p in params),
                        [top, *index.ancestors(top)[0]], is_generator)


class _StepEndMigration(StageHookEditor):
    code = CODE
    blocked_above: dict = {}  # stage hook -> why the class above that owns it marked it (from find)

    def migrate(self) -> None:
        for stage in STAGES:
            self._migrate_stage(stage)

    def _names(self, top: ClassInfo, stage: Stage) -> Tuple[str, str]:
        taken = taken_names(self.index, top)
        step_helper = fresh_name("_" + stage.step, taken)
        end_helper = fresh_name("_" + stage.end, taken | {step_helper})
        return step_helper, end_helper

    def _blocked(self, stage: Stage, end: cst.FunctionDef) -> Optional[str]:
        return _why_blocked(stage, has_star_params(end) or len(param_names(end)) != 2,
                            [self.info, *self.h.ancestors], lambda: BodyFacts(body_of(end)).has_yield)

    def _migrate_stage(self, stage: Stage) -> None:
        alias = self.alias_of(stage.end)
        if alias is not None:
            # ``test_step_end = validation_step_end``: the alias binds the end helper, which the
            # step wrapper calls, as 1.9 called the aliased method
            value = self.get(alias.value)
            why = self._blocked(stage, value if value is not None else parse_method("def f(self, out):\n    pass"))
            if why:
                self.items[alias.item] = add_marker(self.items[alias.item], CODE, f"{stage.end} = {alias.value}: {why}")
                self.changed = True
                return
            end, top = None, self.h.top_definer(stage.end)
            why_inline: Optional[str] = f"it is an alias of {alias.value}"
        else:
            found = self.stage_hook(stage.end, partial(self._blocked, stage))
            if found is None:
                return
            end, top = found
            why_inline = self._why_inline(stage, end) if end is not None and top is self.info else None
        step_helper, end_helper = self._names(top, stage)
        if end is not None and top is self.info and why_inline is None:
            self._move_to_batch_end(stage, end)
            return
        if top is self.info:
            self._inline_top(stage, step_helper, end_helper, why_inline or "")
        elif stage.end in self.blocked_above:
            # The owner keeps its hook (marked): this class's step stays what it overrides
            # (left to LM005 / LM006 when they own the stage).
            if self.get(stage.step) is not None and self.blocked_above[stage.end] != PER_OPTIMIZER:
                self.mark(stage.step, f"overrides {stage.step} of {top.name} ({top.path}), whose {stage.end} "
                                      f"LM003 could not migrate ({self.blocked_above[stage.end]}); port them "
                                      "together by hand")
        else:
            # Below the class that owns the wrapper: override its helpers, as this class
            # overrode the 1.x hooks.
            for name, helper in ((stage.step, step_helper), (stage.end, end_helper)):
                if self.get(name) is not None:
                    self.rename(name, helper)
                    self.fixed(f"{name} kept as {helper}(), called from the inherited {stage.step} wrapper", name)
                elif self.alias_of(name) is not None:
                    self.rename_alias(name, helper)
                    self.fixed(f"{name} (an alias) kept as {helper}, called from the inherited {stage.step} wrapper")
                elif name in self.info.self_calls:
                    # 1.9's self.<step>(...) ran the step alone: so does the helper
                    self.fixed(f"self.{name}(...) calls {helper}() (the step alone, as in 1.9), not the wrapper")
                self.renames[name] = helper

    # -- batch end -----------------------------------------------------------------------------

    def _why_inline(self, stage: Stage, end: cst.FunctionDef) -> Optional[str]:
        """Why the hook cannot become a batch-end hook (None: it can)."""
        family = [self.info, *self.h.descendants]
        if any(stage.end in c.self_calls for c in family):
            return "it is also called directly"
        if self.aliased(stage.end):
            return "an alias in the class body binds it"
        if any({stage.end, stage.batch_end} & d.methods for d in self.h.descendants):
            return f"subclasses override {stage.end} or {stage.batch_end}"
        shadow = shadowed_by(self.index, self.info, stage.batch_end)
        if shadow is not None:
            return f"{shadow}.{stage.batch_end} comes before this class in a subclass's MRO"
        # A subclass (in any file) that overrides or calls the step goes through the helper the
        # wrapper calls: its file decides the same way from the index, whatever the hook's body.
        if any(stage.step in d.methods or stage.step in d.self_calls for d in self.h.descendants):
            return f"subclasses override or call {stage.step}"
        if stage.training and _uses_lbfgs(self.index, [self.info, *self.h.ancestors, *self.h.descendants]):
            return LBFGS_WHY
        why = _not_side_effect_only(end, param_names(end)[1], stage.training)
        if why:
            return why
        stmts, early_returns = _strip_final_return(split_docstring(body_of(end))[1])
        existing = self.get(stage.batch_end)
        if existing is not None:
            names = param_names(existing)
            wanted = 4 if stage.training else 5
            if early_returns or has_star_params(existing) or len(names) < wanted or self_name(existing) != self_name(end):
                return f"it cannot be merged safely into the existing {stage.batch_end}"
            a, b = BodyFacts(stmts), BodyFacts(body_of(existing))
            if a.has_scope_decl or b.has_scope_decl or (a.bound & (b.loaded - b.bound)) or (b.bound & (a.loaded - a.bound)):
                return f"its local names clash with the existing {stage.batch_end}"
        elif early_returns and self.inherits_hook(stage.batch_end):
            return "an early return would skip the inherited batch-end hook"
        return None

    def _move_to_batch_end(self, stage: Stage, end: cst.FunctionDef) -> None:
        s, p = param_names(end)
        stmts, _ = _strip_final_return(split_docstring(body_of(end))[1])
        existing = self.editable(stage.batch_end)
        if existing is not None:
            out_name = param_names(existing)[1]
            bind = [] if out_name == p else parse_statements(f"{p} = {out_name}")
            merged = prepend_statements(existing, [*bind, *stmts])
            if not stage.training:  # 2.x omits dataloader_idx with one dataloader
                merged = set_param_default(merged, param_names(existing)[4], "0")
            self.set(stage.batch_end, merged)
            self.set(stage.end, None)
            self.fixed(f"{stage.end} only had side effects: moved into the existing {stage.batch_end}", stage.end)
            return
        args = stage.batch_end_args
        taken = {p, s}
        if taken & {"batch", "batch_idx", "dataloader_idx"}:
            args = ", ".join(fresh_name(a.split("=")[0], taken) + ("=0" if "=" in a else "") for a in args.split(", "))
        new = parse_method(f"def {stage.batch_end}({s}, {p}, {args}):\n    pass")
        new = with_body(new, stmts)
        if self.inherits_hook(stage.batch_end):
            passed = ", ".join([p, *(a.split("=")[0] for a in args.split(", "))])
            new = append_statements(new, parse_statements(f"super().{stage.batch_end}({passed})"))
        new = new.with_changes(leading_lines=end.leading_lines, decorators=end.decorators)
        i = self.find(stage.end)
        assert i is not None
        self.items[i] = new
        self.changed = True
        self.fixed(f"{stage.end} only had side effects: moved to {stage.batch_end}", stage.end)

    # -- inline --------------------------------------------------------------------------------

    def _inline_top(self, stage: Stage, step_helper: str, end_helper: str, why: str) -> None:
        end = self.get(stage.end)  # None: an alias binds it
        step = self.get(stage.step)
        step_alias = self.alias_of(stage.step) if step is None else None
        s = self_name(end) if end is not None else self_name(step) if step is not None else "self"
        aliased_step = self.get(step_alias.value) if step_alias is not None else None
        if step is not None:
            signature_source = step
        elif aliased_step is not None:
            signature_source = aliased_step
        elif step_alias is not None:
            signature_source = parse_method(f"def {stage.step}({s}, *args, **kwargs):\n    pass")
        else:
            signature_source = parse_method(f"def {stage.step}({s}, *args, **kwargs):\n    pass")
        args = _call_args(signature_source)
        taken = set(param_names(signature_source)) | {p.name.value for p in signature_source.params.kwonly_params}
        out = fresh_name("outputs", taken)
        res = fresh_name("result", taken | {out})
        wrapper = signature_source.with_changes(decorators=(), leading_lines=())
        wrapper = with_body(wrapper, parse_statements(
            f"""
            {out} = {s}.{step_helper}({args})
            {res} = {s}.{end_helper}({out})
            return {out} if {res} is None else {res}
            """
        ))
        wrapper = wrapper.with_changes(name=cst.Name(stage.step), params=signature_source.params)
        if step is not None:
            self.rename(stage.step, step_helper)
            self.insert_before(step_helper, [wrapper])
        elif step_alias is not None:  # ``test_step = validation_step``: the alias binds the step helper
            self.rename_alias(stage.step, step_helper)
            self.insert_before(step_helper, [wrapper])
        else:
            helper = parse_method(f"def {step_helper}({s}, *args, **kwargs):\n"
                                  f"    return super().{stage.step}(*args, **kwargs)")
            self.insert_before(stage.end, [wrapper, helper])
            self.renames[stage.step] = step_helper
            self.keep_calls.add(step_helper)  # its super().training_step(...) must stay
        if end is None:
            self.rename_alias(stage.end, end_helper)
        else:
            self.rename(stage.end, end_helper)
        if end is not None and self.index.uses_dp and _reduces(code_of(end), param_names(end)[1]):
            self.mark(end_helper, f"this reduced outputs gathered across GPUs under strategy=\"dp\", which "
                                  f"Lightning 2.x removed; on one device (and per process under DDP) it sees "
                                  f"a single {stage.step} output")
        self.fixed(f"{stage.end} inlined because {why}: {stage.step} now returns its result unless it is None "
                   f"(step body in {step_helper}, hook in {end_helper})", stage.end)


class StepEndRule(Rule):
    code = CODE
    name = "step-end-hooks"
    summary = "`*_step_end` hooks, silently ignored by 2.x, are inlined into the step or moved to `on_*_batch_end`."
    spec_rows = ("M4", "M5")
    coverage = {
        "M4": Handling.REWRITTEN,
        "M5": Handling.REWRITTEN,
    }
    guide = (f"{GUIDE} (1.9 advanced rows: 'used training_step_end', 'used validation_step_end', "
             "'used test_step_end'; PR 16791)")
    safety = Safety.PRESERVING
    triggers = ("_step_end",)
    # a subclass elsewhere that overrides the step overrides the wrapper: it must override the helper
    linked_hooks = HOOKS
    description = (
        "Lightning 2.x never calls `training_step_end`, `validation_step_end` or `test_step_end` and "
        "does not warn: a loss built there is no longer backpropagated, metrics updated there stop "
        "updating. In 1.9 the hook ran right after each step (for training inside the optimizer "
        "closure, once per closure evaluation) and its result, unless None, replaced the step "
        "output. When the hook can change that result, the step becomes a wrapper that calls the old "
        "step body and the old hook and returns the hook's result unless it is None; subclasses "
        "override the helpers as they overrode the hooks. When the hook only logs or updates metrics "
        "and returns its argument or None, it moves to `on_*_batch_end` (merged with an existing "
        "one), which keeps `self.log` defaults. Epoch-end buffers then collect what 1.9 collected. "
        "When the project uses `strategy=\"dp\"`, a hook that reduces its argument (the outputs DP "
        "gathered from every GPU) gets a marker: 2.x has no DP."
    )
    examples = (
        Example(
            title="a loss built in training_step_end is inlined",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return {"pred": self(batch), "target": batch}

    def training_step_end(self, out):
        return ((out["pred"] - out["target"]) ** 2).mean()
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        outputs = self._training_step(batch, batch_idx)
        result = self._training_step_end(outputs)
        return outputs if result is None else result

    def _training_step(self, batch, batch_idx):
        return {"pred": self(batch), "target": batch}

    def _training_step_end(self, out):
        return ((out["pred"] - out["target"]) ** 2).mean()
''',
        ),
        Example(
            title="a hook that only updates a metric moves to on_validation_batch_end",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"preds": self(batch), "target": batch}

    def validation_step_end(self, outputs):
        self.val_acc(outputs["preds"], outputs["target"])
        self.log("val_acc", self.val_acc)
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        return {"preds": self(batch), "target": batch}

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        self.val_acc(outputs["preds"], outputs["target"])
        self.log("val_acc", self.val_acc)
''',
        ),
        Example(
            title="already 2.x: left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.log("x", 1.0)
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # One site per class the class walk changes: action "mark" for a class that is not
        # recognisably a LightningModule but defines a hook (its hooks get a marker), "migrate"
        # with the hooks of the stages it works on otherwise. Below the class that defines a
        # hook, only a class that defines the step (it becomes the helper's override) or calls
        # the step or the hook (the calls go to the helpers) changes.
        sites = []
        for found in hook_classes(source, ctx, HOOKS):
            methods = class_methods(found.node)
            if not found.known:
                if HOOKS & methods.keys():
                    sites.append(found.site("mark"))
                continue
            inherited = inherited_methods(ctx.project, found.info)
            bound = {**methods}  # what an alias binds counts as defined (the alias follows the rewrite)
            for stage in STAGES:
                for name in (stage.end, stage.step):
                    if name not in bound and ast_alias_bound(found.node, name):
                        bound[name] = found.node  # type: ignore[assignment]
            calls = found.info.self_calls
            work, blocked = [], []
            for stage in STAGES:
                if not (stage_changes(bound, inherited, stage.end, [stage.step])
                        or (stage.end in inherited and {stage.step, stage.end} & calls)):
                    continue
                if stage.end not in bound:  # below the class that owns the hook: its fate is ours
                    top = Hierarchy.of(ctx.project, found.info).top_definer(stage.end)
                    why = _top_blocked(ctx.project, top, stage)
                    if why == PER_OPTIMIZER or (why and stage.step not in bound):
                        continue  # (LM005 / LM006 own it; or nothing here to mark)
                    if why:
                        blocked.append((stage.end, why))
                work.append(stage.end)
            if work:
                sites.append(found.site("migrate", tuple(work)))
            if blocked:
                sites.append(found.site("blocked", tuple(blocked)))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        only = frozenset(site.target for site in sites)
        blocked = {site.target: dict(site.data) for site in sites if site.action == "blocked"}

        def editor(*args) -> _StepEndMigration:
            ed = _StepEndMigration(*args)
            ed.blocked_above = blocked.get(ed.info.name, {})
            return ed

        return migrate_classes(module, ctx, CODE, HOOKS, editor, UNKNOWN_CLASS, only=only)
