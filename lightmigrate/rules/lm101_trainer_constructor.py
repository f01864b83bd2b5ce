"""LM101: Trainer constructor arguments (spec A.3, A.8 "Trainer arguments").

Rewrites the arguments of ``Trainer(...)`` calls, and of dict literals that hold Trainer keyword
arguments (passed with ``**`` or recognised by their keys), with their 1.9 meaning: ``gpus=N``
becomes ``accelerator="gpu", devices=N`` (``gpus=0``/``None`` meant the CPU and is dropped),
``precision=16`` becomes ``"16-mixed"``, ``strategy="ddp"`` keeps 1.9's
``find_unused_parameters=True``, positional arguments become keywords, explicit ``None`` values
2.x rejects are dropped, ``resume_from_checkpoint`` moves to the ``fit`` call of that trainer,
``multiple_trainloader_mode`` moves into ``CombinedLoader(..., mode=...)`` around what the file's
``train_dataloader`` methods return (when every one returns loaders written out and the file's
Trainer arguments agree on one mode), the tuner flags of a Trainer whose ``tune()`` became
``Tuner`` calls (LM102) are dropped. What cannot be rewritten faithfully gets a marker; the silent default changes (B-1: the
accelerator default, T22: ``ddp_spawn`` becomes ``ddp``) are one NOTE per ``Trainer(...)`` call.
The argument mapping itself lives in :mod:`lightmigrate.catalog.trainer_args`.

What a careful human writes (issue 23): ``gpus=<value>`` whose type the file gives (an argparse
option with ``type=int``/``str``, a parameter annotated ``Optional[int]``) gets the form exactly
right for that type (``accelerator="gpu" if args.gpus else "cpu", devices=args.gpus or "auto"``
for an int or None); of another value, 1.9's test is written once in a local above the statement;
``gpus=trainer.gpus`` (the attribute 1.8 removed) becomes ``accelerator="gpu",
devices=trainer.device_ids``; values 2.x takes as they are (``precision=32``) stay; a ``**{}``
left empty goes; a rewritten call longer than the project's line length (black's or ruff's
``line-length``, else 88) gets one argument per line.

Across the project (issue 25): a project Trainer subclass (``class Trainer(pl.Trainer)``, found
through the class index and any import path) has its ``super().__init__(...)`` forwarding
migrated (its own parameters keep their 1.x names for its callers) and the calls of it migrated
for the arguments that reach Lightning through its ``**kwargs``; a dict that provably reaches a
Trainer (``Trainer(**config)``, with ``config`` built here or by another module's name or
function: ``dict(...)``, ``config["key"] = value``, ``config.update(...)``) is migrated where it
is set, and a ``**spread`` whose contents cannot be followed gets a marker naming what 2.x
rejects. A spread of a function's own parameter (``def run(trainer_kwargs): Trainer(**trainer_kwargs)``,
also a class's ``__init__`` or a method, or its ``**kwargs``) is followed across the project: every
call of the function in any file (imported by name, under an alias, through its module, a star
import; ``self.method(...)``, or a method of an instance the scope makes) that gives the parameter
a dict literal, ``dict(...)`` or a name the calling scope binds only to such dicts gets that dict
migrated where it is written (for ``**kwargs``, the call's own keywords), also in a file that never
mentions the Trainer. The spread keeps its marker only when some call cannot be followed (it
gives a parameter of its own, a call's result, ``**`` arguments; the function is handed on as a
value; a method of that name is called on an object of unknown class), naming each such call by
its file and function, or when no call of it exists in the project (a public API: its callers
outside the project may pass anything); no rewrite of that line keeps the 1.9 meaning short of
translating the arguments at run time, which changes what the function accepts. A dict whose
keys are a config's fields at run time, filtered by the Trainer's own parameters
(pytorch_tabular's ``{k: v for k, v in self.config.items() if k in <Trainer parameters>}``), is
marked too: 2.x drops the removed arguments among them without an error, which
keys come is known only at run time, and their 2.x forms are code of other kinds (module hooks,
Tuner calls, a ``devices`` value). A script that builds its parser with ``Trainer.add_argparse_args`` and its Trainer with
``Trainer.from_argparse_args`` gets explicit ``add_argument`` calls, parsed as 1.9.5 did, for the
Trainer options it uses, and a ``Trainer(...)`` call of them. The options it uses are those its
own code reads from the namespace, names in a string (``"--max_epochs"``) or gives to
``set_defaults``, and those the project's tests and shell scripts pass on a command line
(``ProjectIndex.cli_options``). The others are no longer declared: that is the decision a careful
human makes, and it keeps 1.9's behaviour for every command line the project uses, since 1.9's
``from_argparse_args`` passed each option with its default, the Trainer's own default, when the
command line did not give it (a command line that gives one of them now stops with argparse's
"unrecognized arguments" error instead of being silently dropped; the NOTE says so). A script that
uses none of them loses ``add_argparse_args`` altogether and gets ``Trainer(**the other
arguments)``.

``find`` decides on Python's ``ast``: which calls make a Lightning Trainer, what the mapping does
to their arguments (a call or dict it would leave as it is, unmarked and without a note, is no
site), which fit calls take a moved ``resume_from_checkpoint``. ``fix`` finds the libcst nodes at
the sites' positions and rewrites them with the same mapping.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from lightmigrate.analysis.ast_nodes import NodeVisitor, ast_nodes
from lightmigrate.cst.helpers import (add_markers, ensure_import, fresh_name, lightning_root, code_of, marker_text,
                                      module_text)
from lightmigrate import MARKER_PREFIX
from lightmigrate.output.findings import Kind
from lightmigrate.catalog import trainer_args as tam
from lightmigrate.rules.base import Example, Handling, Rule, RuleContext, Safety, Site, SourceFile
from lightmigrate.rules.shared.trainer_calls import (
    NOT_LITERAL,
    LightningImports,
    Locator,
    Place,
    Text,
    call_args,
    cst_last_name,
    cst_literal,
    dotted,
    is_lightning_trainer,
    last_name,
    literal as ast_literal,
    statements,
)
from lightmigrate.rules.shared.trainer_kwargs import TRAINER_ARGS
from lightmigrate.rules.shared.value_kinds import ValueKinds, trainer_gpus_argument
from lightmigrate.rules.shared.trainer_subclass import Plan, SubclassNames, from_module, plan_for
from lightmigrate.rules.shared.trainer_dicts import (
    Builders,
    block_statements,
    builders,
    fresh_opaque,
    module_function,
    names_in,
    none_defaults_loop,
    opaque_how,
    returned,
    statement_of,
    value_builders,
)
from lightmigrate.analysis.trainer_feeds import Feed
from lightmigrate.analysis.trainer_spreaders import Spreader, passed_parameter, trainer_spreaders
from lightmigrate.rules.shared.spread_calls import calls_in, unfollowed
from lightmigrate.analysis.cli_options import options_in
from lightmigrate.analysis.project import ProjectIndex
from lightmigrate.cst.walk import transform, PrunedTransformer, walk
from lightmigrate.cst.wrap import statement_value, wrap_statement

CODE = "LM101"
TRAINER_BASES = frozenset({"Trainer"})  # a class with a base of this name may be a project Trainer subclass
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
literal = cst_literal  # the Python value of a literal libcst expression, or tam.NOT_LITERAL


def _value(node: cst.BaseExpression) -> tam.Value:
    return tam.Value(literal=literal(node), code=code_of(node),
                     simple=isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)))


def _quote_of(nodes) -> str:
    for n in nodes:
        if isinstance(n, cst.SimpleString):
            return "'" if n.quote == "'" else '"'
    return '"'


# --- find: on Python's ast ---------------------------------------------------------------------

def _ast_value(node: ast.expr, text: Text) -> tam.Value:
    return tam.Value(literal=ast_literal(node, text), code=text.segment(node),
                     simple=isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)))


def _keyword(call: ast.Call, name: str) -> Optional[ast.keyword]:
    return next((k for k in call.keywords if k.arg == name), None)


def _fit_can_take_ckpt(call: ast.Call) -> bool:
    args = call_args(call)
    return not any(a.star for a in args) and len([a for a in args if a.keyword is None]) < 5


class _Facts(NodeVisitor):
    """One walk over the file: the Lightning Trainer calls and the fit calls (per function and
    receiver, for resume_from_checkpoint), the names spread into Trainer calls, the dict
    literals that may hold Trainer arguments, the other calls the rule acts on, tune() calls
    and argparse options."""

    def __init__(self, imports: LightningImports, text: Text, subs: Optional[SubclassNames] = None) -> None:
        self.imports = imports
        self.text = text
        self.subs = subs
        self.scope: List[Place] = [(0, 0)]  # the functions around (their places)
        # the classes around, innermost last: (the plan of super().__init__ in its __init__:
        # None when it is not a Trainer; "lightning" when its base is Lightning's Trainer)
        self.classes: List[object] = []
        self.functions: List[str] = []
        self.trainer_calls: List[ast.Call] = []
        self.sub_calls: List[Tuple[ast.Call, Plan]] = []  # calls of project Trainer subclasses
        self.scope_nodes: List[ast.AST] = []  # the functions around (their nodes)
        # the ``**value`` arguments of the Trainer calls: (the function around or None, the call,
        # the value, whether the call is ``super().__init__`` of a Trainer subclass, and
        # the keywords a project Trainer subclass takes itself, which stay)
        self.spreads: List[Tuple[Optional[ast.AST], ast.Call, ast.expr, bool, Tuple[str, ...]]] = []
        self.resume: Dict[Tuple[Place, str], List[ast.Call]] = {}  # (function, target) -> Trainer calls
        self.fits: Dict[Tuple[Place, str], List[ast.Call]] = {}  # (function, receiver) -> fit calls
        self.spread_names: Set[str] = set()
        self.spread_dicts: List[ast.Dict] = []  # Trainer(**{...})
        self.assigned_dicts: List[Tuple[Set[str], ast.Dict]] = []  # name = {...}
        self.section_dicts: List[ast.Dict] = []  # {"trainer": {...}}
        self.other_calls: List[Tuple[ast.Call, str]] = []  # (call, action)
        self.has_tune = False
        self.bound: Dict[Place, Tuple[Place, str]] = {}  # Trainer call -> (function, target) it is bound to
        self.tuners: Set[Tuple[Place, str]] = set()  # (function, argument) of Tuner(...) calls
        self.train_loaders: List[ast.FunctionDef] = []  # train_dataloader methods
        self.argparse_options: List[str] = []  # parser.add_argument("--gpus", ...) of changed Trainer args
        self.argparse_trainer = False  # Trainer.add_argparse_args(parser) in the file
        self.call_scopes: Dict[int, Optional[ast.AST]] = {}  # id of a Lightning Trainer call -> its function
        self.dropped: Set[int] = set()  # ids of ``**name`` values whose emptied dict goes (_emptied_names)

    def _function(self, node) -> None:
        self.scope.append((node.lineno, node.col_offset))
        self.functions.append(node.name)
        self.scope_nodes.append(node)
        self.generic_visit(node)
        self.scope_nodes.pop()
        self.functions.pop()
        self.scope.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.train_loaders += [f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "train_dataloader"]
        parent: object = None
        if any(is_lightning_trainer(b, self.imports) for b in node.bases):
            parent = "lightning"
        elif self.subs is not None and self.subs.any():
            parent = next((p for p in (self.subs.plan(b) for b in node.bases) if p is not None), None)
        self.classes.append(parent)
        depth = len(self.functions)
        self.functions.append("<class>")
        self.generic_visit(node)
        del self.functions[depth:]
        self.classes.pop()

    def _super_init(self, func: ast.expr) -> object:
        """For ``super().__init__`` in the ``__init__`` of a class deriving from a Trainer: what
        it calls ("lightning" or the parent's plan), else None."""
        if not (self.classes and len(self.functions) >= 2 and self.functions[-1] == "__init__"
                and self.functions[-2] == "<class>" and isinstance(func, ast.Attribute) and func.attr == "__init__"):
            return None
        v = func.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
            return self.classes[-1]
        return None

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Assign(self, node: ast.Assign) -> None:
        value = node.value
        if len(node.targets) == 1 and isinstance(value, ast.Call) and is_lightning_trainer(value.func, self.imports):
            key = (self.scope[-1], self.text.segment(node.targets[0]))
            if _keyword(value, "resume_from_checkpoint") is not None:
                self.resume.setdefault(key, []).append(value)
            self.bound[_place(value)] = key
        if isinstance(value, ast.Dict):
            self.assigned_dicts.append(({t.id for t in node.targets if isinstance(t, ast.Name)}, value))
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for k, v in zip(node.keys, node.values):
            if k is not None and isinstance(v, ast.Dict) and ast_literal(k, self.text) in _TRAINER_DICT_KEYS:
                self.section_dicts.append(v)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        target = "lightning" if is_lightning_trainer(func, self.imports) else self._super_init(func)
        if target is None and self.subs is not None and isinstance(func, (ast.Name, ast.Attribute)):
            target = self.subs.plan(func)
        if isinstance(target, Plan) and target.plain:
            target = "lightning"
        if target == "lightning" and any(isinstance(a, ast.Starred) for a in node.args) and \
                self._super_init(func) is not None:
            # super().__init__(*args, **kwargs) of a Trainer subclass: its callers' positional
            # arguments become keywords where they are (a subclass without parameters of its own
            # is called as Lightning's Trainer), so ``*args`` stays, unmarked
            target = _FORWARDING
        if isinstance(target, Plan) and target.reaches:
            self.sub_calls.append((node, target))
        if target == "lightning" or (isinstance(target, Plan) and target.reaches):
            if target == "lightning":
                self.trainer_calls.append(node)
                self.call_scopes[id(node)] = self.scope_nodes[-1] if self.scope_nodes else None
            super_init = self._super_init(func) is not None
            for k in node.keywords:
                if k.arg is None:
                    self.spreads.append((self.scope_nodes[-1] if self.scope_nodes else None, node, k.value, super_init,
                                         tuple(sorted(target.own)) if isinstance(target, Plan) else ()))
                if k.arg is None and isinstance(k.value, ast.Name):
                    self.spread_names.add(k.value.id)
                elif k.arg is None and isinstance(k.value, ast.Dict):
                    self.spread_dicts.append(k.value)
        elif isinstance(func, ast.Attribute) and func.attr == "fit":
            self.fits.setdefault((self.scope[-1], self.text.value_spelling(func)), []).append(node)
        elif isinstance(func, ast.Attribute) and func.attr in ARGPARSE_METHODS and (
                (dotted(func.value) or "").endswith("Trainer") or is_lightning_trainer(func.value, self.imports)):
            self.other_calls.append((node, "argparse"))
        elif last_name(func) in STRATEGY_CALLS and dotted(func) is not None:
            self.other_calls.append((node, "ddp" if last_name(func) == "DDPStrategy" else "strategy-class"))
        if last_name(func) == "Tuner" and len(node.args) == 1 and not node.keywords and \
                isinstance(node.args[0], (ast.Name, ast.Attribute)):
            self.tuners.add((self.scope[-1], self.text.segment(node.args[0])))
        if isinstance(func, ast.Attribute):
            if func.attr == "tune":
                self.has_tune = True
            elif func.attr == "add_argparse_args":
                self.argparse_trainer = True
            elif func.attr == "add_argument":
                for a in node.args:
                    v = ast_literal(a, self.text)
                    if isinstance(v, str) and v.startswith("--"):
                        name = v[2:].replace("-", "_")
                        if name in CHANGED_OPTIONS:
                            self.argparse_options.append(name)
        self.generic_visit(node)

    def resume_plans(self) -> Tuple[Set[Place], Dict[Place, ast.Call]]:
        """The Trainer calls (by position) whose resume_from_checkpoint moves to their fit calls,
        and those fit calls (by position) -> their Trainer call."""
        moved: Set[Place] = set()
        fit_trainers: Dict[Place, ast.Call] = {}
        for key, calls in self.resume.items():
            fits = self.fits.get(key, [])
            if len(calls) != 1 or not fits or not all(_fit_can_take_ckpt(f) for f in fits):
                continue
            value = _keyword(calls[0], "resume_from_checkpoint").value
            if ast_literal(value, self.text) is NOT_LITERAL and not isinstance(value, (ast.Name, ast.Attribute)):
                continue
            moved.add(_place(calls[0]))
            for f in fits:
                if _keyword(f, "ckpt_path") is not None:
                    continue  # 1.9: an explicit fit(ckpt_path=) won over resume_from_checkpoint
                if len([a for a in call_args(f) if a.keyword is None]) < 5:
                    fit_trainers[_place(f)] = calls[0]
        return moved, fit_trainers

    def tuned(self, call: ast.Call) -> bool:
        """Whether this Trainer call is bound to a name that ``Tuner(...)`` gets in the same
        function (LM102's rewrite of its ``tune()``: the Tuner calls run what its flags asked)."""
        key = self.bound.get(_place(call))
        return key is not None and key in self.tuners

    def combine(self, nodes: List[ast.AST]) -> Tuple[Optional[str], List[ast.Return]]:
        """T17: the ``multiple_trainloader_mode`` every Trainer call (also of a project Trainer
        subclass) and Trainer-argument dict of the file that gives one agrees on (a string other
        than 1.9's default), and the ``return`` statements of the file's ``train_dataloader``
        methods, when each returns a dict, list or tuple of loaders written out (or a name bound
        only to one in its function): each becomes ``CombinedLoader(..., mode=...)``. (None, [])
        otherwise, also when the file names the option anywhere else (``nodes``: the file's; a
        ``dict(...)`` call, a ``d["..."] = ...``, a parsed option), whose value is not known here."""
        values = []
        for call in [*self.trainer_calls, *(c for c, p in self.sub_calls if TRAINLOADER_MODE not in p.own)]:
            k = _keyword(call, TRAINLOADER_MODE)
            if k is not None:
                values.append(ast_literal(k.value, self.text))
        for d in self.trainer_dicts():
            for k, v in zip(d.keys, d.values):
                if k is not None and ast_literal(k, self.text) == TRAINLOADER_MODE:
                    values.append(ast_literal(v, self.text))
        modes = {v for v in values if isinstance(v, str)}
        if len(modes) != 1 or len(values) != sum(isinstance(v, str) for v in values) or not self.train_loaders:
            return None, []
        if len(values) != sum(1 for n in nodes if (isinstance(n, ast.keyword) and n.arg == TRAINLOADER_MODE)
                              or (isinstance(n, ast.Constant) and n.value == TRAINLOADER_MODE)
                              or (isinstance(n, ast.Attribute) and n.attr == TRAINLOADER_MODE)):
            return None, []
        mode = modes.pop()
        if mode == "max_size_cycle":
            return None, []
        returns: List[ast.Return] = []
        for func in self.train_loaders:
            found = _loader_returns(func)
            if not found:
                return None, []
            returns += found
        return mode, returns

    def keys_ok(self, d: ast.Dict) -> bool:
        """Whether every key of ``d`` (spreads aside) is a Trainer argument's name, and it has one."""
        keys = [ast_literal(k, self.text) for k in d.keys if k is not None]
        return bool(keys) and all(isinstance(k, str) and k in ALL_ARGS for k in keys)

    def trainer_dicts(self) -> List[ast.Dict]:
        """The dict literals that hold Trainer arguments (in no particular order, once each)."""
        found = [d for d in self.spread_dicts + self.section_dicts if self.keys_ok(d)]
        found += [d for names, d in self.assigned_dicts
                  if (names & self.spread_names or len(d.keys) >= 2) and self.keys_ok(d)]
        return list({_place(d): d for d in found}.values())


def _place(node: ast.AST) -> Place:
    return (node.lineno, node.col_offset)


_LOADERS = (ast.Dict, ast.List, ast.Tuple)
TRAINLOADER_MODE = "multiple_trainloader_mode"


def _loader_returns(func: ast.FunctionDef) -> List[ast.Return]:
    """The ``return`` statements of a ``train_dataloader`` when every one returns a dict, list
    or tuple display (no ``*``/``**`` in it), or a name that the function binds only to such a
    display; [] otherwise (also when it has no return, or a nested function or yield)."""
    returns: List[ast.Return] = []
    bound: Dict[str, List[ast.expr]] = {}
    for node in ast_nodes(func):
        if node is not func and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                                  ast.Yield, ast.YieldFrom)):
            return []
        if isinstance(node, ast.Return):
            returns.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
            for t in targets:
                for n in ast_nodes(t) if t is not None else ():
                    if isinstance(n, ast.Name):
                        value = node.value if isinstance(node, ast.Assign) and t is n else None
                        bound.setdefault(n.id, []).append(value)

    def display(v: Optional[ast.expr]) -> bool:
        if isinstance(v, ast.Dict):
            return None not in v.keys
        return isinstance(v, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in v.elts)

    for r in returns:
        v = r.value
        if isinstance(v, ast.Name):
            if not bound.get(v.id) or not all(display(b) for b in bound[v.id]):
                return []
        elif not display(v):
            return []
    return returns


