"""LM304: ``self.precision`` (LightningModule) becomes ``self.trainer.precision``, with the values
it is compared to translated.

1.9 copied the Trainer's precision onto the module as ``16``/``32``/``64`` (ints) or ``"bf16"``
(v1 ``data_connector``); 2.x removed the attribute (reading it raises ``AttributeError``) and
``trainer.precision`` is a string: ``"16-mixed"``, ``"32-true"``, ``"64-true"``,
``"bf16-mixed"`` (spec M19). Comparisons with literals (``==``, ``!=``, ``in (16, "bf16")``) are
rewritten with the 2.x values, which keeps their result. Other reads (``str(self.precision)``,
arithmetic) are rewritten too but marked, because the value changed type. In callbacks the same
holds for ``pl_module.precision``. A class that assigns ``self.precision`` itself is left alone
(its own attribute), and so is a read in ``__init__`` (1.9 gave 32 there; 2.x has no trainer yet),
which is marked.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional, Union

import libcst as cst
from lightmigrate.cst.matchers import m

from lightmigrate.cst.helpers import add_marker, positional_params
from lightmigrate.analysis.facts import file_facts
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import HOOK_KINDS as KINDS, KindTransformer, ensure_indexed, may_have_kind
from lightmigrate.cst.walk import transform, PrunedTransformer, find_all
from lightmigrate.rules.shared.gates import attribute_read, hook_facts

CODE = "LM304"
VALUES: Dict[Union[int, str], str] = {16: "16-mixed", "16": "16-mixed", 32: "32-true", "32": "32-true",
                                      64: "64-true", "64": "64-true", "bf16": "bf16-mixed"}
WHY_TYPE = ("`precision` is now the Trainer's string (\"32-true\", \"16-mixed\", \"64-true\", \"bf16-mixed\"); "
            "1.9 gave 16/32/64 or \"bf16\" here: check this use")
WHY_FORWARD = ("`forward` may run outside a Trainer (inference), where `self.trainer` raises in Lightning 2.x "
               "(1.9 kept the last precision, 32 before any fit): keep this only if forward always runs under a "
               "Trainer")
WHY_INIT = ("`self.precision` is gone in Lightning 2.x and there is no trainer in `__init__` (1.9 gave 32 "
            "here): use the value you pass to the Trainer")


def _literal_key(node: cst.BaseExpression) -> Optional[Union[int, str]]:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _translate(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """The 2.x form of a 1.9 precision literal, or of a tuple/list/set of them."""
    key = _literal_key(node)
    if key is not None:
        if key not in VALUES:
            return None
        quote = node.quote if isinstance(node, cst.SimpleString) else '"'
        return cst.SimpleString(f"{quote}{VALUES[key]}{quote}")
    if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
        elements = []
        for e in node.elements:
            if not isinstance(e, cst.Element):
                return None
            new = _translate(e.value)
            if new is None:
                return None
            elements.append(e.with_changes(value=new))
        return node.with_changes(elements=elements)
    return None


class _Method(PrunedTransformer):
    def __init__(self, receiver: str, replacement: str) -> None:
        self.receiver = receiver
        self.replacement = replacement
        self.unsure = False
        self.changed = False

    def _is_attr(self, node: cst.BaseExpression) -> bool:
        return m.matches(node, m.Attribute(value=m.Name(self.receiver), attr=m.Name("precision")))

    def leave_Comparison(self, original, updated):
        left = updated.left
        targets = updated.comparisons
        if self._is_attr(left) and len(targets) == 1 and isinstance(
                targets[0].operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
            new = _translate(targets[0].comparator)
            if new is not None:
                self.changed = True
                return updated.with_changes(left=cst.parse_expression(self.replacement),
                                            comparisons=[targets[0].with_changes(comparator=new)])
        if len(targets) == 1 and self._is_attr(targets[0].comparator) and isinstance(
                targets[0].operator, (cst.Equal, cst.NotEqual)):
            new = _translate(left)
            if new is not None:
                self.changed = True
                return updated.with_changes(left=new, comparisons=[
                    targets[0].with_changes(comparator=cst.parse_expression(self.replacement))])
        return updated

    def leave_Attribute(self, original, updated):
        if self._is_attr(updated):
            self.unsure = True
            self.changed = True
            return cst.parse_expression(self.replacement)
        return updated


def _assigns_precision(cls: cst.ClassDef) -> bool:
    for target in find_all(cls, m.AssignTarget() | m.AnnAssign()):
        t = target.target  # type: ignore[attr-defined]
        if m.matches(t, m.Attribute(attr=m.Name("precision"))):
            return True
    return False


class _Fix(KindTransformer):
    def edit_class(self, kind, original, updated):
        if kind not in ("module", "callback") or _assigns_precision(updated):
            return updated
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            params = positional_params(item)
            index = 0 if kind == "module" else 2
            if len(params) <= index:
                continue
            receiver = params[index].name.value
            if not find_all(item, m.Attribute(value=m.Name(receiver), attr=m.Name("precision"))):
                continue
            if kind == "module" and item.name.value == "__init__":
                items[i] = add_marker(item, CODE, WHY_INIT)
                changed = True
                continue
            replacement = f"{receiver}.trainer.precision"
            # The comparison handler runs after the attribute handler; compare first, then the rest.
            cmp_only = _Method(receiver, replacement)
            new = _rewrite(item, cmp_only)
            if cmp_only.unsure:
                new = add_marker(new, CODE, WHY_TYPE)
            elif kind == "module" and item.name.value == "forward":
                new = add_marker(new, CODE, WHY_FORWARD)
            items[i] = new
            changed = True
            self.report(CODE, original.body.body[i],
                        f"{self.class_name}.{item.name.value}: {receiver}.precision -> {replacement}")
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class _CompareFirst(PrunedTransformer):
    """Rewrites literal comparisons first (so their ``self.precision`` is not counted as unsure)."""

    def __init__(self, inner: _Method) -> None:
        self.inner = inner

    def leave_Comparison(self, original, updated):
        return self.inner.leave_Comparison(original, updated)


def _rewrite(func: cst.FunctionDef, method: _Method) -> cst.FunctionDef:
    func = transform(func, _CompareFirst(method))  # type: ignore[assignment]
    rest = _Method(method.receiver, method.replacement)

    class Rest(PrunedTransformer):
        def leave_Attribute(self, original, updated):
            return rest.leave_Attribute(original, updated)

    func = transform(func, Rest())  # type: ignore[assignment]
    method.unsure = rest.unsure
    return func


def _param_precision_read(text: str) -> bool:
    """Whether some ``NAME.precision`` may be in ``text`` where NAME is the first or third
    positional parameter of a method of some class (``_Fix`` reads the first in a
    LightningModule, the third, ``pl_module``, in a Callback)."""
    found = hook_facts(text)
    if found is None:
        return True
    receivers = frozenset(sig.positional[i] for _, methods in found.class_methods for _, sig in methods
                          for i in (0, 2) if len(sig.positional) > i)
    return bool(receivers) and attribute_read(text, _PRECISION, receivers)


_PRECISION = frozenset({"precision"})


class PrecisionAttrRule(GatedRule):
    code = CODE
    name = "module-precision"
    summary = "`self.precision` becomes `self.trainer.precision`, with compared values translated to the 2.x strings."
    spec_rows = ("M19",)
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (row 'used LightningModule.precision'; "
             "PR 16203)")
    safety = Safety.PRESERVING
    triggers = (".precision",)
    gate_reads_hook_facts = True
    description = (
        "Lightning 2.x removed `LightningModule.precision` (1.9 copied the Trainer's precision onto the module as "
        "16/32/64 or \"bf16\"); `self.trainer.precision` is a string such as \"32-true\" or \"16-mixed\". "
        "Comparisons with literals are rewritten with the 2.x values (`self.precision == 16` -> "
        "`self.trainer.precision == \"16-mixed\"`, `in (16, \"bf16\")` -> `in (\"16-mixed\", \"bf16-mixed\")`), "
        "which keeps their result. Other reads are rewritten and marked (the type changed). The same applies "
        "to `pl_module.precision` in callbacks. Classes that set `self.precision` themselves are left alone; a "
        "read in `__init__` is marked (1.9 gave 32 there, 2.x has no trainer yet)."
    )
    coverage = {"M19": Handling.REWRITTEN}
    examples = (
        Example(
            title="comparisons keep their result",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        if self.precision == 16:
            batch = batch.half()
        mixed = self.precision in (16, "bf16")
        return self.layer(batch).sum()
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        if self.trainer.precision == "16-mixed":
            batch = batch.half()
        mixed = self.trainer.precision in ("16-mixed", "bf16-mixed")
        return self.layer(batch).sum()
''',
        ),
        Example(
            title="other reads are marked",
            before='''\
import pytorch_lightning as pl


class Printer(pl.Callback):
    def on_fit_start(self, trainer, pl_module):
        print("bits:", pl_module.precision)
''',
            after='''\
import pytorch_lightning as pl


class Printer(pl.Callback):
    # TODO(lightmigrate): LM304 `precision` is now the Trainer's string ("32-true", "16-mixed", "64-true", "bf16-mixed"); 1.9 gave 16/32/64 or "bf16" here: check this use
    def on_fit_start(self, trainer, pl_module):
        print("bits:", pl_module.trainer.precision)
''',
        ),
        Example(
            title="a class with its own precision attribute is left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.precision = "double"

    def forward(self, x):
        return x.double() if self.precision == "double" else x
''',
            after=None,
        ),
    )

    def gate_kinds(self, text: str) -> Optional[FrozenSet[str]]:
        return KINDS  # the gate's may_have_kind

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # Only `<param>.precision` inside a LightningModule or Callback class of this file.
        facts = file_facts(text)
        if not facts.parsed:
            return True
        return "precision" in facts.attributes and may_have_kind(ctx, KINDS) and _param_precision_read(text)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        ensure_indexed(module, ctx)
        return transform(module, _Fix(ctx, module))
