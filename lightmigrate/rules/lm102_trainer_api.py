"""LM102: Trainer methods and properties removed or changed in 2.0 (spec A.4, A.8).

On expressions that are a Trainer (``trainer``, ``self.trainer``, ``pl_module.trainer``, or a name
bound to ``Trainer(...)`` in the file):

- ``trainer.train_dataloader.loaders`` -> ``trainer.train_dataloader`` (T-prop1);
- ``trainer.val_dataloaders`` / ``test_dataloaders`` were always lists in 1.9: reads are wrapped so
  they still are (T-prop2);
- ``trainer.data_parallel`` and ``trainer.prediction_writer_callbacks`` get their 2.x spelling
  (T-prop4, T-prop5); comparisons of ``trainer.precision`` with 1.9 values use the 2.x strings (T-prop7);
- ``trainer.tuner.lr_find(...)`` -> ``Tuner(trainer).lr_find(..., update_attr=False)`` (T-meth2);
  ``trainer.tune(...)`` -> ``Tuner`` calls when the Trainer's flags are visible (T-meth1);
- ``fit(train_dataloader=)``, ``validate(val_dataloaders=)``, ``test(test_dataloaders=)`` keywords
  (A.8), legacy attributes such as ``root_gpu`` or ``training_type_plugin`` (A.8);
- everything else removed (loop setters, ``reset_*_dataloader``, ``amp_backend``, ...) is marked.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, FrozenSet, List, Optional, Tuple

import libcst as cst

from lightmigrate.cst.helpers import add_markers, ensure_import, lightning_root, module_text, code_of
from lightmigrate.analysis.facts import file_facts, nodes_of, parse_tree
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.gates import (
    COMMENT,
    attribute_assigned,
    attribute_compared,
    attribute_of_assigned,
    attribute_read,
    trainer_call_names,
    imports_pl_root,
    may_import_pl_root,
    trainer_may_call,
)
from lightmigrate.catalog.trainer_args import GUIDE, PRECISION
from lightmigrate.rules.lm101_trainer_constructor import _Imports, _is_lightning_trainer, literal
from lightmigrate.cst.walk import transform, PrunedTransformer, walk

CODE = "LM102"

RENAMES = {  # A.8 trainer attributes with a same-meaning 2.x spelling
    "root_gpu": "strategy.root_device.index",
    "training_type_plugin": "strategy",
    "data_parallel_device_ids": "device_ids",
    "progress_bar_dict": "progress_bar_metrics",
    "validated_ckpt_path": "ckpt_path",
    "tested_ckpt_path": "ckpt_path",
    "predicted_ckpt_path": "ckpt_path",
}
MARKED = {
    "num_gpus": "A.8: `trainer.num_gpus` was removed; use trainer.num_devices (with accelerator \"gpu\")",
    "gpus": "A.8: `trainer.gpus` was removed; use trainer.device_ids / trainer.num_devices",
    "num_processes": "A.8: `trainer.num_processes` was removed; use trainer.num_devices",
    "tpu_cores": "A.8: `trainer.tpu_cores` was removed; use trainer.num_devices",
    "ipus": "A.8: `trainer.ipus` was removed; use trainer.num_devices",
    "lr_schedulers": "A.8: `trainer.lr_schedulers` (dicts) became trainer.lr_scheduler_configs (objects: .scheduler, .interval)",
    "use_amp": "T-prop6: `trainer.use_amp` was removed; check trainer.precision",
    "amp_backend": "T-prop6: `trainer.amp_backend` was removed; 2.x always uses native AMP",
    "amp_level": "T-prop6: `trainer.amp_level` was removed (apex)",
    "using_native_amp": "T-prop6: `trainer.using_native_amp` was removed; 2.x always uses native AMP",
    "optimizer_frequencies": "T-prop8: `trainer.optimizer_frequencies` was removed (use manual optimization)",
    "tuning": "T-prop9: `trainer.tuning` was removed",
    "resume_from_checkpoint": "T-prop10: `trainer.resume_from_checkpoint` was removed; trainer.ckpt_path is set only after loading",
    "weights_save_path": "A.8: `trainer.weights_save_path` was removed; use ModelCheckpoint.dirpath or trainer.default_root_dir",
    "should_rank_save_checkpoint": "A.8: `trainer.should_rank_save_checkpoint` was removed; use trainer.is_global_zero",
    "lightning_optimizers": "A.8: `trainer.lightning_optimizers` was removed; use pl_module.optimizers()",
    "verbose_evaluate": "A.8: `trainer.verbose_evaluate` was removed; pass verbose= to validate()/test()",
    "run_stage": "A.8: `trainer.run_stage` was removed",
    "call_hook": "A.8: `trainer.call_hook` was removed; call the hook on the module or callback directly",
    "slurm_job_id": "A.8: `trainer.slurm_job_id` was removed; use SLURMEnvironment.job_id()",
    "reset_train_dataloader": "T-meth4: `reset_train_dataloader()` was removed; the fit loop owns the data",
    "reset_val_dataloader": "T-meth4: `reset_val_dataloader()` was removed; the loops own the data",
    "reset_test_dataloader": "T-meth4: `reset_test_dataloader()` was removed; the loops own the data",
    "reset_predict_dataloader": "T-meth4: `reset_predict_dataloader()` was removed; the loops own the data",
    "reset_train_val_dataloaders": "T-meth4: `reset_train_val_dataloaders()` was removed; the loops own the data",
}
LR_SUGGESTION = ("T-meth1/T-meth2: 2.x's lr_find suggestion takes the steepest loss drop per unit of learning "
                 "rate, 1.9 took it per step, so the suggested (and set) learning rate can differ; check the value")
LOOP_SETTERS = ("fit_loop", "validate_loop", "test_loop", "predict_loop")
_STEP_SETTERS = frozenset({"min_steps", "max_steps"})  # fit_loop setters 2.x removed
LOOP_INTERNALS = ("batch_loop", "optimizer_loop", "running_loss", "split_idx", "manual_loop")
FIT_KEYWORDS = {"fit": {"train_dataloader": "train_dataloaders"},
                "validate": {"val_dataloaders": "dataloaders"},
                "test": {"test_dataloaders": "dataloaders"}}
PRECISION_VALUES = {k: v for k, v in PRECISION.items()}
# Attributes of a Trainer expression that are always rewritten or marked (or, for the loaders,
# rewritten where they are indexed, measured, iterated or stored).
TRAINER_ATTRS = frozenset({*RENAMES, *MARKED, "data_parallel", "prediction_writer_callbacks"})
LOADER_ATTRS = frozenset({"val_dataloaders", "test_dataloaders"})
ASSIGNED_ATTRS = frozenset({"model", *LOOP_SETTERS})
RUN_METHODS = ("fit", "validate", "test", "predict")
# A read of the lists the rule may wrap: each such read (a subscript's value, a ``for``'s iterable,
# an assignment's value, an argument of len/enumerate/...) is followed by ``[``, ``:``, ``,``,
# ``)``, the end of the line or a comment (``trainer.val_dataloaders is None`` is left alone).
_LOADERS = re.compile(rf"\.(?:[\s\\]|{COMMENT})*(?:val|test)_dataloaders\b"
                      r"(?=(?:[ \t\f]|\\(?:\r\n|\r|\n))*(?:[\[:,)\r\n;#]|\Z))")
# The two T-prop2 forms the rule leaves alone: ``x = <recv>.val_dataloaders`` with
# ``isinstance(x, (list, tuple))`` on the next line of the same block (the check is in the same
# function), and the normalised read ``(<recv>.val_dataloaders if isinstance(...) else [...])``.
_GUARDED_ASSIGN = re.compile(
    r"^([ \t]*)([^\W\d]\w*)[ \t]*=[ \t]*[\w.]+\.(?:val|test)_dataloaders[ \t]*\n\1(?=[^\s#])([^\n]*)", re.M)
_GUARDED_READ = re.compile(r"\(([\w.]+\.(?:val|test)_dataloaders) if isinstance\(\1, \(list, tuple\)\) else \[\1\]\)")


def _bound_spellings(text: str) -> Optional[FrozenSet[str]]:
    """The targets ``_TrainerNames`` binds to Trainer calls (``t = Trainer(...)``), as written;
    None when Python's parser cannot say."""
    tree = parse_tree(text)
    if tree is None:
        return None
    called = trainer_call_names(text)
    out = set()
    for node in nodes_of(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
            func = node.value.func
            if (isinstance(func, ast.Name) and func.id in called) or (isinstance(func, ast.Attribute)
                                                                       and func.attr == "Trainer"):
                spelled = ast.get_source_segment(text, node.targets[0])
                if spelled is None:
                    return None
                out.add(spelled)
    return frozenset(out)


def _loaders_rewritten(text: str) -> bool:
    """Whether some ``.val_dataloaders`` / ``.test_dataloaders`` of ``text`` is outside the two
    forms T-prop2 leaves alone (so the rule may wrap it)."""
    safe = [(m.start(), m.start() + len(m.group(0).split("\n", 1)[0])) for m in _GUARDED_ASSIGN.finditer(text)
            if f"isinstance({m.group(2)}, (list, tuple))" in m.group(3)]
    safe += [m.span() for m in _GUARDED_READ.finditer(text)]
    return any(not any(a <= m.start() < b for a, b in safe) for m in _LOADERS.finditer(text))


def _eq() -> cst.AssignEqual:
    return cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def _comma() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _append_arg(args: List[cst.Arg], arg: cst.Arg) -> List[cst.Arg]:
    args = list(args)
    if args and not isinstance(args[-1].comma, cst.Comma):
        args[-1] = args[-1].with_changes(comma=_comma())
    return [*args, arg]


class _TrainerNames(cst.CSTVisitor):
    """Names bound to ``Trainer(...)`` calls, with the keyword values of that call."""

    def __init__(self, imp: _Imports) -> None:
        self.imp = imp
        self.names: Dict[str, Dict[str, cst.BaseExpression]] = {}  # any scope: recognises trainers
        self.scoped: Dict[Tuple[int, str], Dict[str, cst.BaseExpression]] = {}  # (function, target) -> kwargs
        self.counts: Dict[Tuple[int, str], int] = {}
        self.scope: List[int] = [0]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(id(node))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.value, cst.Call) and _is_lightning_trainer(node.value.func, self.imp):
            target = code_of(node.targets[0].target)
            key = (self.scope[-1], target)
            self.counts[key] = self.counts.get(key, 0) + 1
            spread = any(a.star for a in node.value.args) or any(a.keyword is None for a in node.value.args)
            kw = {a.keyword.value: a.value for a in node.value.args if a.keyword is not None}
            if spread:
                kw["<spread>"] = node.value
            self.names[target] = kw
            self.scoped[key] = kw


