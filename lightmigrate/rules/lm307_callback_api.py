"""LM307: the Callback and DataModule API of 1.9 that changed in 2.x (spec A.2, C2-C13;
C1 and C4, the ``opt_idx`` parameters, are LM004's).

Rewritten:
- C2 ``on_predict_epoch_end(self, trainer, pl_module, outputs)``: the parameter goes; a body that
  reads it gets 1.9's value back (``trainer.predict_loop.predictions``, one list per dataloader).
- C5 ``ProgressBarBase`` -> ``ProgressBar`` (imports from ``callbacks``, ``callbacks.progress``,
  ``callbacks.progress.base`` and the names that use it).
- C6 ``self.train_batch_idx`` / ``val_`` / ``test_`` / ``predict_batch_idx`` in progress bars ->
  the loop counters the 1.9 properties read.
- C7 ``self.main_progress_bar`` in ``TQDMProgressBar`` subclasses -> ``train_progress_bar``.
- C8 ``get_standard_metrics(trainer, pl_module)`` -> ``get_standard_metrics(trainer)`` (import
  from ``progress.progress_bar``; the result no longer has ``"loss"``: marked when indexed so).
- C10 ``LearningRateFinder(...)`` without ``update_attr`` -> ``update_attr=False`` (1.9's default).

Marked: C9 ``QuantizationAwareTraining`` (no replacement), C12 DataModule
``from_argparse_args``/``add_argparse_args``, C13 ``BatchSizeFinder``/``scale_batch_size``
(2.6 shrinks the result by 5% and caps it at 8192).
"""

from __future__ import annotations

from typing import Callable, Dict, FrozenSet, List, Optional

import libcst as cst
from lightmigrate.cst.matchers import m

from lightmigrate.cst.helpers import (
    code_of,
    module_text,
    BodyFacts,
    body_of,
    fresh_name,
    keep_only_params,
    param_names,
    positional_params,
    prepend_statements,
)
from lightmigrate.analysis.facts import FileFacts, file_facts
from lightmigrate.output.findings import Kind
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import (
    PROGRESS_BAR_NAMES,
    TQDM_BAR_NAMES,
    DATAMODULE_NAMES,
    KindTransformer,
    imports_lightning,
    derives_from,
    ensure_indexed,
    may_have_kind,
)
from lightmigrate.rules.lm001_epoch_end import _predict_results
from lightmigrate.rules.shared.gates import attribute_read, hook_facts, imports_pl_root, may_import_pl_root
from lightmigrate.rules.shared.marking import StatementMarker
from lightmigrate.cst.walk import transform, PrunedTransformer, find_all

CODE = "LM307"
BATCH_IDX = {
    "train_batch_idx": "{t}.fit_loop.epoch_loop.batch_progress.current.processed",
    "val_batch_idx": ("({t}.fit_loop.epoch_loop.val_loop if {t}.state.fn == \"fit\" else {t}.validate_loop)"
                      ".batch_progress.current.processed"),
    "test_batch_idx": "{t}.test_loop.batch_progress.current.processed",
    "predict_batch_idx": "{t}.predict_loop.batch_progress.current.processed",
}
WHY_QAT = ("`QuantizationAwareTraining` was removed in Lightning 2.0 without replacement: quantize with "
           "`torch.ao.quantization` (prepare_qat / convert) in the module")
WHY_ARGPARSE = ("LightningDataModule `{name}` was removed in Lightning 2.0: use LightningCLI, or build the "
                "DataModule from `vars(args)` filtered by its `__init__` parameters")
WHY_BSF = ("Lightning 2.6 shrinks the batch size found by binsearch by 5% (`margin=0.05`) and caps it at "
           "`max_val=8192`: pass `margin=0.0` and a large `max_val` to keep the 1.x result")
WHY_LOSS = "`get_standard_metrics` no longer returns \"loss\" (only \"v_num\"): log the loss with prog_bar=True"

# For the gate.
_CALLBACK_KIND = frozenset({"callback"})
_MEMBER_ATTRS = frozenset(BATCH_IDX) | {"main_progress_bar"}
_FIXED_IMPORTS = frozenset({"ProgressBarBase", "get_standard_metrics"})
_FIXED_OR_MARKED_CALLS = frozenset({"get_standard_metrics", "LearningRateFinder", "BatchSizeFinder", "scale_batch_size"})
_ARGPARSE_CALLS = frozenset({"from_argparse_args", "add_argparse_args"})
_ANYWHERE_WORDS = (*sorted(_FIXED_OR_MARKED_CALLS | _ARGPARSE_CALLS), "QuantizationAwareTraining",
                   "callbacks.ProgressBarBase")


