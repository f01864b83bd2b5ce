"""LM006: truncated backpropagation through time becomes an explicit split loop.

Lightning 1.x ran TBPTT for a module that set ``self.truncated_bptt_steps = k``: it cut each
batch along dim 1 into chunks of *length* k (``tbptt_split_batch``, overridable), called
``training_step(batch, batch_idx, hiddens)`` once per chunk with ``hiddens=None`` first and the
previous chunk's returned ``"hiddens"`` (detached) after that, and made every chunk a full
optimizer step (spec M16, B.6). Lightning 2.x removed all of it without a word: the attribute
becomes a plain attribute and the step fails for want of ``hiddens``.

The rewrite switches the module to manual optimization and writes the 1.x loop out:
``training_step(batch, batch_idx)`` splits the batch (with the user's own ``tbptt_split_batch``
when there is one, else a small helper doing 1.9's slicing), and for every split passes a
closure to ``opt.step``: the old step body (moved verbatim to ``_training_step``), then
``zero_grad`` (after the forward, as 1.9 did), then ``manual_backward``. ``training_step_end``
runs inside the closure as before. ``training_epoch_end`` is converted here (its outputs are
nested ``[batch][split]``, which the generic epoch-end rule does not reproduce), LR schedulers
are stepped per batch as 1.9 did, and ``accumulate_grad_batches`` / ``gradient_clip_val`` found
in the same file's Trainer arguments move into the module (manual optimization rejects them).
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

from lightmigrate.cst.helpers import (
    code_of,
    BodyFacts,
    Statement,
    add_marker,
    has_marker,
    append_statements,
    body_of,
    fresh_name,
    has_star_params,
    insert_before,
    param_names,
    parse_method,
    parse_statements,
    prepend_statements,
    self_name,
    split_docstring,
    super_call_attr,
    with_body,
)
from lightmigrate.rules.shared import trainer_kwargs
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import ClassEditor, Hierarchy, calls_super, hook_classes, migrate_classes, taken_names
from lightmigrate.rules.shared.import_root import class_lightning_root
from lightmigrate.rules.shared.optim_ast import (
    FUNCTIONS,
    Function,
    class_items,
    has_marker as ast_has_marker,
    has_star,
    last_def,
    positional,
    self_name as ast_self_name,
    stmt_text,
    text_lines,
)
from lightmigrate.cst.walk import walk
from lightmigrate.analysis.ast_nodes import ast_nodes

CODE = "LM006"
GUIDE = "https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html"
ATTR = "truncated_bptt_steps"
HOOKS = frozenset({"training_step", "tbptt_split_batch", ATTR})
UNKNOWN_CLASS = ("looks like Lightning 1.x truncated BPTT, but the class is not recognisably a "
                 "LightningModule; migrate it by hand if it is one")
DETACH_IMPORT = "recursive_detach"


def _attr_assignments(stmts: Sequence[cst.CSTNode], s: str) -> List[cst.BaseExpression]:
    """Values assigned to ``s.truncated_bptt_steps`` anywhere in ``stmts``."""
    found: List[cst.BaseExpression] = []

    class V(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                tgt = t.target
                if (isinstance(tgt, cst.Attribute) and tgt.attr.value == ATTR
                        and isinstance(tgt.value, cst.Name) and tgt.value.value == s):
                    found.append(node.value)

    for st in stmts:
        walk(st, V())
    return found


def _class_attr_value(items: Sequence[cst.CSTNode]) -> Optional[cst.BaseExpression]:
    for item in items:
        if isinstance(item, cst.SimpleStatementLine):
            for small in item.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        if isinstance(t.target, cst.Name) and t.target.value == ATTR:
                            return small.value
    return None


def _is_positive_int(value: Optional[cst.BaseExpression]) -> bool:
    if not isinstance(value, cst.Integer):
        return False
    try:
        return int(value.value, 0) > 0
    except ValueError:
        return False


def _reads_param(func: cst.FunctionDef, index: int) -> bool:
    names = param_names(func)
    if len(names) <= index:
        return False
    return names[index] in BodyFacts(body_of(func)).loaded


def _init_statement_index(stmts: Sequence[Statement]) -> Optional[int]:
    """Index of the ``super().__init__(...)`` statement in an ``__init__`` body."""
    for i, st in enumerate(stmts):
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Expr) and super_call_attr(small.value) == "__init__":
                    return i
    return None


def _commented(stmts: List[Statement], comment: Sequence[str]) -> List[Statement]:
    """``stmts`` with ``comment`` (lines without ``#``) above the first one."""
    lines = [cst.EmptyLine(comment=cst.Comment("# " + c)) for c in comment]
    return [stmts[0].with_changes(leading_lines=[*lines, *stmts[0].leading_lines]), *stmts[1:]]


def _imports_name(module: cst.Module, name: str) -> bool:
    for st in module.body:
        if isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if isinstance(small, cst.Import):
                    if any((a.asname and code_of(a.asname.name) == name) or code_of(a.name) == name for a in small.names):
                        return True
                if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    if any(code_of(a.asname.name if a.asname else a.name) == name for a in small.names):
                        return True
    return False


def _add_import(module: cst.Module, line: str) -> cst.Module:
    """Insert ``line`` after the last top-level import."""
    body = list(module.body)
    last = -1
    for i, st in enumerate(body):
        if isinstance(st, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in st.body):
            last = i
    new = parse_statements(line)[0]
    body.insert(last + 1, new)
    return module.with_changes(body=body)


class _Tbptt(ClassEditor):
    code = CODE

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.settings: Dict[str, cst.BaseExpression] = {}

    # -- recognising ---------------------------------------------------------------------------

    def _attr_value(self) -> Tuple[bool, Optional[cst.BaseExpression]]:
        value = _class_attr_value(self.items)
        if value is not None:
            return True, value
        for item in self.items:
            if isinstance(item, cst.FunctionDef):
                values = _attr_assignments(body_of(item), self_name(item))
                if values:
                    return True, values[-1]
        return False, None

    def migrate(self) -> None:
        step = self.get("training_step")
        split = self.get("tbptt_split_batch")
        has_attr, value = self._attr_value()
        step_params = param_names(step) if step is not None else []
        hiddens_step = step is not None and len(step_params) >= 4 and "optimizer_idx" not in step_params
        if not (has_attr or split is not None or (step is not None and "hiddens" in step_params)):
            return
        if not has_attr and step is None and split is None:
            return
        if step is not None and len(step_params) == 3 and split is None and self._manual_already():
            return  # already a 2.x manual loop (1.x would have failed: it passed hiddens to this step)
        why = self._blocked(step, split, has_attr, hiddens_step)
        if why and any(has_marker(item, CODE) for item in self.items
                       if isinstance(item, (cst.FunctionDef, cst.SimpleStatementLine))):
            return  # marked on an earlier run (LM003 may since have moved that method aside)
        if why:
            target = "training_step" if step is not None else ("tbptt_split_batch" if split is not None else None)
            if target is not None:
                self.mark(target, why)
            else:
                self._mark_class_attr(why)
            return
        assert step is not None
        self._rewrite(step, split, value)

    def _mark_class_attr(self, why: str) -> None:
        for i, item in enumerate(self.items):
            if isinstance(item, cst.SimpleStatementLine) and _class_attr_value([item]) is not None:
                self.items[i] = add_marker(item, CODE, why)
                self.changed = True
                return
        for i, item in enumerate(self.items):
            if isinstance(item, cst.FunctionDef) and _attr_assignments(body_of(item), self_name(item)):
                self.items[i] = add_marker(item, CODE, why)
                self.changed = True
                return

    def _blocked(self, step: Optional[cst.FunctionDef], split: Optional[cst.FunctionDef], has_attr: bool,
                 hiddens_step: bool) -> Optional[str]:
        if step is not None and any(n in ("optimizer_idx", "opt_idx") for n in param_names(step)):
            return ("truncated BPTT with several optimizers (optimizer_idx) is not migrated automatically: "
                    "write the split loop inside the multiple-optimizer loop by hand (spec B.6)")
        if step is None:
            return ("truncated BPTT settings without a training_step in this class; the split loop must be "
                    "written where training_step is defined (spec B.6)")
        if not has_attr:
            return ("training_step takes hiddens or tbptt_split_batch is overridden, but this class never sets "
                    "truncated_bptt_steps; port the TBPTT loop by hand (spec B.6)")
        if not hiddens_step or has_star_params(step) or len(param_names(step)) != 4:
            return ("truncated_bptt_steps is set but training_step does not take (batch, batch_idx, hiddens); "
                    "port the TBPTT loop by hand (spec B.6)")
        if self.h.descendants or not self.h.complete or self.h.ancestor_defines("training_step"):
            return ("truncated BPTT in a class hierarchy (base or subclass also defines training hooks); "
                    "port the TBPTT loop by hand (spec B.6)")
        if self._manual_already():
            return "the module already uses manual optimization; add the TBPTT split loop to it by hand (spec B.6)"
        if split is not None and (calls_super(split, "tbptt_split_batch") or has_star_params(split)
                                  or len(param_names(split)) != 3):
            return "this tbptt_split_batch calls the removed default or has an unusual signature; port it by hand"
        if self.get("training_epoch_end") is not None:
            ep = self.get("training_epoch_end")
            if has_star_params(ep) or len(param_names(ep)) != 2 or BodyFacts(body_of(ep)).has_yield:
                return "unusual training_epoch_end signature under truncated BPTT; port it by hand"
            if BodyFacts(body_of(ep)).has_return and self.get("on_train_epoch_end") is not None:
                return "training_epoch_end returns early and cannot be merged into on_train_epoch_end; port it by hand"
        end = self.get("training_step_end")
        if end is not None and (has_star_params(end) or len(param_names(end)) != 2):
            return "unusual training_step_end signature under truncated BPTT; port it by hand"
        for hook in ("optimizer_step", "optimizer_zero_grad", "lr_scheduler_step", "configure_gradient_clipping"):
            if self.get(hook) is not None:
                return (f"{hook} is overridden; manual optimization does not call it, so the TBPTT loop "
                        "must be ported by hand (spec B.6)")
        return None

    def _manual_already(self) -> bool:
        for item in self.items:
            if isinstance(item, cst.FunctionDef) and "automatic_optimization" in code_of(item):
                return True
            if isinstance(item, cst.SimpleStatementLine) and "automatic_optimization" in code_of(item):
                return True
        return False

    # -- rewriting -----------------------------------------------------------------------------

    def _rewrite(self, step: cst.FunctionDef, split: Optional[cst.FunctionDef],
                 value: Optional[cst.BaseExpression]) -> None:
        s, batch, batch_idx, _ = param_names(step)
        taken = taken_names(self.index, self.info) | set(self.renames.values())
        step_helper = fresh_name("_training_step", taken)
        taken.add(step_helper)
        split_helper = fresh_name("_tbptt_split_batch", taken)
        taken.add(split_helper)
        end_helper = fresh_name("_training_step_end", taken)
        taken.add(end_helper)
        buffer = fresh_name("training_step_outputs", taken)
        taken.add(buffer)

        accumulate = self.settings.get("accumulate_grad_batches")
        clip_val = self.settings.get("gradient_clip_val")
        clip_algo = self.settings.get("gradient_clip_algorithm")
        n = code_of(accumulate) if accumulate is not None else None
        if n is not None and n.strip() == "1":
            n = None

        has_end = self.get("training_step_end") is not None
        epoch_end = self.get("training_epoch_end")
        collect = epoch_end is not None and _reads_param(epoch_end, 1)
        schedulers = self._has_schedulers()
        plateau = self._plateau()

        lines: List[str] = [f"opt = {s}.optimizers()"]
        if n is not None:
            lines.append(f"should_step = ({batch_idx} + 1) % {n} == 0 or {s}.trainer.is_last_batch")
        lines.append("hiddens = None")
        if collect:
            lines.append("split_outputs = []")
        lines.append(f"for split in {s}.{split_helper}({batch}, {s}.{ATTR}):")
        lines.append("    result = {}")
        lines.append("")
        lines.append("    def closure():")
        lines.append(f"        output = {s}.{step_helper}(split, {batch_idx}, hiddens)")
        if has_end:
            lines.append(f"        end_output = {s}.{end_helper}(output)")
            lines.append("        if end_output is not None:")
            lines.append("            output = end_output")
        loss = f'output["loss"] / {n}' if n is not None else 'output["loss"]'
        lines.append(f"        result[\"output\"], result[\"loss\"] = output, {loss}")
        if n is not None:
            lines.append(f"        if {batch_idx} % {n} == 0:")
            lines.append("            opt.zero_grad()")
        else:
            lines.append("        opt.zero_grad()")
        lines.append(f"        {s}.manual_backward(result[\"loss\"])")
        lines.append("        return result[\"loss\"]")
        lines.append("")
        if n is not None:
            lines.append("    if should_step:")
            lines.append("        opt.step(closure=closure)")
            lines.append("    else:")
            lines.append("        closure()")
        else:
            lines.append("    opt.step(closure=closure)")
        lines.append(f"    hiddens = {DETACH_IMPORT}(result[\"output\"][\"hiddens\"])")
        if collect:
            lines.append("    extras = {k: v for k, v in result[\"output\"].items() if k not in (\"loss\", \"hiddens\")}")
            lines.append("    split_outputs.append({\"loss\": result[\"loss\"].detach(), **extras})")
        if collect:
            lines.append(f"{s}.{buffer}.append(split_outputs)")
        if schedulers:
            cond = "should_step and " if n is not None else ""
            not_plateau = ("not isinstance(config.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau) and "
                           if plateau else "")
            lines.append(f"for config in {s}.trainer.lr_scheduler_configs:  # Lightning 1.x stepped them per batch")
            lines.append("    if config.interval == \"step\":")
            lines.append(f"        if {cond}({batch_idx} + 1) % config.frequency == 0:")
            lines.append("            config.scheduler.step()")
            lines.append(f"    elif {not_plateau}{s}.trainer.is_last_batch and ({s}.current_epoch + 1) % config.frequency == 0:")
            lines.append("        config.scheduler.step()")
        new_step = parse_method(f"def training_step({s}, {batch}, {batch_idx}):\n    pass")
        new_step = with_body(new_step, _commented(parse_statements("\n".join(lines)), (
            "Truncated backpropagation through time, written out (Lightning 2.x removed it): every",
            "chunk of `truncated_bptt_steps` time steps is one optimizer step, and the hidden state",
            "a chunk returns goes on, detached, to the next chunk.")))
        # the old step body becomes the helper, unchanged
        self.rename("training_step", step_helper)
        self.insert_before(step_helper, [new_step])
        self.keep_calls.add("training_step")
        if n is not None:
            self.mark("training_step", (
                f"accumulate_grad_batches={n} moved here from the Trainer: training is unchanged, but loggers "
                "now advance their step on every batch (1.x advanced it only on batches that stepped)"))
        if plateau:
            self.mark("training_step", (
                "ReduceLROnPlateau: manual optimization drops its `monitor`; step it by hand at the end of "
                "on_train_epoch_end with the monitored metric, as 1.x did"))
        if has_end:
            self.rename("training_step_end", end_helper)
        if split is not None:
            self.rename("tbptt_split_batch", split_helper)
        else:
            self.items.append(self._default_split(s, split_helper))
        self._set_manual(s)
        if clip_val is not None:
            self._add_clipping(s, clip_val, clip_algo)
        if epoch_end is not None:
            self._convert_epoch_end(epoch_end, buffer if collect else None)
        batch_end = self.get("on_train_batch_end")
        if batch_end is not None and _reads_param(batch_end, 1):
            self.mark("on_train_batch_end", (
                "under truncated BPTT Lightning 1.x passed a list with one dict per split here; the migrated "
                "training_step returns None, so `outputs` is now empty"))
        moved = [k for k in ("accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm")
                 if k in self.settings]
        extra = f"; moved Trainer {', '.join(moved)} into the loop" if moved else ""
        self.fixed(f"truncated BPTT rewritten as a manual-optimization split loop in training_step "
                   f"(old step body in {step_helper}){extra}", "training_step")

    def _has_schedulers(self) -> bool:
        conf = self.get("configure_optimizers")
        return conf is not None and "sched" in code_of(conf).lower()

    def _plateau(self) -> bool:
        conf = self.get("configure_optimizers")
        return conf is not None and "plateau" in code_of(conf).lower()

    def _default_split(self, s: str, name: str) -> cst.FunctionDef:
        func = parse_method(f'''
            def {name}({s}, batch, split_size):
                # Lightning 1.x's default tbptt_split_batch: cut every tensor of the batch along dim 1
                # into chunks of `split_size` steps (the last one shorter); lists are cut element-wise.
                time_steps = next(len(x[0]) for x in batch if isinstance(x, (torch.Tensor, list, tuple)))
                splits = []
                for t in range(0, time_steps, split_size):
                    split = []
                    for x in batch:
                        if isinstance(x, torch.Tensor):
                            x = x[:, t : t + split_size]
                        elif isinstance(x, (list, tuple)):
                            x = [item[t : t + split_size] for item in x]
                        split.append(x)
                    splits.append(split)
                return splits
        ''')
        return func.with_changes(leading_lines=[cst.EmptyLine(indent=False)])

    def _set_manual(self, s: str) -> None:
        line = parse_statements(f"{s}.automatic_optimization = False")
        init = self.get("__init__")
        if init is not None:
            s_init = self_name(init)
            line = parse_statements(f"{s_init}.automatic_optimization = False")
            stmts = body_of(init)
            i = _init_statement_index(stmts)
            if i is None:
                self.set("__init__", prepend_statements(init, line))
                self.mark("__init__", "no super().__init__() call found; check that automatic_optimization = False "
                                      "is set after the LightningModule is initialised")
                return
            self.set("__init__", with_body(init, [*stmts[:i + 1], *line, *stmts[i + 1:]]))
            return
        new_init = parse_method(f"""
            def __init__({s}, *args, **kwargs):
                super().__init__(*args, **kwargs)
                {s}.automatic_optimization = False
        """)
        first = next((i for i, it in enumerate(self.items) if isinstance(it, cst.FunctionDef)), None)
        if first is None:
            self.items.append(new_init)
        else:
            insert_before(self.items, first, [new_init])

    def _add_clipping(self, s: str, val: cst.BaseExpression, algo: Optional[cst.BaseExpression]) -> None:
        args = f"gradient_clip_val={code_of(val)}"
        if algo is not None:
            args += f", gradient_clip_algorithm={code_of(algo)}"
        stmt = parse_statements(f"{s}.clip_gradients(optimizer, {args})  # was Trainer(gradient_clip_val=...)")
        existing = self.get("on_before_optimizer_step")
        if existing is not None:
            if BodyFacts(body_of(existing)).has_return or len(param_names(existing)) != 2:
                self.mark("on_before_optimizer_step", "clip the gradients here by hand (Trainer gradient_clip_val "
                                                     "was removed: manual optimization rejects it)")
                return
            opt_name = param_names(existing)[1]
            stmt = parse_statements(f"{self_name(existing)}.clip_gradients({opt_name}, {args})")
            self.set("on_before_optimizer_step", append_statements(existing, stmt))
            return
        func = parse_method(f"def on_before_optimizer_step({s}, optimizer):\n    pass")
        self.items.append(with_body(func, stmt).with_changes(leading_lines=[cst.EmptyLine(indent=False)]))

    def _convert_epoch_end(self, epoch_end: cst.FunctionDef, buffer: Optional[str]) -> None:
        s, outputs = param_names(epoch_end)
        doc, stmts = split_docstring(body_of(epoch_end))
        if buffer is not None:
            fetch = _commented(parse_statements(f"""
                {outputs} = {s}.{buffer}
                if len({outputs}) == 1:
                    {outputs} = {outputs}[0]
                elif all(len(splits) == 1 for splits in {outputs}):
                    {outputs} = [splits[0] for splits in {outputs}]
            """), ("Lightning 1.x nested these outputs [batch][split], then squeezed away a size-1 dimension",))
            stmts = [*fetch, *stmts]
            start = self.get("on_train_epoch_start")
            reset = parse_statements(f"{s}.{buffer} = []")
            if start is not None:
                reset = parse_statements(f"{self_name(start)}.{buffer} = []")
                self.set("on_train_epoch_start", prepend_statements(start, reset))
            else:
                func = with_body(parse_method(f"def on_train_epoch_start({s}):\n    pass"), reset)
                self.insert_before("training_epoch_end", [func])
        existing = self.get("on_train_epoch_end")
        if existing is not None:
            if self_name(existing) != s:
                stmts = [*parse_statements(f"{s} = {self_name(existing)}"), *stmts]
            self.set("on_train_epoch_end", prepend_statements(existing, stmts))
            self.set("training_epoch_end", None)
        else:
            new = parse_method(f"def on_train_epoch_end({s}):\n    pass")
            new = with_body(new, [*doc, *stmts]).with_changes(decorators=epoch_end.decorators)
            self.set("training_epoch_end", new.with_changes(leading_lines=epoch_end.leading_lines))


# ---------------------------------------------------------------------------------------------
# What the editor does to a class, on Python's ``ast`` (see _Tbptt.migrate and _Tbptt._blocked)


def _ast_class_attr(items: Sequence[ast.stmt]) -> bool:
    """``truncated_bptt_steps = ...`` in the class body (``_class_attr_value``)."""
    return any(isinstance(item, ast.Assign) and any(isinstance(t, ast.Name) and t.id == ATTR for t in item.targets)
               for item in items)


def _ast_sets_attr(func: Function) -> bool:
    """``self.truncated_bptt_steps = ...`` anywhere in the body of ``func`` (``_attr_assignments``)."""
    s = ast_self_name(func)
    return any(isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Attribute) and t.attr == ATTR and isinstance(t.value, ast.Name) and t.value.id == s
        for t in n.targets) for st in func.body for n in ast_nodes(st))