class _Transformer(PrunedTransformer):
    def __init__(self, ctx: RuleContext, module: cst.Module, names: _TrainerNames) -> None:
        self.ctx = ctx
        self.module = module
        self.names = names
        self.root = lightning_root(module)
        self.imports: List[Tuple[str, str]] = []
        self.pending: List[List[str]] = [[]]
        self.skip_depth = 0
        self.functions: List[str] = []
        self.scopes: List[int] = [0]

    def is_trainer(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            return node.value == "trainer" or node.value in self.names.names
        if isinstance(node, cst.Attribute):
            return node.attr.value == "trainer" or code_of(node) in self.names.names
        return False

    # statements collect markers
    def _push(self, node) -> bool:
        self.pending.append([])
        return True

    def _pop(self, updated):
        whys = self.pending.pop()
        return add_markers(updated, CODE, [f"{w} ({GUIDE})" for w in whys]) if whys else updated

    def _mark(self, why: str) -> None:
        if why not in self.pending[-1]:
            self.pending[-1].append(why)

    def visit_SimpleStatementLine(self, node):
        return self._push(node)

    def leave_SimpleStatementLine(self, original, updated):
        updated = self._pop(updated)
        return self._expand_tune(original, updated)

    def visit_If(self, node):
        return self._push(node)

    def leave_If(self, original, updated):
        return self._pop(updated)

    def visit_While(self, node):
        return self._push(node)

    def leave_While(self, original, updated):
        return self._pop(updated)

    def visit_For(self, node):
        return self._push(node)

    def visit_With(self, node):
        return self._push(node)

    def leave_With(self, original, updated):
        return self._pop(updated)

    # T-prop2: a normalised read is left alone (idempotency)
    def visit_IfExp(self, node: cst.IfExp) -> Optional[bool]:
        test = node.test
        if (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"
                and test.args and isinstance(test.args[0].value, cst.Attribute)
                and test.args[0].value.attr.value in ("val_dataloaders", "test_dataloaders")):
            return False
        return None

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Attribute):
                if self.is_trainer(target.value) and target.attr.value == "model":
                    self._mark("T-prop11: the `trainer.model` setter was removed; pass the model to fit/validate/test/predict")
                elif self.is_trainer(target.value) and target.attr.value in LOOP_SETTERS:
                    self._mark(f"T-prop12: `trainer.{target.attr.value}` can no longer be replaced; custom loops were removed")
                elif (target.attr.value in ("min_steps", "max_steps") and isinstance(target.value, cst.Attribute)
                      and target.value.attr.value == "fit_loop"):
                    self._mark("T-prop13: the fit_loop.min_steps/max_steps setters were removed; pass them to the Trainer")

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        attr = original.attr.value
        if attr in LOOP_INTERNALS and "loop" in code_of(original.value):
            self._mark(f"T-prop14: loop internals such as `{attr}` were removed (progress lives in "
                       "trainer.fit_loop.epoch_loop.automatic_optimization.optim_progress)")
            return updated
        if (attr == "loaders" and isinstance(original.value, cst.Attribute)
                and original.value.attr.value == "train_dataloader" and self.is_trainer(original.value.value)):
            return updated.value  # T-prop1: 2.x returns the user's own loader object
        if not self.is_trainer(original.value):
            return updated
        if attr in RENAMES:
            return cst.parse_expression(f"{code_of(updated.value)}.{RENAMES[attr]}")
        if attr in MARKED:
            self._mark(MARKED[attr])
        elif attr == "data_parallel":
            self.imports.append((f"{self.root}.strategies", "ParallelStrategy"))
            return cst.parse_expression(f"isinstance({code_of(updated.value)}.strategy, ParallelStrategy)")
        elif attr == "prediction_writer_callbacks":
            self.imports.append((f"{self.root}.callbacks", "BasePredictionWriter"))
            v = code_of(updated.value)
            return cst.parse_expression(f"[c for c in {v}.callbacks if isinstance(c, BasePredictionWriter)]")
        return updated

    # T-prop2: 1.9 always gave a list; 2.x gives the user's object. Reads that index, measure or
    # iterate it, or store it for later (unless the code checks isinstance(..., (list, tuple))).
    def _is_loaders(self, node: cst.BaseExpression) -> bool:
        return (isinstance(node, cst.Attribute) and node.attr.value in ("val_dataloaders", "test_dataloaders")
                and self.is_trainer(node.value))

    def _as_list(self, node: cst.BaseExpression) -> cst.BaseExpression:
        v = code_of(node)
        return cst.parse_expression(f"({v} if isinstance({v}, (list, tuple)) else [{v}])")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(code_of(node))
        self.scopes.append(id(node))

    def leave_FunctionDef(self, original, updated):
        self.functions.pop()
        self.scopes.pop()
        return updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if self._is_loaders(original.value):
            return updated.with_changes(value=self._as_list(updated.value))
        return updated

    def leave_For(self, original, updated):
        updated = self._pop(updated)
        if self._is_loaders(original.iter):
            return updated.with_changes(iter=self._as_list(updated.iter))
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if self._is_loaders(original.value) and len(original.targets) == 1:
            target = code_of(original.targets[0].target)
            scope = self.functions[-1] if self.functions else module_text(self.module)
            if f"isinstance({target}, (list, tuple))" not in scope:
                return updated.with_changes(value=self._as_list(updated.value))
        return updated

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        # T-prop7: trainer.precision == 16 -> "16-mixed"
        left = original.left
        if not (isinstance(left, cst.Attribute) and left.attr.value == "precision" and self.is_trainer(left.value)):
            return updated
        # 1.9.5 returned a str ("32", "16", "bf16", "64"): those map to the 2.x strings. An int
        # never compared equal on 1.9.5 (older 1.x returned ints), so it is marked, not changed.
        targets = []
        ints = False

        def new_value(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
            nonlocal ints
            v = literal(node)
            if type(v) is int and v in PRECISION_VALUES:
                ints = True
            elif type(v) is str and v in PRECISION_VALUES:
                quote = node.quote if isinstance(node, cst.SimpleString) else '"'
                return cst.SimpleString(f"{quote}{PRECISION_VALUES[v]}{quote}")
            return None

        for ct in updated.comparisons:
            if isinstance(ct.operator, (cst.Equal, cst.NotEqual)):
                nv = new_value(ct.comparator)
                if nv is not None:
                    ct = ct.with_changes(comparator=nv)
            elif isinstance(ct.operator, (cst.In, cst.NotIn)) and isinstance(ct.comparator, (cst.Tuple, cst.List, cst.Set)):
                els = []
                for el in ct.comparator.elements:
                    nv = new_value(el.value)
                    els.append(el.with_changes(value=nv) if nv is not None else el)
                ct = ct.with_changes(comparator=ct.comparator.with_changes(elements=els))
            targets.append(ct)
        if ints:
            self._mark("T-prop7: trainer.precision is a str (\"32\" on 1.9.5, \"32-true\"/\"16-mixed\"/\"bf16-mixed\" "
                       "on 2.x), so comparing it with an int is always False; compare with the 2.x string")
        return updated.with_changes(comparisons=targets)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if isinstance(func, cst.Name) and func.value in ("len", "enumerate", "list", "tuple", "zip", "iter", "sorted"):
            args = [a.with_changes(value=self._as_list(a.value)) if self._is_loaders(o.value) else a
                    for a, o in zip(updated.args, original.args)]
            return updated.with_changes(args=args)
        if not isinstance(func, cst.Attribute):
            return updated
        name = func.attr.value
        recv = func.value
        # T-meth2: trainer.tuner.lr_find(...) / scale_batch_size(...)
        if (name in ("lr_find", "scale_batch_size") and isinstance(recv, cst.Attribute) and recv.attr.value == "tuner"
                and self.is_trainer(recv.value)):
            self.imports.append((f"{self.root}.tuner", "Tuner"))
            if name == "lr_find" and ("suggestion(" in module_text(self.module) or any(
                    a.keyword is not None and a.keyword.value == "update_attr" and literal(a.value) is not False
                    for a in original.args)):
                self._mark(LR_SUGGESTION)
            trainer_code = code_of(updated.func.value.value)
            new_func = cst.parse_expression(f"Tuner({trainer_code}).{name}")
            args = list(updated.args)
            if name == "lr_find" and not any(a.keyword is not None and a.keyword.value == "update_attr" for a in args) \
                    and not any(a.star == "**" for a in args):
                args = _append_arg(args, cst.Arg(cst.Name("False"), keyword=cst.Name("update_attr"), equal=_eq()))
            if name == "scale_batch_size" and not any(a.star for a in args):
                given = [f"{a.keyword.value}={code_of(a.value)}" for a in args if a.keyword is not None]
                wanted = batch_size_keep_19(given)
                have = {a.keyword.value for a in args if a.keyword is not None}
                new_args = []
                for a in args:
                    if a.keyword is not None and a.keyword.value == "max_trials":
                        value = next(w for w in wanted if w.startswith("max_trials="))
                        a = a.with_changes(value=cst.parse_expression(value.partition("=")[2]))
                    new_args.append(a)
                for w in wanted:
                    k, _, v = w.partition("=")
                    if k not in have:
                        new_args = _append_arg(new_args, cst.Arg(cst.parse_expression(v), keyword=cst.Name(k), equal=_eq()))
                args = new_args
            return updated.with_changes(func=new_func, args=args)
        if not self.is_trainer(recv):
            return updated
        if name in FIT_KEYWORDS:
            renames = FIT_KEYWORDS[name]
            args = []
            for a in updated.args:
                if a.keyword is not None and a.keyword.value in renames:
                    a = a.with_changes(keyword=cst.Name(renames[a.keyword.value]))
                args.append(a)
            updated = updated.with_changes(args=args)
        if name in ("fit", "validate", "test", "predict") and any(
                a.keyword is not None and a.keyword.value == "ckpt_path" for a in original.args) and not any(
                a.keyword is not None and a.keyword.value == "weights_only" for a in original.args):
            line, col = self.ctx.position(self.module, original)
            self.ctx.report(CODE, "T-prop15: Lightning 2.6 loads checkpoints with torch's weights_only=True; a 1.9 "
                                  "checkpoint whose hyperparameters hold non-primitive objects (e.g. an argparse "
                                  "Namespace) fails to load unless you pass weights_only=False (only for files you "
                                  f"trust) ({GUIDE})", Kind.NOTE, line, col)
        if name == "tune":
            self._mark("T-meth1: trainer.tune() was removed; call Tuner(trainer).scale_batch_size(...) (if "
                       "auto_scale_batch_size was set) and then Tuner(trainer).lr_find(..., update_attr=True) (if "
                       "auto_lr_find was set), from pytorch_lightning.tuner")
        return updated

    # T-meth1: ``trainer.tune(...)`` as a statement, with the flags of a visible Trainer(...)
    def _expand_tune(self, original: cst.SimpleStatementLine, updated):
        if len(original.body) != 1 or not isinstance(original.body[0], cst.Expr):
            return updated
        call = original.body[0].value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "tune"):
            return updated
        target = code_of(call.func.value)
        key = (self.scopes[-1], target)
        kw = self.names.scoped.get(key)
        if kw is None or self.names.counts.get(key) != 1 or "<spread>" in kw:
            return updated
        plan = _tune_plan(call, kw)
        if plan is None:
            return updated
        self.imports.append((f"{self.root}.tuner", "Tuner"))
        self.imports.append((f"{self.root}.utilities.seed", "isolate_rng"))
        body = "\n".join(f"    {p}" for p in plan) or "    pass"
        code = f"with isolate_rng():\n    tuner = Tuner({target})\n{body}\n"
        new = cst.parse_statement(code)
        leading = [l for l in updated.leading_lines if not (l.comment and "T-meth1" in l.comment.value)]
        if any(p.startswith("tuner.lr_find(") for p in plan):
            new = add_markers(new.with_changes(leading_lines=leading), CODE, [f"{LR_SUGGESTION} ({GUIDE})"])
            return new
        return new.with_changes(leading_lines=leading)


