"""Small ``ast`` and libcst helpers shared by the rules that act on the methods of Lightning
classes (LM305-LM309): the ``find`` side reads method definitions on Python's ``ast``, the
``fix`` side finds the class statements its sites name."""

from __future__ import annotations

import ast
from typing import Iterable, List, Union

import libcst as cst

from lightmigrate.rules.base import RuleContext, SourceFile

FuncDef = Union[ast.FunctionDef, ast.AsyncFunctionDef]


def index_source(source: SourceFile, ctx: RuleContext) -> None:
    """Index ``source`` when the project index has not seen its path (what the rules' old
    ``ensure_indexed`` did before their walk)."""
    if not ctx.project.has_path(ctx.path):
        ctx.project.add_source(source.text, ctx.path, tree=source.tree)


def methods(cls: ast.ClassDef) -> List[FuncDef]:
    """The ``def`` statements directly in the body of ``cls`` (what libcst's class body holds as
    ``FunctionDef``, ``async def`` included)."""
    return [item for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]


def positional(func: FuncDef) -> List[ast.arg]:
    """The positional parameters of ``func`` (positional-only ones first)."""
    return [*func.args.posonlyargs, *func.args.args]


def has_star_params(func: FuncDef) -> bool:
    """``*args``, ``**kwargs`` or keyword-only parameters (``cst.helpers.has_star_params``)."""
    args = func.args
    return args.vararg is not None or args.kwarg is not None or bool(args.kwonlyargs)


def calls_super(func: ast.AST, name: str) -> bool:
    """Whether ``func`` holds a call ``super().name(...)`` (``class_edit.calls_super``)."""
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name:
            value = node.func.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
                return True
    return False


def class_line(ctx: RuleContext, module: cst.Module, cls: cst.ClassDef) -> int:
    """The line of the ``class`` keyword of ``cls`` in ``module`` (the ``lineno`` Python's ``ast``
    gives the class statement, so it matches the line a site carries)."""
    return ctx.position(module, cls)[0]


def lines_of(sites: Iterable) -> frozenset:
    """The lines of ``sites``."""
    return frozenset(s.line for s in sites)
