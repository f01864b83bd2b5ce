"""LM102: Trainer methods and properties removed or changed in 2.0 (spec A.4, A.8).

On expressions that are a Trainer (``trainer``, ``self.trainer``, ``pl_module.trainer``, or a name
bound to ``Trainer(...)`` in the file). Each entry is rewritten when 2.x has code with the same
meaning, else marked with the reason:

Rewritten
- ``trainer.train_dataloader.loaders`` -> ``trainer.train_dataloader`` (T-prop1);
- ``trainer.val_dataloaders`` / ``test_dataloaders`` were always lists in 1.9: a statement that
  indexes, measures or iterates them reads them first into a local made a list
  (``test_loaders = trainer.test_dataloaders`` and ``if not isinstance(test_loaders, (list,
  tuple)): test_loaders = [test_loaders]``), which later lines of the block reuse while nothing
  between can run the Trainer; where a read cannot move before its statement (a lambda, one
  branch of a condition, a ``while`` test) it is wrapped in place (T-prop2);
- ``trainer.data_parallel`` and ``trainer.prediction_writer_callbacks`` get their 2.x spelling
  (T-prop4, T-prop5); a read of ``trainer.amp_backend`` becomes ``("native" if trainer.precision in
  ("16-mixed", "bf16-mixed") else None)``, what 1.9.5 answered with apex gone, and
  ``trainer.using_native_amp`` that test (T-prop6); comparisons of ``trainer.precision`` with 1.9 strings use the 2.x strings (T-prop7);
- ``trainer.model = m`` -> ``trainer.strategy.model = m``: all 1.9's setter did (T-prop11);
- ``<...>.fit_loop.running_loss.append(loss)`` in a ``training_step`` (manual optimization feeding
  the LR finder) is dropped: 2.x's LR finder reads the loss the step returns, so a step that returned
  nothing gets ``return loss`` (T-prop14);
- ``trainer.tuner.lr_find(...)`` / ``scale_batch_size(...)`` -> ``Tuner(trainer)...`` with 1.9's
  defaults (``update_attr=False``; one more batch-size trial, no margin, no cap) (T-meth2);
- the LR suggestion: 2.x's ``suggestion()`` takes the steepest loss drop per unit of learning rate,
  1.9's per step, with no option for the old rule. ``lr_finder.suggestion(...)`` of a finder a 1.x
  ``lr_find`` call returned (that call, a name bound once to it in the function, or
  ``result["lr_find"]`` of a rewritten ``tune()``) becomes ``lr_suggestion_19(lr_finder, ...)``, a
  short helper the rule adds to the file once (over ``lr_finder.results``, in torch: 1.9's value);
  where 1.9 set the model's learning rate from its suggestion (``tune()`` with ``auto_lr_find``,
  ``name = trainer.tuner.lr_find(model, ..., update_attr=True)``), ``apply_lr_suggestion_19(model,
  finder)`` after 2.x's call sets 1.9's value (T-meth1, T-meth2);
- ``trainer.tune(...)`` (a statement, or ``result = trainer.tune(...)``, which gets 1.9's result
  dict) -> ``Tuner`` calls for what the Trainer's ``auto_scale_batch_size`` / ``auto_lr_find``
  asked, when that Trainer is built once in the same function with literal flags (T-meth1);
- ``fit(train_dataloader=)``, ``validate(val_dataloaders=)``, ``test(test_dataloaders=)`` keywords
  (A.8); ``root_gpu``, ``training_type_plugin``, ``data_parallel_device_ids``, ``progress_bar_dict``,
  ``*_ckpt_path`` (A.8).

Marked (no faithful rewrite; the marker says why)
- ``trainer.tune(...)`` whose Trainer is built elsewhere, twice, or from ``**kwargs``: which tuners
  1.9 ran depended on flags the rewrite cannot read (T-meth1);
- the LR suggestion where the rule cannot follow the finder: a ``.suggestion()`` of the file it
  cannot trace to its ``lr_find`` while a finder leaves its function, ``update_attr=True`` on a
  call that is not ``name = ...lr_find(model, ...)`` alone on its line, or a non-literal
  ``update_attr`` (T-meth2); the ``plot(suggest=True)`` point stays 2.x's suggestion (a picture);
- other uses of ``running_loss`` and loop internals (``batch_loop``, ``optimizer_loop``,
  ``split_idx``...) (T-prop14); loop setters ``trainer.fit_loop = ...``, ``fit_loop.max_steps = ...``
  (T-prop12, T-prop13);
- ``trainer.progress_bar_dict["loss"]`` / ``["v_num"]`` (renamed, and marked): 1.x's running loss and
  logger version are not in 2.x's ``progress_bar_metrics`` (A.8);
- ``trainer.estimated_stepping_batches`` read in what ``trainer.test()``/``predict()`` run (their
  hooks and the methods they call) in a module without ``train_dataloader``: 2.x raises there, 1.9
  returned an earlier fit's value or -1;
- ``trainer.num_gpus``, ``gpus``, ``num_processes``, ``tpu_cores``, ``ipus``, ``lr_schedulers``,
  ``use_amp``, ``amp_backend = ...``, ``amp_level`` (apex: gone with no 2.x meaning), ``optimizer_frequencies``,
  ``tuning``, ``resume_from_checkpoint``, ``weights_save_path``, ``should_rank_save_checkpoint``,
  ``lightning_optimizers``, ``verbose_evaluate``, ``run_stage``, ``call_hook``, ``slurm_job_id``,
  ``reset_*_dataloader()`` (A.8, T-prop6-T-prop10, T-meth4): gone before or in 2.0, with a 2.x
  replacement of another shape named in the marker.

``find`` decides on Python's ``ast`` (which expressions are a Trainer, which reads of the loader
lists need wrapping, which ``tune()`` statements have a known plan, which ``running_loss`` lines
can go); ``fix`` rewrites or marks the libcst nodes at the sites' positions.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate.analysis.ast_nodes import NodeVisitor, ast_nodes
from lightmigrate.cst.helpers import add_markers, code_of, ensure_import, fresh_name, lightning_root, parse_statements
from lightmigrate.output.findings import Kind
from lightmigrate.rules.shared.trainer_object import ast_not_lightning
from lightmigrate.rules.shared.value_kinds import trainer_gpus_argument
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.catalog.trainer_args import GUIDE, PRECISION
from lightmigrate.rules.shared.trainer_calls import (
    NOT_LITERAL,
    LightningImports,
    Locator,
    Place,
    Text,
    call_args,
    cst_last_name,
    cst_literal as literal,
    hashable,
    is_lightning_trainer,
    dotted,
    literal as ast_literal,
    statements,
)
from lightmigrate.cst.walk import transform, PrunedTransformer
from lightmigrate.cst.wrap import wrap_statement
from lightmigrate.rules.shared.hoist import hoist_statement, pure_call
from lightmigrate.rules.shared.lr_suggestion import (
    APPLY, APPLY_CODE, SUGGEST, SUGGEST_CODE, ensure_helpers, single_bindings)
from lightmigrate.rules.shared.method_sites import identifiers, parents
from lightmigrate.rules.shared.trainer_dicts import fresh_opaque, opaque_how, self_attribute_origin

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
    "optimizer_frequencies": ("T-prop8: `trainer.optimizer_frequencies` was removed, with no 2.x counterpart: "
                              "2.x has no optimizer frequencies (LM005 writes them into the manual-optimization "
                              "loop); read them where the module sets them"),
    "tuning": ("T-prop9: `trainer.tuning` was removed, with no 2.x counterpart: 2.x's Tuner runs inside a "
               "`fit` (from a callback's on_fit_start), and no public state tells that part from the fit itself"),
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
LR_SUGGESTION = ("T-meth2: 2.x's lr_find suggestion takes the steepest loss drop per unit of learning rate "
                 "(torch.gradient with the rates as spacing), 1.9 took it per step (np.gradient), so the suggested "
                 "(and, with update_attr=True, set) learning rate can differ; 2.x has no option for 1.9's rule. "
                 "The rewrite computes 1.9's value (`lr_suggestion_19(lr_finder)`, a helper over "
                 "`lr_finder.results` it adds to the file) where it can follow the finder to its `.suggestion()` "
                 "calls and to the learning rate it sets; here it cannot: {why}")
LR_SET_ELSEWHERE = ("1.9 set the model's learning rate to its own suggestion, and this call is not "
                    "`name = ...lr_find(model, ...)` on a line of its own, after which the rewrite sets 1.9's value")
LR_UPDATE_UNKNOWN = "update_attr is not a literal True/False, so whether 1.9 set the learning rate is not known here"
LR_LOST = ("this file calls `.suggestion()` on a finder the rule cannot trace to its lr_find call, and the finder "
           "this call returns is used beyond `.suggestion()`, `.results` and `.plot()` in its function")
# T-prop6: what 1.9 called native AMP (its mixed-precision plugin: precision 16 or "bf16"), in 2.x
NATIVE_AMP = 'precision in ("16-mixed", "bf16-mixed")'
LOOP_SETTERS = ("fit_loop", "validate_loop", "test_loop", "predict_loop")
_STEP_SETTERS = frozenset({"min_steps", "max_steps"})  # fit_loop setters 2.x removed
LOOP_INTERNALS = ("batch_loop", "optimizer_loop", "running_loss", "split_idx", "manual_loop")
FIT_KEYWORDS = {"fit": {"train_dataloader": "train_dataloaders"},
                "validate": {"val_dataloaders": "dataloaders"},
                "test": {"test_dataloaders": "dataloaders"}}
PRECISION_VALUES = {k: v for k, v in PRECISION.items()}
LOADER_ATTRS = frozenset({"val_dataloaders", "test_dataloaders"})
# The attributes ``<value>.attr`` the rule may rewrite or mark wherever they are read.
ACTED_ATTRS = frozenset({*LOOP_INTERNALS, "loaders", *RENAMES, *MARKED, "data_parallel", "prediction_writer_callbacks"})
RUN_METHODS = ("fit", "validate", "test", "predict")
LIST_CALLS = ("len", "enumerate", "list", "tuple", "zip", "iter", "sorted")  # their loaders arguments are wrapped
# The parameters of 1.9's ``Trainer.tune``, in order.
TUNE_ARGS = ("model", "train_dataloaders", "val_dataloaders", "dataloaders", "datamodule",
             "scale_batch_size_kwargs", "lr_find_kwargs", "method")


def _eq() -> cst.AssignEqual:
    return cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))


def _comma() -> cst.Comma:
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _append_arg(args: List[cst.Arg], arg: cst.Arg) -> List[cst.Arg]:
    args = list(args)
    if args and not isinstance(args[-1].comma, cst.Comma):
        args[-1] = args[-1].with_changes(comma=_comma())
    elif len(args) >= 2 and isinstance(args[-1].comma.whitespace_after, cst.ParenthesizedWhitespace):
        # one argument per line with a trailing comma: the new one goes on a line of its own
        last_comma = args[-1].comma
        args[-1] = args[-1].with_changes(comma=args[-2].comma)
        arg = arg.with_changes(comma=last_comma)
    return [*args, arg]


# --- find: on Python's ast ---------------------------------------------------------------------

def _place(node: ast.AST) -> Place:
    return (node.lineno, node.col_offset)


class _TrainerNames:
    """Targets bound to Lightning ``Trainer(...)`` calls (``t = Trainer(...)``), as written: in
    any function (they make ``t.<attribute>`` a Trainer's), and per function with the count of
    such bindings and the tuner flags of the call (for ``t.tune(...)``)."""

    def __init__(self, imports: LightningImports, text: Text, tree: ast.Module) -> None:
        self.imports = imports
        self.names: Set[str] = set()
        self.scoped: Dict[Tuple[Place, str], Tuple[Any, Any, bool]] = {}  # -> (auto_lr_find, auto_scale_batch_size, spread)
        self.counts: Dict[Tuple[Place, str], int] = {}
        for node, scope in statements(tree.body):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
                    and is_lightning_trainer(node.value.func, imports)):
                continue
            target = text.segment(node.targets[0])
            key = (scope, target)
            self.counts[key] = self.counts.get(key, 0) + 1
            args = call_args(node.value)
            spread = any(a.star or a.keyword is None for a in args)
            flags = []
            for name in ("auto_lr_find", "auto_scale_batch_size"):
                found = [a.value for a in args if a.keyword == name]
                flags.append(ast_literal(found[-1], text) if found else False)
            self.names.add(target)
            self.scoped[key] = (flags[0], flags[1], spread)


def _alone_statements(tree: ast.AST, text: Text) -> Set[Place]:
    """The expression statements that are a line of their own (libcst's SimpleStatementLine
    with one statement): first on their line, with no other statement on their lines."""
    out: Set[Place] = set()
    for node in ast_nodes(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for i, stmt in enumerate(body):
                if not isinstance(stmt, (ast.Expr, ast.Assign)):
                    continue
                if text.segment_before(stmt).strip():
                    continue  # ``if x: trainer.tune()`` or ``a = 1; trainer.tune()``
                if i + 1 < len(body) and body[i + 1].lineno == stmt.end_lineno:
                    continue  # ``trainer.tune(); a = 1``
                out.add(_place(stmt))
    return out


def _wrap_sites(reads: List[ast.Attribute], assigned: Dict[int, ast.Assign], tree: ast.Module,
                text: Text) -> List[Site]:
    """The "wrap" sites of the loaders reads (T-prop2: 1.9 always gave a list). Their data says
    how: ("after", line, col, name) for ``name = trainer.val_dataloaders`` alone on its line (an
    ``if not isinstance(...)`` follows it); ("local", line, col, name, read) for a read the
    statement at (line, col) evaluates once and first (``hoist.hoist_statement``): the statement
    gets ``name = <read>`` and that ``if`` before it, and reads ``name``; ("reuse", line, col,
    name) for a later read of the same loaders in the same block, with nothing between that may
    change them (``_quiet``); None: the read is wrapped where it is,
    ``(x if isinstance(x, (list, tuple)) else [x])``."""
    up = parents(tree)
    taken: Dict[int, set] = {}  # per scope (function or module): the names it writes or reads
    # (block, read) -> (local, index of the statement that reads it into the local)
    current: Dict[Tuple[int, str, str], Tuple[str, int]] = {}
    sites = []
    for node in sorted(reads, key=lambda n: (n.lineno, n.col_offset)):
        data: Any = None
        stmt = assigned.get(id(node))
        read = text.segment(node)
        if stmt is not None:
            data = ("after", stmt.lineno, stmt.col_offset, stmt.targets[0].id)  # type: ignore[attr-defined]
        else:
            place = _block_place(node, up)
            if place is not None:
                block, index = place
                known = current.get((id(block[0]), block[1], read))
                body = getattr(block[0], block[1])
                if known is not None and all(_quiet(st, node, up) for st in body[known[1]:index]) and \
                        _quiet_before(body[index], node, up):
                    data = ("reuse", node.lineno, node.col_offset, known[0])
            hoisted = hoist_statement(node, up, text) if data is None else None
            scope = _scope(hoisted, up) if hoisted is not None else None
            if hoisted is not None and scope is not None:
                names = taken.setdefault(id(scope), set(identifiers([scope])))
                name = fresh_name(node.attr.replace("dataloaders", "loaders"), names)
                names.add(name)
                data = ("local", hoisted.lineno, hoisted.col_offset, name, read)
                if place is not None and body[place[1]] is hoisted:
                    current[(id(place[0][0]), place[0][1], read)] = (name, place[1])
        sites.append(Site(node.lineno, node.col_offset, node.attr, "wrap", data))
    return sites


def _block_place(node: ast.AST, up: Dict[ast.AST, ast.AST]):
    """((the node holding the block, its field), index) of the statement around ``node`` in its
    block; None inside a lambda or a generator expression (read later; but the iterable of a
    generator's first ``for``, read at once) or in a class body."""
    child, parent = node, up.get(node)
    while parent is not None and not isinstance(child, ast.stmt):
        if isinstance(parent, ast.Lambda) or (isinstance(parent, ast.GeneratorExp) and not (
                child is parent.generators[0] and isinstance(up.get(node), ast.comprehension)
                and up.get(node) is child and child.iter is node)):
            return None
        child, parent = parent, up.get(parent)
    if parent is None or isinstance(parent, ast.ClassDef):
        return None
    for field in ("body", "orelse", "finalbody"):
        body = getattr(parent, field, None)
        if isinstance(body, list) and child in body:
            return (parent, field), body.index(child)
    return None


def _quiet(stmt: ast.stmt, read: ast.Attribute, up) -> bool:
    """Whether ``stmt`` cannot change what the Trainer of ``read`` lists as loaders: it calls
    nothing but builtins and list or logging methods (``hoist.pure_call``), rebinds none of the names and attributes that
    reach the Trainer and does not suspend."""
    root = read.value
    chain = {"trainer"}
    while isinstance(root, ast.Attribute):
        chain.add(root.attr)
        root = root.value
    for node in ast_nodes(stmt):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr in chain:
            return False
        if isinstance(node, ast.Call) and not pure_call(node):
            return False
        if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal, ast.Delete)):
            return False
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == getattr(root, "id", None):
            return False
    return True


