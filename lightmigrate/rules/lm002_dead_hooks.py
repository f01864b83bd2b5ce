"""LM002: methods that look like Lightning hooks but that Lightning 2.x never calls (or cannot).

Lightning 2.x silently ignores a hook it removed (``training_step_end``, ``on_epoch_end``), a
misspelt hook (``on_training_epoch_end``), and it cannot call a hook whose signature needs more
positional arguments than 2.x passes (``on_train_batch_end(self, outputs, batch, batch_idx,
dataloader_idx)``) or binds them differently (``optimizer_idx``). Their code just stops running,
or fails at the first call, with nothing to point at the cause. This rule runs after the rules
that migrate such hooks and marks whatever is left, so it is never silent.
"""

from __future__ import annotations

import ast
import re
from typing import FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate import MARKER_PREFIX
from lightmigrate.analysis.ast_nodes import ast_nodes
from lightmigrate.cst.helpers import add_marker
from lightmigrate.catalog.hooks import IGNORED_SINCE_1_6, hook_table, likely_misspelling, removed_table
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.cst.walk import transform
from lightmigrate.rules.shared.class_edit import HOOK_KINDS, KindTransformer, kind_classes
from lightmigrate.rules.shared.hooksa_ast import index_source, methods, positional_defaults, positional_names
from lightmigrate.rules.shared.legacy_super import inferred_kinds

CODE = "LM002"
DATALOADER_IDX_HOOKS = frozenset(
    {"validation_step", "test_step", "predict_step", "on_validation_batch_start", "on_validation_batch_end",
     "on_test_batch_start", "on_test_batch_end", "on_predict_batch_start", "on_predict_batch_end"}
)
OPTIMIZER_IDX_NAMES = frozenset({"optimizer_idx", "opt_idx"})


def _self_calls(cls: ast.ClassDef) -> Set[str]:
    """Names called as ``self.NAME(...)`` in the methods of ``cls`` (first parameter as self)."""
    found: Set[str] = set()
    for func in methods(cls):
        names = positional_names(func)
        if not names:
            continue
        for call in ast_nodes(func):
            if type(call) is ast.Call and type(call.func) is ast.Attribute and type(
                    call.func.value) is ast.Name and call.func.value.id == names[0]:
                found.add(call.func.attr)
    return found


# --- which comment lines libcst puts before a method ----------------------------------------

def _is_elif(lines: List[str], node: ast.AST) -> bool:
    return isinstance(node, ast.If) and lines[node.lineno - 1][node.col_offset:].startswith("elif")


def _last_block(stmt: ast.AST, lines: List[str]) -> Optional[List[ast.AST]]:
    """The statements of the block that ends ``stmt`` (its last clause), None for a simple
    statement. An ``elif`` chain is followed to its last clause."""
    while True:
        if isinstance(stmt, ast.If) and len(stmt.orelse) == 1 and _is_elif(lines, stmt.orelse[0]):
            stmt = stmt.orelse[0]
            continue
        if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            return stmt.orelse or stmt.body
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            return (stmt.finalbody or stmt.orelse  # type: ignore[attr-defined]
                    or (stmt.handlers[-1].body if stmt.handlers else stmt.body))  # type: ignore[attr-defined]
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With, ast.AsyncWith)):
            return stmt.body
        return None


def _footer_indents(stmt: ast.AST, lines: List[str]) -> List[str]:
    """The indentation of each indented block that ends with ``stmt`` (its last block, that
    block's last statement's, ...). libcst gives each such block, as its footer, the comment
    and blank lines after it up to the last one that starts with the block's indentation."""
    out = []
    while True:
        if type(stmt).__name__ == "Match":
            cases = stmt.cases  # type: ignore[attr-defined]
            line = lines[cases[0].pattern.lineno - 1]
            out.append(line[:len(line) - len(line.lstrip())])
            block = cases[-1].body
        else:
            block = _last_block(stmt, lines)
        if not block:
            return out
        first = block[0]
        prefix = lines[first.lineno - 1][:first.col_offset]  # type: ignore[attr-defined]
        if prefix.strip():  # the block is on its header's line (``if x: pass``): no footer
            return out
        out.append(prefix)
        stmt = block[-1]