def _effect(mapped: tam.Mapped, entries: List[tam.Entry]) -> bool:
    """Whether the mapping changes, marks or notes anything (what a Dict site does)."""
    return bool(mapped.markers or mapped.imports or mapped.notes or mapped.callbacks
                or len(mapped.entries) != len(entries) or any(e.changed for e in mapped.entries))


_FORWARDING = Plan(frozenset(), False, True)  # super().__init__(*args, **kwargs): see _Facts.visit_Call
OWN = "\0own"  # the name of an entry a project Trainer subclass takes itself: the mapping leaves it


def _with_unknown(data: tuple, spreads: List[str]) -> tuple:
    """A call site's data with the spreads of unknown contents last (after tuned, combined, own,
    positional_own)."""
    if len(data) == 5:
        data = (*data, None, False)
    return (*data, tuple(spreads))


def _call_acts(call: ast.Call, facts: _Facts, handled: bool, tuned: bool = False, combined: bool = False,
               plan: Optional[Plan] = None, has_tune: Optional[bool] = None) -> bool:
    """Whether the fix changes, marks or reports something at this Lightning Trainer call (or
    at this call of a project Trainer subclass, with its ``plan``)."""
    text = facts.text
    entries: List[tam.Entry] = []
    pos = 0
    empty = False
    for arg in call_args(call):
        if arg.star == "**" and (_empties(arg.value, facts) or id(arg.value) in facts.dropped):
            empty = True  # ``**{}`` (or a literal dict the mapping empties): the fix drops it
            continue
        if plan is not None and (arg.keyword in plan.own or (arg.keyword is None and not arg.star
                                                             and plan.positional_own)):
            entries.append(tam.Entry(OWN, _ast_value(arg.value, text)))
            continue
        if arg.star == "*":
            if plan is not None:  # the subclass's own parameters take them (or its callers' are keywords)
                entries.append(tam.Entry(OWN, _ast_value(arg.value, text)))
                continue
            return True  # T0 marker
        if arg.star == "**":
            entries.append(tam.Entry(None, _ast_value(arg.value, text)))
        elif arg.keyword is None:
            if pos >= len(tam.POSITIONAL_ORDER):
                return False  # more positional arguments than 1.9 took: left alone
            entries.append(tam.Entry(tam.POSITIONAL_ORDER[pos], _ast_value(arg.value, text), changed=True))
            pos += 1
        else:
            entries.append(tam.Entry(arg.keyword, _ast_value(arg.value, text)))
    if facts.argparse_trainer or facts.argparse_options:
        if any(e.name is None and (e.value.code.startswith("vars(") or e.value.code.endswith(".__dict__"))
               for e in entries):
            return True  # T-meth3 marker
    if handled or empty:
        return True
    mapped = tam.map_arguments(entries, '"', facts.has_tune if has_tune is None else has_tune, handled,
                               tuned=tuned, combined=combined, known=ALL_ARGS if plan is None else None)
    if plan is not None:
        return _effect(mapped, entries)
    spread = any(e.name is None for e in mapped.entries)
    if not spread and (not mapped.has_accelerator or (mapped.multi_device and not mapped.has_strategy)):
        return True  # B-1 / T22 note
    return _effect(mapped, entries)


