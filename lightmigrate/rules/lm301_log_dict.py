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

import ast
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

import libcst as cst
from lightmigrate.cst.helpers import is_name

from lightmigrate.analysis.ast_nodes import ast_nodes
from lightmigrate.cst.helpers import add_marker, code_of
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.class_edit import KindTransformer, kind_classes
from lightmigrate.rules.shared.hooksa_ast import char_col, index_source, methods, positional_names, simple_string
from lightmigrate.cst.walk import transform, PrunedTransformer

CODE = "LM301"
_MODULE_KIND = frozenset({"module"})
# self.log parameters after (name, value), positionally; log_dict takes the same first ten.
_LOG_POSITIONAL = ("prog_bar", "logger", "on_step", "on_epoch", "reduce_fx", "enable_graph", "sync_dist",
                   "sync_dist_group", "add_dataloader_idx", "batch_size", "metric_attribute", "rank_zero_only")
_NOT_IN_LOG_DICT = frozenset({"metric_attribute"})
WHY_BLOCKED = ("`self.log` with a dict value raises in Lightning 2.x; use `self.log_dict` with keys `<name>/<key>` "
               "(1.9 flattened the dict that way)")
WHY_KEYS = "`self.log` with a dict value raises in Lightning 2.x; use `self.log_dict` with keys `<name>/<key>`"


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


