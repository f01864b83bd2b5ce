"""Class-body aliases of methods: ``test_epoch_end = validation_epoch_end``.

A class body binds names in order, and an alias binds the function object the value names at
that point. When a rule renames, removes or wraps a method, an alias of it must follow, or the
class raises ``NameError`` when it is defined (the old name is gone) or silently binds something
else (the name now holds a wrapper). The rules share what is here:

- :func:`class_aliases` / :func:`ast_class_aliases` find the aliases (``A = B`` and
  ``A = C = B`` with plain names, directly in the class body), on libcst and on ``ast``;
- :func:`last_binding` tells whether the name a class finally binds to ``name`` is a ``def``
  or an alias (the last binding wins, as in Python);
- :func:`rename_alias_target` renames what an alias binds (``test_epoch_end = f`` becomes
  ``_test_epoch_end = f``), :func:`retarget_aliases` what it points at (``x = validation_step``
  becomes ``x = _validation_step`` when the rule moved that body to ``_validation_step``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple

import libcst as cst


@dataclass(frozen=True)
class Alias:
    item: int  # index of the statement line among the class body's items
    small: int  # index of the assignment in that line
    targets: Tuple[str, ...]
    value: str


def _alias_parts(small: cst.CSTNode) -> Optional[Tuple[Tuple[str, ...], str]]:
    if not isinstance(small, cst.Assign) or not isinstance(small.value, cst.Name):
        return None
    if not all(isinstance(t.target, cst.Name) for t in small.targets):
        return None
    return tuple(t.target.value for t in small.targets), small.value.value  # type: ignore[union-attr]


def class_aliases(items: Sequence[cst.CSTNode]) -> List[Alias]:
    """The aliases among a class body's statements, in order."""
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, cst.SimpleStatementLine):
            continue
        for j, small in enumerate(item.body):
            parts = _alias_parts(small)
            if parts is not None:
                out.append(Alias(i, j, *parts))
    return out


def ast_class_aliases(node: ast.ClassDef) -> Dict[str, str]:
    """``ast`` side: alias target -> the name it binds, for the last alias of each target."""
    out: Dict[str, str] = {}
    for st in node.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Name) and all(
                isinstance(t, ast.Name) for t in st.targets):
            for t in st.targets:
                out[t.id] = st.value.id  # type: ignore[attr-defined]
    return out


def ast_alias_bound(node: ast.ClassDef, name: str) -> bool:
    """Whether the last binding of ``name`` in the class body is an alias (not a ``def``)."""
    last = None
    for st in node.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == name:
            last = "def"
        elif isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in st.targets):
            last = "alias" if isinstance(st.value, ast.Name) else "other"
    return last == "alias"


def last_binding(items: Sequence[cst.CSTNode], name: str) -> Optional[object]:
    """The last binding of ``name`` in the class body: the ``FunctionDef``, the :class:`Alias`,
    or None when neither binds it."""
    found: Optional[object] = None
    aliases = {(a.item, a.small): a for a in class_aliases(items)}
    for i, item in enumerate(items):
        if isinstance(item, cst.FunctionDef) and item.name.value == name:
            found = item
        elif isinstance(item, cst.SimpleStatementLine):
            for j, _ in enumerate(item.body):
                a = aliases.get((i, j))
                if a is not None and name in a.targets:
                    found = a
    return found


def alias_of(items: Sequence[cst.CSTNode], name: str) -> Optional[Alias]:
    """The alias that finally binds ``name`` (None when a ``def`` or nothing does)."""
    found = last_binding(items, name)
    return found if isinstance(found, Alias) else None


def aliased_names(items: Sequence[cst.CSTNode]) -> Set[str]:
    """The names some alias of the class body points at."""
    return {a.value for a in class_aliases(items)}