def _has_marker_above(body: List[ast.stmt], i: int, lines: List[str]) -> bool:
    """Whether a ``TODO(lightmigrate)`` comment is among the lines libcst holds as the
    ``leading_lines`` of ``body[i]``: the comment and blank lines right above it (above its
    decorators), less those the footers of the blocks that end ``body[i - 1]`` take."""
    node = body[i]
    top = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    region: List[str] = []  # the comment and blank lines above, top to bottom
    line = top - 1
    while line >= 1 and (not lines[line - 1].strip() or lines[line - 1].lstrip().startswith("#")):
        region.insert(0, lines[line - 1])
        line -= 1
    if not any(MARKER_PREFIX in text for text in region):
        return False
    if i > 0:
        indents = _footer_indents(body[i - 1], lines)
        taken = [n for n, text in enumerate(region) if any(text.startswith(ind) for ind in indents)]
        if taken:
            region = region[taken[-1] + 1:]
    return any(text.lstrip().startswith("#") and MARKER_PREFIX in text for text in region)


def diagnose(name: str, params: Sequence[Tuple[str, bool]], kind: str,
             called: FrozenSet[str] = frozenset()) -> Optional[str]:
    """Why Lightning 2.x will not run a method as the author meant, or None, from its name and
    its positional parameters as (name, has a default) pairs. A removed hook the class calls
    itself (``self.log_grad_norm(...)`` after LM302) is an ordinary method."""
    removed = removed_table(kind)
    if name in removed and name in called:
        return None
    if name in removed and kind == "module" and name in IGNORED_SINCE_1_6:
        return (f"`{name}` is not a LightningModule hook since 1.6: neither 1.9 nor 2.x calls it, so this code never "
                f"runs; delete it, or, to run it again as 1.5 did, rename it to {removed[name]}")
    if name in removed:
        return f"`{name}` is never called by Lightning 2.x, so this code silently stops running; instead: {removed[name]}"
    hooks = hook_table(kind)
    if name not in hooks:
        meant = likely_misspelling(name, kind)
        if meant:
            return f"`{name}` is not a Lightning hook and never runs; did you mean `{meant}`?"
        return None
    skip = 3 if kind == "callback" else 1  # self (trainer, pl_module)
    args = params[skip:]
    names = [n for n, _ in args]
    if OPTIMIZER_IDX_NAMES & set(names):
        return (f"Lightning 2.x no longer passes `optimizer_idx` to `{name}`; the other arguments shift "
                "into its place or the call fails (multiple optimizers need manual optimization)")
    if name == "training_step" and "hiddens" in names:
        return "Lightning 2.x removed truncated BPTT: `hiddens` is no longer passed (use manual optimization)"
    required = sum(1 for _, has_default in args if not has_default)
    passes = hooks[name]
    if name in DATALOADER_IDX_HOOKS and len(args) > passes:
        idx_name, idx_default = args[passes]
        if not idx_default:
            return (f"with a single dataloader Lightning 2.x calls `{name}` without `{idx_name}`; "
                    f"give it a default (`{idx_name}=0`)")
        required = min(required, passes)
    if required > passes:
        return (f"Lightning 2.x calls `{name}` with {passes} positional argument(s); this signature needs "
                f"{required}, so the call fails")
    return None