class _Rewriter(PrunedTransformer):
    """Rewrites or marks the ``SELF.log(...)`` calls of one method at the positions of
    ``calls`` (position -> (action, name or why))."""

    def __init__(self, owner: "_Fix", calls: Dict[Tuple[int, int], Tuple[str, str]]) -> None:
        self.owner = owner
        self.calls = calls
        self.pending_marker: Optional[str] = None
        self.changed = False

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
        site = self.calls.get(self.owner.ctx.position(self.owner.module, original))
        if site is None:
            return updated
        action, text = site
        if action == "mark":
            self.pending_marker = text
            return updated
        vi = self._value_arg(updated)
        name_arg = self._name_arg(updated)
        assert vi is not None and name_arg is not None
        value = updated.args[vi].value
        display = value if isinstance(value, (cst.Dict, cst.DictComp)) else None
        new_dict = self._flatten(display, name_arg.value, value)  # type: ignore[arg-type]
        if new_dict is None:  # (find saw no reason for this; see ``_flattens``)
            self.pending_marker = WHY_KEYS
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
        self.owner.logged_names.append(text)
        return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("log_dict")), args=args)

    def _flatten(self, display: Optional[cst.BaseExpression], name_node: cst.SimpleString,
                 value: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        name = _string(name_node) or ""
        if display is None:  # a local name bound to a dict: flatten at run time
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
    """Rewrites or marks the calls of the sites: ``todo`` maps the position of a method to its
    calls' positions and what to do there."""

    def __init__(self, ctx, module, todo: Dict[Tuple[int, int], Dict[Tuple[int, int], Tuple[str, str]]]) -> None:
        super().__init__(ctx, module, only=frozenset(name for name, _ in todo.values()))
        self.todo = todo
        self.logged_names: List[str] = []

    def edit_class(self, kind, original, updated):
        items = list(updated.body.body)
        changed = False
        for i, item in enumerate(items):
            if not isinstance(item, cst.FunctionDef):
                continue
            found = self.todo.get(self.ctx.position(self.module, original.body.body[i]))
            if found is None:
                continue
            before = len(self.logged_names)
            rewriter = _Rewriter(self, found[1])
            new = transform(item, rewriter)
            if rewriter.changed:
                items[i] = new
                changed = True
                for name in self.logged_names[before:]:
                    self.report(CODE, original.body.body[i],
                                f"{self.class_name}.{item.name.value}: self.log({name!r}, dict) -> "
                                f"self.log_dict with keys '{name}/<key>'")
        return updated.with_changes(body=updated.body.with_changes(body=items)) if changed else updated


class _MarkMonitors(PrunedTransformer):
    def __init__(self, names: Set[str]) -> None:
        self.names = names
        self.hit: Optional[str] = None

    def leave_Arg(self, original, updated):
        if is_name(updated.keyword, "monitor") and isinstance(updated.value, cst.SimpleString):
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


# --- find, on Python's ast ------------------------------------------------------------------

def _cst_names(node: ast.AST) -> Iterator[str]:
    """The names libcst holds as ``Name`` nodes in the expression ``node``: names, attribute
    names, keywords of calls and lambda parameters."""
    for sub in ast_nodes(node):
        if isinstance(sub, ast.Name):
            yield sub.id
        elif isinstance(sub, ast.Attribute):
            yield sub.attr
        elif isinstance(sub, ast.keyword) and sub.arg is not None:
            yield sub.arg
        elif isinstance(sub, ast.arg):
            yield sub.arg


def _dict_bindings(func: ast.AST) -> Dict[str, ast.AST]:
    """Local names the method binds exactly once, when that binding is a dict display."""
    counts: Dict[str, int] = {}
    values: Dict[str, ast.AST] = {}

    def bump(name: str, by: int) -> None:
        counts[name] = counts.get(name, 0) + by

    for stmt in func.body:  # type: ignore[attr-defined]
        for node in ast_nodes(stmt):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        bump(target.id, 1)
                        values[target.id] = node.value
                    else:
                        for name in _cst_names(target):
                            bump(name, 2)
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                bump(node.target.id, 2)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                for name in _cst_names(node.target):
                    bump(name, 2)
    args = func.args  # type: ignore[attr-defined]
    params = {a.arg for a in (*args.args, *args.posonlyargs, *args.kwonlyargs)}
    return {k: v for k, v in values.items()
            if counts.get(k) == 1 and k not in params and isinstance(v, (ast.Dict, ast.DictComp))}


def _argument(call: ast.Call, keyword: str, position: int) -> Optional[ast.AST]:
    """The argument passed as ``keyword=`` or else as the ``position``-th positional one."""
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    return positional[position] if len(positional) > position else None


def _key_flattens(source: SourceFile, key: Optional[ast.AST]) -> bool:
    """Whether ``_Rewriter._flatten`` can write this key with the name in front."""
    if key is None:  # ``**other`` in the dict
        return False
    if simple_string(source, key) is not None:
        return True
    code = ast.get_source_segment(source.text, key) or '"'
    return '"' not in code and "\n" not in code


def _decide(source: SourceFile, call: ast.Call, bindings: Dict[str, ast.AST]) -> Optional[Tuple[str, str]]:
    """What ``_Rewriter`` does with a ``SELF.log(...)`` call: ("rewrite", name), ("mark", why)
    or None (its value is not a dict it can see)."""
    value = _argument(call, "value", 1)
    name = _argument(call, "name", 0)
    if value is None or name is None:
        return None
    display = bindings.get(value.id, value) if isinstance(value, ast.Name) else value
    if not isinstance(display, (ast.Dict, ast.DictComp)):
        return None
    text = simple_string(source, name)
    keywords = {k.arg for k in call.keywords}
    blocked = (keywords & (_NOT_IN_LOG_DICT | {None})) or any(isinstance(a, ast.Starred) for a in call.args)
    if text is None or "{" in text or "}" in text or blocked or len(call.args) > 2 + 10:
        return ("mark", WHY_BLOCKED)
    if display is value:
        keys = display.keys if isinstance(display, ast.Dict) else [display.key]
        if not all(_key_flattens(source, k) for k in keys):
            return ("mark", WHY_KEYS)
    return ("rewrite", text)


class LogDictRule(Rule):
    code = CODE
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

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        """A site per ``SELF.log(name, dict)`` call in the methods of LightningModule classes
        ("rewrite", or "mark" when the call cannot be rewritten), and per ``monitor="name"``
        argument of the file naming a key that a rewritten call logged ("mark-monitor").
        ``data`` of a call: (the method's position, the call's position in characters, the
        class name, the logged name or the marker's text)."""
        index_source(source, ctx)
        sites = []
        rewritten: Set[str] = set()
        for cls, _ in kind_classes(source, ctx, _MODULE_KIND):
            for func in methods(cls):
                receiver = (positional_names(func) or ["self"])[0]
                bindings: Optional[Dict[str, ast.AST]] = None
                for call in ast_nodes(func):
                    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "log" and isinstance(call.func.value, ast.Name)
                            and call.func.value.id == receiver):
                        continue
                    if bindings is None:
                        bindings = _dict_bindings(func)
                    decision = _decide(source, call, bindings)
                    if decision is None:
                        continue
                    action, text = decision
                    if action == "rewrite":
                        rewritten.add(text)
                    method = (func.lineno, func.col_offset + 1)  # type: ignore[attr-defined]
                    position = (call.lineno, char_col(source, call.lineno, call.col_offset) + 1)
                    sites.append(Site(call.lineno, call.col_offset, f"{cls.name}.{func.name}", action,  # type: ignore[attr-defined]
                                      (method, position, cls.name, text)))
        if rewritten:
            for node in source.nodes:
                if isinstance(node, ast.keyword) and node.arg == "monitor":
                    name = simple_string(source, node.value)
                    if name in rewritten:
                        sites.append(Site(node.value.lineno, node.value.col_offset, "monitor", "mark-monitor", name))
        return sorted(sites, key=lambda s: (s.line, s.col))

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        todo: Dict[Tuple[int, int], Tuple[str, Dict[Tuple[int, int], Tuple[str, str]]]] = {}
        for site in sites:
            if site.action != "mark-monitor":
                method, position, cls, text = site.data
                todo.setdefault(method, (cls, {}))[1][position] = (site.action, text)
        fixer = _Fix(ctx, module, todo)
        out = transform(module, fixer)
        hits = {s.data for s in sites if s.action == "mark-monitor"} & set(fixer.logged_names)
        if hits:
            out = transform(out, _MarkMonitors(hits))
        return out
