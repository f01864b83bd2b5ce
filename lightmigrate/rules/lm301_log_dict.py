"""LM301: ``self.log(name, {k: v, ...})`` becomes ``self.log_dict({"name/k": v, ...})``.

1.9 accepted a dict as the value of ``self.log``: it kept the nested dict in
``callback_metrics[name]`` and the loggers received it flattened to ``name/k``. 2.x raises
``ValueError`` (spec M18). ``log_dict`` with the flat keys logs the same values with the same
options. Needs review: 1.9 passed loggers the nested dict (``{"name": {"k": v}}``; CSV wrote it
as one column, TensorBoard as ``add_scalars``, dict-flattening loggers as ``name/k``), and with
``on_step`` and ``on_epoch`` both on the ``_step``/``_epoch`` suffix now ends each flat key.

Rewritten when the dict is visible: a dict literal or comprehension in the call, or a local
name that the method binds once to one. Otherwise (a dict built elsewhere, a name that is not a
string literal, ``metric_attribute=``) the call is marked. A ``monitor=`` of the same file that
names the old key gets a marker too: the monitored key is now one of the flat keys.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, List, Optional, Set

import libcst as cst
from lightmigrate.cst.matchers import m

from lightmigrate.cst.helpers import add_marker, self_name, code_of
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.class_edit import KindTransformer, ensure_indexed
from lightmigrate.cst.walk import transform, PrunedTransformer, walk, find_all
from lightmigrate.rules.shared.gates import hook_facts, hooks_gate_facts, hooks_path_kinds

CODE = "LM301"
_MODULE_KIND = frozenset({"module"})
# self.log parameters after (name, value), positionally; log_dict takes the same first ten.
_LOG_POSITIONAL = ("prog_bar", "logger", "on_step", "on_epoch", "reduce_fx", "enable_graph", "sync_dist",
                   "sync_dist_group", "add_dataloader_idx", "batch_size", "metric_attribute", "rank_zero_only")
_NOT_IN_LOG_DICT = frozenset({"metric_attribute"})


def _string(node: cst.BaseExpression) -> Optional[str]:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _with_text(template: cst.SimpleString, text: str) -> cst.SimpleString:
    """A string literal like ``template`` (same prefix and quotes) holding ``text``."""
    quote = template.quote
    prefix = template.prefix
    body = text.replace("\\", "\\\\") if "r" not in prefix.lower() else text
    if quote in body or "\n" in body:
        return cst.SimpleString(repr(text))
    return cst.SimpleString(f"{prefix}{quote}{body}{quote}")


def _dict_bindings(func: cst.FunctionDef) -> Dict[str, cst.BaseExpression]:
    """Local names the method binds exactly once, when that binding is a dict display."""
    counts: Dict[str, int] = {}
    values: Dict[str, cst.BaseExpression] = {}

    class V(cst.CSTVisitor):
        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, cst.Name):
                counts[node.target.value] = counts.get(node.target.value, 0) + 1
            else:
                for name in find_all(node.target, m.Name()):
                    counts[name.value] = counts.get(name.value, 0) + 2  # type: ignore[attr-defined]

        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    values[t.target.value] = node.value

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name):
                counts[node.target.value] = counts.get(node.target.value, 0) + 2

        def visit_For(self, node: cst.For) -> None:
            for name in find_all(node.target, m.Name()):
                counts[name.value] = counts.get(name.value, 0) + 2  # type: ignore[attr-defined]

    walk(func.body, V())
    params = {p.name.value for p in (*func.params.params, *func.params.posonly_params, *func.params.kwonly_params)}
    return {k: v for k, v in values.items()
            if counts.get(k) == 1 and k not in params and isinstance(v, (cst.Dict, cst.DictComp))}


class _Rewriter(PrunedTransformer):
    """Rewrites ``SELF.log(...)`` calls inside one method."""

    def __init__(self, owner: "_Fix", func: cst.FunctionDef) -> None:
        self.owner = owner
        self.self_param = self_name(func)
        self.bindings = _dict_bindings(func)
        self.pending_marker: Optional[str] = None
        self.changed = False

    def _log_call(self, call: cst.Call) -> bool:
        return m.matches(call.func, m.Attribute(value=m.Name(self.self_param), attr=m.Name("log")))

    def _value_arg(self, call: cst.Call) -> Optional[int]:
        for i, a in enumerate(call.args):
            if a.keyword is not None and a.keyword.value == "value":
                return i
        positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
        return positional[1] if len(positional) > 1 else None

    def _name_arg(self, call: cst.Call) -> Optional[cst.Arg]:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == "name":
                return a
        positional = [a for a in call.args if a.keyword is None and not a.star]
        return positional[0] if positional else None

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if not self._log_call(updated):
            return updated
        vi = self._value_arg(updated)
        name_arg = self._name_arg(updated)
        if vi is None or name_arg is None:
            return updated
        value = updated.args[vi].value
        display = value
        if isinstance(value, cst.Name) and value.value in self.bindings:
            display = self.bindings[value.value]
        if not isinstance(display, (cst.Dict, cst.DictComp)):
            return updated
        name = _string(name_arg.value)
        keywords = {a.keyword.value for a in updated.args if a.keyword is not None}
        blocked = (keywords & _NOT_IN_LOG_DICT) or any(a.star for a in updated.args)
        positional = [a for a in updated.args if a.keyword is None]
        if name is None or "{" in name or "}" in name or blocked or len(positional) > 2 + 10:
            self.pending_marker = ("`self.log` with a dict value raises in Lightning 2.x; use `self.log_dict` "
                                   "with keys `<name>/<key>` (1.9 flattened the dict that way)")
            return updated
        new_dict = self._flatten(display, name_arg.value, value)  # type: ignore[arg-type]
        if new_dict is None:
            self.pending_marker = ("`self.log` with a dict value raises in Lightning 2.x; use `self.log_dict` "
                                   "with keys `<name>/<key>`")
            return updated
        args: List[cst.Arg] = []
        for i, a in enumerate(updated.args):
            if a is name_arg:
                continue
            if i == vi:
                args.append(a.with_changes(value=new_dict, keyword=None, equal=cst.MaybeSentinel.DEFAULT))
            else:
                args.append(a)
        # ``value=`` given by keyword: the dict must come first.
        args.sort(key=lambda a: 0 if a.value is new_dict else 1)
        args[-1] = args[-1].with_changes(comma=updated.args[-1].comma)
        self.changed = True
        self.owner.logged_names.append(name)
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("log_dict")), args=args)

    def _flatten(self, display: cst.BaseExpression, name_node: cst.SimpleString,
                 value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        name = _string(name_node) or ""
        if display is not value:  # a local name bound to a dict: flatten at run time
            return cst.parse_expression(f'{{f"{_fstring_safe(name)}/{{k}}": v for k, v in {value.value}.items()}}')  # type: ignore[attr-defined]
        if isinstance(display, cst.Dict):
            elements = []
            for e in display.elements:
                if not isinstance(e, cst.DictElement):
                    return None
                key = _string(e.key)
                if key is not None:
                    new_key: cst.BaseExpression = _with_text(e.key, f"{name}/{key}")  # type: ignore[arg-type]
                else:
                    code = code_of(e.key)
                    if '"' in code or "\n" in code:
                        return None
                    new_key = cst.parse_expression(f'f"{_fstring_safe(name)}/{{{code}}}"')
                elements.append(e.with_changes(key=new_key))
            return display.with_changes(elements=elements)
        assert isinstance(display, cst.DictComp)
        key = _string(display.key)
        if key is not None:
            return display.with_changes(key=_with_text(display.key, f"{name}/{key}"))  # type: ignore[arg-type]
        code = code_of(display.key)
        if '"' in code or "\n" in code:
            return None
        return display.with_changes(key=cst.parse_expression(f'f"{_fstring_safe(name)}/{{{code}}}"'))

    def leave_SimpleStatementLine(self, original, updated):
        if self.pending_marker:
            why, self.pending_marker = self.pending_marker, None
            self.changed = True
            return add_marker(updated, CODE, why)
        return updated


def _fstring_safe(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("{", "{{").replace("}", "}}")


class _Fix(KindTransformer):
    def __init__(self, ctx, module, monitored: Set[str]) -> None:
        super().__init__(ctx, module)
        self.monitored = monitored
        self.logged_names: List[str] = []

    def edit_class(self, kind, original, updated):
        if kind != "module":
            return updated
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef) or "log" not in code_of(item):
                continue
            before = len(self.logged_names)
            rewriter = _Rewriter(self, item)
            new = transform(item, rewriter)
            if rewriter.changed:
                items[i] = new
                changed = True
                for name in self.logged_names[before:]:
                    self.report(CODE, original.body.body[i],
                                f"{self.class_name}.{item.name.value}: self.log({name!r}, dict) -> "
                                f"self.log_dict with keys '{name}/<key>'")
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


def _monitored(module: cst.Module) -> Set[str]:
    found: Set[str] = set()
    for arg in find_all(module, m.Arg(keyword=m.Name("monitor"), value=m.SimpleString())):
        value = _string(arg.value)  # type: ignore[attr-defined]
        if value is not None:
            found.add(value)
    return found


class _MarkMonitors(PrunedTransformer):
    def __init__(self, names: Set[str]) -> None:
        self.names = names
        self.hit: Optional[str] = None

    def leave_Arg(self, original, updated):
        if m.matches(updated, m.Arg(keyword=m.Name("monitor"), value=m.SimpleString())):
            value = _string(updated.value)
            if value in self.names:
                self.hit = value
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if self.hit is not None:
            name, self.hit = self.hit, None
            return add_marker(updated, CODE,
                              f"monitor {name!r} named a metric logged as a dict; 2.x logs the flat keys "
                              f"'{name}/<key>': monitor one of them")
        return updated


class LogDictRule(GatedRule):
    code = CODE
    gate_reads_hook_facts = True
    name = "log-dict-value"
    summary = "`self.log(name, dict)` becomes `self.log_dict` with the flat `name/key` keys 1.9 logged."
    spec_rows = ("M18",)
    guide = ("https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html (row 'used self.log with a "
             "dict value'; PR 16389)")
    safety = Safety.REVIEW  # 1.9 handed loggers a nested dict; how it was shown depended on the logger
    triggers = (".log(",)
    description = (
        "Lightning 1.9 let `self.log(name, value)` take a dict: loggers received each entry as "
        "`name/key`. Lightning 2.x raises ValueError. The rule rewrites the call to `self.log_dict` "
        "with the flat keys and the same options, when the dict is a literal, a comprehension, or a "
        "local bound once to one (then flattened by a comprehension). Anything else is marked. A "
        "`monitor=` naming the old key in the same file is marked: it must name one of the flat keys."
    )
    coverage = {"M18": Handling.REWRITTEN}
    examples = (
        Example(
            title="a dict literal and a local dict",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        loss, acc = self.compute(batch)
        self.log("train", {"loss": loss, "acc": acc}, prog_bar=True)
        parts = {"a": loss * 2, "b": acc}
        self.log("parts", parts, on_epoch=True)
        return loss
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        loss, acc = self.compute(batch)
        self.log_dict({"train/loss": loss, "train/acc": acc}, prog_bar=True)
        parts = {"a": loss * 2, "b": acc}
        self.log_dict({f"parts/{k}": v for k, v in parts.items()}, on_epoch=True)
        return loss
''',
        ),
        Example(
            title="a dict built elsewhere is marked",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log(self.prefix, {"loss": batch.sum()})
        return batch.sum()
''',
            after='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        # TODO(lightmigrate): LM301 `self.log` with a dict value raises in Lightning 2.x; use `self.log_dict` with keys `<name>/<key>` (1.9 flattened the dict that way)
        self.log(self.prefix, {"loss": batch.sum()})
        return batch.sum()
''',
        ),
        Example(
            title="tensor values and non-Lightning classes are left alone",
            before='''\
import pytorch_lightning as pl


class Model(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log("loss", batch.sum())
        return batch.sum()


class Plain:
    def step(self):
        self.log("x", {"a": 1})
''',
            after=None,
        ),
    )

    def gate_kinds(self, text: str) -> Optional[FrozenSet[str]]:
        return _MODULE_KIND  # calls are rewritten only inside LightningModules

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # Calls are only rewritten (or marked) inside LightningModule classes, when their value
        # is a dict display or a name bound to one; monitors only marked for names logged so.
        facts = hooks_gate_facts(text, ctx)
        if facts is None:
            return True
        if "log" not in facts.calls:
            return False
        kinds = hooks_path_kinds(ctx)
        if kinds is not None and "module" not in kinds:
            return False
        found = hook_facts(text)
        if found is None:
            return True
        return bool(found.log_value_kinds & {"Dict", "DictComp"} or found.log_value_names & found.dict_bound)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        ensure_indexed(module, ctx)
        monitored = _monitored(module)
        fixer = _Fix(ctx, module, monitored)
        out = transform(module, fixer)
        hits = monitored & set(fixer.logged_names)
        if hits:
            out = transform(out, _MarkMonitors(hits))
        return out
