"""What a file says about the type of a value it passes on (issue 23): an argparse option declared
with ``type=int``, a parameter annotated ``Optional[int]``, 1.9's ``trainer.gpus``. A rule writes the
short form exactly right for that type (``devices=args.gpus or "auto"``) instead of the general one.

The kinds are those of :mod:`lightmigrate.catalog.trainer_args` (``KIND_INT``: an int or None,
``KIND_STR``: a str or None, ``KIND_TRAINER_GPUS``); "" means the file does not say.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional

from lightmigrate.catalog.trainer_args import KIND_INT, KIND_STR
from lightmigrate.rules.shared.trainer_object import ast_not_lightning
from lightmigrate.analysis.ast_nodes import ast_nodes

_TYPES = {"int": KIND_INT, "str": KIND_STR}
_PLAIN_ACTIONS = (None, "store")
# Names that hold a parsed argparse namespace besides those bound to ``parser.parse_args()``
# (a function's ``args`` parameter, by convention).
_NAMESPACE_NAMES = frozenset({"args", "hparams", "opt", "opts"})
_PARSE_METHODS = frozenset({"parse_args", "parse_known_args"})


def reads_trainer_gpus(node: ast.AST) -> bool:
    """Whether ``node`` reads 1.9's ``trainer.gpus`` (``trainer.gpus``, ``self.trainer.gpus``)."""
    if not (isinstance(node, ast.Attribute) and node.attr == "gpus"):
        return False
    owner = node.value
    named = (isinstance(owner, ast.Name) and owner.id == "trainer") or (
        isinstance(owner, ast.Attribute) and owner.attr == "trainer")
    return named and not ast_not_lightning(node)


# Trainer arguments next to which ``gpus=trainer.gpus`` keeps its place in 1.9's device choice.
_OTHER_DEVICE_ARGS = frozenset({"accelerator", "auto_select_gpus", "tpu_cores", "ipus", "num_processes"})


def trainer_gpus_argument(call: ast.Call) -> Optional[ast.Attribute]:
    """The value of ``gpus=`` in this Lightning Trainer call when it reads 1.9's ``trainer.gpus``
    and LM101 rewrites it (``accelerator="gpu", devices=trainer.device_ids``): the call gives no
    other device argument, no ``*args`` and no ``**kwargs`` (which might). LM102 leaves that read
    to LM101."""
    if call.args or any(k.arg is None or k.arg in _OTHER_DEVICE_ARGS for k in call.keywords):
        return None
    value = next((k.value for k in call.keywords if k.arg == "gpus"), None)
    return value if value is not None and reads_trainer_gpus(value) else None  # type: ignore[return-value]


_NOT_CONSTANT = object()


def _constant(node: Optional[ast.expr]) -> object:
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        v = node.operand.value
        return -v if type(v) in (int, float) else _NOT_CONSTANT
    return _NOT_CONSTANT


def _fits(kind: str, default: object) -> bool:
    """Whether the default ``default`` is of ``kind`` (None always is)."""
    return default is None or (kind == KIND_INT and type(default) is int) or (kind == KIND_STR and type(default) is str)


def _option_kind(call: ast.Call) -> str:
    """The kind of the value ``parser.add_argument(...)`` stores."""
    kw = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if any(k.arg is None for k in call.keywords) or "nargs" in kw:
        return ""
    if _constant(kw.get("action")) not in _PLAIN_ACTIONS:
        return ""
    t = kw.get("type")
    if t is None:
        kind = KIND_STR  # the command line gives a str
    elif isinstance(t, ast.Name) and t.id in _TYPES:
        kind = _TYPES[t.id]
    else:
        return ""
    return kind if _fits(kind, _constant(kw.get("default"))) else ""


def _dest(call: ast.Call) -> Optional[str]:
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if len(names) != len(call.args) or not names:
        return None
    for k in call.keywords:
        if k.arg == "dest":
            v = _constant(k.value)
            return v if isinstance(v, str) else None
    longs = [n for n in names if n.startswith("--")]
    first = longs[0] if longs else names[0]
    return first.lstrip("-").replace("-", "_") or None


class ValueKinds:
    """The kinds of the values of one file (``nodes``: its ast nodes), read on first use."""

    def __init__(self, nodes: List[ast.AST]) -> None:
        self.nodes = nodes
        self._options: Optional[Dict[str, str]] = None
        self.namespaces = set(_NAMESPACE_NAMES)  # names bound to a parsed namespace

    def options(self) -> Dict[str, str]:
        """dest -> kind of the argparse options the file declares ("" when declared in several
        ways, given to ``set_defaults`` or assigned to any attribute of that name)."""
        if self._options is None:
            found: Dict[str, str] = {}
            spoilt = set()
            for n in self.nodes:
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) \
                        and n.value.func.attr in _PARSE_METHODS:
                    for t in n.targets:
                        first = t.elts[0] if isinstance(t, ast.Tuple) and t.elts else t
                        if isinstance(first, ast.Name):
                            self.namespaces.add(first.id)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                    if n.func.attr == "add_argument":
                        dest = _dest(n)
                        if dest is not None:
                            kind = _option_kind(n)
                            found[dest] = kind if found.get(dest, kind) == kind else ""
                    elif n.func.attr == "set_defaults":
                        spoilt.update(k.arg for k in n.keywords)
                elif isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load):
                    spoilt.add(n.attr)
            self._options = {d: ("" if d in spoilt else k) for d, k in found.items()}
        return self._options

    def kind(self, value: ast.expr, function: Optional[ast.AST]) -> str:
        """The kind of ``value`` (an argument of a call in ``function``, None at module level);
        1.9's ``trainer.gpus`` is the caller's to tell (:func:`trainer_gpus_argument`)."""
        if reads_trainer_gpus(value):
            return ""
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            options = self.options()
            return options.get(value.attr, "") if value.value.id in self.namespaces else ""
        if isinstance(value, ast.Name) and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return _parameter_kind(function, value.id)
        return ""


def _annotation_kind(node: Optional[ast.expr]) -> str:
    """``int``, ``Optional[int]``, ``int | None``, ``Union[int, None]`` (or ``str``): its kind."""
    if node is None:
        return ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return ""
    if isinstance(node, ast.Name):
        return _TYPES.get(node.id, "")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = [node.left, node.right]
    elif isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)):
        name = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
        if name == "Optional":
            return _annotation_kind(node.slice)
        if name != "Union" or not isinstance(node.slice, ast.Tuple):
            return ""
        parts = list(node.slice.elts)
    else:
        return ""
    kinds = {_annotation_kind(p) for p in parts if not (isinstance(p, ast.Constant) and p.value is None)}
    return kinds.pop() if len(kinds) == 1 else ""


def _parameter_kind(function: ast.AST, name: str) -> str:
    """The kind of the parameter ``name`` of ``function`` by its annotation and default, when the
    function never binds that name again."""
    args = function.args  # type: ignore[attr-defined]
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    param = next((p for p in params if p.arg == name), None)
    if param is None:
        return ""
    kind = _annotation_kind(param.annotation)
    if not kind:
        return ""
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([p.arg for p in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update((p.arg, d) for p, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
    if name in defaults and not _fits(kind, _constant(defaults[name])):
        return ""
    for n in ast_nodes(function):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            return ""
        if isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            return ""
    return kind