def _datamodule_names(ctx: RuleContext, names) -> FrozenSet[str]:
    """The names of ``names`` that are ``LightningDataModule`` or a class of the project that is
    one (the names ``apply`` marks ``<name>.from_argparse_args(...)`` calls on)."""
    return frozenset(name for name in names if name == "LightningDataModule" or any(
        ctx.project.is_lightning_module(c, DATAMODULE_NAMES) for c in ctx.project.classes_named(name)))


def _base_names(ctx: RuleContext, cls: str) -> bool:
    return derives_from(ctx, cls, PROGRESS_BAR_NAMES)


class _Members(PrunedTransformer):
    """``self.X`` attribute rewrites inside one method."""

    def __init__(self, slf: str, table: Dict[str, str]) -> None:
        self.slf = slf
        self.table = table
        self.hits: List[str] = []

    def leave_Attribute(self, original, updated):
        if m.matches(updated.value, m.Name(self.slf)) and updated.attr.value in self.table:
            self.hits.append(updated.attr.value)
            return cst.parse_expression(self.table[updated.attr.value].format(t=f"{self.slf}.trainer", s=self.slf))
        return updated


class _Fix(KindTransformer):
    def __init__(self, ctx, module) -> None:
        super().__init__(ctx, module)
        self.lightning_file = imports_lightning(module)

    def edit_class(self, kind, original, updated):
        if kind != "callback":
            return updated
        name = original.name.value
        table: Dict[str, str] = {}
        if not self.lightning_file:
            return updated
        if derives_from(self.ctx, name, PROGRESS_BAR_NAMES):
            table.update(BATCH_IDX)
        if derives_from(self.ctx, name, TQDM_BAR_NAMES):
            table["main_progress_bar"] = "{s}.train_progress_bar"
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            new = item
            params = positional_params(item)
            if item.name.value == "on_predict_epoch_end" and len(params) == 4 and params[3].default is None:
                new = self._predict_end(item)
            if table and params:
                members = _Members(params[0].name.value, table)
                new = transform(new, members)  # type: ignore[assignment]
                for hit in dict.fromkeys(members.hits):
                    self.report(CODE, original.body.body[i], f"{self.class_name}: self.{hit} -> "
                                f"{table[hit].format(t='self.trainer', s='self')}")
            if new is not item:
                items[i] = new
                changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated

    def _predict_end(self, func: cst.FunctionDef) -> cst.FunctionDef:
        names = param_names(func)
        outputs, module = names[3], names[2]
        facts = BodyFacts(body_of(func))
        new = keep_only_params(func, 3)
        if facts.uses(outputs):
            loaders = fresh_name("predict_loaders", facts.loaded | facts.bound | set(names))
            new = prepend_statements(new, _predict_results(module, outputs, loaders))
        self.report(CODE, func, f"{self.class_name}.on_predict_epoch_end: `{outputs}` parameter removed"
                    + (" (rebuilt from trainer.predict_loop.predictions)" if facts.uses(outputs) else ""))
        return new