def _quiet_before(stmt: ast.stmt, read: ast.Attribute, up) -> bool:
    """Whether the part of ``stmt`` evaluated before ``read`` makes only ``hoist.pure_call`` calls."""
    where = (read.lineno, read.col_offset)
    around = set()
    node = up.get(read)
    while node is not None and node is not stmt:
        around.add(id(node))
        node = up.get(node)
    return not any(isinstance(n, ast.Call) and id(n) not in around and (n.lineno, n.col_offset) < where
                   and not pure_call(n)
                   or isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr))
                   and (n.lineno, n.col_offset) < where for n in ast_nodes(stmt))


def _scope(stmt: ast.stmt, up: Dict[ast.AST, ast.AST]) -> Optional[ast.AST]:
    """The function or module whose local a name bound at ``stmt`` is (None in a class body)."""
    node = up.get(stmt)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(node, ast.ClassDef):
            return None
        node = up.get(node)
    return node


def _is_normalised_read(node: ast.IfExp) -> bool:
    """``(x.val_dataloaders if isinstance(x.val_dataloaders, ...) else [...])``, as T-prop2 writes."""
    test = node.test
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"):
        return False
    args = call_args(test)
    return bool(args) and isinstance(args[0].value, ast.Attribute) and args[0].value.attr in LOADER_ATTRS