def _empties(value: ast.expr, facts: _Facts) -> bool:
    """Whether ``**value`` spreads a dict literal that is empty, or that the mapping leaves empty
    (``**{"gpus": None}``): nothing a careful human would write."""
    if not isinstance(value, ast.Dict):
        return False
    if not value.keys:
        return True
    if not facts.keys_ok(value):
        return False
    text = facts.text
    entries = [tam.Entry(ast_literal(k, text), _ast_value(v, text)) for k, v in zip(value.keys, value.values)]
    mapped = tam.map_arguments(entries, '"', facts.has_tune, False)
    return not mapped.entries and not mapped.callbacks and not mapped.markers


def _emptied_names(call: ast.Call, facts: _Facts, function: Optional[ast.AST],
                   lines: List[str]) -> List[Site]:
    """``name = {...}`` then ``Trainer(**name)`` in one function, where that dict is (or the mapping
    leaves it) empty and the spread is the name's only use: a "drop-dict" site at the assignment
    (the statement goes) and a "drop-spread" site at the spread (it goes). Not when the
    assignment has a comment (it would be lost) or the function binds the name otherwise."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    out: List[Site] = []
    for k in call.keywords:
        if k.arg is not None or not isinstance(k.value, ast.Name):
            continue
        name = k.value.id
        stmts = [st for st in function.body if isinstance(st, ast.Assign) and len(st.targets) == 1
                 and isinstance(st.targets[0], ast.Name) and st.targets[0].id == name]
        uses = [n for n in ast_nodes(function) if isinstance(n, ast.Name) and n.id == name]
        if len(stmts) != 1 or len(uses) != 2 or any(p.arg == name for p in ast_nodes(function.args)
                                                    if isinstance(p, ast.arg)):
            continue
        assign = stmts[0]
        if not (isinstance(assign.value, ast.Dict) and _empties(assign.value, facts)) or assign.lineno > call.lineno:
            continue
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast_nodes(function)):
            continue
        above = lines[assign.lineno - 2].strip() if assign.lineno >= 2 else ""
        if above.startswith("#") or "#" in "".join(lines[assign.lineno - 1:assign.end_lineno or assign.lineno]):
            continue
        out.append(Site(assign.lineno, assign.col_offset, name, "drop-dict"))
        out.append(Site(k.value.lineno, k.value.col_offset, name, "drop-spread"))
    return out


def _kind_sites(call: ast.Call, kinds: ValueKinds, function: Optional[ast.AST]) -> List[Site]:
    """A "kind" site at the ``gpus=`` value of this Trainer call whose type the file gives
    (data: its kind, see rules.shared.value_kinds): the fix writes the short form for it."""
    k = _keyword(call, "gpus")
    if k is not None and trainer_gpus_argument(call) is k.value:
        return [Site(k.value.lineno, k.value.col_offset, "gpus", "kind", tam.KIND_TRAINER_GPUS)]
    kind = kinds.kind(k.value, function) if k is not None else ""
    return [Site(k.value.lineno, k.value.col_offset, "gpus", "kind", kind)] if kind else []


def _dict_acts(d: ast.Dict, facts: _Facts, has_tune: Optional[bool] = None, own: Tuple[str, ...] = (),
               combined: bool = False) -> bool:
    text = facts.text
    entries = [tam.Entry(None if k is None else ast_literal(k, text), _ast_value(v, text))
               for k, v in zip(d.keys, d.values)]
    entries = [tam.Entry(OWN, e.value) if e.name in own else e for e in entries]
    return _effect(tam.map_arguments(entries, '"', facts.has_tune if has_tune is None else has_tune, False,
                                     combined=combined), entries)


def _key_entry(stmt: ast.Assign, text: Text) -> tam.Entry:
    key = stmt.targets[0].slice  # type: ignore[attr-defined]
    return tam.Entry(key.value, _ast_value(stmt.value, text))


def _key_acts(stmt: ast.Assign, facts: _Facts, has_tune: bool) -> bool:
    entries = [_key_entry(stmt, facts.text)]
    return _effect(tam.map_arguments(entries, '"', has_tune, False), entries)


# What the T-args marker on a spread of unknown contents names.
REJECTED = ("2.x rejects the removed 1.x Trainer arguments "
            "(gpus, tpu_cores, ipus, num_processes -> accelerator/devices; replace_sampler_ddp -> "
            "use_distributed_sampler; resume_from_checkpoint -> fit(ckpt_path=); auto_lr_find, "
            "auto_scale_batch_size -> Tuner; auto_select_gpus, amp_backend, amp_level, move_metrics_to_cpu, "
            "multiple_trainloader_mode, track_grad_norm, weights_summary, checkpoint_callback, "
            "progress_bar_refresh_rate) and reads precision=16 as \"16-mixed\"")
UNKNOWN_SPREAD = "lightmigrate cannot see what `**{}` holds; " + REJECTED + ": migrate them where it is filled"


# The removed 1.x arguments a filter by the Trainer's parameters leaves out on 2.x.
REMOVED_NAMES = ("gpus, tpu_cores, ipus, num_processes, auto_select_gpus, replace_sampler_ddp, resume_from_checkpoint, "
                 "auto_lr_find, auto_scale_batch_size, amp_backend, amp_level, move_metrics_to_cpu, "
                 "multiple_trainloader_mode, track_grad_norm, weights_summary, checkpoint_callback, "
                 "progress_bar_refresh_rate")


def unknown_spread_reason(spread) -> str:
    """The T-args marker's text for a spread of unknown contents: its text; ("param", text,
    function, parameter, whether that is the function's ``**kwargs``) when it passes on a
    parameter; ("keys", name, how its keys are made, whether a filter by the Trainer's own
    parameters keeps them) for a dict the function makes with keys that cannot be read."""
    if isinstance(spread, str):
        return UNKNOWN_SPREAD.format(spread)
    if spread[0] == "keys":
        _, name, how, filtered = spread
        if filtered:
            return (f"the keys of `**{name}` come from {how}, kept when they are parameters of the Trainer: "
                    f"1.9 took the removed 1.x arguments among them ({REMOVED_NAMES}), 2.x leaves them out "
                    "without an error, so what they did is silently gone. No rewrite of this line is faithful: "
                    "which keys the source holds is known only at run time, and their 2.x forms are code of other "
                    "kinds (module hooks for track_grad_norm, Tuner calls for auto_lr_find, a devices value for "
                    "auto_select_gpus): give them their 2.x form where the source is filled")
        return f"the keys of `**{name}` come from {how}, which lightmigrate cannot read; {REJECTED}: migrate them there"
    _, text, function, param, kwarg, *missing = spread
    what = f"the keyword arguments `{function}()` takes (`**{param}`)" if kwarg else \
        f"`{param}`, a parameter of `{function}()`"
    if missing:  # read over the project: the calls that cannot be followed (the others are migrated)
        calls = missing[0]
        if not calls:
            where = ("no call of it in this project gives it anything, so what reaches the Trainer comes from "
                     "callers outside the project (a public API, a config naming the function), which may pass "
                     "anything")
        else:
            where = ("the dicts its calls in this project write are migrated where they are written, but what "
                     f"these calls give cannot be followed: {'; '.join(calls)}")
        return (f"`**{text}` passes on {what}, and {where}; {REJECTED}. No rewrite of this line is faithful: "
                "it cannot tell which of those arguments come, and giving them their 2.x form here would mean "
                "translating them at run time, a change of what the function accepts: migrate them where "
                "the callers build them")
    return (f"`**{text}` passes on {what}, so what reaches the Trainer is what the callers of `{function}()` "
            f"give (the dicts this file's own calls give are migrated where they are written), and callers "
            f"outside this file may pass anything; {REJECTED}. No rewrite of this line is faithful: it cannot "
            "tell which of those arguments come, and giving them their 2.x form here would mean translating "
            "them at run time, a change of what the function accepts: migrate them where the callers build them")


def _passed_parameter(scope: Optional[ast.AST], value: ast.expr) -> Optional[Tuple[str, str, bool]]:
    """(function, parameter, whether it is ``**kwargs``) when ``value`` is a parameter of the
    function ``scope`` that the function does not rebind (``kwargs``, ``kwargs or {}``)."""
    passed = passed_parameter(scope, value)
    return None if passed is None else (scope.name, *passed)  # type: ignore[union-attr]


def _default_of(func: Optional[ast.AST], param: str) -> Builders:
    """The dict a parameter of ``func`` defaults to (``trainer_kwargs=dict(gpus=1)``), if any."""
    out = Builders()
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = func.args
        positional = [*a.posonlyargs, *a.args]
        pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults)) + [
            (p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
        for p, d in pairs:
            if p.arg == param:
                value_builders(d, out)
    return out


_PASSES_ON = " passes on "


def _without_stale(node, whys: List[str]):
    """``node`` without the T-args markers of a spread of a parameter that another run wrote
    with other text (the calls it names moved, or are migrated now): one marker per spread."""
    prefixes = [marker_text(CODE, w[:w.index(_PASSES_ON) + len(_PASSES_ON)]) for w in whys
                if w.startswith("T-args: `**") and _PASSES_ON in w]
    if not prefixes:
        return node
    current = {marker_text(CODE, w) for w in whys}
    kept = [line for line in node.leading_lines
            if line.comment is None or line.comment.value in current
            or not any(line.comment.value.startswith(p) for p in prefixes)]
    return node if len(kept) == len(node.leading_lines) else node.with_changes(leading_lines=kept)


def _spreader_title(sp: Spreader) -> str:
    """How the marker names a spreader: ``train``, ``Runner`` (its ``__init__``), ``Runner.fit``."""
    return f"{sp.owner}.{sp.name}" if sp.is_method else sp.name


class _Flows:
    """The dicts that reach this file's Trainer calls through names, and those of this file that
    reach other files' Trainer calls (the index's feeds): the statements that build them, with
    whether the Trainer they reach is tuned; and the spreads whose contents cannot be followed."""

    def __init__(self, tree: ast.Module, facts: _Facts, feeds: List[Feed], project, path: str = "",
                 spreaders: Sequence[Spreader] = ()) -> None:
        self.dicts: Dict[Place, Tuple[ast.Dict, bool]] = {}
        # calls of a function that spreads its ``**kwargs`` into a Trainer: (call, plan, has_tune)
        self.kwarg_calls: List[Tuple[ast.Call, Plan, bool]] = []
        self.calls: Dict[Place, Tuple[ast.Call, bool]] = {}
        self.keys: Dict[Place, Tuple[ast.Assign, bool]] = {}
        # Trainer call -> the spreads it cannot follow (see unknown_spread_reason)
        self.unknown: Dict[Place, List[object]] = {}
        if spreaders:
            self._callers(tree, facts, path, project, spreaders)
        if not facts.spreads and not feeds:
            return
        imported = {a.asname or a.name for s, _ in statements(tree.body) if isinstance(s, ast.ImportFrom)
                    for a in s.names}
        local_functions = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}

        def from_call(value: ast.expr) -> bool:
            return isinstance(value, ast.Call) and (
                (isinstance(value.func, ast.Name) and value.func.id in imported | local_functions)
                or isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
                and value.func.value.id in imported)

        for scope, call, value, super_init, own in facts.spreads:
            body = scope.body if scope is not None else tree.body  # type: ignore[attr-defined]
            known = False
            if isinstance(value, ast.Dict):
                known = True
            elif isinstance(value, ast.Name):
                found = builders(body, value.id)
                if not found and scope is not None and not _binds(scope, value.id):
                    found = builders(tree.body, value.id)
                self._add(found, facts.has_tune, own, tree, body)
                known = bool(found) or value.id in imported or any(
                    from_call(v) for v in _assigned_values(body, value.id)) or (
                    super_init and scope is not None and _kwarg_name(scope) == value.id)
            elif from_call(value):
                known = True
            elif (facts.argparse_trainer or facts.argparse_options) and (
                    text_of(facts, value).startswith("vars(") or text_of(facts, value).endswith(".__dict__")):
                known = True  # the T-meth3 marker says it
            if not known:
                spelled = text_of(facts, value)
                if not isinstance(value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
                    spelled = f"({spelled})"
                passed = _passed_parameter(scope, value)
                spreader = None if passed is None else next(
                    (sp for sp in spreaders if sp.path == path and sp.param == passed[1]
                     and sp.line == call.lineno), None)
                if spreader is None:
                    self.unknown.setdefault(_place(call), []).append(
                        spelled if passed is None else ("param", spelled, *passed))
                    continue
                # what the callers across the project give the parameter: their dicts are
                # migrated where they are written (``_callers``); the calls that give something
                # else keep a marker here, naming them
                self._add(_default_of(scope, spreader.param), facts.has_tune, own, tree, tree.body)
                missing = unfollowed(project, spreader, (path, tree))
                if missing is None or missing:  # (None: no call in the project)
                    self.unknown.setdefault(_place(call), []).append(
                        ("param", spelled, _spreader_title(spreader), spreader.param, spreader.kwarg,
                         tuple(missing or ())))
            elif isinstance(value, ast.Name) and fresh_opaque(body, value.id):
                # keys set by name around a dict of keys that cannot be read (pytorch_tabular's
                # {k: v for k, v in self.config.items() if k in <the Trainer's parameters>})
                how = opaque_how(body, value.id, facts.text.segment)
                scope_text = facts.text.segment(scope) if scope is not None else ""
                filtered = "signature(" in scope_text and any(
                    isinstance(v, ast.DictComp) and any(g.ifs for g in v.generators)
                    for v in _assigned_values(body, value.id))
                self.unknown.setdefault(_place(call), []).append(("keys", value.id, how, filtered))
        for feed in feeds:
            own: Tuple[str, ...] = ()
            if feed.callee != "lightning":
                plan = _plan_of(project, feed)
                if plan is None or not plan.reaches:
                    continue
                own = tuple(sorted(plan.own))
            if feed.kind == "value":
                self._add(builders(tree.body, feed.name), feed.has_tune, own, tree, tree.body)
            else:
                func = module_function(tree, feed.name)
                if func is not None:
                    self._add(returned(func), feed.has_tune, own, tree, func.body)  # type: ignore[attr-defined]

    def _callers(self, tree: ast.Module, facts: _Facts, path: str, project, spreaders: Sequence[Spreader]) -> None:
        """The dicts this file's calls of the functions that spread a parameter into a Trainer
        (in this file or another) give that parameter, where the call can be followed; the calls
        of those that spread their ``**kwargs`` (``kwarg_calls``)."""
        given, _ = calls_in(tree, path, list(spreaders), facts.text.segment)
        for g in given:
            sp = g.spreader
            if not g.followed:
                continue
            own: Tuple[str, ...] = ()
            if sp.callee != "lightning":
                plan = _plan_of(project, Feed((), sp.name, "param", sp.callee, sp.path, sp.has_tune,
                                              sp.callee_patterns))
                if plan is None or not plan.reaches:
                    continue
                own = tuple(sorted(plan.own))
            if sp.kwarg:
                self.kwarg_calls.append((g.call, Plan(frozenset(sp.params) | frozenset(own), True, True), sp.has_tune))
            else:
                self._add(g.found, sp.has_tune, own, tree, g.body or tree.body)

    def _add(self, found: Builders, has_tune: bool, own: Tuple[str, ...], tree: ast.Module, body: List[ast.stmt],
             depth: int = 0) -> None:
        for d in found.dicts:
            self.dicts.setdefault(_place(d), (d, has_tune if not own else (has_tune, own)))
        for c in found.calls:
            self.calls.setdefault(_place(c), (c, has_tune if not own else (has_tune, own)))
        for k in found.keys:
            if k.targets[0].slice.value not in own:  # type: ignore[attr-defined]
                self.keys.setdefault(_place(k), (k, has_tune))
        if depth < 2:
            for name in found.names:  # {**BASE, ...}, dict(BASE, ...): BASE reaches the Trainer too
                more = builders(body, name) or builders(tree.body, name)
                self._add(more, has_tune, own, tree, body, depth + 1)


def text_of(facts: _Facts, node: ast.AST) -> str:
    return facts.text.segment(node)


def _binds(func: ast.AST, name: str) -> bool:
    """Whether ``name`` is a parameter of ``func`` or assigned in it."""
    a = func.args  # type: ignore[attr-defined]
    params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)} | {
        p.arg for p in (a.vararg, a.kwarg) if p is not None}
    return name in params or bool(_assigned_values(func.body, name))  # type: ignore[attr-defined]


def _assigned_values(body: List[ast.stmt], name: str) -> List[ast.expr]:
    return [s.value for s in block_statements(body) if isinstance(s, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in s.targets)]


def _kwarg_name(func: ast.AST) -> Optional[str]:
    kwarg = func.args.kwarg  # type: ignore[attr-defined]
    return kwarg.arg if kwarg is not None else None


def _argparse_plan(source: SourceFile, facts: _Facts, imports: LightningImports,
                   project: Optional[ProjectIndex] = None):
    """How the file's ``Trainer.add_argparse_args(parser)`` / ``Trainer.from_argparse_args(args)``
    become 2.x code (T-meth3): the statements ``parser = Trainer.add_argparse_args(parser)`` with
    their parser's spelling, the ``from_argparse_args`` calls, the Trainer options the file uses
    (read from the parsed namespace, written as ``--name`` in a string, given to
    ``set_defaults``, or passed by the project's tests and shell scripts:
    ``ProjectIndex.cli_options``), and those it declares itself; or None when the file has none of these
    calls, or uses an option whose 1.9 default 2.x reads otherwise (``ARGPARSE_19``), or calls
    them in a form the rewrite does not take (those keep the T-meth3 marker)."""
    calls = [c for c, a in facts.other_calls if a == "argparse"]
    if not calls:
        return None
    adds = {id(c): c for c in calls if c.func.attr == "add_argparse_args"}  # type: ignore[attr-defined]
    froms = [c for c in calls if c.func.attr == "from_argparse_args"]  # type: ignore[attr-defined]
    if len(adds) + len(froms) != len(calls) or not all(is_lightning_trainer(c.func.value, imports) for c in calls):  # type: ignore[attr-defined]
        return None
    add_stmts = []
    for stmt, _ in statements(source.tree.body):
        value = getattr(stmt, "value", None)
        if id(value) not in adds:
            continue
        call = adds.pop(id(value))
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Name):
            return None
        parser = call.args[0].id
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) or stmt.targets[0].id != parser:
                return None
        elif not isinstance(stmt, ast.Expr):
            return None
        add_stmts.append((stmt, parser))
    if adds or not add_stmts or not froms:
        # used inside an expression; or the parser is built elsewhere (its options are unknown),
        # or its namespace is used elsewhere (the options the other file uses are unknown)
        return None
    for _, _, value, _, _ in facts.spreads:
        spelled = text_of(facts, value)
        if spelled.startswith("vars(") or spelled.endswith(".__dict__"):
            return None  # Trainer(**vars(args)): every option reaches the Trainer (the T-meth3 marker says so)
    namespaces = set()
    for c in froms:
        if len(c.args) != 1 or not isinstance(c.args[0], ast.Name):
            return None
        namespaces.add(c.args[0].id)
    used, declared = set(), set()
    trainer_names = set(tam.ARGPARSE_19_ORDER)
    # the strings that stand alone (docstrings): a command line in a docstring is documentation
    docstrings = {id(n.value) for n in source.nodes if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    for node in source.nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                and node.value.func.attr in ("parse_args", "parse_known_args"):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    namespaces.add(t.id)
                elif isinstance(t, ast.Tuple) and t.elts and isinstance(t.elts[0], ast.Name):
                    namespaces.add(t.elts[0].id)
    for node in source.nodes:
        if isinstance(node, ast.Attribute) and node.attr in trainer_names and isinstance(node.value, ast.Name) \
                and node.value.id in namespaces:
            used.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "--" in node.value \
                and id(node) not in docstrings:
            used.update(options_in(node.value) & trainer_names)  # "--max_epochs", "train.py --max_epochs=3"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "set_defaults":
                used.update(k.arg for k in node.keywords if k.arg in trainer_names)
            elif node.func.attr == "add_argument":
                for a in node.args:
                    v = a.value if isinstance(a, ast.Constant) else None
                    if isinstance(v, str) and v.startswith("--") and v[2:].replace("-", "_") in trainer_names:
                        declared.add(v[2:].replace("-", "_"))
    if project is not None:  # the options the project's tests and shell scripts pass
        used |= project.cli_options() & trainer_names
    if add_stmts and any(n not in tam.ARGPARSE_19 for n in used - declared):
        return None
    names = tuple(n for n in tam.ARGPARSE_19_ORDER if n in used | declared)
    return add_stmts, froms, names, declared


def _plan_of(project, feed: Feed) -> Optional[Plan]:
    """The plan of the project class ``feed.callee`` (called in ``feed.importer``), when it is
    a Trainer subclass."""
    info = project.resolve(feed.callee, feed.importer)
    if info is None:
        return None
    if feed.callee_patterns and not from_module(info.path, feed.callee_patterns):
        return None  # a class of that name from elsewhere (``from transformers import Trainer``)
    if not feed.callee_patterns and info.path != feed.importer:
        return None
    return plan_for(info, project)


def _split_data(data) -> Tuple[bool, Tuple[str, ...], bool]:
    """(has_tune, the keys a project Trainer subclass takes, whether multiple_trainloader_mode
    moves to CombinedLoader) of a "dict" or "dictcall" site."""
    if not isinstance(data, tuple):
        return data, (), False
    return data[0], data[1], len(data) > 2 and data[2]


def _env_strings(text: Text) -> List[Site]:
    """Sites for the string literals that name an environment variable 2.0 removed."""
    if not any(v in text.text for v in REMOVED_ENV_VARS):
        return []
    return [Site(line, col, value, "env") for line, col, value in text.string_literals(REMOVED_ENV_VARS)]


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


def _callbacks_cause(additions: List[str]) -> str:
    """What the marker for callbacks it could not add names as their cause."""
    causes = ["A.8/T11"] if any(a != tam.ZERO_GRAD_AT_VALIDATION for a in additions) else []
    if tam.ZERO_GRAD_AT_VALIDATION in additions:
        causes.append("ledger L6 (1.9 zeroed the gradients at every validation start)")
    return ", ".join(causes)


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


def _defaults_into_spread(mapped: tam.Mapped, given: Set[Optional[str]], quote: str) -> None:
    """``accelerator``/``devices`` that the mapping made from a device flag (``gpus=gpus``) of a
    call that also spreads ``**kwargs`` go into that spread as defaults (``**{"accelerator": ...,
    **kwargs}``): a 1.x caller may pass ``accelerator=``/``devices=`` through ``kwargs``, which
    1.9 took along with ``gpus`` (and ``gpus=None`` left alone), and which a second keyword of
    the same name would make a ``TypeError``."""
    spreads = [e for e in mapped.entries if e.name is None and e.origin is not None
               and isinstance(getattr(e.origin, "value", None), cst.Name) and getattr(e.origin, "star", "") == "**"]
    new = [e for e in mapped.entries if e.changed and e.name in ("accelerator", "devices") and e.name not in given]
    if len(spreads) != 1 or not new:
        return
    spread = spreads[0]
    items = ", ".join(f"{tam.py_repr(e.name, quote)}: {e.value.code}" for e in new)
    value = tam.Value(code=f"{{{items}, **{spread.value.code}}}")
    merged = tam.Entry(None, value, origin=spread.origin, changed=True)
    mapped.entries = [merged if e is spread else e for e in mapped.entries if not any(e is n for n in new)]


class _ResumeValues(cst.CSTVisitor):
    """The resume_from_checkpoint values of the Trainer calls at ``places``, by place."""

    def __init__(self, locate: Locator, places: Dict[Tuple[int, int], str]) -> None:
        self.locate = locate
        self.places = places  # (line, col) -> the call's function name
        self.values: Dict[Tuple[int, int], cst.BaseExpression] = {}

    def visit_Call(self, node: cst.Call) -> None:
        name = cst_last_name(node.func)
        if name in self.places.values():
            place = self.locate(node)
            if self.places.get(place) == name:
                self.values[place] = next(a.value for a in node.args if a.keyword is not None
                                          and a.keyword.value == "resume_from_checkpoint")


class _Transformer(PrunedTransformer):
    """Carries out the sites: the calls, dict literals and strings they name, as they say."""

    def __init__(self, ctx: RuleContext, module: cst.Module, sites: Sequence[Site]) -> None:
        self.ctx = ctx
        self.module = module
        self.locate = Locator(module, ctx)
        # calls and strings: (line, col, name) -> site; dicts: (line, col) -> site
        self.calls = {(s.line, s.col, s.target): s for s in sites if s.action in CALL_ACTIONS}
        self.call_names = frozenset(s.target for s in self.calls.values())
        self.strings = {(s.line, s.col, s.target): s for s in sites if s.action == "env"}
        self.dicts = {(s.line, s.col): s for s in sites if s.action == "dict"}
        self.keys = {(s.line, s.col): s for s in sites if s.action == "key"}
        self.argparse_adds = {(s.line, s.col): s for s in sites if s.action == "argparse-add"}
        self.updates = {(s.line, s.col, s.target) for s in sites if s.action == "dictcall" and s.target == "update"}
        self.returns = {(s.line, s.col): s.data for s in sites if s.action == "combine"}
        self.none_defaults = {(s.line, s.col): s.data for s in sites if s.action == "none-defaults"}
        self.kinds = {(s.line, s.col): s.data for s in sites if s.action == "kind"}
        self.drop_dicts = {(s.line, s.col) for s in sites if s.action == "drop-dict"}
        self.drop_spreads = {(s.line, s.col) for s in sites if s.action == "drop-spread"}
        trainers = {s.data[:2]: s.data[2] for s in sites if s.action == "ckpt"}
        self.resume_values: Dict[Tuple[int, int], cst.BaseExpression] = {}
        if trainers:
            finder = _ResumeValues(self.locate, trainers)
            walk(module, finder)
            self.resume_values = finder.values
        self._root: Optional[str] = None
        self.imports: List[Tuple[str, str]] = []
        self.pending: List[List[str]] = [[]]
        # Locals the mapping binds before a statement (``use_gpus = ...``, see _BindLocals): the
        # (name, expression) pairs, and the names the module already uses.
        self.bound: List[Tuple[str, str, str]] = []  # (name, expression, comment)
        # the calls and dict displays the rule rewrote (by id), to wrap when too long
        self.rewritten: Dict[int, cst.BaseExpression] = {}
        self._line_length: Optional[int] = None
        self._taken: Optional[Set[str]] = None

    def _local_name(self, base: str = "use_gpus") -> str:
        """A name the module does not use yet (for a local _BindLocals places or inlines)."""
        if self._taken is None:
            import re
            self._taken = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", module_text(self.module)))
        return fresh_name(base, self._taken)

    def _bind(self, mapped: tam.Mapped) -> None:
        if mapped.locals:
            self.bound.extend(mapped.locals)
            assert self._taken is not None
            self._taken.update(name for name, _, _ in mapped.locals)

    @property
    def root(self) -> str:
        """The Lightning package the file imports from (for the imports the fix adds)."""
        if self._root is None:
            self._root = lightning_root(self.module)
        return self._root

    def _site(self, node: cst.Call) -> Optional[Site]:
        name = cst_last_name(node.func)
        if name not in self.call_names:
            return None
        return self.calls.get((*self.locate(node), name))

    # --- statements collect markers of what they contain
    def _push(self, node) -> bool:
        self.pending.append([])
        return True

    def _pop(self, updated):
        whys = self.pending.pop()
        return add_markers(_without_stale(updated, whys), CODE, whys) if whys else updated

    def visit_SimpleStatementLine(self, node):
        return self._push(node)

    def leave_SimpleStatementLine(self, original, updated):
        updated = self._wrap(original, updated)
        out = self._leave_line(original, updated)
        data = self.none_defaults.get(self.locate(original.body[0])) if self.none_defaults and len(original.body) == 1 \
            else None
        if data is None or not isinstance(out, cst.SimpleStatementLine):
            return out
        lines = _none_defaults_lines(*data)
        # the comments above the statement move above the loop; its markers stay with it
        marks = [l for l in out.leading_lines if l.comment is not None and MARKER_PREFIX in l.comment.value]
        rest = [l for l in out.leading_lines if l not in marks]
        lines[0] = lines[0].with_changes(leading_lines=[*rest, *lines[0].leading_lines])
        self.ctx.report(CODE, f"T7/T28: `**{data[0]}` may hold None for "
                        + ", ".join(k for k, _ in data[1])
                        + ", which 1.9 read as the default and 2.x rejects: None becomes 2.x's spelling of that default",
                        Kind.FIXED, *self.ctx.position(self.module, original))
        return cst.FlattenSentinel([*lines, out.with_changes(leading_lines=marks)])

    def _wrap(self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
        """A statement whose call (or dict) the rule rewrote, one item per line when its line would be
        longer than the project's line length."""
        value = statement_value(updated) if self.rewritten else None
        if value is None or id(value) not in self.rewritten:
            return updated
        if self._line_length is None:
            from lightmigrate.config import line_length
            self._line_length = line_length(self.ctx.path)
        indent = self.ctx.position(self.module, original)[1] - 1
        return wrap_statement(updated, max(indent, 0), self._line_length, self.module.default_indent)

    def _leave_line(self, original, updated):
        site = None
        first = original.body[0] if len(original.body) == 1 else None
        if (self.drop_dicts and isinstance(first, cst.Assign) and isinstance(first.value, cst.Dict)
                and self.locate(first) in self.drop_dicts):
            whys = self.pending.pop()
            if whys:  # (markers inside it: the statement stays, with them)
                return add_markers(updated, CODE, whys)
            return cst.RemoveFromParent()
        # (a statement is located only when its shape is that of a site: locating costs)
        if (self.argparse_adds and isinstance(first, (cst.Assign, cst.Expr)) and isinstance(first.value, cst.Call)
                and cst_last_name(first.value.func) == "add_argparse_args"):
            add = self.argparse_adds.get(self.locate(first))
            if add is not None:
                return self._add_argparse(updated, *add.data)
        if (self.keys and isinstance(first, cst.Assign) and len(first.targets) == 1
                and isinstance(first.targets[0].target, cst.Subscript)):
            site = self.keys.get(self.locate(first))
        if site is None:
            if (self.updates and len(updated.body) == 1 and isinstance(updated.body[0], cst.Expr)
                    and isinstance(updated.body[0].value, cst.Call) and not updated.body[0].value.args
                    and cst_last_name(updated.body[0].value.func) == "update"
                    and (*self.locate(original.body[0]), "update") in self.updates and not self.pending[-1]):
                self.pending.pop()
                return cst.RemoveFromParent()  # every argument of name.update(...) was dropped
            return self._pop(updated)
        return self._key_statement(updated, site.data)

    def _add_argparse(self, updated: cst.SimpleStatementLine, parser: str, names: Tuple[str, ...]):
        """``parser = Trainer.add_argparse_args(parser)`` -> ``parser.add_argument(...)`` for the
        Trainer options the file uses, as 1.9.5 declared them (T-meth3)."""
        whys = self.pending.pop()
        lines = [cst.parse_statement(tam.add_argument_code(parser, n) + "\n") for n in names]
        if not lines:
            if whys:
                return add_markers(updated, CODE, whys)
            self.ctx.report(CODE, "T-meth3: Trainer.add_argparse_args was removed: neither this file nor the "
                            "project's tests and shell scripts use a Trainer option, so the Trainer is built with "
                            "the defaults 1.9 parsed (the Trainer's own); a command line that passes a 1.9 Trainer "
                            f"option (--max_epochs ...) is now rejected by argparse ({tam.GUIDE})", Kind.NOTE,
                            *self.ctx.position(self.module, updated))
            return cst.RemoveFromParent()
        lines[0] = lines[0].with_changes(leading_lines=updated.leading_lines)
        if whys:
            lines[0] = add_markers(lines[0], CODE, whys)
        self.ctx.report(CODE, "T-meth3: Trainer.add_argparse_args became explicit add_argument calls for the Trainer "
                        f"options this file, the project's tests and shell scripts use ({', '.join(names)}); a command "
                        f"line that passes another 1.9 Trainer option is now rejected by argparse ({tam.GUIDE})",
                        Kind.NOTE, *self.ctx.position(self.module, updated))
        return lines[0] if len(lines) == 1 else cst.FlattenSentinel(lines)

    def _from_argparse(self, original: cst.Call, updated: cst.Call, names: Tuple[str, ...], has_tune: bool,
                       gpus: str = ""):
        """``Trainer.from_argparse_args(args, **kw)`` -> ``Trainer(name=args.name, ..., **kw)``
        for the Trainer options of the file, mapped to 2.x as LM101 maps any call (T-meth3)."""
        namespace = code_of(updated.args[0].value)
        given = {a.keyword.value for a in updated.args[1:] if a.keyword is not None}
        entries = [tam.Entry(n, tam.Value(code=f"{namespace}.{n}", simple=True, kind=gpus if n == "gpus" else ""),
                             changed=True)
                   for n in names if n not in given]
        for a in updated.args[1:]:
            v = _value(a.value)
            entries.append(tam.Entry(a.keyword.value if a.keyword is not None else None, v, changed=True))
        mapped = tam.map_arguments(entries, '"', has_tune, False, known=ALL_ARGS)
        self._finish(mapped, original)
        args = []
        for i, e in enumerate(mapped.entries):
            comma = cst.MaybeSentinel.DEFAULT if i == len(mapped.entries) - 1 else cst.Comma(
                whitespace_after=cst.SimpleWhitespace(" "))
            value = cst.parse_expression(e.value.code)
            if e.name is None:
                args.append(cst.Arg(value=value, star="**", comma=comma))
            else:
                args.append(cst.Arg(value=value, keyword=cst.Name(e.name), comma=comma,
                                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))))
        return cst.Call(func=updated.func.value, args=args)

    def _key_statement(self, updated: cst.SimpleStatementLine, has_tune: bool):
        """``name["key"] = value`` with the mapping of that one Trainer argument: renamed, given
        its 2.x value, split in two (gpus -> accelerator, devices) or removed."""
        assign = updated.body[0]
        target = assign.targets[0].target
        key = target.slice[0].slice.value
        value = _value(assign.value)
        value.node = assign.value
        entry = tam.Entry(literal(key), value, origin=assign)
        mapped = tam.map_arguments([entry], _quote_of([key]), has_tune, False)
        self._finish(mapped, updated, is_call=False)
        whys = self.pending.pop()
        if not any(e.changed for e in mapped.entries) and mapped.entries:
            return add_markers(updated, CODE, whys) if whys else updated
        lines = []
        for e in mapped.entries:
            new_key = key.with_changes(value=tam.py_repr(e.name, "'" if key.quote == "'" else '"'))
            new_target = target.with_changes(slice=[target.slice[0].with_changes(
                slice=target.slice[0].slice.with_changes(value=new_key))])
            new_assign = assign.with_changes(targets=[assign.targets[0].with_changes(target=new_target)],
                                             value=_new_value_node(e, None))
            lines.append(updated.with_changes(body=[new_assign]) if not lines
                         else cst.SimpleStatementLine(body=[new_assign]))
        if not lines:
            if whys:  # nothing left to assign, but something to say: keep the line with its marker
                return add_markers(updated, CODE, whys)
            return cst.RemoveFromParent()
        if whys:
            lines[0] = add_markers(lines[0], CODE, whys)
        return lines[0] if len(lines) == 1 else cst.FlattenSentinel(lines)

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

    # --- calls
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        out = self._leave_call(original, updated)
        if out is not updated and isinstance(out, cst.Call):
            self.rewritten[id(out)] = out
        return out

    def _leave_call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        site = self._site(original)
        if site is None:
            return updated
        if site.action == "call":
            return self._trainer_call(original, updated, *site.data)
        if site.action == "argparse-from":
            return self._from_argparse(original, updated, *site.data)
        if site.action == "dictcall":
            has_tune, own, _ = _split_data(site.data)
            return self._trainer_call(original, updated, has_tune, False, (), own=own, positional_own=True)
        if site.action == "ckpt":
            value = self.resume_values[site.data[:2]]
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
        if site.action == "argparse":
            self._mark([f"T-meth3: `Trainer.{site.target}` was removed in 2.0; build the Trainer from "
                        f"explicit arguments or use LightningCLI ({tam.GUIDE})"])
        elif site.action == "ddp":
            arg = cst.Arg(value=cst.Name("True"), keyword=cst.Name("find_unused_parameters"),
                          equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            args = list(updated.args)
            if args:
                args[-1] = args[-1].with_changes(comma=_comma_like(args) if not isinstance(args[-1].comma, cst.Comma) else args[-1].comma)
            return updated.with_changes(args=[*args, arg])
        elif site.action == "strategy-class":
            self._mark([f"T18-T24: `{site.target}` was removed or renamed in 2.0 (DDPSpawnStrategy -> "
                        f"DDPStrategy(start_method=\"spawn\", find_unused_parameters=True), TPUSpawnStrategy -> "
                        f"XLAStrategy, sharded/DP/Horovod -> \"ddp\"/\"fsdp\") ({tam.GUIDE})"])
        return updated

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        mode = self.returns.get(self.locate(original)) if self.returns else None
        if mode is None or updated.value is None:
            return updated
        self.imports.append((f"{self.root}.utilities.combined_loader", "CombinedLoader"))
        line, col = self.ctx.position(self.module, original)
        self.ctx.report(CODE, f"T17: train_dataloader returns CombinedLoader(..., mode={tam.py_repr(mode, chr(34))}), the "
                        "Trainer's multiple_trainloader_mode, which 1.9 applied to the loaders it returned",
                        Kind.FIXED, line, col)
        call = cst.Call(func=cst.Name("CombinedLoader"), args=[
            cst.Arg(updated.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.SimpleString(tam.py_repr(mode, chr(34))), keyword=cst.Name("mode"),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))])
        return updated.with_changes(value=call)

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        if self.strings:
            v = original.evaluated_value
            if isinstance(v, str) and (*self.locate(original), v) in self.strings:
                self._mark([f"T31: the environment variable {v} was removed in 2.0 and has no effect ({tam.GUIDE})"])
        return updated

    def _trainer_call(self, original: cst.Call, updated: cst.Call, has_tune: bool, handled: bool,
                      argparse: Tuple[str, ...], tuned: bool = False, combined: bool = False,
                      own: Optional[Tuple[str, ...]] = None,
                      positional_own: bool = False, unknown: Tuple[str, ...] = ()) -> cst.Call:
        for spread in unknown:
            self._mark([f"T-args: {unknown_spread_reason(spread)} ({tam.GUIDE})"])
        entries: List[tam.Entry] = []
        pos = 0
        kept = []  # the arguments left once the empty ``**{}`` spreads are gone
        for arg, before in zip(updated.args, original.args):
            if arg.star == "**" and isinstance(arg.value, cst.Dict) and not arg.value.elements:
                continue  # ``**{}`` adds nothing (LM302 or the dict mapping may have emptied it)
            if arg.star == "**" and self.drop_spreads and isinstance(arg.value, cst.Name) \
                    and self.locate(before.value) in self.drop_spreads:
                continue  # ``**name`` of an emptied dict whose statement goes (_emptied_names)
            kept.append(arg)
            if own is not None and ((arg.keyword is not None and arg.keyword.value in own)
                                    or (arg.keyword is None and not arg.star and positional_own) or arg.star == "*"):
                entries.append(tam.Entry(OWN, _value(arg.value), origin=arg))
                continue
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
                if self.kinds and arg.keyword.value == "gpus":
                    v.kind = self.kinds.get(self.locate(before.value), "")
                entries.append(tam.Entry(arg.keyword.value, v, origin=arg))
        for e in entries:
            if e.name is None and (e.value.code.startswith("vars(") or e.value.code.endswith(".__dict__")):
                if argparse == ("add_argparse_args",):
                    self._mark(["T-meth3: these Trainer arguments come from Trainer.add_argparse_args; 1.9 command-line "
                                "values such as --gpus, --precision 16, --resume_from_checkpoint no longer work in 2.x: "
                                f"declare the 2.x arguments yourself or use LightningCLI ({tam.GUIDE})"])
                elif argparse:
                    opts = ", ".join(f"--{o}" for o in argparse)
                    self._mark([f"T-meth3: the argparse options {opts} reach the Trainer through "
                                f"{e.value.code}; 2.x removed or changed these arguments: map them as LM101 does "
                                f"(e.g. gpus -> accelerator/devices) before building the Trainer ({tam.GUIDE})"])
        if handled:
            entries = [e for e in entries if e.name != "resume_from_checkpoint"]
        quote = _quote_of(a.value for a in updated.args)
        mapped = tam.map_arguments(entries, quote, has_tune, handled, local=self._local_name, tuned=tuned,
                                   combined=combined, known=ALL_ARGS if own is None else None)
        self._bind(mapped)
        _defaults_into_spread(mapped, {e.name for e in entries}, quote)
        new_args = self._rebuild_args(mapped, updated)
        self._finish(mapped, original, is_call=own is None)
        if new_args is None:
            return updated
        if (handled or any(e.changed for e in mapped.entries) or len(mapped.entries) != len(entries) or mapped.callbacks
                or len(kept) != len(updated.args)):
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
                    self._mark([f"{_callbacks_cause(mapped.callbacks)}: add {', '.join(mapped.callbacks)} to this Trainer's callbacks ({tam.GUIDE})"])
                    value = getattr(e.value, "node", None) or cst.parse_expression(e.value.code)
                out.append(e.origin.with_changes(value=value))
                callbacks_done = True
                continue
            if not e.changed and e.origin is not None:
                out.append(e.origin)
                continue
            node = _new_value_node(e, None)
            template: cst.Arg = e.origin
            if e.name is None:  # a spread that now carries defaults (_defaults_into_spread)
                out.append(template.with_changes(value=node))
                continue
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
        site = self.dicts.get(self.locate(original)) if self.dicts else None
        if site is None:
            return updated
        has_tune, own, combined = _split_data(site.data)
        entries: List[tam.Entry] = []
        for el in updated.elements:
            if isinstance(el, cst.StarredDictElement):
                entries.append(tam.Entry(None, _value(el.value), origin=el))
            else:
                v = _value(el.value)
                v.node = el.value
                key = literal(el.key)
                if self.kinds and key == "gpus":
                    before = next(b for b in original.elements if getattr(b, "key", None) is not None and literal(b.key) == "gpus")
                    v.kind = self.kinds.get(self.locate(before.value), "")
                entries.append(tam.Entry(OWN if key in own else key, v, origin=el))
        quote = _quote_of([*(e.key for e in updated.elements if isinstance(e, cst.DictElement)),
                           *(e.value for e in updated.elements)])
        mapped = tam.map_arguments(entries, quote, has_tune, False, local=self._local_name, combined=combined)
        self._bind(mapped)
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
                    self._mark([f"{_callbacks_cause(mapped.callbacks)}: add {', '.join(mapped.callbacks)} to these Trainer callbacks ({tam.GUIDE})"])
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
        new = updated.with_changes(elements=_fix_commas(out, updated.elements) if out else [])
        self.rewritten[id(new)] = new
        return new