def _returns_or_yields(body: Sequence[ast.stmt]) -> Tuple[bool, bool]:
    """Whether ``body`` returns, and whether it yields, outside nested functions, classes and
    lambdas (``BodyFacts.has_return`` / ``has_yield``)."""
    found = {"return": False, "yield": False}

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Return):
                found["return"] = True
            elif isinstance(child, (ast.Yield, ast.YieldFrom)):
                found["yield"] = True
            visit(child)

    for st in body:
        if isinstance(st, ast.Return):
            found["return"] = True
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            visit(st)
    return found["return"], found["yield"]


def _manual_already(items: Sequence[ast.stmt], lines: Sequence[str]) -> bool:
    """``_Tbptt._manual_already``: a method or a statement line of the class mentions
    ``automatic_optimization``."""
    return any("automatic_optimization" in stmt_text(lines, item) for item in items if not _compound(item))


def _compound(item: ast.stmt) -> bool:
    """A statement libcst keeps as neither a statement line nor a function (a class, an ``if``...)."""
    return isinstance(item, (ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                             ast.Try, *((ast.Match,) if hasattr(ast, "Match") else ())))


def _blocked(h: Hierarchy, items: Sequence[ast.stmt], lines: Sequence[str], has_attr: bool) -> bool:
    """Whether ``_Tbptt._blocked`` finds a reason to mark the class instead of rewriting it."""
    step = last_def(items, "training_step")
    split = last_def(items, "tbptt_split_batch")
    if step is None or not has_attr:
        return True
    params = positional(step)
    if any(n in ("optimizer_idx", "opt_idx") for n in params):
        return True
    if has_star(step) or len(params) != 4:
        return True
    if h.descendants or not h.complete or h.ancestor_defines("training_step"):
        return True
    if _manual_already(items, lines):
        return True
    if split is not None and (has_star(split) or len(positional(split)) != 3 or any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "tbptt_split_batch"
            and isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name)
            and n.func.value.func.id == "super" for n in ast_nodes(split))):
        return True
    ep = last_def(items, "training_epoch_end")
    if ep is not None:
        returns, yields = _returns_or_yields(ep.body)
        if has_star(ep) or len(positional(ep)) != 2 or yields:
            return True
        if returns and last_def(items, "on_train_epoch_end") is not None:
            return True
    end = last_def(items, "training_step_end")
    if end is not None and (has_star(end) or len(positional(end)) != 2):
        return True
    return any(last_def(items, hook) is not None
               for hook in ("optimizer_step", "optimizer_zero_grad", "lr_scheduler_step", "configure_gradient_clipping"))


