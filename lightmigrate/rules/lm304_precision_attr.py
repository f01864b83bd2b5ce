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

import ast
from typing import Dict, List, Optional, Sequence, Union

import libcst as cst
from lightmigrate.cst.helpers import is_attribute

from lightmigrate.cst.helpers import add_marker
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import HOOK_KINDS as KINDS, KindTransformer, kind_classes
from lightmigrate.cst.walk import transform, PrunedTransformer
from lightmigrate.analysis.ast_nodes import ast_nodes

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
        return is_attribute(node, "precision", self.receiver)

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


class _Fix(KindTransformer):
    """Carries out the sites: the methods at their positions (line, 1-based column)."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        super().__init__(ctx, module, only=frozenset(s.target.split(".")[0] for s in sites))
        self.todo = {(s.line, s.col + 1): (*s.data, s.action) for s in sites}

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            site = self.todo.get(self.ctx.position(self.module, original.body.body[i]))
            if site is None:
                continue
            kind, receiver, action = site
            if action == "mark-init":
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


def _assigns_precision(cls: ast.ClassDef) -> bool:
    """Whether the class (at any depth) assigns some ``X.precision = ...`` (plain or annotated)."""
    for node in ast_nodes(cls):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(isinstance(t, ast.Attribute) and t.attr == "precision" for t in targets):
            return True
    return False


def _reads_precision(func: ast.AST, receiver: str) -> bool:
    """Whether ``receiver.precision`` occurs anywhere in ``func`` (decorators and defaults too)."""
    return any(isinstance(node, ast.Attribute) and node.attr == "precision" and isinstance(node.value, ast.Name)
               and node.value.id == receiver for node in ast_nodes(func))


class PrecisionAttrRule(Rule):
    code = CODE
    name = "module-precision"
    summary = "`self.precision` becomes `self.trainer.precision`, with compared values translated to the 2.x strings."
    spec_rows = ("M19",)
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (row 'used LightningModule.precision'; "
             "PR 16203)")
    safety = Safety.PRESERVING
    triggers = (".precision",)
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

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        """One site per method of a LightningModule or Callback class that reads the precision
        of its receiver (the first positional parameter in a module, the third, ``pl_module``,
        in a callback), unless the class assigns some ``.precision`` itself: "mark-init" for a
        module's ``__init__``, "rewrite" elsewhere. ``data`` is (kind, receiver)."""
        if not ctx.project.has_path(ctx.path):
            ctx.project.add_source(source.text, ctx.path, tree=source.tree)
        sites = []
        for cls, kind in kind_classes(source, ctx, KINDS):
            if _assigns_precision(cls):
                continue
            for item in cls.body:
                if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                params = [*item.args.posonlyargs, *item.args.args]
                index = 0 if kind == "module" else 2
                if len(params) <= index or not _reads_precision(item, params[index].arg):
                    continue
                action = "mark-init" if kind == "module" and item.name == "__init__" else "rewrite"
                sites.append(Site(item.lineno, item.col_offset, f"{cls.name}.{item.name}", action,
                                  (kind, params[index].arg)))
        return sites

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        return transform(module, _Fix(ctx, module, sites))