class _BindLocals(PrunedTransformer):
    """Places the locals the mapping used (``use_gpus = args.gpus not in (None, 0, "0", [])``) on a
    line of their own above the statement that uses them, when that statement is a line of a
    function or module body and the name is not inside a lambda or comprehension (where it would
    be evaluated at another time) or a compound statement's header; elsewhere the name is replaced
    by its expression, inline. The comments above the statement move above the new line; the
    markers stay with the statement."""

    def __init__(self, bound: Sequence[Tuple[str, str, str]]) -> None:
        self.exprs = {name: expr for name, expr, _ in bound}
        self.comments = {name: comment for name, _, comment in bound}
        self.lines: List[Optional[List[str]]] = []  # per statement around: None, or the names to bind
        self.depths: List[int] = []  # the lambda/comprehension depth at each statement around
        self.scopes: List[str] = []
        self.nested = 0

    def _enter(self, node) -> bool:
        ok = isinstance(node, cst.SimpleStatementLine) and (not self.scopes or self.scopes[-1] == "def")
        self.lines.append([] if ok else None)
        self.depths.append(self.nested)
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            self.scopes.append("def" if isinstance(node, cst.FunctionDef) else "class")
        return True

    def _leave(self, original, updated):
        names = self.lines.pop()
        self.depths.pop()
        if isinstance(original, (cst.FunctionDef, cst.ClassDef)):
            self.scopes.pop()
        if not names:
            return updated
        marks = [l for l in updated.leading_lines if l.comment is not None and MARKER_PREFIX in l.comment.value]
        rest = [l for l in updated.leading_lines if l not in marks]
        new = [cst.parse_statement(f"{n} = {self.exprs[n]}  {self.comments[n]}\n")
               for n in dict.fromkeys(names)]
        new[0] = new[0].with_changes(leading_lines=rest)
        return cst.FlattenSentinel([*new, updated.with_changes(leading_lines=marks)])

    visit_SimpleStatementLine = visit_If = visit_While = visit_For = visit_With = visit_Try = _enter
    visit_FunctionDef = visit_ClassDef = _enter
    leave_SimpleStatementLine = leave_If = leave_While = leave_For = leave_With = leave_Try = _leave
    leave_FunctionDef = leave_ClassDef = _leave

    def _deeper(self, node) -> bool:
        self.nested += 1
        return True

    def _shallower(self, original, updated):
        self.nested -= 1
        return updated

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _deeper
    leave_Lambda = leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _shallower

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if original.value not in self.exprs:
            return updated
        if self.lines and self.lines[-1] is not None and self.depths[-1] == self.nested:
            self.lines[-1].append(original.value)
            return updated
        return cst.parse_expression(self.exprs[original.value])


