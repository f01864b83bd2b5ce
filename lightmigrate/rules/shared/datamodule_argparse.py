"""What 1.9.5's ``LightningDataModule.add_argparse_args`` / ``from_argparse_args`` did for a
DataModule class of the project, read from its ``__init__`` on Python's ``ast`` (spec C12).

``add_argparse_args(parser)`` (``pytorch_lightning/utilities/argparse.py``) added one option
``--NAME`` per parameter of the class's ``__init__`` whose annotation gives one of the types
``str``, ``int``, ``float``, ``bool`` (``Optional[X]``, ``Union[...]``, ``X | None`` and
``Literal[...]`` give their members' types; another generic gives its own arguments, as
``typing``'s ``__args__`` does: ``List[int]`` gives ``int``): ``default=`` the parameter's
default (``required=True`` without one), ``type=`` the first of str, int, float it has, or for a
``bool`` parameter 1.9's ``str_to_bool`` (``nargs="?", const=True``: a bare ``--flag`` is True),
``str_to_bool_or_int``, ``str_to_bool_or_str``; and 1.9's special cases by name and by type
(``gpus``/``tpu_cores``, ``int``+``float``, ``track_grad_norm``, ``precision``). A parameter
without an annotation, or with one 1.9 read as a string (``from __future__ import annotations``),
got no option. ``from_argparse_args(args, **kwargs)`` passed every ``__init__`` parameter the
namespace has, then ``kwargs``.

:func:`datamodule_init` finds the ``__init__`` 1.9 read (the class's, or its nearest project
ancestor's; Lightning's own takes nothing), :func:`options` the ``add_argument`` code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Tuple

from lightmigrate.analysis.project import ClassInfo, ProjectIndex
from lightmigrate.catalog import trainer_args as tam
from lightmigrate.analysis.ast_nodes import ast_nodes

_DATAMODULE = frozenset({"LightningDataModule"})
_ALLOWED = ("str", "int", "float", "bool")  # 1.9's allowed_types, in its order
_TRUTH = '("y", "yes", "t", "true", "on", "1", "n", "no", "f", "false", "off", "0")'
# 1.9's str_to_bool: the six true words, the six false words, anything else an argparse error
# (``tuple.index`` raises ValueError, which argparse reports as an invalid value)
STR_TO_BOOL = f"lambda x: {_TRUTH}.index(x.lower()) < 6"
# 1.9's str_to_bool_or_int: a truth word, else an int, else the string itself
STR_TO_BOOL_OR_INT = (f"lambda x: {_TRUTH}.index(x.lower()) < 6 if x.lower() in {_TRUTH} else int(x) "
                      'if x.strip().lstrip("+-").isdigit() else x')


@dataclass(frozen=True)
class Param:
    """One parameter of the ``__init__`` 1.9 read: its name, its default's code (None: no
    default), and the ``add_argument`` keyword code of its option (None: 1.9 added none)."""

    name: str
    default: Optional[str]
    option: Optional[str]


def _literal_code(node: ast.expr, text: str) -> Optional[str]:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return ast.get_source_segment(text, node)


def _last(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _elements(node: ast.expr) -> List[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _one(node: ast.expr) -> Optional[str]:
    """The type a single ``__args__`` member stands for: one of ``_ALLOWED``, "other"."""
    if isinstance(node, ast.Name) and node.id in _ALLOWED:
        return node.id
    return "other"


def _union_members(node: ast.expr) -> Optional[List[ast.expr]]:
    """The flattened members of a union annotation (``Optional``, ``Union``, ``|``), or None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _union_members(node.left), _union_members(node.right)
        return (left or [node.left]) + (right or [node.right])
    if isinstance(node, ast.Subscript) and _last(node.value) in ("Optional", "Union"):
        out: List[ast.expr] = []
        for e in _elements(node.slice):
            inner = _union_members(e)
            out += inner if inner is not None else [e]
        return out
    return None


def _types(annotation: Optional[ast.expr]) -> Optional[Tuple[str, ...]]:
    """The types 1.9's ``get_init_arguments_and_types`` read from an annotation, in
    ``_ALLOWED``'s order (empty: no option); None when this reading is not sure."""
    if annotation is None or (isinstance(annotation, ast.Constant) and isinstance(annotation.value, str)):
        return ()  # no annotation, or a string: 1.9 skipped the parameter
    members = _union_members(annotation)
    if members is not None:
        literals = [m for m in members if isinstance(m, ast.Subscript) and _last(m.value) == "Literal"]
        if literals:
            if len(literals) != len(members):
                return ()  # 1.9 failed to read Union[Literal, X] (AttributeError) and skipped it
            members = [e for m in literals for e in _elements(m.slice)]
            return _literal_types(members)
        found = {_one(m) for m in members}
    elif isinstance(annotation, ast.Subscript):
        if _last(annotation.value) == "Literal":
            return _literal_types(_elements(annotation.slice))
        found = {_one(m) for m in _elements(annotation.slice)}
    elif isinstance(annotation, (ast.Name, ast.Attribute)):
        found = {_one(annotation)} if isinstance(annotation, ast.Name) else {"other"}
    else:
        return None
    return tuple(t for t in _ALLOWED if t in found)