def _tune_plan_ok(call: ast.Call, lr: Any, bs: Any, text: Text) -> bool:
    """Whether ``_tune_plan`` has Tuner calls for this ``trainer.tune(...)`` (see there)."""
    args = call_args(call)
    if any(a.star for a in args):
        return False
    given: Dict[str, ast.expr] = {}
    for i, a in enumerate(args):
        key = a.keyword if a.keyword is not None else (TUNE_ARGS[i] if i < len(TUNE_ARGS) else None)
        if key is None or key not in TUNE_ARGS:
            return False
        given[key] = a.value
    if lr is NOT_LITERAL or bs is NOT_LITERAL:
        return False
    if lr and (given.get("model") is None or dotted(given["model"]) is None):
        return False  # (1.9's learning rate is set on the model after the finder: named twice)
    kwargs = given.get("lr_find_kwargs")
    if lr and isinstance(kwargs, ast.Dict) and any(
            isinstance(k, ast.Constant) and k.value == "update_attr" and not (
                isinstance(v, ast.Constant) and isinstance(v.value, bool)) for k, v in zip(kwargs.keys, kwargs.values)):
        return False  # (whether 1.9 set the learning rate is known at run time only)
    if bs and "scale_batch_size_kwargs" in given:
        parsed = ast_literal(given["scale_batch_size_kwargs"], text)
        if not isinstance(parsed, dict) or not all(isinstance(k, str) for k in parsed):
            return False
    return True


def _is_running_loss_append(call: ast.AST, text: Text) -> bool:
    """``<...>.fit_loop.running_loss.append(x)`` (1.9's running loss, which the LR finder and the
    progress bar read; manual-optimization code fed it by hand)."""
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"
            and isinstance(call.func.value, ast.Attribute) and call.func.value.attr == "running_loss"
            and "loop" in text.segment(call.func.value.value) and len(call.args) == 1 and not call.keywords)


_LOSS_VIEWS = ("detach", "clone", "item", "cpu", "float")


def _loss_name(node: ast.expr) -> Optional[str]:
    """``loss`` for ``loss``, ``loss.detach()``, ``loss.item()`` ... (None for anything else)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _LOSS_VIEWS \
            and not node.args and not node.keywords:
        node = node.func.value
    return node.id if isinstance(node, ast.Name) else None


def _scope_place(function: ast.AST) -> Place:
    """The place ``statements`` gives a function's scope ((0, 0): the module)."""
    return (0, 0) if isinstance(function, ast.Module) else _place(function)


def _own_nodes(function: ast.AST):
    """The nodes of ``function``'s body, without those of the functions and classes it defines."""
    todo = list(function.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))


PROGRESS_KEYS = ("A.8: 1.x's `trainer.progress_bar_dict` also held the running training loss (\"loss\") and the "
                 "logger version (\"v_num\"); 2.x's `trainer.progress_bar_metrics` holds only what was logged with "
                 "prog_bar=True: log that value with prog_bar=True (or read trainer.callback_metrics)")
# The LightningModule hooks that trainer.test() and trainer.predict() run.
_EVAL_HOOKS = frozenset({"test_step", "test_step_end", "test_epoch_end", "predict_step"})
_EVAL_PREFIXES = ("on_test_", "on_predict_")
ESTIMATED_STEPS = ("`trainer.estimated_stepping_batches` is read in {where}, which trainer.test()/predict() "
                   "runs (not a spec row yet; checked on 1.9.5 and 2.6.6): 2.x counts it from the training "
                   "dataloader and raises when that call has none (this module defines no train_dataloader; a "
                   "datamodule's counts), where 1.9 returned the value an earlier fit computed, or max_steps (-1) "
                   "without one. Read it during fit (e.g. store it in on_fit_start) or "
                   "guard with `self.trainer.training`")
# Hooks that receive what training_step returns: a return the rule adds would change what they get.
_OUTPUT_READERS = frozenset({"training_epoch_end", "training_step_end", "on_train_batch_end"})
RUNNING_LOSS = ("T-prop14: 2.x has no `fit_loop.running_loss`; its LR finder and progress bar read the loss "
                "training_step returns (the value or its \"loss\" key): drop this line and return that loss from "
                "training_step. Not done here because {why}")