def _tune_plan(call: cst.Call, kw: Dict[str, cst.BaseExpression]) -> Optional[List[str]]:
    """The Tuner calls that replace ``trainer.tune(...)`` (batch size first, then LR), or None."""
    if any(a.star for a in call.args):
        return None
    names = ["model", "train_dataloaders", "val_dataloaders", "dataloaders", "datamodule",
             "scale_batch_size_kwargs", "lr_find_kwargs", "method"]
    given: Dict[str, str] = {}
    for i, a in enumerate(call.args):
        key = a.keyword.value if a.keyword is not None else (names[i] if i < len(names) else None)
        if key is None or key not in names:
            return None
        given[key] = code_of(a.value)
    lr = literal(kw["auto_lr_find"]) if "auto_lr_find" in kw else False
    bs = literal(kw["auto_scale_batch_size"]) if "auto_scale_batch_size" in kw else False
    from lightmigrate.catalog.trainer_args import NOT_LITERAL
    if lr is NOT_LITERAL or bs is NOT_LITERAL:
        return None
    common = [given[k] if k == "model" else f"{k}={given[k]}" for k in names[:5] if k in given]
    if "method" in given:
        common.append(f"method={given['method']}")
    plan = []
    if bs:
        mode = bs if isinstance(bs, str) else "power"
        extra = [f'mode="{mode}"']
        sbs = given.get("scale_batch_size_kwargs")
        if sbs is None:
            extra += batch_size_keep_19([])
        else:
            parsed = literal(cst.parse_expression(sbs))
            if not isinstance(parsed, dict) or not all(isinstance(k, str) for k in parsed):
                return None
            items = [f"{k}={code_of(v)}" for k, v in _dict_items(cst.parse_expression(sbs))]
            extra += batch_size_keep_19(items)
        plan.append(f"tuner.scale_batch_size({', '.join(common + extra)})")
    if lr:
        attr = lr if isinstance(lr, str) else ""
        extra = ["update_attr=True"] + ([f'attr_name="{attr}"'] if attr else []) + ([f"**{given['lr_find_kwargs']}"] if "lr_find_kwargs" in given else [])
        plan.append(f"tuner.lr_find({', '.join(common + extra)})")
    return plan


