"""LM308: LightningModule API calls that changed after 1.9 (spec M21, M23, M24).

- M21 ``LightningModule.from_compiled(m)`` / ``to_uncompiled(m)`` (classmethods in 1.9, which
  ignored the class) -> the functions ``from_compiled`` / ``to_uncompiled`` of
  ``<root>.utilities.compile``.
- M23 ``model.load_from_checkpoint(path)`` on an instance raises from 2.1; 1.9 built a new model
  from the instance's class and returned it. ``type(model).load_from_checkpoint(path)`` does the
  same. Rewritten where the name is known to hold an instance (``self`` in a Lightning class, a
  name only ever assigned ``SomeClass(...)``). When the result is thrown away (a bare
  statement) the 1.x code was most likely a bug (``model`` is not changed): marked.
- M24 ``training_step(self, dataloader_iter, batch_idx)``: from 2.1 the step takes only
  ``dataloader_iter`` and ``next()`` yields ``(batch, batch_idx, dataloader_idx)``. When the body
  does not read ``batch_idx``, the parameter goes and each ``next(dataloader_iter)`` becomes
  ``next(dataloader_iter)[0]``; otherwise the step is marked.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set

import libcst as cst
from lightmigrate.cst.matchers import m

from lightmigrate.cst.helpers import BodyFacts, add_marker, body_of, has_star_params, keep_only_params, param_names, module_text, code_of
from lightmigrate.analysis.facts import file_facts, nodes_of, parse_tree
from lightmigrate.output.findings import Kind
from lightmigrate.analysis.project import LIGHTNING_MODULE_NAMES
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import KindTransformer, class_kind, ensure_indexed, imports_lightning, may_have_kind
from lightmigrate.cst.helpers import ensure_import, lightning_root
from lightmigrate.cst.walk import transform, PrunedTransformer, find_all
from lightmigrate.rules.shared.gates import imports_pl_root

CODE = "LM308"
STEPS = ("training_step", "validation_step", "test_step", "predict_step")
_COMPILED = frozenset({"from_compiled", "to_uncompiled"})
_MODULE_KIND = frozenset({"module"})
WHY_DISCARDED = ("`load_from_checkpoint` returns a new model and never changed `{name}` (1.x did the same): "
                 "write `{name} = <ModelClass>.load_from_checkpoint(...)` if that was meant (called on an instance "
                 "it raises from Lightning 2.1)")
WHY_ITER = ("Lightning 2.1+ passes only `dataloader_iter` and `next(dataloader_iter)` yields `(batch, batch_idx, "
            "dataloader_idx)`: drop `{idx}` and take it from `next()`")


def _bound_names(module: cst.Module) -> Set[str]:
    """Module-level names bound by imports, classes and functions: not instances."""
    names: Set[str] = set()
    for node in find_all(module, m.ImportAlias()):
        alias = node.asname.name.value if node.asname is not None else \
            code_of(node.name).split(".")[0]  # type: ignore[attr-defined]
        names.add(alias)
    for node in find_all(module, m.ClassDef() | m.FunctionDef()):
        names.add(node.name.value)  # type: ignore[attr-defined]
    return names


def _instance_names(module: cst.Module) -> Set[str]:
    """Names only ever assigned an instantiation, ``name = SomeClass(...)`` (a capitalised callee)."""
    good: Set[str] = set()
    other: Set[str] = set()
    for assign in find_all(module, m.Assign()):
        value = assign.value  # type: ignore[attr-defined]
        callee = value.func if isinstance(value, cst.Call) else None
        last = callee.attr.value if isinstance(callee, cst.Attribute) else callee.value if isinstance(callee, cst.Name) else ""
        for target in assign.targets:  # type: ignore[attr-defined]
            if isinstance(target.target, cst.Name):
                (good if last[:1].isupper() else other).add(target.target.value)
    for node in find_all(module, m.AugAssign() | m.AnnAssign() | m.For()):
        for name in find_all(node.target, m.Name()):  # type: ignore[attr-defined]
            other.add(name.value)  # type: ignore[attr-defined]
    return good - other


def _may_load_on_instance(text: str, facts) -> bool:
    """For the gate: some ``<name>.load_from_checkpoint(...)`` is on a name that ``_Calls`` may
    rewrite or mark: one not bound by an import, class or def (``_bound_names``), or a
    parameter (the first parameter of a method). Read from Python's ``ast``."""
    tree = parse_tree(text)
    if tree is None:
        return True
    receivers: Set[str] = set()
    bound: Set[str] = set()
    for node in nodes_of(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "load_from_checkpoint" and isinstance(func.value, ast.Name):
                receivers.add(func.value.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.add(node.name)
    return any(name not in bound or name in facts.params for name in receivers)


class _Calls(PrunedTransformer):
    def __init__(self, ctx: RuleContext, bound: Set[str], module_classes: Set[str], source: cst.Module,
                 lightning_file: bool) -> None:
        self.ctx = ctx
        self.source = source
        self.lightning_file = lightning_file
        self.bound = bound
        self.module_classes = module_classes
        self.needs = set()
        self.discarded: Optional[str] = None
        self.instances = _instance_names(source)
        self.self_names: List[str] = []  # the first parameter of each enclosing Lightning-class method
        self.classes: List[bool] = []
        self.depth = 0

    def leave_Call(self, original, updated):
        f = updated.func
        if not isinstance(f, cst.Attribute):
            return updated
        attr = f.attr.value
        if attr in ("from_compiled", "to_uncompiled"):
            target = code_of(f.value).rsplit(".", 1)[-1]
            if target in self.module_classes:
                self.needs.add(attr)
                self._report(original, f"LightningModule.{attr}(...) -> {attr}(...) from utilities.compile")
                return updated.with_changes(func=cst.Name(attr))
        if attr == "load_from_checkpoint" and isinstance(f.value, cst.Name) and self.lightning_file:
            name = f.value.value
            if self._is_instance(name):
                self._report(original, f"{name}.load_from_checkpoint(...) -> type({name}).load_from_checkpoint(...)")
                return updated.with_changes(func=f.with_changes(value=cst.parse_expression(f"type({name})")))
        return updated

    def _is_instance(self, name: str) -> bool:
        return (name in self.instances and name not in self.bound) or (bool(self.self_names) and name == self.self_names[-1])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(class_kind(self.ctx, node.name.value) in ("module", "datamodule"))

    def leave_ClassDef(self, original, updated):
        self.classes.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = param_names(node)
        direct = bool(self.classes) and self.classes[-1] and self.depth == len(self.classes) - 1
        self.self_names.append(params[0] if direct and params else "")
        self.depth += 1

    def leave_FunctionDef(self, original, updated):
        self.self_names.pop()
        self.depth -= 1
        return updated

    def _report(self, node: cst.CSTNode, message: str) -> None:
        line, col = self.ctx.position(self.source, node)
        self.ctx.report(CODE, message, Kind.FIXED, line, col)

    def leave_Expr(self, original, updated):
        if self.lightning_file and m.matches(original.value, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("load_from_checkpoint")))):
            name = original.value.func.value.value
            if name[:1].islower() and name not in self.bound and name != "cls":
                self.discarded = name  # a bug in 1.x too, instance or class: the new model is dropped
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if self.discarded:
            name, self.discarded = self.discarded, None
            return add_marker(updated, CODE, WHY_DISCARDED.format(name=name))
        return updated