def _running_loss_plan(statement: ast.Expr, function: Optional[ast.AST],
                       reads_outputs: Callable[[], bool]) -> Tuple[str, str]:
    """How ``<...>.fit_loop.running_loss.append(loss)`` is migrated: ("drop", "") when the
    ``training_step`` around already returns that loss, ("drop", "return <loss>") when it returns
    nothing, the line is in its body and the name stays bound to the end (the rule adds that
    return), else ("mark", why). ``reads_outputs()``: whether the class's hierarchy has a hook that
    gets the step's return (a new return would change what it receives)."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.name != "training_step":
        return "mark", "the line is not in a training_step"
    name = _loss_name(statement.value.args[0])
    if name is None:
        return "mark", "the appended value is not a plain name (`loss`, `loss.detach()`)"
    returns = [n for n in _own_nodes(function) if isinstance(n, ast.Return)]
    for r in returns:
        v = r.value
        if v is not None and (_loss_name(v) == name or (isinstance(v, ast.Dict) and any(
                isinstance(k, ast.Constant) and k.value == "loss" and _loss_name(x) == name
                for k, x in zip(v.keys, v.values)))):
            continue
        return "mark", f"training_step returns something other than `{name}`"
    if returns:
        return "drop", ""
    body = function.body
    if statement not in body:
        return "mark", f"the line is inside a block, so `{name}` may be unbound where training_step ends"
    for stmt in body[body.index(statement) + 1:]:
        for n in ast_nodes(stmt):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, (ast.Store, ast.Del)):
                return "mark", f"`{name}` is rebound after the line"
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(function)):
        return "mark", "training_step is a generator"
    if reads_outputs():
        return "mark", ("training_step returns nothing, and returning the loss would change what "
                        "training_epoch_end / training_step_end / on_train_batch_end receive")
    return "drop", f"return {name}"


class _Finder(NodeVisitor):
    """The sites, in one walk that follows the fix's (the subtrees of normalised reads skipped)."""

    def __init__(self, names: _TrainerNames, text: Text, tree: ast.Module) -> None:
        self.names = names
        self.text = text
        self.tree = tree
        self.alone: Optional[Set[Place]] = None  # worked out at the first tune() statement
        self.scopes: List[Place] = [(0, 0)]
        self.functions: List[str] = []  # the code of the functions around
        self.function_nodes: List[ast.AST] = []
        self.classes: List[ast.ClassDef] = []
        self._outside_fit: Dict[int, Dict[str, str]] = {}
        self.progress_keys: Set[int] = set()  # progress_bar_dict reads of "loss" / "v_num"
        self.lm101_reads: Set[int] = set()  # Trainer(gpus=trainer.gpus): LM101 rewrites that read
        self.project = None  # the project's class index (set by the rule)
        self.path = ""
        self.sites: List[Site] = []
        self.wrapped: List[ast.Attribute] = []  # the loaders reads to wrap, in the order found
        self.assigned: Dict[int, ast.Assign] = {}  # id of a read that is all of ``name = <read>`` -> that
        # the ``.suggestion()`` calls of LR finders: all of them, and those with a site
        self.suggestion_calls = 0
        self.suggestion_sites = 0
        self.bound: Dict[str, Dict[Any, Optional[ast.Assign]]] = {}  # name -> its single bindings
        self.tune_finders: Set[Place] = set()  # ``result = t.tune(...)`` statements that run lr_find
        self.lr_finds: List[Tuple[ast.Call, ast.AST]] = []  # ``trainer.tuner.lr_find(...)``, function around
        # id of such a call -> the name ``name = <call>`` binds, and that statement
        self.finder_names: Dict[int, Tuple[str, ast.Assign]] = {}
        self.suggested: Set[int] = set()  # ids of the receivers of the ``.suggestion()`` sites

    def site(self, node: ast.AST, target: str, action: str, data: Any = None) -> None:
        self.sites.append(Site(node.lineno, node.col_offset, target, action, data))

    def is_trainer(self, node: ast.AST, outer: Optional[ast.Attribute] = None) -> bool:
        """Whether ``node`` is a Trainer: named or an attribute ``trainer``, or bound to one as it
        is spelled (``outer``: the attribute or call of which ``node`` is the value, to spell it
        with its parentheses as libcst does)."""
        if isinstance(node, ast.Name):
            return node.id == "trainer" or node.id in self.names.names
        if isinstance(node, ast.Attribute):
            if node.attr == "trainer":
                return True
            if not self.names.names:
                return False
            if outer is not None and hasattr(outer, "lineno"):
                return self.text.value_spelling(outer) in self.names.names
            return (dotted(node) or "") in self.names.names  # a module name of an import
        return False

    def is_loaders(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr in LOADER_ATTRS and self.is_trainer(node.value, node)

    def wrap(self, node: ast.Attribute) -> None:
        self.wrapped.append(node)

    def _function(self, node) -> None:
        self.scopes.append(_place(node))
        self.functions.append(self.text.segment_with_decorators(node))
        self.function_nodes.append(node)
        self.generic_visit(node)
        self.function_nodes.pop()
        self.functions.pop()
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def is_tuner_lr_find(self, node: ast.AST) -> bool:
        """``<trainer>.tuner.lr_find(...)``, which LM102 makes ``Tuner(<trainer>).lr_find(...)``."""
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "lr_find"
                and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "tuner"
                and self.is_trainer(node.func.value.value, node.func.value))

    def binding(self, name: ast.Name) -> Optional[ast.Assign]:
        """The one ``name = ...`` before ``name`` in its function (None: bound otherwise, or more)."""
        if name.id not in self.bound:
            self.bound[name.id] = single_bindings(self.tree, [name.id])
        found = self.bound[name.id].get((self.scopes[-1], name.id))
        return found if found is not None and found.end_lineno < name.lineno else None

    def apply_after(self, call: ast.Call) -> bool:
        """For ``name = trainer.tuner.lr_find(model, ..., update_attr=True)`` alone on its line:
        a site that sets 1.9's suggestion after it, as 1.9 did (2.x's lr_find sets its own)."""
        statement = self.finder_names.get(id(call), (None, None))[1]
        model = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "model"), None)
        if statement is None or model is None or dotted(model) is None or not self.is_alone(statement):
            return False
        self.site(statement, "lr_find", "apply-lr", (statement.targets[0].id, self.text.segment(model)))
        return True

    def followed(self, call: ast.Call, function: ast.AST) -> bool:
        """Whether every use of the LR finder ``call`` returns is seen: the receiver of a
        ``.suggestion()`` site, or bound once to a name read only as ``name.suggestion(...)`` (sites),
        ``name.results`` or ``name.plot(...)`` in its function."""
        if id(call) in self.suggested:
            return True
        name = self.finder_names.get(id(call), (None, None))[0]
        if name is None or single_bindings(self.tree, [name]).get((_scope_place(function), name)) is None:
            return False
        reads = sum(1 for n in ast_nodes(function) if isinstance(n, ast.Name) and n.id == name
                    and isinstance(n.ctx, ast.Load))
        seen = sum(1 for n in _own_nodes(function) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                   and n.value.id == name and (n.attr in ("results", "plot") or id(n.value) in self.suggested))
        return reads == seen

    def is_finder(self, node: ast.AST) -> bool:
        """Whether ``node`` is the LR finder a 1.x tuner call here returned: that call, a name
        bound once to it, or ``result["lr_find"]`` of ``result = trainer.tune(...)`` that LM102
        rewrites with an LR finder."""
        if isinstance(node, ast.Name):
            bound = self.binding(node)
            return bound is not None and self.is_tuner_lr_find(bound.value)
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and ast_literal(node.slice, self.text) == "lr_find"):
            bound = self.binding(node.value)
            return bound is not None and _place(bound) in self.tune_finders
        return self.is_tuner_lr_find(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        if not _is_normalised_read(node):
            self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        call = node.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "tune"
                and self.is_alone(node)):
            self.tune_statement(call)
        if _is_running_loss_append(call, self.text) and self.is_alone(node):
            action, data = _running_loss_plan(node, self.function_nodes[-1] if self.function_nodes else None,
                                              self.reads_outputs)
            self.site(node, "running_loss", action if action == "drop" else "drop-mark", data)
            return  # the statement goes or gets its own marker
        self.generic_visit(node)

    def reads_outputs(self) -> bool:
        """Whether the class around (its bases or subclasses in the project) has a hook that
        receives what training_step returns."""
        if not self.classes:
            return False
        own = {n.name for n in self.classes[-1].body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if own & _OUTPUT_READERS:
            return True
        if self.project is None:
            return False
        info = self.project.resolve(self.classes[-1].name, self.path)
        if info is None:
            return False
        related = [*self.project.ancestors(info)[0], *self.project.descendants(info)]
        return any(c.methods & _OUTPUT_READERS for c in related)

    def outside_fit(self, cls: ast.ClassDef) -> Dict[str, str]:
        """The methods of ``cls`` that trainer.test()/predict() run (their hooks, and the methods
        those call as ``self.NAME(...)``), each with how (for the marker), when the class has no
        ``train_dataloader`` of its own or inherited: 2.x's estimated_stepping_batches then has no
        training data to count there."""
        found = self._outside_fit.get(id(cls))
        if found is not None:
            return found
        methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        found = {}
        if "train_dataloader" not in methods and not self._inherits_train_dataloader(cls):
            todo = [(name, name) for name in methods if name in _EVAL_HOOKS or name.startswith(_EVAL_PREFIXES)]
            while todo:
                name, how = todo.pop()
                if name in found:
                    continue
                found[name] = how
                for n in _own_nodes(methods[name]):
                    if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                            and n.func.value.id == "self" and n.func.attr in methods and n.func.attr not in found):
                        todo.append((n.func.attr, f"{n.func.attr} (called from {how.split(' ')[0]})"))
        self._outside_fit[id(cls)] = found
        return found

    def _inherits_train_dataloader(self, cls: ast.ClassDef) -> bool:
        if self.project is None:
            return False
        info = self.project.resolve(cls.name, self.path)
        return info is not None and any("train_dataloader" in c.methods for c in self.project.ancestors(info)[0])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.classes.append(node)
        self.generic_visit(node)
        self.classes.pop()

    def is_alone(self, statement: ast.stmt) -> bool:
        if self.alone is None:
            self.alone = _alone_statements(self.tree, self.text)
        return _place(statement) in self.alone

    def tune_statement(self, call: ast.Call) -> bool:
        """``t.tune(...)`` on a line of its own (or ``result = t.tune(...)``) becomes Tuner calls
        when ``t`` is bound once, in this function, to a Trainer call whose tuner flags are known;
        whether those run the LR finder."""
        key = (self.scopes[-1], self.text.value_spelling(call.func))
        flags = self.names.scoped.get(key)
        if flags is None or self.names.counts.get(key) != 1 or flags[2]:
            return False
        if not _tune_plan_ok(call, flags[0], flags[1], self.text):
            return False
        # the data: the tuner flags, and the names the function has (for the LR finder's local)
        scope = self.function_nodes[-1] if self.function_nodes else self.tree
        self.site(call, "tune", "tune", (hashable(flags[0]), hashable(flags[1]), identifiers([scope])))
        return bool(flags[0])

    def tune_reason(self, call: ast.Call) -> str:
        """Why ``t.tune(...)`` here is marked, not rewritten (the marker says it)."""
        key = (self.scopes[-1], self.text.value_spelling(call.func))
        flags = self.names.scoped.get(key)
        if flags is None:
            return self._made_elsewhere(call) or (
                "this Trainer is not built in this function, so its auto_lr_find / auto_scale_batch_size "
                "values (which decided what 1.9's tune() ran) are not known here")
        if self.names.counts.get(key) != 1:
            return "this name is bound to several Trainers here, so which tuners 1.9 ran is not known"
        if flags[2]:
            return ("this Trainer takes **kwargs/*args, so its auto_lr_find / auto_scale_batch_size values "
                    "are not known here")
        return "its arguments (or the tuner flags) are not literals the rewrite can read"

    def _made_elsewhere(self, call: ast.Call) -> Optional[str]:
        """For ``self.<attr>.tune(...)``: the exact reason when another method of the class makes
        that Trainer from ``**dict`` of a dict whose keys cannot be read (pytorch_tabular's
        ``pl.Trainer(**{k: v for k, v in self.config.items() if ...})``), or None."""
        receiver = call.func.value  # type: ignore[attr-defined]
        if not (self.classes and isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name)
                and receiver.value.id == "self"):
            return None
        origin = self_attribute_origin(self.classes[-1], receiver.attr,
                                       lambda c: is_lightning_trainer(c.func, self.names.imports))
        if origin is None:
            return None
        method, trainer, node = origin
        for k in trainer.keywords:
            if k.arg is None and isinstance(k.value, ast.Name) and fresh_opaque(node.body, k.value.id):
                how = opaque_how(node.body, k.value.id, self.text.segment)
                return (f"`self.{receiver.attr}` is made by `{method}()` as `{self.text.segment(trainer.func)}(..., "
                        f"**{k.value.id})`, and that dict's auto_lr_find / auto_scale_batch_size entries (which "
                        f"decided what 1.9's tune() ran) cannot be read: its keys come from {how}")
        return None

    def visit_Assign(self, node: ast.Assign) -> None:
        call = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and self.is_tuner_lr_find(call):
            self.finder_names[id(call)] = (node.targets[0].id, node)
        if (len(node.targets) == 1 and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and call.func.attr == "tune" and self.is_alone(node)):
            if self.tune_statement(call):  # ``result = trainer.tune(...)``
                self.tune_finders.add(_place(node))
        for target in node.targets:
            if not isinstance(target, ast.Attribute):
                continue
            if self.is_trainer(target.value, target) and target.attr == "model":
                self.site(target, target.attr, "model-setter")
            elif self.is_trainer(target.value, target) and target.attr in LOOP_SETTERS:
                self.site(target, target.attr, "setter", "loop")
            elif (target.attr in _STEP_SETTERS and isinstance(target.value, ast.Attribute)
                  and target.value.attr == "fit_loop"):
                self.site(target, target.attr, "setter", "steps")
        self.generic_visit(node)
        if self.is_loaders(node.value) and len(node.targets) == 1:
            target = self.text.segment(node.targets[0])
            scope = self.functions[-1] if self.functions else self.text.text
            if f"isinstance({target}, (list, tuple))" not in scope:
                self.wrap(node.value)
                if isinstance(node.targets[0], ast.Name) and self.is_alone(node):
                    self.assigned[id(node.value)] = node

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)
        if node.attr == "estimated_stepping_batches" and self.function_nodes and self.classes \
                and self.is_trainer(node.value, node):
            where = self.outside_fit(self.classes[-1]).get(self.function_nodes[-1].name)
            if where is not None:
                self.site(node, node.attr, "mark-esb", where)
            return
        if node.attr in ACTED_ATTRS:
            action = self.attribute_action(node, lambda: self.text.segment_before_attr(node))
            if action == "rename" and id(node) in self.progress_keys:
                action = "rename-mark"
            if action is not None:
                self.site(node, node.attr, action)

    def attribute_action(self, node: ast.Attribute, value_code: Callable[[], str]) -> Optional[str]:
        """What the fix does to the attribute ``node`` (None: nothing); ``value_code()``: the
        source of its value."""
        attr, value = node.attr, node.value
        if attr in LOOP_INTERNALS and "loop" in value_code():
            return "internals"
        if (attr == "loaders" and isinstance(value, ast.Attribute) and value.attr == "train_dataloader"
                and self.is_trainer(value.value, value)):
            return "loaders"
        if not self.is_trainer(value, node) or ast_not_lightning(node):  # (a user's config: never the Trainer)
            return None
        if attr in RENAMES:
            return "rename"
        if attr in ("amp_backend", "using_native_amp") and isinstance(node.ctx, ast.Load):
            return attr
        if attr in MARKED:
            return None if id(node) in self.lm101_reads else "mark"
        if attr == "data_parallel":
            return "data_parallel"
        if attr == "prediction_writer_callbacks":
            return "writers"
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.dotted_module(alias.name, lambda alias=alias: _place(alias))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module:
            self.dotted_module(node.module, lambda: self.text.module_start(node))

    def dotted_module(self, name: str, start) -> None:
        """The attribute sites of a module's dotted name in an import (libcst sees ``a.b.c``
        there as attributes, all starting where the name starts)."""
        parts = name.split(".")
        for i in range(1, len(parts)):
            if parts[i] not in ACTED_ATTRS:
                continue
            node: ast.expr = ast.Name(parts[0])
            for p in parts[1:i + 1]:
                node = ast.Attribute(node, p)
            action = self.attribute_action(node, lambda: ".".join(parts[:i]))
            if action is not None:
                line, col = start()
                self.sites.append(Site(line, col, parts[i], action))

    def visit_Subscript(self, node: ast.Subscript) -> None:
        value = node.value
        if isinstance(value, ast.Attribute) and value.attr == "progress_bar_dict" \
                and ast_literal(node.slice, self.text) in ("loss", "v_num"):
            self.progress_keys.add(id(value))
        self.generic_visit(node)
        if self.is_loaders(node.value):
            self.wrap(node.value)

    def _for(self, node) -> None:
        self.generic_visit(node)
        if self.is_loaders(node.iter):
            self.wrap(node.iter)

    visit_For = visit_AsyncFor = _for

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self.generic_visit(node)
        if self.is_loaders(node.iter):
            self.wrap(node.iter)

    def visit_Compare(self, node: ast.Compare) -> None:
        self.generic_visit(node)
        left = node.left
        if not (isinstance(left, ast.Attribute) and left.attr == "precision" and self.is_trainer(left.value, left)):
            return
        values = []
        for op, comparator in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Eq, ast.NotEq)):
                values.append(comparator)
            elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(comparator, (ast.Tuple, ast.List, ast.Set)):
                values += [e.value if isinstance(e, ast.Starred) else e for e in comparator.elts]
        for v in values:
            lit = ast_literal(v, self.text)
            if type(lit) in (int, str) and lit in PRECISION_VALUES:
                self.site(node, "precision", "precision")
                return

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if node.keywords and is_lightning_trainer(func, self.names.imports):
            read = trainer_gpus_argument(node)
            if read is not None:
                self.lm101_reads.add(id(read))
        self.generic_visit(node)
        if isinstance(func, ast.Name) and func.id in LIST_CALLS:
            for a in call_args(node):
                if self.is_loaders(a.value):
                    self.wrap(a.value)
            return
        if not isinstance(func, ast.Attribute):
            return
        name, recv = func.attr, func.value
        if (name in ("lr_find", "scale_batch_size") and isinstance(recv, ast.Attribute) and recv.attr == "tuner"
                and self.is_trainer(recv.value, recv)):
            # the data: whether the learning-rate suggestion gets a marker (set again by ``find``
            # when a ``.suggestion()`` of the file is not known to be this finder's)
            update = [ast_literal(k.value, self.text) for k in node.keywords if k.arg == "update_attr"]
            why = None  # (the data: why the learning-rate suggestion gets a marker)
            if name == "lr_find" and update and update[-1] is True:
                # 1.9 set its own suggestion: the statement after the call sets it again
                why = None if self.apply_after(node) else LR_SET_ELSEWHERE
            elif name == "lr_find" and update and update[-1] is not False:
                why = LR_UPDATE_UNKNOWN
            self.site(node, name, "tuner", why)
            if name == "lr_find":
                self.lr_finds.append((node, self.function_nodes[-1] if self.function_nodes else self.tree))
            return
        if name == "suggestion":
            self.suggestion_calls += 1
            if self.is_finder(recv):
                self.site(node, name, "suggestion")
                self.suggestion_sites += 1
                self.suggested.add(id(recv))
            return
        if not self.is_trainer(recv, func):
            return
        keywords = {k.arg for k in node.keywords if k.arg is not None}
        effects = []
        if keywords & set(FIT_KEYWORDS.get(name, ())):
            effects.append("keywords")
        if name in RUN_METHODS and "ckpt_path" in keywords and "weights_only" not in keywords:
            effects.append("weights-note")
        if name == "tune":
            effects.append("tune-mark:" + self.tune_reason(node))
        if effects:
            self.site(node, name, "call", tuple(effects))


