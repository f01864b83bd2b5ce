"""LM309: behaviour that changed silently between 1.9 and 2.x, with nothing to rewrite: NOTE
findings where the code is affected (spec M22, M26, C11, A.7 B-2, B-3, B-7, B-8, B-9, B-10, B-11).

The code is never changed. Each note is reported once per file, at the line that triggers it:

- M22 / B-3: progress-bar metrics read (``progress_bar_metrics``, a ``get_metrics`` override)
  while no ``training_step`` of the file logs ``"loss"``: 1.9 put a running mean of the loss
  there; 2.x does not.
- M26 / B-11: a ``training_step`` that can return None (skip the batch) in a file that selects a
  DDP strategy: a RuntimeError from 2.3 under DDP.
- C11 / B-2: ``EarlyStopping`` / ``ModelCheckpoint`` monitoring a metric, in a file whose module
  logs in its own ``on_train_epoch_end``: 2.x runs those callbacks after it (ledger B2.6). Not
  for a class whose 1.x hook LM001 moved after them (``rules/shared/after_monitors.py``): the
  ``on_train_epoch_end`` left there holds what LM001 moved from ``training_epoch_end``, which
  1.9's callbacks saw the same epoch too (B2.5).
- B-7: ``fit`` called more than once with a spawn strategy (raises from 2.1).
- B-8: ``seed_everything()`` without a seed: 0 from 2.2 (1.9 drew a random seed).
- B-9: ``.eval()`` in a file that calls ``.fit(``: 2.2+ no longer calls ``model.train()`` at
  the start of fit.
- B-10: ``CSVLogger`` (columns sorted from 2.2).
- B-4: a file that installs its own signal handler (``signal.signal``) and runs
  ``validate``/``test``/``predict``: 2.x registers the Trainer's handlers for those too.
- B-5: a file that relies on Kubeflow (names it): auto-detection is off from 2.0.7.
- B-13: code that reaches into the progress-bar callback (``progress_bar_callback``): from 2.6
  the default bar is ``RichProgressBar`` (and the summary ``RichModelSummary``) when rich is
  installed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Callable, List, Optional, Sequence, Tuple


from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import class_defs_with_ordinals, class_kind, uses_lightning
from lightmigrate.rules.shared.method_sites import index_source, methods, physical_lines
from lightmigrate.analysis.ast_nodes import ast_nodes
from lightmigrate.rules.shared.after_monitors import HOOK as AFTER_HOOK, LOGS, MONITORS, deferred, logs
from lightmigrate.catalog.hooks import AFTER_MONITORS_METHOD

CODE = "LM309"
NOTE_LOSS = ("1.9 put a running mean of the training loss as \"loss\" in the progress bar metrics; 2.x does not: "
             "`self.log(\"loss\", loss, prog_bar=True, logger=False)` in training_step brings it back")
NOTE_NONE_DDP = ("`training_step` may return None (skip the batch); under DDP this raises from Lightning 2.3: "
                 "return a zero loss or use manual optimization")
NOTE_ORDER = ("EarlyStopping and ModelCheckpoint now check their monitor after the module's `on_train_epoch_end` "
              "(1.9: before it), so a metric logged there is seen one epoch earlier. Left as it is: LM001 moves a "
              f"1.x `on_train_epoch_end` after them (into `{AFTER_MONITORS_METHOD}`, run by a Checkpoint callback "
              "from `configure_callbacks`) only in a class whose removed `*_epoch_end` hooks it migrates in the same "
              "run and whose hierarchy defines no other `on_train_epoch_end` or `configure_callbacks`; do it by hand if "
              "this hook is 1.x code (what LM001 moved here from `training_epoch_end` is right as it is)")
NOTE_SPAWN = "calling `fit` a second time with a spawn strategy raises from Lightning 2.1"
NOTE_SEED = ("`seed_everything()` without a seed uses 0 from Lightning 2.2 (1.9 drew a random one): pass a seed "
             "or set PL_GLOBAL_SEED")
NOTE_TRAIN = ("Lightning 2.2+ no longer calls `model.train()` when `fit` starts: a model left in eval mode "
              "trains in eval mode (dropout and batch norm off)")
NOTE_SIGNALS = ("Lightning 2.x also registers its own SIGTERM/SIGINT handlers for `trainer.validate/test/predict` "
                "(1.9: only for `fit`); check that your own signal handler still runs")
NOTE_KUBEFLOW = ("Kubeflow is no longer auto-detected from Lightning 2.0.7: pass "
                 "`plugins=[KubeflowEnvironment()]` (from `lightning.fabric.plugins.environments`) to the Trainer")
NOTE_RICH = ("from Lightning 2.6 the default progress bar is `RichProgressBar` (and the summary `RichModelSummary`) "
             "when rich is installed: pass `callbacks=[TQDMProgressBar()]` to keep the tqdm bar this code expects")
NOTE_CSV = "CSVLogger writes its columns sorted from Lightning 2.2: read metrics.csv by column name"
_DDP = re.compile(r"""["']ddp[a-z_]*["']|DDPStrategy|DDPSpawnStrategy""")
_SPAWN = re.compile(r"""["'][a-z_]*spawn[a-z_]*["']|DDPSpawnStrategy""")
_LOSS = re.compile(r"""["']loss["']""")
_RUNS = ("validate", "test", "predict")


def _called(node: ast.AST, names: Sequence[str]) -> bool:
    """A call of ``NAME(...)`` or ``<expr>.NAME(...)``, NAME one of ``names``."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Name) and f.id in names) or (isinstance(f, ast.Attribute) and f.attr in names)


def _method_called(node: ast.AST, names: Sequence[str]) -> bool:
    """A call of ``<expr>.NAME(...)``, NAME one of ``names``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


class _Nodes:
    """The nodes of the file in libcst's visiting order (``_visit_key``), and their libcst
    positions."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.lines = physical_lines(source.text)

    def every(self, test: Callable[[ast.AST], bool]) -> List[ast.AST]:
        return sorted((n for n in self.source.nodes if test(n)), key=_visit_key)

    def first(self, test: Callable[[ast.AST], bool]) -> Optional[ast.AST]:
        found = self.every(test)
        return found[0] if found else None

    def position(self, node: ast.AST) -> Tuple[int, int]:
        """(line, 0-based column in characters) of ``node``: where libcst says it starts."""
        line = node.lineno
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        return line, len(text.encode("utf-8")[:node.col_offset].decode("utf-8", "replace"))


def _visit_key(node: ast.AST):
    """Sorts nodes as libcst visits them: by where they start, an enclosing node first, and a
    decorated definition before its decorators."""
    line, col = node.lineno, node.col_offset
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        first = min(decorators, key=lambda d: (d.lineno, d.col_offset))
        line, col = first.lineno, first.col_offset - 1  # the "@" before the first decorator
    return (line, col, -node.end_lineno, -node.end_col_offset)


def _logs_loss(text: str, func: ast.AST) -> bool:
    """A ``<expr>.log(...)`` / ``log_dict(...)`` call in ``func`` whose code holds "loss"
    (quoted)."""
    return any(_method_called(node, LOGS) and _LOSS.search(ast.get_source_segment(text, node) or "")
               for node in ast_nodes(func))


def _may_return_none(func: ast.AST) -> bool:
    """A ``return`` (in the body, nested functions too) of nothing or of ``None``."""
    return any(isinstance(node, ast.Return) and (node.value is None or (
        isinstance(node.value, ast.Constant) and node.value.value is None))
        for stmt in func.body for node in ast_nodes(stmt))


def _kubeflow(text: str) -> Optional[Tuple[int, int]]:
    """(line, 0-based column) of the first name or plain string literal whose text holds
    "kubeflow" (any case): what libcst's first such ``Name`` or ``SimpleString`` is. In an
    f-string (one token here) the first identifier holding it counts."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if "kubeflow" not in tok.string.lower():
                continue
            if tok.type == tokenize.NAME:
                return tok.start
            if tok.type == tokenize.STRING:
                prefix = tok.string[:len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))]
                if "f" not in prefix.lower():
                    return tok.start
                for word in re.finditer(r"[^\W\d]\w*", tok.string):
                    if "kubeflow" in word.group().lower() and _in_fstring_expression(tok.string, word.start()):
                        return _advance(tok.start, tok.string[:word.start()])
    except (tokenize.TokenError, SyntaxError):
        return None
    return None


