"""LM309: behaviour that changed silently between 1.9 and 2.x, with nothing to rewrite: NOTE
findings where the code is affected (spec M22, M26, C11, A.7 B-2, B-3, B-7, B-8, B-9, B-10, B-11).

The code is never changed. Each note is reported once per file, at the line that triggers it:

- M22 / B-3: progress-bar metrics read (``progress_bar_metrics``, a ``get_metrics`` override)
  while no ``training_step`` of the file logs ``"loss"``: 1.9 put a running mean of the loss
  there; 2.x does not.
- M26 / B-11: a ``training_step`` that can return None (skip the batch) in a file that selects a
  DDP strategy: a RuntimeError from 2.3 under DDP.
- C11 / B-2: ``EarlyStopping`` / ``ModelCheckpoint`` monitoring a metric, in a file whose module
  logs at train-epoch end: 2.x runs those callbacks after the module's ``on_train_epoch_end``.
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

import re
from typing import FrozenSet, Optional, Tuple

import libcst as cst
from lightmigrate.cst.matchers import m

from lightmigrate.analysis.facts import file_facts
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import class_kind, ensure_indexed, may_have_kind
from lightmigrate.rules.shared.gates import COMMENT, DEF, attribute_read, word_at_start
from lightmigrate.cst.walk import find_all
from lightmigrate.cst.helpers import module_text, code_of

CODE = "LM309"
NOTE_LOSS = ("1.9 put a running mean of the training loss as \"loss\" in the progress bar metrics; 2.x does not: "
             "`self.log(\"loss\", loss, prog_bar=True, logger=False)` in training_step brings it back")
NOTE_NONE_DDP = ("`training_step` may return None (skip the batch); under DDP this raises from Lightning 2.3: "
                 "return a zero loss or use manual optimization")
NOTE_ORDER = ("EarlyStopping and ModelCheckpoint now run their train-epoch-end check after the module's "
              "`on_train_epoch_end` (1.9: before); a metric logged there is now seen the same epoch")
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
_RUNS = frozenset({"validate", "test", "predict"})
# Gate tests: a ``seed_everything(`` call whose first argument is none or ``workers=`` (apply
# notes only calls without a seed), and a ``return`` of nothing or of ``None``.
_SEED_UNSEEDED = re.compile(word_at_start("seed_everything") + rf"(?:[\s\\)]|{COMMENT})*\((?:[\s\\]|{COMMENT})*(?:\)|workers\b)")
_RETURN_NONE = re.compile(word_at_start("return") + r"(?:[\s\\(]*None\b|[ \t]*(?:$|[#;\r\n\\]))", re.M)
_EPOCH_END = frozenset({"on_train_epoch_end", "training_epoch_end"})
_LOGS = frozenset({"log", "log_dict"})
_MODULE = frozenset({"module"})
_DEF_GET_METRICS = re.compile(DEF + r"get_metrics\b")
_FIT = frozenset({"fit"})
_EVAL = frozenset({"eval"})


def _may_note_anywhere(text: str) -> bool:
    """Whether the text may pass one of the gate's tests that need no LightningModule (each
    test below is what the gate's test of the same note needs to find in the text)."""
    if "progress_bar_metrics" in text or "progress_bar_callback" in text or _DEF_GET_METRICS.search(text):
        return True
    if "seed_everything" in text or "CSVLogger" in text or "kubeflow" in text.lower():
        return True
    if "fit" in text and attribute_read(text, _FIT) and (
            ("eval" in text and attribute_read(text, _EVAL)) or _SPAWN.search(text)):
        return True
    return "signal" in text and any(run in text for run in _RUNS) and attribute_read(text, _RUNS)


def _may_note_in_module(text: str) -> bool:
    """Whether the text may pass one of the two tests that need a LightningModule (DDP, order)."""
    if "training_step" in text and _DDP.search(text):
        return True
    return "monitor" in text and any(hook in text for hook in _EPOCH_END)


def _first(module: cst.Module, matcher) -> Optional[cst.CSTNode]:
    found = find_all(module, matcher)
    return found[0] if found else None


def _logs_loss(func: cst.FunctionDef) -> bool:
    for call in find_all(func, m.Call(func=m.Attribute(attr=m.Name("log") | m.Name("log_dict")))):
        code = code_of(call)
        if re.search(r"""["']loss["']""", code):
            return True
    return False


def _may_return_none(func: cst.FunctionDef) -> bool:
    for ret in find_all(func.body, m.Return()):
        if ret.value is None or m.matches(ret.value, m.Name("None")):  # type: ignore[attr-defined]
            return True
    return False