class _Calls(PrunedTransformer):
    """Module-wide call and import fixes: C5, C8, C10."""

    def __init__(self, rename_base: bool) -> None:
        self.fixed: List[str] = []
        self.rename_base = rename_base

    def leave_ImportFrom(self, original, updated):
        if updated.module is None or isinstance(updated.names, cst.ImportStar):
            return updated
        mod = code_of(updated.module)
        parts = mod.split(".")
        if parts[0] not in ("pytorch_lightning", "lightning"):
            return updated
        before = {code_of(a.name) for a in original.names}
        if not before & {"ProgressBarBase", "get_standard_metrics"}:
            return updated
        if mod.endswith("callbacks.progress.base"):
            mod = mod[: -len("base")] + "progress_bar"
        self.fixed.append("progress bar imports")
        return updated.with_changes(module=cst.parse_expression(mod))

    def leave_Name(self, original, updated):
        if self.rename_base and updated.value == "ProgressBarBase":
            return updated.with_changes(value="ProgressBar")
        return updated

    def leave_Call(self, original, updated):
        f = updated.func
        fname = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
        if fname == "get_standard_metrics" and len(updated.args) == 2 and all(a.keyword is None for a in updated.args):
            self.fixed.append("get_standard_metrics(trainer, pl_module) -> get_standard_metrics(trainer)")
            return updated.with_changes(args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        if fname == "LearningRateFinder" and not any(a.keyword is not None and a.keyword.value == "update_attr"
                                                      for a in updated.args) and \
                not any(a.star for a in updated.args) and len([a for a in updated.args if a.keyword is None]) < 7:
            self.fixed.append("LearningRateFinder(update_attr=False)")
            args = list(updated.args)
            new = cst.Arg(keyword=cst.Name("update_attr"), value=cst.Name("False"),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            if args:
                last = args[-1]
                args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                new = new.with_changes(comma=last.comma)
            return updated.with_changes(args=[*args, new])
        return updated


def _why(datamodules: Callable[[], frozenset]):
    def why(node: cst.CSTNode) -> Optional[str]:
        if isinstance(node, cst.Name) and node.value == "QuantizationAwareTraining":
            return WHY_QAT
        if isinstance(node, cst.Call):
            f = node.func
            if isinstance(f, cst.Attribute) and f.attr.value in ("from_argparse_args", "add_argparse_args") and \
                    isinstance(f.value, cst.Name) and f.value.value in datamodules():
                return WHY_ARGPARSE.format(name=f.attr.value)
            fname = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
            if fname in ("BatchSizeFinder", "scale_batch_size") and not any(
                    a.keyword is not None and a.keyword.value == "margin" for a in node.args):
                return WHY_BSF
        if isinstance(node, cst.Subscript) and m.matches(node.value, m.Call(func=m.Name("get_standard_metrics"))
                                                         | m.Call(func=m.Attribute(attr=m.Name("get_standard_metrics")))):
            if m.matches(node.slice[0], m.SubscriptElement(slice=m.Index(value=m.SimpleString()))):
                return WHY_LOSS
        return None
    return why


def _imports_base(module: cst.Module) -> bool:
    """Whether the file imports ``ProgressBarBase`` from Lightning (only then are its uses renamed)."""
    for node in find_all(module, m.ImportFrom()):
        if node.module is None or isinstance(node.names, cst.ImportStar):  # type: ignore[attr-defined]
            continue
        root = code_of(node.module).split(".")[0]  # type: ignore[attr-defined]
        if root in ("pytorch_lightning", "lightning") and any(
                code_of(a.name) == "ProgressBarBase" for a in node.names):  # type: ignore
            return True
    return "callbacks.ProgressBarBase" in module_text(module)


def _old_predict_end(text: str, facts: FileFacts) -> bool:
    """Whether some ``def on_predict_epoch_end`` may have the 1.x signature ``_Fix`` changes
    (a fourth positional parameter without a default)."""
    if "on_predict_epoch_end" not in facts.defs:
        return False
    found = hook_facts(text)
    return found is None or any(len(s.positional) == 4 and not s.defaults[3]
                                for s in found.signatures.get("on_predict_epoch_end", ()))


class CallbackApiRule(GatedRule):
    code = CODE
    name = "callback-api"
    summary = "Callback and DataModule API changes: predict-epoch outputs, progress-bar API, LR finder default."
    spec_rows = ("C2", "C5", "C6", "C7", "C8", "C9", "C10", "C12", "C13")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (rows on Callback.on_predict_epoch_end, "
             "ProgressBarBase, main_progress_bar, get_standard_metrics, "
             "QuantizationAwareTraining, LearningRateFinder, LightningDataModule argparse; PRs 16655, 16539, "
             "17058, 16760, 16695, 16192, 16750, 16462, 16708)")
    safety = Safety.PRESERVING
    gate_reads_hook_facts = True
    triggers = ("on_predict_epoch_end", "ProgressBarBase", "_batch_idx", "main_progress_bar",
                "get_standard_metrics", "QuantizationAwareTraining", "LearningRateFinder", "argparse_args",
                "BatchSizeFinder", "scale_batch_size")
    description = (
        "2.x changed several Callback and DataModule APIs. Rewritten with 1.9's meaning: a callback's "
        "`on_predict_epoch_end(trainer, pl_module, outputs)` loses `outputs` (rebuilt, one list per dataloader, "
        "when the body reads it); `ProgressBarBase` -> `ProgressBar`; `train/val/test/predict_batch_idx` -> the loop counters "
        "the 1.9 properties returned; `main_progress_bar` -> `train_progress_bar`; `get_standard_metrics(trainer, "
        "pl_module)` -> `get_standard_metrics(trainer)`; `LearningRateFinder` gets `update_attr=False` (the 1.9 "
        "default). Marked: `QuantizationAwareTraining`, DataModule `from_argparse_args`/`add_argparse_args`, "
        "`BatchSizeFinder`/`scale_batch_size` (2.6 margin and cap), and reading \"loss\" from "
        "`get_standard_metrics`."
    )
    coverage = {"C2": Handling.REWRITTEN, "C5": Handling.REWRITTEN,
                "C6": Handling.REWRITTEN, "C7": Handling.REWRITTEN, "C8": Handling.REWRITTEN,
                "C9": Handling.MARKED, "C10": Handling.REWRITTEN, "C12": Handling.MARKED, "C13": Handling.MARKED}
    examples = (
        Example(
            title="prediction outputs",
            before='''\
from pytorch_lightning.callbacks import Callback


class Summary(Callback):
    def on_predict_epoch_end(self, trainer, pl_module, outputs):
        self.count = len(outputs[0])
''',
            after='''\
from pytorch_lightning.callbacks import Callback


class Summary(Callback):
    def on_predict_epoch_end(self, trainer, pl_module):
        predict_loaders = pl_module.trainer.predict_dataloaders
        outputs = pl_module.trainer.predict_loop.predictions
        if not isinstance(predict_loaders, (list, tuple)) or len(predict_loaders) == 1:
            outputs = [outputs]
        self.count = len(outputs[0])
''',
        ),
        Example(
            title="progress bars and the LR finder",
            before='''\
from pytorch_lightning.callbacks import LearningRateFinder, TQDMProgressBar
from pytorch_lightning.callbacks.progress.base import ProgressBarBase


class Bar(TQDMProgressBar):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.main_progress_bar.set_postfix(step=self.train_batch_idx)


class Quiet(ProgressBarBase):
    pass


finder = LearningRateFinder(min_lr=1e-5)
''',
            after='''\
from pytorch_lightning.callbacks import LearningRateFinder, TQDMProgressBar
from pytorch_lightning.callbacks.progress.progress_bar import ProgressBar


class Bar(TQDMProgressBar):
    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.train_progress_bar.set_postfix(step=self.trainer.fit_loop.epoch_loop.batch_progress.current.processed)


class Quiet(ProgressBar):
    pass


finder = LearningRateFinder(min_lr=1e-5, update_attr=False)
''',
        ),
        Example(
            title="2.x forms are left alone",
            before='''\
from pytorch_lightning.callbacks import Callback, LearningRateFinder


class Summary(Callback):
    def on_predict_epoch_end(self, trainer, pl_module):
        pass


finder = LearningRateFinder(update_attr=True)
''',
            after=None,
        ),
    )

    def may_need(self, text: str) -> bool:
        # Without a Lightning import the gate needs one of these calls or names in the text.
        return may_import_pl_root(text) or any(word in text for word in _ANYWHERE_WORDS)

    def needed(self, text: str, ctx: RuleContext) -> bool:
        facts = file_facts(text)
        if not facts.parsed or not ctx.project.has_path(ctx.path):  # apply indexes the file
            return True
        # _Calls and the markers: calls by name, QuantizationAwareTraining anywhere,
        # ProgressBarBase imported from Lightning (or ``callbacks.ProgressBarBase`` used)
        if not _FIXED_OR_MARKED_CALLS.isdisjoint(facts.calls) or "QuantizationAwareTraining" in text:
            return True
        if not _ARGPARSE_CALLS.isdisjoint(facts.calls):  # marked only as ``<a DataModule>.<call>(...)``
            receivers = _datamodule_names(ctx, facts.names)
            if receivers and attribute_read(text, _ARGPARSE_CALLS, receivers):
                return True
        if "callbacks.ProgressBarBase" in text:
            return True
        if not imports_pl_root(facts):  # _Fix and the import fixes need a Lightning import
            return False
        if not _FIXED_IMPORTS.isdisjoint(facts.imported):
            return True
        # _Fix: methods of a Lightning callback class of this file
        return (_old_predict_end(text, facts) or not _MEMBER_ATTRS.isdisjoint(facts.attributes)) and \
            may_have_kind(ctx, _CALLBACK_KIND)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        ensure_indexed(module, ctx)
        out = transform(module, _Fix(ctx, module))
        calls = _Calls(_imports_base(module))
        out = transform(out, calls)
        for fix in dict.fromkeys(calls.fixed):
            ctx.report(CODE, fix, Kind.FIXED)
        found: List[frozenset] = []

        def datamodules() -> frozenset:  # the project's DataModule classes, found when first asked
            if not found:
                found.append(frozenset(c.name for c in ctx.project.kind_classes(DATAMODULE_NAMES))
                             | {"LightningDataModule"})
            return found[0]

        return transform(out, StatementMarker(CODE, _why(datamodules), (cst.Name, cst.Call, cst.Subscript)))
