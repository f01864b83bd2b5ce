"""LM101: Trainer constructor arguments (spec A.3, A.8 "Trainer arguments").

Rewrites the arguments of ``Trainer(...)`` calls, and of dict literals that hold Trainer keyword
arguments (passed with ``**`` or recognised by their keys), with their 1.9 meaning: ``gpus=N``
becomes ``accelerator="gpu", devices=N`` (``gpus=0``/``None`` meant the CPU and is dropped),
``precision=16`` becomes ``"16-mixed"``, ``strategy="ddp"`` keeps 1.9's
``find_unused_parameters=True``, positional arguments become keywords, explicit ``None`` values
2.x rejects are dropped, ``resume_from_checkpoint`` moves to the ``fit`` call of that trainer.
What cannot be rewritten faithfully gets a marker; the silent default changes (B-1: the
accelerator default, T22: ``ddp_spawn`` becomes ``ddp``) are one NOTE per ``Trainer(...)`` call.
The argument mapping itself lives in :mod:`lightmigrate.catalog.trainer_args`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import libcst as cst

from lightmigrate.cst.helpers import add_markers, dotted_name, ensure_import, lightning_root, module_text, code_of
from lightmigrate.analysis.facts import file_facts
from lightmigrate.output.findings import Kind
from lightmigrate.catalog import trainer_args as tam
from lightmigrate.rules.base import Example, Handling, GatedRule, Rule, RuleContext, Safety
from lightmigrate.rules.shared.gates import imports_pl_root, may_import_pl_root, string_key, trainer_may_call
from lightmigrate.rules.shared.trainer_kwargs import TRAINER_ARGS
from lightmigrate.cst.walk import transform, PrunedTransformer, walk

CODE = "LM101"
_EMPTY = cst.Module(body=[])
ALL_ARGS = TRAINER_ARGS | tam.LEGACY_ARGS
ARGPARSE_METHODS = ("from_argparse_args", "add_argparse_args", "parse_argparser", "default_attributes",
                    "match_env_arguments", "get_init_arguments_and_types")
REMOVED_ENV_VARS = ("PL_INTER_BATCH_PARALLELISM", "PL_RECONCILE_PROCESS", "PL_FAULT_TOLERANT_TRAINING")
# Trainer arguments whose 1.9 value 2.x rejects or reads differently (argparse options feeding
# ``Trainer(**vars(args))`` are marked when the file defines one of them).
CHANGED_OPTIONS = frozenset(
    {"gpus", "tpu_cores", "ipus", "num_processes", "auto_select_gpus", "resume_from_checkpoint", "replace_sampler_ddp",
     "amp_backend", "amp_level", "move_metrics_to_cpu", "multiple_trainloader_mode", "auto_lr_find",
     "auto_scale_batch_size", "strategy", "accelerator", "devices", "precision", "accumulate_grad_batches"}
) | tam.LEGACY_ARGS
_TRAINER_DICT_KEYS = ("trainer", "trainer_kwargs", "trainer_args", "trainer_params", "trainer_config")
REMOVED_STRATEGY_CLASSES = ("DataParallelStrategy", "DDPShardedStrategy", "DDPSpawnShardedStrategy",
                            "DDPFullyShardedStrategy", "HorovodStrategy", "DDP2Strategy", "TPUSpawnStrategy",
                            "DDPSpawnStrategy")
# The keys ``trainer_arg_map.map_arguments`` acts on: a Trainer-kwargs dict literal with none of
# them comes back unchanged and without markers or notes (the gate's dict test).
ACTIVE_DICT_KEYS = frozenset(
    {"strategy", "accelerator", "devices", "accumulate_grad_batches", "amp_backend", "amp_level", "auto_select_gpus",
     "move_metrics_to_cpu", "multiple_trainloader_mode", "stochastic_weight_avg", "terminate_on_nan",
     "log_gpu_memory", "gpu_metrics", "resume_from_checkpoint", "weights_save_path", "flush_logs_every_n_steps",
     "prepare_data_per_node", "distributed_backend", "auto_lr_find", "auto_scale_batch_size", "num_processes",
     "tpu_cores", "ipus", "gpus", "checkpoint_callback", "max_steps", "weights_summary", "progress_bar_refresh_rate",
     "process_position", "replace_sampler_ddp", "precision"}
)


def literal(node: cst.BaseExpression) -> Any:
    """The Python value of a literal expression, or ``tam.NOT_LITERAL``."""
    if isinstance(node, cst.Integer):
        return int(node.evaluated_value)
    if isinstance(node, cst.Float):
        return float(node.evaluated_value)
    if isinstance(node, cst.SimpleString):
        v = node.evaluated_value
        return v if isinstance(v, str) else tam.NOT_LITERAL
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = literal(node.expression)
        return -inner if type(inner) in (int, float) else tam.NOT_LITERAL
    if isinstance(node, cst.List):
        items = [literal(e.value) if isinstance(e, cst.Element) else tam.NOT_LITERAL for e in node.elements]
        return tam.NOT_LITERAL if any(i is tam.NOT_LITERAL for i in items) else items
    if isinstance(node, cst.Dict):
        out = {}
        for e in node.elements:
            if not isinstance(e, cst.DictElement):
                return tam.NOT_LITERAL
            k, v = literal(e.key), literal(e.value)
            if k is tam.NOT_LITERAL or v is tam.NOT_LITERAL:
                return tam.NOT_LITERAL
            out[k] = v
        return out
    return tam.NOT_LITERAL


def _value(node: cst.BaseExpression) -> tam.Value:
    return tam.Value(literal=literal(node), code=code_of(node),
                     simple=isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)))


def _quote_of(nodes) -> str:
    for n in nodes:
        if isinstance(n, cst.SimpleString):
            return "'" if n.quote == "'" else '"'
    return '"'


def _dotted(node: cst.CSTNode) -> str:
    return dotted_name(node) or ""


def _is_lightning(modname: str) -> bool:
    return modname.split(".")[0] in ("pytorch_lightning", "lightning")


class _Imports(cst.CSTVisitor):
    """Which local names refer to Lightning's Trainer or to a Lightning package."""

    def __init__(self) -> None:
        self.trainer_names: Set[str] = set()
        self.package_names: Set[str] = set()

    def visit_Import(self, node: cst.Import) -> None:
        for a in node.names:
            full = _dotted(a.name)
            if _is_lightning(full):
                self.package_names.add(a.asname.name.value if a.asname else full.split(".")[0])

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is None or node.relative or isinstance(node.names, cst.ImportStar):
            return
        mod = _dotted(node.module)
        if not _is_lightning(mod):
            return
        for a in node.names:
            name = _dotted(a.name)
            local = a.asname.name.value if a.asname and isinstance(a.asname.name, cst.Name) else name
            if name == "Trainer":
                self.trainer_names.add(local)
            else:
                self.package_names.add(local)