def _editor_acts(h: Hierarchy, items: Sequence[ast.stmt], lines: Sequence[str]) -> bool:
    """Whether ``_Tbptt.migrate`` rewrites or marks the class with these statements."""
    step = last_def(items, "training_step")
    split = last_def(items, "tbptt_split_batch")
    has_attr = _ast_class_attr(items) or any(_ast_sets_attr(f) for f in items if isinstance(f, FUNCTIONS))
    params = positional(step) if step is not None else []
    if not (has_attr or split is not None or "hiddens" in params):
        return False
    if step is not None and len(params) == 3 and split is None and _manual_already(items, lines):
        return False  # already a 2.x manual loop
    if _blocked(h, items, lines, has_attr) and any(
            ast_has_marker(lines, item, CODE) for item in items if not _compound(item)):
        return False  # marked on an earlier run
    return True


def _has_tbptt_code(tree: ast.AST) -> bool:
    """Whether the file mentions ``truncated_bptt_steps`` (as a name or an attribute), defines
    a ``tbptt_split_batch`` or has a parameter called ``hiddens``."""
    for node in ast_nodes(tree):
        if isinstance(node, ast.Name) and node.id == ATTR:
            return True
        if isinstance(node, ast.Attribute) and node.attr == ATTR:
            return True
        if isinstance(node, FUNCTIONS) and node.name == "tbptt_split_batch":
            return True
        if isinstance(node, ast.arg) and node.arg == "hiddens":
            return True
    return False