ATTRIBUTE_ACTIONS = frozenset({"internals", "loaders", "rename", "mark", "amp_backend", "using_native_amp",
                               "data_parallel", "writers", "model-setter",
                               "mark-esb", "rename-mark"})
SETTER_MARKS = {
    "loop": "T-prop12: `trainer.{attr}` can no longer be replaced; custom loops were removed",
    "steps": "T-prop13: the fit_loop.min_steps/max_steps setters were removed; pass them to the Trainer",
}


class _Transformer(PrunedTransformer):
    """Carries out the sites: the attributes, comparisons, calls and statements they name."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        self.ctx = ctx
        self.module = module
        self.locate = Locator(module, ctx)
        # (line, col, name) -> site, per kind of node
        self.attributes = {(s.line, s.col, s.target): s for s in sites if s.action in ATTRIBUTE_ACTIONS}
        self.setters = {(s.line, s.col, s.target): s for s in sites if s.action == "setter"}
        self.wraps = {(s.line, s.col, s.target): s for s in sites if s.action == "wrap"}
        # statements that get statements before / after them: (line, col) -> their code
        self.before: Dict[Tuple[int, int], List[str]] = {}
        self.after: Dict[Tuple[int, int], List[str]] = {}
        for s in self.wraps.values():
            if s.data is None or s.data[0] == "reuse":
                continue
            how, line, col, name = s.data[:4]
            code = f"if not isinstance({name}, (list, tuple)):\n    {name} = [{name}]\n"
            if how == "local":
                code = f"{name} = {s.data[4]}\n" + code
            todo = (self.before if how == "local" else self.after).setdefault((line, col), [])
            if code not in todo:
                todo.append(code)
        self.helpers: Set[str] = set()  # the lr_suggestion helpers the file gets
        for s in sites:
            if s.action == "apply-lr":  # 1.9's lr_find(update_attr=True) set 1.9's suggestion
                self.after.setdefault((s.line, s.col), []).append(f"{APPLY}({s.data[1]}, {s.data[0]})\n")
                self.helpers.add(APPLY)
        self.comparisons = {(s.line, s.col) for s in sites if s.action == "precision"}
        self.calls = {(s.line, s.col, s.target): s for s in sites if s.action in ("call", "tuner", "suggestion")}
        self.tunes = {(s.line, s.col, s.target): s for s in sites if s.action == "tune"}  # statements
        self.drops = {(s.line, s.col): s for s in sites if s.action in ("drop", "drop-mark")}  # statements
        self.returns: List[Optional[str]] = []  # per function around: the return statement to add
        self.attribute_names = frozenset(k[2] for k in [*self.attributes, *self.setters, *self.wraps])
        self.call_names = frozenset(k[2] for k in [*self.calls, *self.tunes])
        self._root: Optional[str] = None
        self.imports: List[Tuple[str, str]] = []
        self.pending: List[List[str]] = [[]]

    @property
    def root(self) -> str:
        """The Lightning package the file imports from (for the imports the fix adds)."""
        if self._root is None:
            self._root = lightning_root(self.module)
        return self._root

    def _find(self, table, node: cst.CSTNode, name: str):
        """The site of ``table`` at ``node`` (named ``name``), or None."""
        if name not in self.attribute_names and name not in self.call_names:
            return None
        return table.get((*self.locate(node), name))

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
        if self.drops and len(original.body) == 1 and isinstance(original.body[0], cst.Expr):
            site = self.drops.get(self.locate(original.body[0].value))
            if site is not None and site.action == "drop-mark":
                return self._expand_tune(original, add_markers(updated, CODE, [
                    f"{RUNNING_LOSS.format(why=site.data)} ({GUIDE})"]))
            if site is not None:
                # 1.9's running loss is gone; 2.x's LR finder reads the loss training_step returns
                line, col = self.ctx.position(self.module, original)
                self.ctx.report(CODE, "T-prop14: dropped the `fit_loop.running_loss.append(...)` line: 2.x's LR finder "
                                      "reads the loss training_step returns" + (
                                          f" (added `{site.data}`)" if site.data else ""), Kind.FIXED, line, col)
                if site.data and self.returns:
                    self.returns[-1] = site.data
                return cst.RemoveFromParent()
        return self._with_statements(original, self._expand_tune(original, updated))

    def visit_FunctionDef(self, node):
        self.returns.append(None)
        return True

    def leave_FunctionDef(self, original, updated):
        add = self.returns.pop()
        if add is None or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        body = updated.body
        return updated.with_changes(body=body.with_changes(body=[*body.body, cst.parse_statement(add + "\n")]))

    def visit_If(self, node):
        return self._push(node)

    def leave_If(self, original, updated):
        return self._with_statements(original, self._pop(updated))

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

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Attribute):
                site = self._find(self.setters, target, target.attr.value)
                if site is not None:
                    self._mark(SETTER_MARKS[site.data].format(attr=target.attr.value))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        attr = original.attr.value
        site = self._find(self.attributes, original, attr)
        if site is None:
            return updated
        if site.action == "internals":
            self._mark(f"T-prop14: loop internals such as `{attr}` were removed (progress lives in "
                       "trainer.fit_loop.epoch_loop.automatic_optimization.optim_progress)")
        elif site.action == "loaders":
            return updated.value  # T-prop1: 2.x returns the user's own loader object
        elif site.action in ("rename", "rename-mark"):
            if site.action == "rename-mark":
                self._mark(PROGRESS_KEYS)
            return cst.parse_expression(f"{code_of(updated.value)}.{RENAMES[attr]}")
        elif site.action == "mark":
            self._mark(MARKED[attr])
        elif site.action == "mark-esb":
            self._mark(ESTIMATED_STEPS.format(where=site.data))
        elif site.action == "model-setter":
            # T-prop11: 1.9's setter only passed the model on to the strategy, which 2.x still has
            return updated.with_changes(value=cst.Attribute(updated.value, cst.Name("strategy")))
        elif site.action == "amp_backend":
            # T-prop6: 1.9.5 answered "native" for its native mixed-precision plugin (precision 16
            # or "bf16"), which 2.x names by those precisions; apex is gone, so never "apex"
            return cst.parse_expression(f'("native" if {code_of(updated.value)}.{NATIVE_AMP} else None)')
        elif site.action == "using_native_amp":
            return cst.parse_expression(f"({code_of(updated.value)}.{NATIVE_AMP})")
        elif site.action == "data_parallel":
            self.imports.append((f"{self.root}.strategies", "ParallelStrategy"))
            return cst.parse_expression(f"isinstance({code_of(updated.value)}.strategy, ParallelStrategy)")
        elif site.action == "writers":
            self.imports.append((f"{self.root}.callbacks", "BasePredictionWriter"))
            v = code_of(updated.value)
            return cst.parse_expression(f"[c for c in {v}.callbacks if isinstance(c, BasePredictionWriter)]")
        return updated

    # T-prop2: 1.9 always gave a list; 2.x gives the user's object. Reads that index, measure or
    # iterate it, or store it for later (unless the code checks isinstance(..., (list, tuple))).
    def _is_loaders(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` is a read of the loaders that a site says to wrap."""
        return (isinstance(node, cst.Attribute) and node.attr.value in LOADER_ATTRS
                and self._find(self.wraps, node, node.attr.value) is not None)

    def _as_list(self, original: cst.BaseExpression, node: cst.BaseExpression, parens: bool = True) -> cst.BaseExpression:
        """The loaders read ``original`` (``node`` updated) as 1.9's list: the local its site
        names, the read itself (normalised after its statement), or the read wrapped in place."""
        assert isinstance(original, cst.Attribute)
        site = self._find(self.wraps, original, original.attr.value)
        if site is not None and site.data is not None:
            return node if site.data[0] == "after" else cst.Name(site.data[3])
        v = code_of(node)
        code = f"{v} if isinstance({v}, (list, tuple)) else [{v}]"
        return cst.parse_expression(f"({code})" if parens else code)

    def _with_statements(self, original: cst.CSTNode, updated):
        """``updated`` with the statements the sites put before and after it."""
        places = [self.locate(s) for s in original.body] if isinstance(original, cst.SimpleStatementLine) \
            else [self.locate(original)]
        before = [code for p in places for code in self.before.get(p, ())]
        after = [code for p in places for code in self.after.get(p, ())]
        if not before and not after:
            return updated
        out = list(updated.nodes) if isinstance(updated, cst.FlattenSentinel) else \
            [] if isinstance(updated, cst.RemovalSentinel) else [updated]
        new_before = [st for code in before for st in parse_statements(code)]
        if new_before and out:
            # comments and blank lines above the statement stay above what now comes first
            new_before[0] = new_before[0].with_changes(leading_lines=out[0].leading_lines)
            out[0] = out[0].with_changes(leading_lines=())
        return cst.FlattenSentinel([*new_before, *out, *(st for code in after for st in parse_statements(code))])

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if self._is_loaders(original.value):
            return updated.with_changes(value=self._as_list(original.value, updated.value))
        return updated

    def leave_For(self, original, updated):
        updated = self._pop(updated)
        if self._is_loaders(original.iter):
            updated = updated.with_changes(iter=self._as_list(original.iter, updated.iter))
        return self._with_statements(original, updated)

    def leave_CompFor(self, original: cst.CompFor, updated: cst.CompFor) -> cst.CompFor:
        if self._is_loaders(original.iter):
            return updated.with_changes(iter=self._as_list(original.iter, updated.iter))
        return updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        if len(original.targets) == 1 and self._is_loaders(original.value):
            return updated.with_changes(value=self._as_list(original.value, updated.value, parens=False))
        return updated

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        # T-prop7: trainer.precision == 16 -> "16-mixed"
        if not self.comparisons or self.locate(original) not in self.comparisons:
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
        if isinstance(func, cst.Name) and func.value in LIST_CALLS:
            args = [a.with_changes(value=self._as_list(o.value, a.value, parens=len(original.args) > 1))
                    if self._is_loaders(o.value) else a for a, o in zip(updated.args, original.args)]
            return updated.with_changes(args=args)
        if not isinstance(func, cst.Attribute):
            return updated
        name = func.attr.value
        # T-meth2: trainer.tuner.lr_find(...) / scale_batch_size(...)
        site = self._find(self.calls, original, name)
        if site is not None and site.action == "suggestion":
            # T-meth2: 1.9's suggestion (2.x's measures the loss drop per unit of learning rate)
            self.helpers.add(SUGGEST)
            first = cst.Arg(updated.func.value, comma=_comma() if updated.args else cst.MaybeSentinel.DEFAULT)
            return cst.Call(func=cst.Name(SUGGEST), args=[first, *updated.args])
        if site is not None and site.action == "tuner":
            self.imports.append((f"{self.root}.tuner", "Tuner"))
            if site.data:
                self._mark(LR_SUGGESTION.format(why=site.data))
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
        if site is None or site.action != "call":
            return updated
        effects = site.data
        if "keywords" in effects:
            renames = FIT_KEYWORDS[name]
            args = []
            for a in updated.args:
                if a.keyword is not None and a.keyword.value in renames:
                    a = a.with_changes(keyword=cst.Name(renames[a.keyword.value]))
                args.append(a)
            updated = updated.with_changes(args=args)
        if "weights-note" in effects:
            line, col = self.ctx.position(self.module, original)
            self.ctx.report(CODE, "T-prop15: Lightning 2.6 loads checkpoints with torch's weights_only=True; a 1.9 "
                                  "checkpoint whose hyperparameters hold non-primitive objects (e.g. an argparse "
                                  "Namespace) fails to load unless you pass weights_only=False (only for files you "
                                  f"trust) ({GUIDE})", Kind.NOTE, line, col)
        reason = next((e.partition(":")[2] for e in effects if e.startswith("tune-mark")), None)
        if reason is not None:
            self._mark(f"T-meth1: trainer.tune() was removed and is not rewritten because {reason}; call "
                       "Tuner(trainer).scale_batch_size(...) (if auto_scale_batch_size was set) and then "
                       "Tuner(trainer).lr_find(..., update_attr=True) (if auto_lr_find was set), from "
                       "pytorch_lightning.tuner; 1.9's tune() returned a dict of their results, and its lr_find set "
                       "1.9's suggestion (the steepest loss drop per step; 2.x's lr_find sets the steepest per unit "
                       "of learning rate)")
        return updated

    # T-meth1: ``trainer.tune(...)`` as a statement, with the flags of a visible Trainer(...)
    def _expand_tune(self, original: cst.SimpleStatementLine, updated):
        if len(original.body) != 1 or not isinstance(original.body[0], (cst.Expr, cst.Assign)):
            return updated
        statement = original.body[0]
        if isinstance(statement, cst.Assign) and len(statement.targets) != 1:
            return updated
        call = statement.value
        site = self._find(self.tunes, call, cst_last_name(call.func)) if isinstance(call, cst.Call) else None
        if site is None:
            return updated
        target = code_of(call.func.value)
        lr, bs, taken = site.data
        plan = _tune_plan(call, lr, bs)
        if plan is None:
            return updated
        self.imports.append((f"{self.root}.tuner", "Tuner"))
        self.imports.append((f"{self.root}.utilities.seed", "isolate_rng"))
        calls = [c for _, c in plan]
        # 1.9's tune() set the model's learning rate to 1.9's suggestion (2.x's lr_find sets its own)
        sets_lr = any(k == "lr_find" for k, _ in plan)
        model = _tune_given(call)["model"]
        attr = f', "{lr}"' if isinstance(lr, str) else ""
        finder = None
        if isinstance(statement, cst.Assign):
            # 1.9's tune() returned {"scale_batch_size": ..., "lr_find": ...} for the tuners it ran
            result = code_of(statement.targets[0].target)
            items = [f'"{k.split("-")[0]}": {c}' for k, c in plan]
            calls = [f"{result} = {{{items[0]}}}"] if len(items) == 1 else [
                f"{result} = {{", *(f"    {i}," for i in items), "}"] if items else [f"{result} = {{}}"]
            if sets_lr:
                finder = f'{result}["lr_find"]'
        elif sets_lr:
            finder = fresh_name("lr_finder", taken)
            calls[-1] = f"{finder} = {calls[-1]}"
        if finder is not None:
            self.helpers.add(APPLY)
            calls.append(f"{APPLY}({model}, {finder}{attr})")
        body = "\n".join(f"    {c}" for c in calls) or "    pass"
        code = f"with isolate_rng():\n    tuner = Tuner({target})\n{body}\n"
        new = cst.parse_statement(code)
        # the lines too long for the project wrapped, black style (issue 23)
        from lightmigrate.config import line_length
        indent = self.ctx.position(self.module, original)[1] - 1 + len(self.module.default_indent)
        block = new.body
        new = new.with_changes(body=block.with_changes(body=[
            wrap_statement(st, indent, line_length(self.ctx.path), self.module.default_indent)
            if isinstance(st, cst.SimpleStatementLine) else st for st in block.body]))
        leading = [l for l in updated.leading_lines if not (l.comment and "T-meth1" in l.comment.value)]
        return new.with_changes(leading_lines=leading)