def _is_lightning_trainer(func: cst.BaseExpression, imp: _Imports) -> bool:
    if isinstance(func, cst.Name):
        return func.value in imp.trainer_names
    if isinstance(func, cst.Attribute) and func.attr.value == "Trainer":
        root = _dotted(func.value).split(".")[0]
        return root in imp.package_names
    return False


def _is_fit(call: cst.Call) -> Optional[str]:
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "fit":
        return code_of(call.func.value)
    return None


class _Facts(cst.CSTVisitor):
    """First pass: Trainer-kwarg dict names, resume_from_checkpoint plans, tune() calls."""

    def __init__(self, imp: _Imports) -> None:
        self.imp = imp
        self.spread_names: Set[str] = set()
        self.scope: List[int] = [0]
        self.resume: Dict[Tuple[int, str], List[cst.Call]] = {}  # (scope, target) -> Trainer calls
        self.fits: Dict[Tuple[int, str], List[cst.Call]] = {}
        self.has_tune = False
        self.argparse_options: List[str] = []  # parser.add_argument("--gpus", ...) of changed Trainer args
        self.argparse_trainer = False  # Trainer.add_argparse_args(parser) in the file

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(id(node))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.value, cst.Call) and _is_lightning_trainer(node.value.func, self.imp):
            if any(a.keyword is not None and a.keyword.value == "resume_from_checkpoint" for a in node.value.args):
                target = code_of(node.targets[0].target)
                self.resume.setdefault((self.scope[-1], target), []).append(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if _is_lightning_trainer(node.func, self.imp):
            for a in node.args:
                if a.star == "**" and isinstance(a.value, cst.Name):
                    self.spread_names.add(a.value.value)
        target = _is_fit(node)
        if target is not None:
            self.fits.setdefault((self.scope[-1], target), []).append(node)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "tune":
            self.has_tune = True
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argument":
            for a in node.args:
                v = literal(a.value) if a.keyword is None else None
                if isinstance(v, str) and v.startswith("--"):
                    name = v[2:].replace("-", "_")
                    if name in CHANGED_OPTIONS:
                        self.argparse_options.append(name)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_argparse_args":
            self.argparse_trainer = True


def _fit_can_take_ckpt(call: cst.Call) -> bool:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return not any(a.star for a in call.args) and len(positional) < 5


def _resume_plans(facts: _Facts) -> Tuple[Set[int], Dict[int, cst.BaseExpression]]:
    """Trainer calls whose resume_from_checkpoint moves, and fit calls -> the ckpt_path value."""
    moved: Set[int] = set()
    fit_values: Dict[int, cst.BaseExpression] = {}
    for key, calls in facts.resume.items():
        fits = facts.fits.get(key, [])
        if len(calls) != 1 or not fits or not all(_fit_can_take_ckpt(f) for f in fits):
            continue
        arg = next(a for a in calls[0].args if a.keyword is not None and a.keyword.value == "resume_from_checkpoint")
        value = arg.value
        if literal(value) is tam.NOT_LITERAL and not isinstance(value, (cst.Name, cst.Attribute)):
            continue
        moved.add(id(calls[0]))
        for f in fits:
            if any(a.keyword is not None and a.keyword.value == "ckpt_path" for a in f.args):
                continue  # 1.9: an explicit fit(ckpt_path=) won over resume_from_checkpoint
            positional = [a for a in f.args if a.keyword is None]
            if len(positional) < 5:
                fit_values[id(f)] = value
    return moved, fit_values


def _comma_like(items) -> cst.Comma:
    for it in items:
        if isinstance(it.comma, cst.Comma):
            return it.comma
    return cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _fix_commas(new_items: List, original_items) -> List:
    if not new_items:
        return new_items
    comma = _comma_like(original_items)
    out = []
    for i, it in enumerate(new_items):
        if i < len(new_items) - 1:
            if not isinstance(it.comma, cst.Comma):
                it = it.with_changes(comma=comma)
        else:
            it = it.with_changes(comma=list(original_items)[-1].comma)
        out.append(it)
    return out


def _plain_comma(comma):
    """``comma`` without a trailing comment on its line (for a line the rule added)."""
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        ws = comma.whitespace_after
        return comma.with_changes(whitespace_after=ws.with_changes(first_line=cst.TrailingWhitespace()))
    return comma


def _strip_shared_comments(items: List, entries: List[tam.Entry]) -> None:
    """Several new items made from one original item: only the last keeps its comment."""
    for i in range(len(items) - 1):
        if i + 1 < len(entries) and entries[i].origin is not None and entries[i].origin is entries[i + 1].origin:
            items[i] = items[i].with_changes(comma=_plain_comma(items[i].comma))


def _new_value_node(entry: tam.Entry, origin_value: Optional[cst.BaseExpression]) -> cst.BaseExpression:
    node = getattr(entry.value, "node", None)
    if node is not None:
        return node
    return cst.parse_expression(entry.value.code)


def _callbacks_value(existing: Optional[cst.BaseExpression], additions: List[str]) -> Optional[cst.BaseExpression]:
    """``existing`` (a list literal, or nothing) with ``additions`` appended, or None when the
    callbacks are not a list literal."""
    new = [cst.parse_expression(a) for a in additions]
    if existing is None:
        return cst.List([cst.Element(n) for n in new])
    if not isinstance(existing, cst.List):
        return None
    elements = list(existing.elements)
    if elements and not isinstance(elements[-1].comma, cst.Comma):
        elements[-1] = elements[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    for i, n in enumerate(new):
        last = i == len(new) - 1
        comma = (cst.MaybeSentinel.DEFAULT if last else cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elements.append(cst.Element(n, comma=comma))
    return existing.with_changes(elements=elements)


class _Transformer(PrunedTransformer):
    def __init__(self, rule: "TrainerConstructorRule", ctx: RuleContext, module: cst.Module, imp: _Imports,
                 facts: _Facts) -> None:
        self.rule = rule
        self.ctx = ctx
        self.module = module
        self.imp = imp
        self.facts = facts
        self.moved, self.fit_values = _resume_plans(facts)
        self.root = lightning_root(module)
        self.imports: List[Tuple[str, str]] = []
        self.pending: List[List[str]] = [[]]
        self.trainer_dicts = self._find_trainer_dicts(module)

    # --- statements collect markers of what they contain
    def _push(self, node) -> bool:
        self.pending.append([])
        return True

    def _pop(self, updated):
        whys = self.pending.pop()
        return add_markers(updated, CODE, whys) if whys else updated

    def visit_SimpleStatementLine(self, node):
        return self._push(node)

    def leave_SimpleStatementLine(self, original, updated):
        return self._pop(updated)

    def visit_If(self, node):
        return self._push(node)

    def leave_If(self, original, updated):
        return self._pop(updated)

    def visit_With(self, node):
        return self._push(node)

    def leave_With(self, original, updated):
        return self._pop(updated)

    def visit_For(self, node):
        return self._push(node)

    def leave_For(self, original, updated):
        return self._pop(updated)

    def visit_While(self, node):
        return self._push(node)

    def leave_While(self, original, updated):
        return self._pop(updated)

    def visit_FunctionDef(self, node):
        return self._push(node)

    def leave_FunctionDef(self, original, updated):
        return self._pop(updated)

    def visit_ClassDef(self, node):
        return self._push(node)

    def leave_ClassDef(self, original, updated):
        return self._pop(updated)

    def _mark(self, whys: List[str]) -> None:
        for w in whys:
            if w not in self.pending[-1]:
                self.pending[-1].append(w)

    # --- which dict literals hold Trainer kwargs
    def _find_trainer_dicts(self, module: cst.Module) -> Set[int]:
        found: Set[int] = set()
        imp, spread = self.imp, self.facts.spread_names

        def keys_ok(d: cst.Dict) -> bool:
            keys = []
            for e in d.elements:
                if isinstance(e, cst.StarredDictElement):
                    continue
                k = literal(e.key)
                if not isinstance(k, str) or k not in ALL_ARGS:
                    return False
                keys.append(k)
            return bool(keys)

        class V(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                if _is_lightning_trainer(node.func, imp):
                    for a in node.args:
                        if a.star == "**" and isinstance(a.value, cst.Dict) and keys_ok(a.value):
                            found.add(id(a.value))

            def visit_Assign(self, node: cst.Assign) -> None:
                if isinstance(node.value, cst.Dict) and keys_ok(node.value):
                    names = {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
                    if names & spread or len(node.value.elements) >= 2:
                        found.add(id(node.value))

            def visit_DictElement(self, node: cst.DictElement) -> None:
                if isinstance(node.value, cst.Dict) and literal(node.key) in _TRAINER_DICT_KEYS and keys_ok(node.value):
                    found.add(id(node.value))

        if imp.trainer_names or imp.package_names:
            walk(module, V())
        return found

    # --- calls
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if _is_lightning_trainer(original.func, self.imp):
            return self._trainer_call(original, updated)
        if id(original) in self.fit_values:
            value = self.fit_values[id(original)]
            arg = cst.Arg(value=value, keyword=cst.Name("ckpt_path"),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            args = list(updated.args)
            if args and not isinstance(args[-1].comma, cst.Comma):
                args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                args.append(arg)
            elif args:
                args.append(arg.with_changes(comma=args[-1].comma))
                args[-2] = args[-2].with_changes(comma=_comma_like(args[:-1]))
            else:
                args.append(arg)
            return updated.with_changes(args=args)
        func = original.func
        if isinstance(func, cst.Attribute) and func.attr.value in ARGPARSE_METHODS and _dotted(func.value).endswith("Trainer"):
            self._mark([f"T-meth3: `Trainer.{func.attr.value}` was removed in 2.0; build the Trainer from "
                        f"explicit arguments or use LightningCLI ({tam.GUIDE})"])
        elif _dotted(func).split(".")[-1] == "DDPStrategy":
            if self._is_lightning_strategy(func) and not any(a.keyword is not None and a.keyword.value == "find_unused_parameters" for a in updated.args) and not any(a.star for a in updated.args):
                arg = cst.Arg(value=cst.Name("True"), keyword=cst.Name("find_unused_parameters"),
                              equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                args = list(updated.args)
                if args:
                    args[-1] = args[-1].with_changes(comma=_comma_like(args) if not isinstance(args[-1].comma, cst.Comma) else args[-1].comma)
                return updated.with_changes(args=[*args, arg])
        elif _dotted(func).split(".")[-1] in REMOVED_STRATEGY_CLASSES and self._is_lightning_strategy(func):
            name = _dotted(func).split(".")[-1]
            self._mark([f"T18-T24: `{name}` was removed or renamed in 2.0 (DDPSpawnStrategy -> "
                        f"DDPStrategy(start_method=\"spawn\", find_unused_parameters=True), TPUSpawnStrategy -> "
                        f"XLAStrategy, sharded/DP/Horovod -> \"ddp\"/\"fsdp\") ({tam.GUIDE})"])
        return updated

    def _is_lightning_strategy(self, func: cst.BaseExpression) -> bool:
        return bool(self.imp.package_names or self.imp.trainer_names) and "fabric" not in module_text(self.module).lower()

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        v = original.evaluated_value
        if isinstance(v, str) and v in REMOVED_ENV_VARS:
            self._mark([f"T31: the environment variable {v} was removed in 2.0 and has no effect ({tam.GUIDE})"])
        return updated

    def _trainer_call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        entries: List[tam.Entry] = []
        pos = 0
        for arg in updated.args:
            if arg.star == "*":
                self._mark([f"T0: Trainer arguments are keyword-only in 2.x; `*{code_of(arg.value)}` "
                            f"must become keywords ({tam.GUIDE})"])
                return updated
            if arg.star == "**":
                entries.append(tam.Entry(None, _value(arg.value), origin=arg))
            elif arg.keyword is None:
                if pos >= len(tam.POSITIONAL_ORDER):
                    return updated
                v = _value(arg.value)
                v.node = arg.value
                entries.append(tam.Entry(tam.POSITIONAL_ORDER[pos], v, origin=arg, changed=True))
                pos += 1
            else:
                v = _value(arg.value)
                v.node = arg.value
                entries.append(tam.Entry(arg.keyword.value, v, origin=arg))
        for e in entries:
            if e.name is None and (e.value.code.startswith("vars(") or e.value.code.endswith(".__dict__")):
                if self.facts.argparse_trainer:
                    self._mark(["T-meth3: these Trainer arguments come from Trainer.add_argparse_args; 1.9 command-line "
                                "values such as --gpus, --precision 16, --resume_from_checkpoint no longer work in 2.x: "
                                f"declare the 2.x arguments yourself or use LightningCLI ({tam.GUIDE})"])
                elif self.facts.argparse_options:
                    opts = ", ".join(f"--{o}" for o in dict.fromkeys(self.facts.argparse_options))
                    self._mark([f"T-meth3: the argparse options {opts} reach the Trainer through "
                                f"{e.value.code}; 2.x removed or changed these arguments: map them as LM101 does "
                                f"(e.g. gpus -> accelerator/devices) before building the Trainer ({tam.GUIDE})"])
        handled = id(original) in self.moved
        if handled:
            entries = [e for e in entries if e.name != "resume_from_checkpoint"]
        mapped = tam.map_arguments(entries, _quote_of(a.value for a in updated.args), self.facts.has_tune, handled)
        new_args = self._rebuild_args(mapped, updated)
        self._finish(mapped, original)
        if new_args is None:
            return updated
        if handled or any(e.changed for e in mapped.entries) or len(mapped.entries) != len(entries) or mapped.callbacks:
            return updated.with_changes(args=_fix_commas(new_args, updated.args) if new_args else [])
        return updated

    def _finish(self, mapped: tam.Mapped, original: cst.Call, is_call: bool = True) -> None:
        self._mark(mapped.markers)
        for suffix, name in mapped.imports:
            self.imports.append((f"{self.root}.{suffix}", name))
        notes = list(mapped.notes)
        if not is_call:
            if notes:
                line, col = self.ctx.position(self.module, original)
                self.ctx.report(CODE, "; ".join(notes) + f" ({tam.GUIDE})", Kind.NOTE, line, col)
            return
        spread = any(e.name is None for e in mapped.entries)
        if not mapped.has_accelerator and not spread:
            notes.append("B-1/T29: 2.x defaults to accelerator=\"auto\" and uses a GPU (all of them) when one is "
                         "present; 1.9 ran this Trainer on the CPU. Pass accelerator=\"cpu\" to keep 1.9's behaviour"
                         + ("; B-6: in a notebook devices=\"auto\" means one GPU" if self.ctx.path.endswith(".ipynb") else ""))
        if mapped.multi_device and not mapped.has_strategy and not spread:
            notes.append("T22: with more than one device 1.9 used strategy=\"ddp_spawn\" (find_unused_parameters="
                         "True); 2.x uses \"ddp\", which re-runs the script in each process. Pass strategy="
                         "\"ddp_spawn_find_unused_parameters_true\" to keep 1.9's launcher")
        if notes:
            line, col = self.ctx.position(self.module, original)
            self.ctx.report(CODE, "; ".join(notes) + f" ({tam.GUIDE})", Kind.NOTE, line, col)

    def _rebuild_args(self, mapped: tam.Mapped, updated: cst.Call) -> Optional[List[cst.Arg]]:
        out: List[cst.Arg] = []
        callbacks_done = not mapped.callbacks
        for e in mapped.entries:
            if e.name == "callbacks" and mapped.callbacks:
                value = _callbacks_value(getattr(e.value, "node", None), mapped.callbacks)
                if value is None:
                    self._mark([f"A.8/T11: add {', '.join(mapped.callbacks)} to this Trainer's callbacks ({tam.GUIDE})"])
                    value = getattr(e.value, "node", None) or cst.parse_expression(e.value.code)
                out.append(e.origin.with_changes(value=value))
                callbacks_done = True
                continue
            if not e.changed and e.origin is not None:
                out.append(e.origin)
                continue
            node = _new_value_node(e, None)
            template: cst.Arg = e.origin
            equal = template.equal if template.keyword is not None else cst.AssignEqual(
                cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
            out.append(template.with_changes(keyword=cst.Name(e.name), equal=equal, value=node, star=""))
        _strip_shared_comments(out, mapped.entries)
        if not callbacks_done:
            value = _callbacks_value(None, mapped.callbacks)
            template = updated.args[-1] if updated.args else cst.Arg(value=value)
            equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
            out.append(template.with_changes(keyword=cst.Name("callbacks"), equal=equal, value=value, star=""))
        return out

    # --- dict literals of Trainer kwargs
    def leave_Dict(self, original: cst.Dict, updated: cst.Dict) -> cst.Dict:
        if id(original) not in self.trainer_dicts:
            return updated
        entries: List[tam.Entry] = []
        for el in updated.elements:
            if isinstance(el, cst.StarredDictElement):
                entries.append(tam.Entry(None, _value(el.value), origin=el))
            else:
                v = _value(el.value)
                v.node = el.value
                entries.append(tam.Entry(literal(el.key), v, origin=el))
        quote = _quote_of([*(e.key for e in updated.elements if isinstance(e, cst.DictElement)),
                           *(e.value for e in updated.elements)])
        mapped = tam.map_arguments(entries, quote, self.facts.has_tune, False)
        self._finish(mapped, original, is_call=False)
        changed = any(e.changed for e in mapped.entries) or len(mapped.entries) != len(entries) or mapped.callbacks
        if not changed:
            return updated
        out = []
        callbacks_done = not mapped.callbacks
        for e in mapped.entries:
            if e.name == "callbacks" and mapped.callbacks:
                value = _callbacks_value(getattr(e.value, "node", None), mapped.callbacks)
                if value is None:
                    self._mark([f"A.8/T11: add {', '.join(mapped.callbacks)} to these Trainer callbacks ({tam.GUIDE})"])
                else:
                    out.append(e.origin.with_changes(value=value))
                    callbacks_done = True
                    continue
            if not e.changed:
                out.append(e.origin)
                continue
            template = e.origin
            key = template.key
            if isinstance(key, cst.SimpleString):
                key = key.with_changes(value=tam.py_repr(e.name, "'" if key.quote == "'" else '"'))
            out.append(template.with_changes(key=key, value=_new_value_node(e, None)))
        if len(out) == len(mapped.entries):
            _strip_shared_comments(out, mapped.entries)
        if not callbacks_done:
            template = updated.elements[-1]
            key = cst.SimpleString(tam.py_repr("callbacks", quote))
            out.append(cst.DictElement(key=key, value=_callbacks_value(None, mapped.callbacks),
                                       whitespace_before_colon=cst.SimpleWhitespace(""),
                                       whitespace_after_colon=cst.SimpleWhitespace(" "), comma=template.comma))
        return updated.with_changes(elements=_fix_commas(out, updated.elements) if out else [])


ARGPARSE_ACTIONS = frozenset(ARGPARSE_METHODS)
STRATEGY_CALLS = frozenset({"DDPStrategy", *REMOVED_STRATEGY_CLASSES})


class TrainerConstructorRule(GatedRule):
    code = CODE
    name = "trainer-arguments"
    summary = ("Trainer constructor arguments removed or changed in 2.0 (gpus, precision=16, strategy names, "
               "resume_from_checkpoint, positional arguments, legacy 1.x arguments) get their 2.x form with 1.9's meaning")
    spec_rows = ("T0-T9", "T11-T12", "T14-T32", "T-meth3", "A8-trainer-args", "B-1", "B-6")
    guide = f"Trainer arguments rows of the upgrade guide: {tam.GUIDE}"
    safety = Safety.PRESERVING
    description = __doc__ or ""
    triggers = ("Trainer", "trainer", "DDPStrategy", "Strategy(", "PL_INTER_BATCH_PARALLELISM", "PL_RECONCILE_PROCESS",
                "PL_FAULT_TOLERANT_TRAINING")
    coverage = {
        "T0": Handling.REWRITTEN, "T1": Handling.REWRITTEN, "T2": Handling.REWRITTEN, "T3": Handling.MARKED,
        "T4": Handling.REWRITTEN, "T5": Handling.REWRITTEN, "T6": Handling.REWRITTEN, "T7": Handling.REWRITTEN,
        "T8": Handling.MARKED, "T9": Handling.REWRITTEN, "T11": Handling.REWRITTEN, "T12": Handling.REWRITTEN,
        "T14": Handling.REWRITTEN, "T15": Handling.REWRITTEN, "T16": Handling.MARKED, "T17": Handling.MARKED,
        "T18": Handling.MARKED, "T19": Handling.MARKED, "T20": Handling.NOTED, "T21": Handling.REWRITTEN,
        "T22": Handling.NOTED, "T23": Handling.REWRITTEN, "T24": Handling.REWRITTEN, "T25": Handling.MARKED,
        "T26": Handling.MARKED, "T27": Handling.MARKED, "T28": Handling.REWRITTEN, "T29": Handling.NOTED,
        "T30": Handling.NO_CHANGE, "T31": Handling.MARKED, "T32": Handling.NO_CHANGE, "T-meth3": Handling.MARKED,
        "A8-trainer-args": Handling.REWRITTEN, "B-1": Handling.NOTED, "B-6": Handling.NOTED,
    }
    examples = (
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(gpus=2, precision=16, max_epochs=3)\n",
            "import pytorch_lightning as pl\n\n"
            "trainer = pl.Trainer(accelerator=\"gpu\", devices=2, precision=\"16-mixed\", max_epochs=3)\n",
            "gpus-and-precision",
        ),
        Example(
            "from pytorch_lightning import Trainer\n\ntrainer = Trainer(gpus=0, strategy=None, replace_sampler_ddp=False)\n",
            "from pytorch_lightning import Trainer\n\ntrainer = Trainer(use_distributed_sampler=False)\n",
            "cpu-and-explicit-none",
        ),
        Example(
            "import pytorch_lightning as pl\n\n"
            "trainer = pl.Trainer(max_epochs=1, resume_from_checkpoint=\"last.ckpt\")\n"
            "trainer.fit(model)\ntrainer.test(model)\n",
            "import pytorch_lightning as pl\n\n"
            "trainer = pl.Trainer(max_epochs=1)\n"
            "trainer.fit(model, ckpt_path=\"last.ckpt\")\ntrainer.test(model)\n",
            "resume-moves-to-fit",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(accelerator=\"cpu\", max_epochs=3)\n",
            None,
            "already-2x",
        ),
        Example(
            "from transformers import Trainer\n\ntrainer = Trainer(model=model, gpus=2)\n",
            None,
            "another-frameworks-trainer",
        ),
    )

    def may_need(self, text: str) -> bool:
        return may_import_pl_root(text)  # the gate's first test

    def needed(self, text: str, ctx: RuleContext) -> bool:
        # apply acts only with an import from a Lightning root, and then on: Lightning Trainer
        # calls (and the fit calls of those), Trainer-kwargs dict literals with a key the mapping
        # acts on, Trainer.<argparse method> calls, strategy classes, removed env var strings.
        facts = file_facts(text)
        if not facts.parsed:
            return True
        if not imports_pl_root(facts):
            return False
        if trainer_may_call(text, facts) or facts.calls & ARGPARSE_ACTIONS:
            return True
        if facts.calls & STRATEGY_CALLS and "fabric" not in text.lower():
            return True
        if any(v in text for v in REMOVED_ENV_VARS):
            return True
        return string_key(text, ACTIVE_DICT_KEYS)

    def apply(self, module: cst.Module, ctx: RuleContext) -> cst.Module:
        imp = _Imports()
        walk(module, imp)
        if not (imp.trainer_names or imp.package_names):
            return module
        facts = _Facts(imp)
        walk(module, facts)
        t = _Transformer(self, ctx, module, imp, facts)
        out = transform(module, t)
        for from_, name in dict.fromkeys(t.imports):
            out = ensure_import(out, from_, name)
        return out