STRATEGY_CALLS = frozenset({"DDPStrategy", *REMOVED_STRATEGY_CLASSES})
# The sites on calls: a Lightning Trainer call ("call", data: whether the file calls tune(),
# whether its resume_from_checkpoint moves to fit, and the argparse facts: ("add_argparse_args",)
# when the file calls Trainer.add_argparse_args, else the changed options it declares), a fit
# call that gets ckpt_path= ("ckpt", data: the line, column and name of that Trainer call), a
# Trainer argparse method ("argparse"), DDPStrategy(...) that gets find_unused_parameters=True
# ("ddp"), a removed strategy class ("strategy-class"). Their target is the called name.
# The call site's data ends with whether the Trainer goes to Tuner(...) in its function and
# whether multiple_trainloader_mode moves to the file's train_dataloader returns.
# The other sites: a dict literal of Trainer arguments ("dict", data: whether the file calls
# The call site's data: (whether the file calls tune(), whether resume_from_checkpoint moves,
# the argparse options, whether the Trainer goes to Tuner(...) in its function, whether
# multiple_trainloader_mode moves to the file's train_dataloader returns), then for a call of a
# project Trainer subclass (the keywords it takes, whether positional arguments are its own),
# then the spreads of unknown contents.
# The other sites: a dict literal of Trainer arguments ("dict", data: whether the file calls
# tune(), or (that, the keys a project Trainer subclass takes[, whether multiple_trainloader_mode
# moves])), a string naming a removed environment variable ("env", target: the string) and a
# train_dataloader return to wrap in CombinedLoader ("combine", data: the mode).
CALL_ACTIONS = frozenset({"call", "ckpt", "argparse", "ddp", "strategy-class", "dictcall", "argparse-from"})