class BehaviourNotesRule(GatedRule):
    code = CODE
    name = "behaviour-notes"
    summary = "Reports behaviour that changed silently in 2.x where the code is affected (notes, no rewrite)."
    spec_rows = ("M22", "M26", "C11", "B-2", "B-3", "B-4", "B-5", "B-7", "B-8", "B-9", "B-10", "B-11", "B-13")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html and the 2.1-2.3 changelogs "
             "(PRs 16192, 19918, 16567, 18776, 18846, 18951, 19159)")
    safety = Safety.PRESERVING
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

    def may_need(self, text: str) -> bool:
        return _may_note_anywhere(text) or _may_note_in_module(text)

    def gate_kinds(self, text: str) -> Optional[FrozenSet[str]]:
        return None if _may_note_anywhere(text) else _MODULE

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # One test per note of apply, from the names each search below needs.
        facts = file_facts(text)
        if not facts.parsed:
            return True
        attrs, calls, defs = facts.attributes, facts.calls, facts.defs
        if "progress_bar_metrics" in attrs or "get_metrics" in defs or "progress_bar_callback" in attrs:
            return True
        if "seed_everything" in calls and _SEED_UNSEEDED.search(text):
            return True
        if "CSVLogger" in calls or "kubeflow" in text.lower():
            return True
        fit = "fit" in calls and "fit" in attrs
        if fit and (("eval" in calls and "eval" in attrs) or _SPAWN.search(text)):
            return True
        if "signal" in calls and "signal" in facts.names and attrs & _RUNS and calls & _RUNS:
            return True
        # The last two need a training_step / epoch-end hook of a LightningModule of this file.
        ddp = "training_step" in defs and _DDP.search(text) is not None and _RETURN_NONE.search(text) is not None
        order = (bool(defs & _EPOCH_END) and bool(calls & _LOGS) and any(
            "monitor" in facts.call_keywords.get(name, ()) for name in ("EarlyStopping", "ModelCheckpoint")))
        return (ddp or order) and may_have_kind(ctx, _MODULE)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        ensure_indexed(module, ctx)
        text = module_text(module)

        def note(node: Optional[cst.CSTNode], message: str) -> None:
            line, col = ctx.position(module, node) if node is not None else (0, 0)
            ctx.report(CODE, message, Kind.NOTE, line, col)

        steps: Tuple[cst.FunctionDef, ...] = ()
        epoch_end_logs = False
        # Each search below needs a name in the code; when the text lacks it, skip the walk.
        for cls in (find_all(module, m.ClassDef()) if "class" in text else ()):
            if class_kind(ctx, cls.name.value) != "module":  # type: ignore[attr-defined]
                continue
            for item in getattr(cls.body, "body", ()):  # type: ignore[attr-defined]
                if isinstance(item, cst.FunctionDef) and item.name.value == "training_step":
                    steps += (item,)
                if isinstance(item, cst.FunctionDef) and item.name.value in ("on_train_epoch_end",
                                                                             "training_epoch_end"):
                    epoch_end_logs = epoch_end_logs or bool(find_all(item, m.Call(func=m.Attribute(
                        attr=m.Name("log") | m.Name("log_dict")))))
        reader = None
        if "progress_bar_metrics" in text or "get_metrics" in text:
            reader = _first(module, m.Attribute(attr=m.Name("progress_bar_metrics")) | m.FunctionDef(name=m.Name("get_metrics")))
        if reader is not None and not any(_logs_loss(step) for step in steps):
            note(reader, NOTE_LOSS)
        if _DDP.search(text):
            for step in steps:
                if _may_return_none(step):
                    note(step, NOTE_NONE_DDP)
                    break
        if epoch_end_logs and "monitor" in text:
            monitor = _first(module, m.Call(func=m.Name("EarlyStopping") | m.Name("ModelCheckpoint")
                                            | m.Attribute(attr=m.Name("EarlyStopping") | m.Name("ModelCheckpoint")),
                                            args=[m.ZeroOrMore(), m.Arg(keyword=m.Name("monitor")), m.ZeroOrMore()]))
            if monitor is not None:
                note(monitor, NOTE_ORDER)
        fits = find_all(module, m.Call(func=m.Attribute(attr=m.Name("fit")))) if "fit" in text else []
        if len(fits) > 1 and _SPAWN.search(text):
            note(fits[1], NOTE_SPAWN)
        seed = None if "seed_everything" not in text else _first(module, m.Call(func=m.Name("seed_everything") | m.Attribute(attr=m.Name("seed_everything")),
                                     args=[m.ZeroOrMore(m.Arg(keyword=m.Name("workers")))]))
        if seed is not None:
            note(seed, NOTE_SEED)
        if fits and "eval" in text:
            evals = find_all(module, m.Call(func=m.Attribute(attr=m.Name("eval")), args=[]))
            if evals:
                note(evals[0], NOTE_TRAIN)
        csv = None if "CSVLogger" not in text else _first(module, m.Call(func=m.Name("CSVLogger") | m.Attribute(attr=m.Name("CSVLogger"))))
        if csv is not None:
            note(csv, NOTE_CSV)
        handler = None if "signal" not in text else _first(module, m.Call(func=m.Attribute(value=m.Name("signal"), attr=m.Name("signal"))))
        if handler is not None and find_all(module, m.Call(func=m.Attribute(
                attr=m.Name("validate") | m.Name("test") | m.Name("predict")))):
            note(handler, NOTE_SIGNALS)
        kubeflow = None if "kubeflow" not in text.lower() else _first(module, m.Name(value=m.MatchIfTrue(lambda v: "kubeflow" in v.lower()))
                          | m.SimpleString(value=m.MatchIfTrue(lambda v: "kubeflow" in v.lower())))
        if kubeflow is not None:
            note(kubeflow, NOTE_KUBEFLOW)
        bar = None if "progress_bar_callback" not in text else _first(module, m.Attribute(attr=m.Name("progress_bar_callback")))
        if bar is not None:
            note(bar, NOTE_RICH)
        return module