def _in_fstring_expression(code: str, at: int) -> bool:
    """Whether ``at`` in the f-string literal ``code`` is inside a ``{...}`` replacement field."""
    depth = 0
    i = 0
    while i < at:
        if code[i] == "{":
            if depth == 0 and code[i + 1:i + 2] == "{":
                i += 2
                continue
            depth += 1
        elif code[i] == "}" and depth:
            depth -= 1
        i += 1
    return depth > 0


def _advance(start: Tuple[int, int], code: str) -> Tuple[int, int]:
    """The position after ``code`` written from ``start``."""
    line, col = start
    breaks = code.count("\n")
    if breaks:
        return line + breaks, len(code) - code.rindex("\n") - 1
    return line, col + len(code)


def _uses_a_trainer(source: SourceFile) -> bool:
    """A name such as ``trainer`` or ``self.trainer`` in the file: code handed a Lightning
    Trainer (``def run(trainer, model)``) need not import Lightning."""
    return "rainer" in source.text and any(
        (type(node) is ast.Name and "trainer" in node.id.lower())  # type: ignore[attr-defined]
        or (type(node) is ast.Attribute and "trainer" in node.attr.lower())  # type: ignore[attr-defined]
        for node in source.nodes)


def _notes(source: SourceFile, ctx: RuleContext) -> List[Site]:
    """Every note of the file, in the order they are reported, each at the node it names."""
    text = source.text
    nodes = _Nodes(source)
    found: List[Site] = []

    def note(node: Optional[ast.AST], message: str, at: Optional[Tuple[int, int]] = None) -> None:
        line, col = at if at is not None else nodes.position(node) if node is not None else (0, 0)
        found.append(Site(line, col, CODE, "note", message))

    steps: List[ast.AST] = []
    epoch_end_logs = False
    if "class" in text:
        for cls, ordinal in class_defs_with_ordinals(source.tree):
            if class_kind(ctx, cls.name, ordinal) != "module":
                continue
            own = list(methods(cls))
            for func in own:
                if func.name == "training_step":
                    steps.append(func)
            hook = next((f for f in reversed(own) if f.name == AFTER_HOOK), None)
            if hook is not None and not deferred({f.name for f in own}):
                epoch_end_logs = epoch_end_logs or logs(hook)
    reader = None
    if "progress_bar_metrics" in text or "get_metrics" in text:
        reader = nodes.first(lambda n: (isinstance(n, ast.Attribute) and n.attr == "progress_bar_metrics") or (
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "get_metrics"))
    if reader is not None and not any(_logs_loss(text, step) for step in steps):
        note(reader, NOTE_LOSS)
    if _DDP.search(text):
        for step in steps:
            if _may_return_none(step):
                note(step, NOTE_NONE_DDP)
                break
    if epoch_end_logs and "monitor" in text:
        monitor = nodes.first(lambda n: _called(n, MONITORS) and any(kw.arg == "monitor" for kw in n.keywords))
        if monitor is not None:
            note(monitor, NOTE_ORDER)
    fits = nodes.every(lambda n: _method_called(n, ("fit",))) if "fit" in text else []
    if len(fits) > 1 and _SPAWN.search(text):
        note(fits[1], NOTE_SPAWN)
    if "seed_everything" in text:
        seed = nodes.first(lambda n: _called(n, ("seed_everything",)) and not n.args and all(
            kw.arg == "workers" for kw in n.keywords))
        if seed is not None:
            note(seed, NOTE_SEED)
    if fits and "eval" in text:
        evals = nodes.first(lambda n: _method_called(n, ("eval",)) and not n.args and not n.keywords)
        if evals is not None:
            note(evals, NOTE_TRAIN)
    if "CSVLogger" in text:
        csv = nodes.first(lambda n: _called(n, ("CSVLogger",)))
        if csv is not None:
            note(csv, NOTE_CSV)
    if "signal" in text:
        handler = nodes.first(lambda n: _method_called(n, ("signal",)) and isinstance(n.func.value, ast.Name)
                              and n.func.value.id == "signal")
        if handler is not None and nodes.first(lambda n: _method_called(n, _RUNS)) is not None:
            note(handler, NOTE_SIGNALS)
    if "kubeflow" in text.lower():
        at = _kubeflow(text)
        if at is not None:
            note(None, NOTE_KUBEFLOW, at)
    if "progress_bar_callback" in text:
        bar = nodes.first(lambda n: isinstance(n, ast.Attribute) and n.attr == "progress_bar_callback")
        if bar is not None:
            note(bar, NOTE_RICH)
    return found