# The loop variables of the "none-defaults" lines, the first pair the function does not use.
_LOOP_NAMES = (("key", "default"), ("arg", "default_value"), ("trainer_arg", "default_value"))


def _none_defaults(tree: ast.Module, facts: _Facts) -> List[Site]:
    """``Trainer(**name)`` (a Lightning Trainer) where ``name`` is a dict the function makes with
    entries whose keys cannot be read (``{k: v for k, v in config.items() if ...}``,
    ``name.update(config.extra)``): any of them may be ``devices=None`` (or ``strategy`` /
    ``accelerator``), which 1.9 read as the default and 2.x rejects (issue 25 kind 3). The site
    is the statement holding the call, which gets a loop before it that puts 2.x's spelling of
    the default in place of None; data: (name, ((key, default), ...), (loop variable names))."""
    lightning = {id(c) for c in facts.trainer_calls}
    out: List[Site] = []
    seen: Set[Place] = set()
    for scope, call, value, _, _ in facts.spreads:
        if id(call) not in lightning or not isinstance(value, ast.Name):
            continue
        body = scope.body if scope is not None else tree.body  # type: ignore[attr-defined]
        name = value.id
        if not fresh_opaque(body, name) or none_defaults_loop(body, name):
            continue
        stmt = statement_of(body, call)
        if stmt is None or _place(stmt) in seen:
            continue
        given = {k.arg for k in call.keywords if k.arg}
        keys = tuple((k, d) for k, d in tam.RUNTIME_NONE_DEFAULTS if k not in given)
        used = names_in(scope if scope is not None else tree)
        loop = next((pair for pair in _LOOP_NAMES if not used & set(pair)), None)
        if not keys or loop is None:
            continue
        seen.add(_place(stmt))
        out.append(Site(stmt.lineno, stmt.col_offset, name, "none-defaults", (name, keys, loop)))
    return out