def _dict_items(node: cst.BaseExpression) -> List[Tuple[str, cst.BaseExpression]]:
    return [(literal(e.key), e.value) for e in node.elements if isinstance(e, cst.DictElement)]


def batch_size_keep_19(keywords: List[str]) -> List[str]:
    """Keyword arguments of a 2.x ``scale_batch_size`` call that give 1.9's result (C13): 1.9 ran
    one trial more than ``max_trials`` (default 25), and had no 5% margin and no 8192 cap."""
    out = []
    trials = None
    for kw in keywords:
        name, _, value = kw.partition("=")
        if name == "max_trials":
            trials = value
            continue
        out.append(kw)
    if trials is None:
        out.append("max_trials=26")
    elif trials.isdigit():
        out.append(f"max_trials={int(trials) + 1}")
    else:
        out.append(f"max_trials={trials} + 1")
    names = {kw.partition("=")[0] for kw in out}
    if "margin" not in names:
        out.append("margin=0.0")
    if "max_val" not in names:
        out.append("max_val=2**31")
    return out


class TrainerApiRule(GatedRule):
    code = CODE
    name = "trainer-methods-properties"
    summary = ("Trainer methods and properties removed or changed in 2.0 (tune, tuner.lr_find, root_gpu, "
               "val_dataloaders lists, .loaders, data_parallel, fit keywords ...) get their 2.x form or a marker")
    spec_rows = ("T-meth1", "T-meth2", "T-meth4", "T-prop1-T-prop15", "A8-fit-keywords", "A8-trainer-attributes")
    guide = f"Trainer methods and properties rows of the upgrade guide: {GUIDE}"
    safety = Safety.PRESERVING
    description = __doc__ or ""
    triggers = ("trainer", "Trainer")
    coverage = {
        "T-meth1": Handling.REWRITTEN, "T-meth2": Handling.REWRITTEN,  # lr suggestion marked "T-meth4": Handling.MARKED,
        "T-prop1": Handling.REWRITTEN, "T-prop2": Handling.REWRITTEN, "T-prop3": Handling.NO_CHANGE,
        "T-prop4": Handling.REWRITTEN, "T-prop5": Handling.REWRITTEN, "T-prop6": Handling.MARKED,
        "T-prop7": Handling.REWRITTEN, "T-prop8": Handling.MARKED, "T-prop9": Handling.MARKED,
        "T-prop10": Handling.MARKED, "T-prop11": Handling.MARKED, "T-prop12": Handling.MARKED,
        "T-prop13": Handling.MARKED, "T-prop14": Handling.MARKED, "T-prop15": Handling.NOTED, "B-14": Handling.NOTED,
        "A8-fit-keywords": Handling.REWRITTEN, "A8-trainer-attributes": Handling.REWRITTEN,
    }
    examples = (
        Example(
            "import pytorch_lightning as pl\n\n\nclass Model(pl.LightningModule):\n"
            "    def on_train_start(self):\n        n = len(self.trainer.train_dataloader.loaders)\n"
            "        gpu = self.trainer.root_gpu\n",
            "import pytorch_lightning as pl\n\n\nclass Model(pl.LightningModule):\n"
            "    def on_train_start(self):\n        n = len(self.trainer.train_dataloader)\n"
            "        gpu = self.trainer.strategy.root_device.index\n",
            "loaders-and-root-gpu",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\nlr_finder = trainer.tuner.lr_find(model)\n",
            "import pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n\ntrainer = pl.Trainer()\n"
            "lr_finder = Tuner(trainer).lr_find(model, update_attr=False)\n",
            "tuner-lr-find",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(auto_lr_find=True)\ntrainer.tune(model, datamodule=dm)\n",
            "import pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n"
            "from pytorch_lightning.utilities.seed import isolate_rng\n\ntrainer = pl.Trainer(auto_lr_find=True)\n"
            f"# TODO(lightmigrate): LM102 {LR_SUGGESTION} ({GUIDE})\n"
            "with isolate_rng():\n    tuner = Tuner(trainer)\n"
            "    tuner.lr_find(model, datamodule=dm, update_attr=True)\n",
            "tune-to-tuner",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\ntrainer.fit(model, train_dataloaders=dl)\n",
            None,
            "already-2x",
        ),
    )

    def may_need(self, text: str) -> bool:
        return may_import_pl_root(text)  # the gate's first test

    def needed(self, text: str, ctx: RuleContext) -> bool:
        facts = file_facts(text)
        if not facts.parsed:
            return True
        if not imports_pl_root(facts):
            return False  # apply knows no Trainer then
        attrs, calls = facts.attributes, facts.calls
        if attrs & frozenset(LOOP_INTERNALS):
            return True
        # ``<...>.fit_loop.min_steps = ...`` (a plain assignment; reading them is fine in 2.x)
        if "fit_loop" in attrs and ("min_steps" in attrs or "max_steps" in attrs) and \
                attribute_of_assigned(text, "fit_loop", _STEP_SETTERS):
            return True
        # Everything else needs a Trainer expression: a name or attribute `trainer`, or a target
        # bound to a Lightning Trainer(...) call (`receivers` spells them out when needed).
        bound = trainer_may_call(text, facts)
        if not ("trainer" in facts.names or "trainer" in attrs or bound):
            return False
        receivers: Optional[FrozenSet[str]] = frozenset()
        hits = attrs & TRAINER_ATTRS
        if (hits or "precision" in attrs or attrs & ASSIGNED_ATTRS) and bound:
            receivers = _bound_spellings(text)
        if hits and attribute_read(text, hits, receivers):
            return True
        if "tune" in calls or (attrs & LOADER_ATTRS and _loaders_rewritten(text)):
            return True
        if "loaders" in attrs and "train_dataloader" in attrs:
            return True
        if "tuner" in attrs and ("lr_find" in calls or "scale_batch_size" in calls):
            return True
        for name in RUN_METHODS:
            keywords = facts.call_keywords.get(name, frozenset())
            if "ckpt_path" in keywords or keywords & frozenset(FIT_KEYWORDS.get(name, ())):
                return True
        if "precision" in attrs and attribute_compared(text, "precision", receivers):
            return True
        return bool(attrs & ASSIGNED_ATTRS) and attribute_assigned(text, ASSIGNED_ATTRS, receivers)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        imp = _Imports()
        walk(module, imp)
        if not (imp.trainer_names or imp.package_names):
            return module
        names = _TrainerNames(imp)
        walk(module, names)
        t = _Transformer(ctx, module, names)
        out = transform(module, t)
        for from_, name in dict.fromkeys(t.imports):
            out = ensure_import(out, from_, name)
        return out