def _tune_given(call: cst.Call) -> Dict[str, str]:
    """The arguments of ``trainer.tune(...)`` by 1.9's parameter names, as code."""
    return {(a.keyword.value if a.keyword is not None else TUNE_ARGS[i]): code_of(a.value)
            for i, a in enumerate(call.args)}


def _tune_plan(call: cst.Call, lr: Any, bs: Any) -> Optional[List[Tuple[str, str]]]:
    """The Tuner calls that replace ``trainer.tune(...)`` (batch size first, then LR), each with
    the key of 1.9's result dict, or None; ``lr`` and ``bs``: the Trainer's auto_lr_find and
    auto_scale_batch_size values."""
    if any(a.star for a in call.args):
        return None
    names = TUNE_ARGS
    if any(a.keyword is None and i >= len(names) for i, a in enumerate(call.args)):
        return None
    given = _tune_given(call)
    if any(k not in names for k in given):
        return None
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
        plan.append(("scale_batch_size", f"tuner.scale_batch_size({', '.join(common + extra)})"))
    if lr:
        # 1.9: ``lr_find_kwargs.setdefault("update_attr", True)``, the attribute named by a str auto_lr_find
        extra = {"update_attr": "True", **({"attr_name": f'"{lr}"'} if isinstance(lr, str) else {})}
        given_kwargs = given.get("lr_find_kwargs")
        if given_kwargs is not None:
            node = cst.parse_expression(given_kwargs)
            if isinstance(node, cst.Dict) and all(isinstance(e, cst.DictElement) for e in node.elements) and all(
                    isinstance(k, str) and k.isidentifier() for k, _ in _dict_items(node)):
                extra.update((k, code_of(v)) for k, v in _dict_items(node))  # as keywords
            else:
                extra = {**extra, f"**{given_kwargs}": ""}
        if extra["update_attr"] not in ("True", "False"):
            return None  # (whether 1.9 set the learning rate is known at run time only)
        key = "lr_find" if extra["update_attr"] == "True" else "lr_find-unset"
        args = [k if not v else f"{k}={v}" for k, v in extra.items()]
        plan.append((key, f"tuner.lr_find({', '.join(common + args)})"))
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