class BehaviourNotesRule(Rule):
    code = CODE
    name = "behaviour-notes"
    summary = "Reports behaviour that changed silently in 2.x where the code is affected (notes, no rewrite)."
    spec_rows = ("M22", "M26", "C11", "B-2", "B-3", "B-4", "B-5", "B-7", "B-8", "B-9", "B-10", "B-11", "B-13")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html and the 2.1-2.3 changelogs "
             "(PRs 16192, 19918, 16567, 18776, 18846, 18951, 19159)")
    safety = Safety.PRESERVING
    edits_code = False  # notes only: no libcst parse for it
    triggers = ("progress_bar_metrics", "get_metrics", "ddp", "EarlyStopping", "ModelCheckpoint", "seed_everything", ".eval()", "CSVLogger",
                "spawn", "signal.signal", "ubeflow", "UBEFLOW", "progress_bar_callback")
    description = (
        "Some 1.9 behaviour changed in 2.x without an error and without code to rewrite. This rule changes "
        "nothing; it reports a NOTE where a file is affected: no running \"loss\" in the progress bar (M22), "
        "`training_step` returning None under DDP (M26), EarlyStopping/ModelCheckpoint now after the module's "
        "`on_train_epoch_end` (C11), `fit` twice with spawn, `seed_everything()` without seed, `fit` no longer "
        "calling `model.train()`, CSVLogger column order, the Trainer's signal handlers in validate/test/predict, "
        "Kubeflow no longer auto-detected, Rich progress bar and summary by default (A.7)."
    )
    coverage = {"M22": Handling.NOTED, "M26": Handling.NOTED, "C11": Handling.NOTED, "B-2": Handling.NOTED,
                "B-3": Handling.NOTED, "B-7": Handling.NOTED, "B-8": Handling.NOTED, "B-9": Handling.NOTED,
                "B-10": Handling.NOTED, "B-11": Handling.NOTED,
                "B-4": Handling.NOTED, "B-5": Handling.NOTED, "B-13": Handling.NOTED,
                "B-12": Handling.NO_CHANGE}  # Ctrl-C ends launched processes; NumPy optional: nothing in user code
    examples = (
        Example(
            title="notes only: the code is unchanged",
            before='''\
import pytorch_lightning as pl

pl.seed_everything()
model.eval()
trainer.fit(model)
''',
            after='''\
import pytorch_lightning as pl

pl.seed_everything()
model.eval()
trainer.fit(model)
''',
        ),
        Example(
            title="nothing to say",
            before='''\
import pytorch_lightning as pl

pl.seed_everything(42)
''',
            after=None,
        ),
    )

    def may_apply(self, text: str) -> bool:
        """The text prefilter: the words some note needs (a name can be spelt only one way in
        the text, so a note whose words are missing cannot apply)."""
        if not any(t in text for t in self.triggers):
            return False
        if "progress_bar_metrics" in text or "progress_bar_callback" in text or "get_metrics" in text:
            return True
        if "seed_everything" in text or "CSVLogger" in text or "kubeflow" in text.lower():
            return True
        if "fit" in text and ("eval" in text or _SPAWN.search(text)):
            return True
        if "signal" in text and any(run in text for run in ("validate", "test", "predict")):
            return True
        if "training_step" in text and _DDP.search(text):
            return True
        return "monitor" in text and "on_train_epoch_end" in text

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        # one site per note: line and 0-based column of the node it names, the message as data
        index_source(source, ctx)
        if not (uses_lightning(source, ctx) or _uses_a_trainer(source)):
            return []  # a ``get_metrics`` or a ``model.fit`` of code that is not Lightning's
        return _notes(source, ctx)

    def report(self, sites: Sequence[Site], ctx: RuleContext) -> None:
        for site in sites:
            ctx.report(CODE, site.data, Kind.NOTE, site.line, site.col + 1 if site.line else 0)