def _none_defaults_lines(name: str, keys: Tuple[Tuple[str, str], ...], loop: Tuple[str, str],
                         quote: str = '"') -> List[cst.BaseStatement]:
    """The loop :func:`_none_defaults` places before the Trainer call."""
    k, d = loop
    pairs = ", ".join(f"({quote}{key}{quote}, {quote}{default}{quote})" for key, default in keys)
    what = " / ".join(f"{key}=None" for key, _ in keys)
    code = (f"for {k}, {d} in ({pairs}{',' if len(keys) == 1 else ''}):\n"
            f"    if {name}.get({k}, {d}) is None:\n"
            f"        {name}[{k}] = {d}\n")
    loop = cst.parse_statement(code)
    why = cst.EmptyLine(comment=cst.Comment(f"# 1.9 read {what} as these defaults; 2.x rejects None"))
    return [loop.with_changes(leading_lines=[why])]


class TrainerConstructorRule(Rule):
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
        "T14": Handling.REWRITTEN, "T15": Handling.REWRITTEN, "T16": Handling.MARKED, "T17": Handling.REWRITTEN,
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
            "import argparse\n\nimport pytorch_lightning as pl\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--gpus', type=int, default=None)\nargs = parser.parse_args()\n"
            "trainer = pl.Trainer(gpus=args.gpus, max_epochs=20)\n",
            "import argparse\n\nimport pytorch_lightning as pl\n\nparser = argparse.ArgumentParser()\n"
            "parser.add_argument('--gpus', type=int, default=None)\nargs = parser.parse_args()\n"
            "trainer = pl.Trainer(\n"
            "    accelerator=\"gpu\" if args.gpus else \"cpu\",\n"
            "    devices=args.gpus or \"auto\",\n"
            "    max_epochs=20,\n"
            ")\n",
            "gpus-of-an-int-option-wrapped-to-the-line-length",
        ),
        Example(
            "import pytorch_lightning as pl\n\n\ndef fresh(trainer):\n    return pl.Trainer(gpus=trainer.gpus)\n",
            "import pytorch_lightning as pl\n\n\ndef fresh(trainer):\n"
            "    return pl.Trainer(accelerator=\"gpu\", devices=trainer.device_ids)\n",
            "gpus-of-another-trainer",
        ),
        Example(
            "import pytorch_lightning as pl\n\n\ndef build(gpus: Optional[int] = None):\n"
            "    return pl.Trainer(gpus=gpus)\n",
            "import pytorch_lightning as pl\n\n\ndef build(gpus: Optional[int] = None):\n"
            "    return pl.Trainer(accelerator=\"gpu\" if gpus else \"cpu\", devices=gpus or \"auto\")\n",
            "gpus-of-an-annotated-parameter",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(**{\"gpus\": None, \"auto_select_gpus\": False})\n",
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer()\n",
            "emptied-dict-spread",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(accelerator=\"cpu\", max_epochs=3)\n",
            None,
            "already-2x",
        ),
        Example(
            "import pytorch_lightning as pl\n\ntrainer = pl.Trainer(accelerator=\"cpu\", precision=32)\n",
            None,
            "precision-2x-takes-as-it-is",
        ),
        Example(
            "from transformers import Trainer\n\ntrainer = Trainer(model=model, gpus=2)\n",
            None,
            "another-frameworks-trainer",
        ),
    )

    def may_apply(self, text: str) -> bool:
        # The rule acts in a file that imports from a Lightning package (whose name holds
        # "lightning") or calls a project Trainer subclass (one named "...Trainer"); a file that
        # only holds a dict another file spreads into a Trainer, or calls a subclass of another
        # name, is found through the project (``linked``).
        return any(t in text for t in self.triggers) and ("lightning" in text or "Trainer" in text)

    def linked(self, path: str, text: str, project: ProjectIndex) -> bool:
        """A file holding a dict that another file spreads into a Trainer, naming one of the
        project's Trainer subclasses, or naming a function that spreads a parameter into a
        Trainer (its calls give that parameter dicts of Trainer arguments)."""
        if project.feeds_into(path):
            return True
        if project.spreaders_named(text):
            return True
        return any(c.name in text for c in project.kind_classes(TRAINER_BASES))

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:
        feeds: List[Feed] = []
        # the functions of other files that spread a parameter into a Trainer and that this
        # file may call (those of this file are read from its tree below)
        called = [sp for sp in ctx.project.spreaders_named(source.text) if sp.path != source.path]
        if "lightning" not in source.text:
            # Without a Lightning import the file can only call a project Trainer subclass or a
            # function that spreads a parameter into a Trainer, or hold a dict another file
            # spreads into a Trainer: settled before any parse.
            feeds = ctx.project.feeds_into(source.path)
            if not feeds and not called and not ctx.project.kind_classes(TRAINER_BASES):
                return []
        else:
            feeds = ctx.project.feeds_into(source.path)
        imports = LightningImports.of(source)
        if not imports.any() and not feeds and not called and not ctx.project.kind_classes(TRAINER_BASES):
            return []
        text = Text(source.text)
        subs = SubclassNames(source.tree, source.path, ctx.project, imports)
        facts = _Facts(imports, text, subs)
        facts.visit(source.tree)
        moved, fit_trainers = facts.resume_plans()
        mode, combine_returns = facts.combine(source.nodes)
        combined = mode is not None
        argparse = (("add_argparse_args",) if facts.argparse_trainer
                    else tuple(dict.fromkeys(facts.argparse_options)))
        sites: List[Site] = []
        kinds = ValueKinds(source.nodes)
        lines: List[str] = []
        for call in facts.trainer_calls:
            if any(k.arg is None and isinstance(k.value, ast.Name) for k in call.keywords):
                lines = lines or source.text.splitlines()
                dropped = _emptied_names(call, facts, facts.call_scopes.get(id(call)), lines)
                sites += dropped
                facts.dropped.update(id(k.value) for k in call.keywords if k.arg is None and any(
                    s.action == "drop-spread" and (s.line, s.col) == _place(k.value) for s in dropped))
        for call in facts.trainer_calls:
            handled = _place(call) in moved
            tuned = facts.tuned(call)
            if _call_acts(call, facts, handled, tuned, combined):
                sites.append(Site(call.lineno, call.col_offset, last_name(call.func), "call",
                                  (facts.has_tune, handled, argparse, tuned, combined)))
                sites += _kind_sites(call, kinds, facts.call_scopes.get(id(call)))
        for call, plan in facts.sub_calls:
            if _call_acts(call, facts, False, combined=combined, plan=plan):
                sites.append(Site(call.lineno, call.col_offset, last_name(call.func), "call",
                                  (facts.has_tune, False, argparse, False, combined, tuple(sorted(plan.own)),
                                   plan.positional_own)))
        for (line, col), trainer in fit_trainers.items():
            sites.append(Site(line, col, "fit", "ckpt", (trainer.lineno, trainer.col_offset, last_name(trainer.func))))
        lightning_strategy = "fabric" not in source.text.lower()
        argparse_plan = _argparse_plan(source, facts, imports, ctx.project)
        if argparse_plan is not None:
            add_stmts, from_calls, names, declared = argparse_plan
            for stmt, parser in add_stmts:
                sites.append(Site(stmt.lineno, stmt.col_offset, "add_argparse_args", "argparse-add",
                                  (parser, tuple(n for n in names if n not in declared))))
            for call in from_calls:
                # --gpus as 1.9 parsed it (None, an int or a str with a comma) gives GPUs exactly
                # when it is truthy, as an int does; as the file declares it, as it says
                gpus = kinds.options().get("gpus", "") if "gpus" in declared else tam.KIND_INT
                sites.append(Site(call.lineno, call.col_offset, "from_argparse_args", "argparse-from",
                                  (names, facts.has_tune, gpus)))
            handled_calls = {id(s.value) for s, _ in add_stmts} | {id(c) for c in from_calls}
            facts.other_calls = [(c, a) for c, a in facts.other_calls if id(c) not in handled_calls]
        if not imports.any():  # only the project's Trainer subclasses and dicts concern such a file
            facts.other_calls = []
        for call, action in facts.other_calls:
            if action == "ddp":
                args = call_args(call)
                if not lightning_strategy or any(a.star for a in args) or _keyword(call, "find_unused_parameters"):
                    continue
            elif action == "strategy-class" and not lightning_strategy:
                continue
            sites.append(Site(call.lineno, call.col_offset, last_name(call.func), action))
        if any(_passed_parameter(scope, value) for scope, _, value, _, _ in facts.spreads):
            called += trainer_spreaders(source.tree, source.path)  # (read as it is now, after earlier rules)
        flows = _Flows(source.tree, facts, feeds, ctx.project, source.path, called)
        for call, plan, has_tune in flows.kwarg_calls:
            if _call_acts(call, facts, False, combined=combined, plan=plan, has_tune=has_tune):
                sites.append(Site(call.lineno, call.col_offset, last_name(call.func), "call",
                                  (has_tune, False, (), False, combined, tuple(sorted(plan.own)), plan.positional_own)))
        # dict literals recognised by their keys (in a file that imports Lightning), and those
        # that provably reach a Trainer (with what the Trainer's class takes itself)
        dicts = {_place(d): (d, (facts.has_tune, (), True) if combined else facts.has_tune)
                 for d in facts.trainer_dicts()} if imports.any() else {}
        for place, (d, data) in flows.dicts.items():
            if combined and place in dicts:
                data = (*_split_data(data)[:2], True)
            dicts[place] = (d, data)
        for d, data in dicts.values():
            if _dict_acts(d, facts, *_split_data(data)):
                sites.append(Site(d.lineno, d.col_offset, "dict", "dict", data))
                gpus = next((v for k, v in zip(d.keys, d.values)
                             if k is not None and ast_literal(k, facts.text) == "gpus"), None)
                kind = kinds.kind(gpus, None) if gpus is not None else ""
                if kind:
                    sites.append(Site(gpus.lineno, gpus.col_offset, "gpus", "kind", kind))
        for call, data in flows.calls.values():
            has_tune, own, _ = _split_data(data)
            if _call_acts(call, facts, False, plan=Plan(frozenset(own), True, True), has_tune=has_tune):
                sites.append(Site(call.lineno, call.col_offset, last_name(call.func), "dictcall", data))
        for stmt, has_tune in flows.keys.values():
            if _key_acts(stmt, facts, has_tune):
                sites.append(Site(stmt.lineno, stmt.col_offset, "key", "key", has_tune))
        if flows.unknown:
            sites = [s if s.action != "call" or (s.line, s.col) not in flows.unknown
                     else Site(s.line, s.col, s.target, s.action, _with_unknown(s.data, flows.unknown[(s.line, s.col)]))
                     for s in sites]
            have = {(s.line, s.col) for s in sites if s.action == "call"}
            for call in facts.trainer_calls + [c for c, _ in facts.sub_calls]:
                if _place(call) in flows.unknown and _place(call) not in have:
                    plan = next((p for c, p in facts.sub_calls if c is call), None)
                    data = (facts.has_tune, False, argparse, facts.tuned(call), combined) if plan is None else (
                        facts.has_tune, False, argparse, False, combined, tuple(sorted(plan.own)), plan.positional_own)
                    sites.append(Site(call.lineno, call.col_offset, last_name(call.func), "call",
                                      _with_unknown(data, flows.unknown[_place(call)])))
        sites += _none_defaults(source.tree, facts)
        for ret in combine_returns:
            sites.append(Site(ret.lineno, ret.col_offset, "train_dataloader", "combine", mode))
        if imports.any():
            sites += _env_strings(text)
        return sorted(sites, key=lambda s: (s.line, s.col))

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:
        t = _Transformer(ctx, module, sites)
        out = transform(module, t)
        if t.bound:
            out = transform(out, _BindLocals(t.bound))
        for from_, name in dict.fromkeys(t.imports):
            out = ensure_import(out, from_, name)
        return out