class _Marker(KindTransformer):
    """Marks the methods at the sites' positions, each with its site's text."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        # a class whose kind ``find`` inferred (``legacy_super.inferred_kinds``): data is
        # (why, line of the class statement, kind)
        inferred = {(s.target.split(".")[0], s.data[1]): s.data[2] for s in sites if s.action == "mark_inferred"}
        super().__init__(ctx, module, only=frozenset(s.target.split(".")[0] for s in sites), inferred=inferred)
        self.todo = {(s.line, s.col + 1): (s.data[0] if s.action == "mark_inferred" else s.data) for s in sites}

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            why = self.todo.get(self.ctx.position(self.module, original.body.body[i]))
            if isinstance(item, cst.FunctionDef) and why:
                items[i] = add_marker(item, CODE, why)
                changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class DeadHooksRule(Rule):
    code = CODE
    name = "dead-hooks"
    summary = "Marks methods that look like Lightning hooks but that Lightning 2.x never calls, or cannot call."
    spec_rows = ("M4", "M5", "M10", "M11", "M12", "M13", "M14", "M15", "M16", "M20", "M27", "C1", "C3", "A.8")
    coverage = {
        "M1": Handling.MARKED,
        "M2": Handling.MARKED,
        "M3": Handling.MARKED,
        "M4": Handling.MARKED,
        "M5": Handling.MARKED,
        "M7": Handling.MARKED,
        "M10": Handling.MARKED,
        "M11": Handling.MARKED,
        "M12": Handling.MARKED,
        "M13": Handling.MARKED,
        "M14": Handling.MARKED,
        "M15": Handling.MARKED,
        "M16": Handling.MARKED,
        "M17": Handling.MARKED,
        "M20": Handling.MARKED,
        "M27": Handling.MARKED,
        "C1": Handling.MARKED,
        "C3": Handling.MARKED,
        "A8-hooks": Handling.MARKED,
        "A8-module": Handling.MARKED,
    }
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (rows on removed hooks, "
             "`optimizer_idx` in hook signatures, `dataloader_idx` defaults; PRs 16791, 16539, 16753)")
    safety = Safety.REVIEW
    triggers = ("def on_", "_step_end", "optimizer_idx", "opt_idx", "dataloader_idx", "tbptt_split_batch",
                "log_grad_norm", "get_progress_bar_dict", "hiddens", "_epoch_end")
    description = (
        "Lightning 2.x does not warn about a hook it no longer calls. A removed hook such as "
        "`training_step_end` or `on_epoch_end`, a misspelt one such as `on_training_epoch_end`, and a "
        "hook whose signature 2.x cannot call (an extra required argument, `optimizer_idx`, a "
        "`dataloader_idx` without default) all silently stop running or fail at the first call. "
        "This rule changes no code: it marks each such method with "
        "`# TODO(lightmigrate): LM002 <why and what to use instead>` so `rewrite --check` reports it. "
        "It runs after the rules that migrate these hooks, so it only marks what they left."
    )
    examples = (
        Example(
            title="a misspelt hook",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_training_epoch_end(self):
        self.log("x", 1.0)
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    # TODO(lightmigrate): LM002 `on_training_epoch_end` is not a Lightning hook and never runs; did you mean `on_train_epoch_end`?
    def on_training_epoch_end(self):
        self.log("x", 1.0)
''',
        ),
        Example(
            title="a removed callback hook",
            before='''\
from pytorch_lightning import Callback


class Printer(Callback):
    def on_epoch_end(self, trainer, pl_module):
        print(trainer.current_epoch)
''',
            after='''\
from pytorch_lightning import Callback


class Printer(Callback):
    # TODO(lightmigrate): LM002 `on_epoch_end` is never called by Lightning 2.x, so this code silently stops running; instead: on_train_epoch_end / on_validation_epoch_end / on_test_epoch_end
    def on_epoch_end(self, trainer, pl_module):
        print(trainer.current_epoch)
''',
        ),
        Example(
            title="dataloader_idx without a default",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    # TODO(lightmigrate): LM002 with a single dataloader Lightning 2.x calls `on_validation_batch_end` without `dataloader_idx`; give it a default (`dataloader_idx=0`)
    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx):
        pass
''',
        ),
        Example(
            title="valid 2.x hooks and plain methods are left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def on_train_epoch_end(self):
        pass

    def on_validation_batch_end(self, outputs, batch, batch_idx, dataloader_idx=0):
        pass

    def on_step_finished(self):
        pass
''',
            after=None,
        ),
    )

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        """One site per method of a LightningModule or Callback class that ``diagnose`` finds
        wrong and that has no ``TODO(lightmigrate)`` marker yet; ``data`` is the marker's text."""
        index_source(source, ctx)
        sites = []
        lines: Optional[List[str]] = None
        classes = [(cls, kind, False) for cls, kind in kind_classes(source, ctx, HOOK_KINDS)]
        # classes whose Lightning base lies outside the run: only their removed hooks are marked
        classes += [(cls, kind, True) for cls, kind in inferred_kinds(source, ctx, known=[c for c, _, _ in classes])]
        for cls, kind, inferred in classes:
            called: Optional[FrozenSet[str]] = None
            for i, item in enumerate(cls.body):
                if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                if inferred and item.name not in removed_table(kind):
                    continue
                if called is None:
                    called = frozenset(_self_calls(cls))
                params = list(zip(positional_names(item), positional_defaults(item)))
                why = diagnose(item.name, params, kind, called)
                if not why:
                    continue
                if lines is None:
                    lines = re.split(r"\r\n|\r|\n", source.text)
                if _has_marker_above(cls.body, i, lines):
                    continue
                if inferred:
                    sites.append(Site(item.lineno, item.col_offset, f"{cls.name}.{item.name}", "mark_inferred",
                                      (why, cls.lineno, kind)))
                else:
                    sites.append(Site(item.lineno, item.col_offset, f"{cls.name}.{item.name}", "mark", why))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        return transform(module, _Marker(ctx, module, sites))