class _NextFix(PrunedTransformer):
    def __init__(self, it: str) -> None:
        self.it = it

    def leave_Call(self, original, updated):
        if m.matches(updated, m.Call(func=m.Name("next"), args=[m.Arg(value=m.Name(self.it))])):
            return cst.Subscript(value=updated, slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        return updated


class _Steps(KindTransformer):
    def edit_class(self, kind, original, updated):
        if kind != "module":
            return updated
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef) or item.name.value not in STEPS:
                continue
            names = param_names(item)
            if len(names) != 3 or names[1] != "dataloader_iter" or has_star_params(item):
                continue
            idx = names[2]
            if BodyFacts(body_of(item)).uses(idx) or item.name.value != "training_step":
                items[i] = add_marker(item, CODE, WHY_ITER.format(idx=idx))
            else:
                items[i] = transform(keep_only_params(item, 2), _NextFix("dataloader_iter"))  # type: ignore[assignment]
                self.report(CODE, original.body.body[i], f"{self.class_name}.{item.name.value}: dropped `{idx}`, "
                            "next(dataloader_iter)[0] is the batch")
            changed = True
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class ModuleApiRule(GatedRule):
    code = CODE
    name = "module-api"
    summary = "`from_compiled` classmethods, `load_from_checkpoint` on an instance and `dataloader_iter` steps, ported to 2.x."
    spec_rows = ("M21", "M23", "M24")
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (LightningModule.from_compiled; "
             "2.1 changelog: load_from_checkpoint on an instance (18432), dataloader_iter steps (18390))")
    safety = Safety.PRESERVING
    triggers = ("from_compiled", "to_uncompiled", "load_from_checkpoint", "dataloader_iter")
    description = (
        "`LightningModule.from_compiled(m)` / `to_uncompiled(m)` become the functions of `utilities.compile` "
        "(imported from the file's Lightning root). `instance.load_from_checkpoint(path)` (a TypeError from "
        "2.1) becomes `type(instance).load_from_checkpoint(path)`, which is what 1.9 did; a call whose result "
        "is thrown away is marked, since `instance` was never changed. `training_step(self, dataloader_iter, "
        "batch_idx)` loses `batch_idx` and takes the batch as `next(dataloader_iter)[0]` (2.1 yields "
        "`(batch, batch_idx, dataloader_idx)`) when the body does not read `batch_idx`; otherwise (and for "
        "evaluation steps) it is marked."
    )
    coverage = {"M21": Handling.REWRITTEN, "M23": Handling.REWRITTEN, "M24": Handling.REWRITTEN}
    examples = (
        Example(
            title="instance checkpoint loading and compiled modules",
            before='''\
import torch
import pytorch_lightning as pl
from model import Net

net = Net()
best = net.load_from_checkpoint("best.ckpt")
plain = pl.LightningModule.from_compiled(torch.compile(best))
''',
            after='''\
import torch
import pytorch_lightning as pl
from model import Net
from pytorch_lightning.utilities.compile import from_compiled

net = Net()
best = type(net).load_from_checkpoint("best.ckpt")
plain = from_compiled(torch.compile(best))
''',
        ),
        Example(
            title="a dataloader_iter step",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, dataloader_iter, batch_idx):
        batch = next(dataloader_iter)
        return self.layer(batch).sum()
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, dataloader_iter):
        batch = next(dataloader_iter)[0]
        return self.layer(batch).sum()