class TbpttRule(Rule):
    code = CODE
    name = "truncated-bptt"
    summary = "Truncated BPTT (`truncated_bptt_steps`, `hiddens`) becomes a manual-optimization split loop."
    spec_rows = ("M16",)
    coverage = {
        "M16": Handling.REWRITTEN,
    }
    guide = (f"{GUIDE} (1.9 advanced row: 'used truncated_bptt_steps / tbptt_split_batch / "
             "training_step(..., hiddens)': switch to manual optimization and loop over the splits; PR 16172)")
    safety = Safety.PRESERVING
    triggers = (ATTR, "hiddens", "tbptt_split_batch")
    description = (
        "Lightning 2.0 removed truncated backpropagation through time and says nothing: "
        "`truncated_bptt_steps` becomes a plain attribute and `training_step(batch, batch_idx, hiddens)` "
        "fails for want of `hiddens`. This rule switches the module to manual optimization and writes the "
        "1.9 loop out in `training_step`: the batch is cut along dim 1 into chunks of length "
        "`truncated_bptt_steps` (1.9's slicing, or the module's own `tbptt_split_batch`), and every chunk "
        "is one optimizer step whose closure runs the old step body (kept as `_training_step`), "
        "`training_step_end`, `zero_grad` after the forward and `manual_backward`; the returned "
        "`\"hiddens\"` go on, detached, to the next chunk. `training_epoch_end` gets the 1.9 "
        "`[batch][split]` outputs, LR schedulers step once per batch, and `accumulate_grad_batches` / "
        "`gradient_clip_val` from the file's Trainer arguments move into the module. Several optimizers, "
        "class hierarchies and overridden optimizer hooks get a marker."
    )
    examples = (
        Example(
            title="a GRU trained on chunks of 4 steps",
            before='''\
import pytorch_lightning as pl
import torch


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.truncated_bptt_steps = 4
        self.rnn = torch.nn.GRU(2, 3, batch_first=True)

    def training_step(self, batch, batch_idx, hiddens):
        x, y = batch
        out, hiddens = self.rnn(x, hiddens)
        return {"loss": (out.sum(-1) - y).pow(2).mean(), "hiddens": hiddens}
''',
            after='''\
import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities.memory import recursive_detach


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.automatic_optimization = False
        self.truncated_bptt_steps = 4
        self.rnn = torch.nn.GRU(2, 3, batch_first=True)

    def training_step(self, batch, batch_idx):
        # Truncated backpropagation through time, written out (Lightning 2.x removed it): every
        # chunk of `truncated_bptt_steps` time steps is one optimizer step, and the hidden state
        # a chunk returns goes on, detached, to the next chunk.
        opt = self.optimizers()
        hiddens = None
        for split in self._tbptt_split_batch(batch, self.truncated_bptt_steps):
            result = {}

            def closure():
                output = self._training_step(split, batch_idx, hiddens)
                result["output"], result["loss"] = output, output["loss"]
                opt.zero_grad()
                self.manual_backward(result["loss"])
                return result["loss"]

            opt.step(closure=closure)
            hiddens = recursive_detach(result["output"]["hiddens"])

    def _training_step(self, batch, batch_idx, hiddens):
        x, y = batch
        out, hiddens = self.rnn(x, hiddens)
        return {"loss": (out.sum(-1) - y).pow(2).mean(), "hiddens": hiddens}

    def _tbptt_split_batch(self, batch, split_size):
        # Lightning 1.x's default tbptt_split_batch: cut every tensor of the batch along dim 1
        # into chunks of `split_size` steps (the last one shorter); lists are cut element-wise.
        time_steps = next(len(x[0]) for x in batch if isinstance(x, (torch.Tensor, list, tuple)))
        splits = []
        for t in range(0, time_steps, split_size):
            split = []
            for x in batch:
                if isinstance(x, torch.Tensor):
                    x = x[:, t : t + split_size]
                elif isinstance(x, (list, tuple)):
                    x = [item[t : t + split_size] for item in x]
                split.append(x)
            splits.append(split)
        return splits
''',
        ),
        Example(
            title="several optimizers: marked",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    truncated_bptt_steps = 2

    def training_step(self, batch, batch_idx, optimizer_idx, hiddens):
        return {"loss": self.loss(batch, hiddens), "hiddens": None}
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    truncated_bptt_steps = 2

    # TODO(lightmigrate): LM006 truncated BPTT with several optimizers (optimizer_idx) is not migrated automatically: write the split loop inside the multiple-optimizer loop by hand (spec B.6)
    def training_step(self, batch, batch_idx, optimizer_idx, hiddens):
        return {"loss": self.loss(batch, hiddens), "hiddens": None}
''',
        ),
        Example(
            title="no TBPTT: left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        return self.layer(batch).sum()
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        """A site for each class the editor rewrites or marks ("edit", with the import root of
        the class's Lightning base), and for each class that is not recognisably a
        LightningModule whose hooks get marked ("mark"; only in a file with TBPTT code: the
        attribute, a ``tbptt_split_batch`` or a parameter called ``hiddens``)."""
        tree = source.tree
        lines = text_lines(source.text)
        tbptt_file: Optional[bool] = None
        sites: List[Site] = []
        for c in hook_classes(source, ctx, HOOKS):
            items = class_items(lines, c.node)
            if c.known:
                if _editor_acts(Hierarchy.of(ctx.project, c.info), items, lines):
                    sites.append(c.site("edit", class_lightning_root(tree, c.node)))
                continue
            if not any(isinstance(item, FUNCTIONS) and item.name in HOOKS and not ast_has_marker(lines, item, CODE)
                       for item in items):
                continue
            if tbptt_file is None:
                tbptt_file = _has_tbptt_code(tree)
            if tbptt_file:
                sites.append(c.site("mark", ""))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        settings = trainer_kwargs.find(module, trainer_kwargs.MANUAL_REJECTS)
        migrated: List[str] = []  # the classes rewritten as a split loop

        def editor(*args, **kwargs) -> _Tbptt:
            ed = _Tbptt(*args, **kwargs)
            ed.settings = settings
            original_fixed = ed.fixed

            def fixed(message: str, name: str = "") -> None:
                if message.startswith("truncated BPTT rewritten"):
                    migrated.append(ed.info.name)
                original_fixed(message, name)

            ed.fixed = fixed  # type: ignore[method-assign]
            return ed

        out = migrate_classes(module, ctx, CODE, HOOKS, editor, UNKNOWN_CLASS,
                              only=frozenset(s.target for s in sites))
        if not migrated:
            return out
        if settings:
            out = trainer_kwargs.remove(out, tuple(settings))
        if not _imports_name(out, DETACH_IMPORT):
            # from the package of the (first) rewritten class's Lightning base
            root = next(s.data for s in sites if s.target in migrated)
            out = _add_import(out, f"from {root}.utilities.memory import {DETACH_IMPORT}")
        if not _imports_name(out, "torch"):
            out = _add_import(out, "import torch")
        return out