def _edit_alias(items: List[cst.CSTNode], alias: Alias, targets: Iterable[str], value: str) -> None:
    line = items[alias.item]
    assert isinstance(line, cst.SimpleStatementLine)
    small = line.body[alias.small]
    assert isinstance(small, cst.Assign)
    new_targets = [t.with_changes(target=cst.Name(n)) for t, n in zip(small.targets, targets)]
    new_small = small.with_changes(targets=new_targets, value=cst.Name(value))
    body = list(line.body)
    body[alias.small] = new_small
    items[alias.item] = line.with_changes(body=body)


def rename_alias_target(items: List[cst.CSTNode], alias: Alias, old: str, new: str) -> None:
    """``old = f`` (or ``old = other = f``) binds ``new`` instead of ``old``."""
    _edit_alias(items, alias, [new if t == old else t for t in alias.targets], alias.value)


def retarget_alias(items: List[cst.CSTNode], alias: Alias, value: str) -> None:
    """``x = f`` becomes ``x = value``."""
    _edit_alias(items, alias, alias.targets, value)


def retarget_aliases(items: List[cst.CSTNode], renames: Dict[str, str], defined: Iterable[str]) -> List[str]:
    """Point every alias whose value is a key of ``renames`` (and one of the ``defined`` names,
    the class's own methods: a module-level function of that name is another thing) at the
    renamed method. Returns the names retargeted."""
    defined = set(defined)
    done = []
    for a in class_aliases(items):
        if a.value in renames and a.value in defined and renames[a.value] != a.value:
            _edit_alias(items, a, a.targets, renames[a.value])
            done.append(a.value)
    return done


def def_names_before(items: Sequence[cst.CSTNode], index: int) -> Set[str]:
    """The names ``def`` binds in the class body before ``items[index]``."""
    return {item.name.value for item in items[:index] if isinstance(item, cst.FunctionDef)}


def forward_args(func: cst.FunctionDef) -> str:
    """How a method passes its own parameters (after the first) on to another method with the
    same signature: ``a, b, *args, k=k, **kwargs``."""
    params = func.params
    parts = [p.name.value for p in [*params.posonly_params, *params.params][1:]]
    if isinstance(params.star_arg, cst.Param):
        parts.append("*" + params.star_arg.name.value)
    parts.extend(f"{p.name.value}={p.name.value}" for p in params.kwonly_params)
    if params.star_kwarg is not None:
        parts.append("**" + params.star_kwarg.name.value)
    return ", ".join(parts)


def keep_aliases_valid(items: List[cst.CSTNode], renames: Dict[str, str], original: Iterable[str],
                       code: str, reshaped: Optional[Dict[str, str]] = None) -> None:
    """After a rule's changes to a class body (``items``, changed in place): an alias of a
    method the rule renamed (``renames``: old -> new, for methods whose calls keep their shape)
    points at the new name, as the renamed calls do; so does an alias of a method renamed with
    other parameters (``reshaped``), with a marker (its callers pass the old ones); an alias of
    one of the ``original`` methods that the class no longer binds gets a marker (a
    ``NameError`` otherwise)."""
    from lightmigrate.cst.helpers import add_marker  # (helpers imports nothing from here)

    original = list(original)
    retarget_aliases(items, renames, original)
    for name in retarget_aliases(items, reshaped or {}, original):
        for a in class_aliases(items):
            if a.value == (reshaped or {})[name]:
                why = (f"`{', '.join(a.targets)} = {a.value}`: {name} became {a.value}, which takes other "
                       "parameters; check the callers of the alias")
                items[a.item] = add_marker(items[a.item], code, why)
    bound = {item.name.value for item in items if isinstance(item, cst.FunctionDef)}
    for a in class_aliases(items):
        bound.update(a.targets)
    for a in class_aliases(items):
        if a.value in original and a.value not in bound:
            why = (f"`{', '.join(a.targets)} = {a.value}`: {a.value} was renamed or replaced; point the alias "
                   "at its 2.x equivalent by hand")
            items[a.item] = add_marker(items[a.item], code, why)