def _literal_types(values: List[ast.expr]) -> Optional[Tuple[str, ...]]:
    found = set()
    for v in values:
        if not isinstance(v, ast.Constant):
            return None
        found.add(type(v.value).__name__)
    return tuple(t for t in _ALLOWED if t in found)


def _type_code(name: str, types: Tuple[str, ...]) -> Tuple[str, bool]:
    """The ``type=`` code of 1.9's option for a parameter of these types, and whether it takes
    ``nargs="?", const=True``."""
    flag = "bool" in types
    if flag:
        if len(types) == 1:
            code = STR_TO_BOOL
        elif "int" in types:
            code = STR_TO_BOOL_OR_INT
        elif "str" in types:
            code = tam._BOOL_OR_STR
        else:
            code = next(t for t in types if t != "bool")
    else:
        code = types[0]
    if name in ("gpus", "tpu_cores"):
        code = tam.ARGPARSE_19["gpus"][0]
    if len(types) == 2 and set(types) == {"int", "float"}:
        code = tam._INT_OR_FLOAT
    if name == "track_grad_norm":
        code = "float"
    if name == "precision":
        code = tam.ARGPARSE_19["precision"][0]
    return code, flag


def _future_annotations(tree: ast.Module) -> bool:
    return any(isinstance(s, ast.ImportFrom) and s.module == "__future__" and
               any(a.name == "annotations" for a in s.names) for s in tree.body)


def _class_node(tree: ast.Module, info: ClassInfo) -> Optional[ast.ClassDef]:
    same = sorted((n for n in ast_nodes(tree) if isinstance(n, ast.ClassDef) and n.name == info.name),
                  key=lambda n: (n.lineno, n.col_offset))
    return same[info.ordinal] if info.ordinal < len(same) else None


def datamodule_params(info: ClassInfo, project: ProjectIndex) -> Optional[List[Param]]:
    """The parameters of the ``__init__`` 1.9 read for the project DataModule ``info`` (none
    when no project class on the way defines one: Lightning's takes nothing), each with its
    option; None when that cannot be known (an ancestor outside the run, a default that is not
    a literal, an annotated ``*name`` other than ``*args`` / ``**kwargs``, a text that does not parse)."""
    owner = info
    seen = {(info.name, info.path)}
    while "__init__" not in owner.methods:  # up the single bases to the class that defines it
        if len(owner.bases) != 1:
            return None
        if project.lightning_bases(owner, _DATAMODULE):
            return []  # Lightning's LightningDataModule.__init__ takes nothing
        found = project.resolve(owner.base_names[0], owner.path)
        if found is None or (found.name, found.path) in seen:
            return None
        seen.add((found.name, found.path))
        owner = found
    text, tree = project.text_of(owner.path), project.tree_of(owner.path)
    if text is None or tree is None:
        return None
    cls = _class_node(tree, owner)
    init = None if cls is None else next((f for f in cls.body if isinstance(f, ast.FunctionDef)
                                          and f.name == "__init__"), None)
    if init is None or init.decorator_list:
        return None
    args = init.args
    if any(a is not None and a.annotation is not None and a.arg not in ("args", "kwargs")
           for a in (args.vararg, args.kwarg)):
        return None  # an annotated ``*name`` 1.9 made an option of: not followed (``*args``, ``**kwargs`` it skipped)
    positional = [*args.posonlyargs, *args.args][1:]
    defaults: List[Optional[ast.expr]] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))
    future = _future_annotations(tree)
    out = []
    for arg, default in pairs:
        default_code = None
        if default is not None:
            default_code = _literal_code(default, text)
            if default_code is None:
                return None
        types = () if future else _types(arg.annotation)
        if types is None:
            return None
        option = None
        if types and arg.arg not in ("self", "args", "kwargs"):
            code, flag = _type_code(arg.arg, types)
            option = f"type={code}"
            option += f", default={default_code}" if default_code is not None else ", required=True"
            if flag:
                option += ', nargs="?", const=True'
        out.append(Param(arg.arg, default_code, option))
    return out


def add_argument_code(parser: str, param: Param) -> str:
    return f'{parser}.add_argument("--{param.name}", {param.option})'