''',
        ),
        Example(
            title="class calls are already right",
            before='''\
from model import Net

best = Net.load_from_checkpoint("best.ckpt")
''',
            after=None,
        ),
    )

    def needed(self, text: str, ctx: RuleContext) -> bool:
        facts = file_facts(text)
        if not facts.parsed or not ctx.project.has_path(ctx.path):  # apply indexes the file
            return True
        # M21: a call of ``<...>.from_compiled`` / ``to_uncompiled`` (an attribute, called)
        if not _COMPILED.isdisjoint(facts.calls & facts.attributes):
            return True
        # M23: ``<name>.load_from_checkpoint(...)`` in a file that imports Lightning
        if "load_from_checkpoint" in facts.calls and imports_pl_root(facts) and _may_load_on_instance(text, facts):
            return True
        # M24: a step with a ``dataloader_iter`` parameter in a class the index knows is a LightningModule
        return "dataloader_iter" in facts.params and not facts.defs.isdisjoint(STEPS) and \
            may_have_kind(ctx, _MODULE_KIND)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        ensure_indexed(module, ctx)
        out = module
        if "dataloader_iter" in module_text(module):
            out = transform(out, _Steps(ctx, module))
        classes = set(LIGHTNING_MODULE_NAMES) | {c.name for c in ctx.project.kind_classes()}
        calls = _Calls(ctx, _bound_names(module), classes, out, imports_lightning(module))
        out = transform(out, calls)
        for name in sorted(calls.needs):
            out = ensure_import(out, f"{lightning_root(out)}.utilities.compile", name)
        return out