class TrainerApiRule(Rule):
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
        "T-meth1": Handling.REWRITTEN, "T-meth2": Handling.REWRITTEN, "T-meth4": Handling.MARKED,
        "T-prop1": Handling.REWRITTEN, "T-prop2": Handling.REWRITTEN, "T-prop3": Handling.NO_CHANGE,
        "T-prop4": Handling.REWRITTEN, "T-prop5": Handling.REWRITTEN, "T-prop6": Handling.REWRITTEN,
        "T-prop7": Handling.REWRITTEN, "T-prop8": Handling.MARKED, "T-prop9": Handling.MARKED,
        "T-prop10": Handling.MARKED, "T-prop11": Handling.REWRITTEN, "T-prop12": Handling.MARKED,
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
            "import pytorch_lightning as pl\n\n\nclass Report(pl.Callback):\n"
            "    def on_test_start(self, trainer, pl_module):\n"
            "        print(f\"{len(trainer.test_dataloaders[0])} batches\")\n"
            "        self.size = trainer.test_dataloaders[0].batch_size\n",
            "import pytorch_lightning as pl\n\n\nclass Report(pl.Callback):\n"
            "    def on_test_start(self, trainer, pl_module):\n"
            "        test_loaders = trainer.test_dataloaders\n"
            "        if not isinstance(test_loaders, (list, tuple)):\n"
            "            test_loaders = [test_loaders]\n"
            "        print(f\"{len(test_loaders[0])} batches\")\n"
            "        self.size = test_loaders[0].batch_size\n",
            "loader-lists-read-once",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\nlr_finder = trainer.tuner.lr_find(model)\n",
            "import pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n\ntrainer = pl.Trainer()\n"
            "lr_finder = Tuner(trainer).lr_find(model, update_attr=False)\n",
            "tuner-lr-find",
        ),
        Example(
            "import pytorch_lightning as pl\n\n\ndef find_lr(model, loader):\n    trainer = pl.Trainer(max_epochs=1)\n"
            "    lr_finder = trainer.tuner.lr_find(model, loader, num_training=50)\n"
            "    return lr_finder.suggestion()\n",
            "import torch\nimport pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n\n\n"
            f"{SUGGEST_CODE}\n\n"
            "def find_lr(model, loader):\n    trainer = pl.Trainer(max_epochs=1)\n"
            "    lr_finder = Tuner(trainer).lr_find(model, loader, num_training=50, update_attr=False)\n"
            "    return lr_suggestion_19(lr_finder)\n",
            "lr-find-suggestion-19",
        ),
        Example(
            "import pytorch_lightning as pl\n\n\ndef fit(model, dm):\n    trainer = pl.Trainer(auto_lr_find=True)\n"
            "    trainer.tune(model, datamodule=dm)\n",
            "import torch\nimport pytorch_lightning as pl\nfrom pytorch_lightning.tuner import Tuner\n"
            "from pytorch_lightning.utilities.seed import isolate_rng\n"
            "from pytorch_lightning.utilities.parsing import lightning_hasattr, lightning_setattr\n\n\n"
            f"{SUGGEST_CODE}\n\n{APPLY_CODE}\n\n"
            "def fit(model, dm):\n    trainer = pl.Trainer(auto_lr_find=True)\n"
            "    with isolate_rng():\n        tuner = Tuner(trainer)\n"
            "        lr_finder = tuner.lr_find(model, datamodule=dm, update_attr=True)\n"
            "        apply_lr_suggestion_19(model, lr_finder)\n",
            "tune-to-tuner",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\ntrainer.fit(model, train_dataloaders=dl)\n",
            None,
            "already-2x",
        ),
    )

    def may_apply(self, text: str) -> bool:
        # The rule acts only in a file that imports from a Lightning package, whose name holds
        # "lightning".
        return "lightning" in text and any(t in text for t in self.triggers)

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        imports = LightningImports.of(source)
        if not imports.any():
            return []
        text = Text(source.text)
        names = _TrainerNames(imports, text, source.tree)
        finder = _Finder(names, text, source.tree)
        finder.project, finder.path = ctx.project, source.path
        finder.visit(source.tree)
        if finder.wrapped:
            finder.sites += _wrap_sites(finder.wrapped, finder.assigned, source.tree, text)
        if finder.suggestion_calls > finder.suggestion_sites:
            # a ``.suggestion()`` whose finder the rule cannot follow: the lr_find calls whose
            # result may reach it say why
            lost = {_place(call) for call, function in finder.lr_finds if not finder.followed(call, function)}
            finder.sites = [replace(s, data=s.data or LR_LOST) if s.action == "tuner" and (s.line, s.col) in lost
                            else s for s in finder.sites]
        return sorted(finder.sites, key=lambda s: (s.line, s.col))

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        t = _Transformer(ctx, module, sites)
        out = transform(module, t)
        for from_, name in dict.fromkeys(t.imports):
            out = ensure_import(out, from_, name)
        if t.helpers:
            out, parsing = ensure_helpers(out, t.helpers)
            if parsing:
                for name in ("lightning_hasattr", "lightning_setattr"):
                    out = ensure_import(out, f"{t.root}.utilities.parsing", name)
        return out
