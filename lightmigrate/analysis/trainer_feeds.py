"""Where the ``**`` arguments of a file's Trainer calls come from, across files.

``pl.Trainer(**config)`` in one module often spreads a dict another module builds: a settings
module's ``TRAINER_KWARGS = dict(gpus=1, ...)``, or a helper's ``def trainer_config(): config =
{...}; config["auto_lr_find"] = True; return config``. The project index records, for each file
that spreads a name into a ``...Trainer(...)`` call, a :class:`Feed` per source it can name: the
module the value comes from (as path patterns, see :func:`module_patterns`), the name in that
module, and whether it is that name's value or what the function of that name returns. The
module that holds the dict then finds its own feeds (``ProjectIndex.trainer_feeds_for``) and
migrates the keys where they are set.

Only the cheap, certain links are followed: names imported with ``from M import NAME`` (also
relative), ``import M as m`` / ``from P import m`` and then ``m.NAME``, and a name of the file
assigned from a call of such a function (or of a function defined in the same file).
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

from lightmigrate.analysis.ast_nodes import ast_dotted, ast_nodes


@dataclass(frozen=True)
class Feed:
    """A dict that reaches a Trainer call: ``name`` of the module at one of ``patterns``;
    ``kind`` "value" (the name holds the dict) or "call" (the function returns it)."""

    patterns: Tuple[str, ...]
    name: str
    kind: str
    callee: str  # "lightning" (a Lightning Trainer call) or the called name, to resolve as a class
    importer: str  # the path of the file with the Trainer call
    has_tune: bool  # that file calls ``.tune(``: 1.9's tuner flags had an effect there
    callee_patterns: Tuple[str, ...] = ()  # where the called class comes from (none: the importer)


def _norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def module_patterns(module: str, level: int, importer: str) -> Tuple[str, ...]:
    """The paths the module ``module`` (``level`` dots before it) imported from ``importer``
    may have: a relative import gives paths from the importer's folder, an absolute one path
    endings (``pkg/settings.py``), which :func:`matches` compares with a file's path."""
    parts = [p for p in module.split(".") if p]
    if level:
        base = posixpath.dirname(_norm(importer))
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        stem = posixpath.join(base, *parts) if parts else base
        return ("=" + _norm(stem + ".py"), "=" + _norm(posixpath.join(stem, "__init__.py")))
    if not parts:
        return ()
    stem = "/".join(parts)
    return (stem + ".py", stem + "/__init__.py")


def matches(patterns: Tuple[str, ...], path: str) -> bool:
    """Whether the file at ``path`` may be the module of ``patterns``."""
    p = _norm(path)
    for pattern in patterns:
        if pattern.startswith("="):
            if p == pattern[1:] or p.endswith("/" + pattern[1:].lstrip("./")):
                return True
        elif p == pattern or p.endswith("/" + pattern):
            return True
    return False


# ``...Trainer(`` (what may stand between a name and its ``(`` inside brackets too), a name a
# ``...Trainer`` is imported as, and what the scan of a call's arguments stops at: brackets, the
# start of a string or comment, ``**``
_CALL_GAP = r"(?:\s|\\|#[^\n]*)*\("
_TRAINER_CALL = re.compile("Trainer" + _CALL_GAP)
_TRAINER_ALIAS = re.compile(r"Trainer(?:\s|\\)+as(?:\s|\\)+([^\W\d]\w*)")
_ARGUMENT_SCAN = re.compile(r"[()\[\]{}'\"#]|\*\*")
_DEPTH = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def may_feed(text: str) -> bool:
    """The text search before any parse: a ``...Trainer(`` call (or a call of a name a
    ``...Trainer`` is imported as) whose arguments may hold ``**`` (a superset: arguments holding
    a string or a comment are not read further)."""
    if "Trainer" not in text or "**" not in text:
        return False
    calls = _TRAINER_CALL
    aliases = set(_TRAINER_ALIAS.findall(text)) if " as" in text else ()
    if aliases:  # (``from pytorch_lightning import Trainer as PLT``: ``PLT(**cfg)``)
        calls = re.compile("(?:Trainer|" + "|".join(map(re.escape, sorted(aliases))) + ")" + _CALL_GAP)
    for call in calls.finditer(text):
        depth = 1
        for found in _ARGUMENT_SCAN.finditer(text, call.end()):
            token = found.group()
            if token == "**" or token in "'\"#":
                return True
            depth += _DEPTH[token]
            if depth == 0:
                break
    return False


def _is_lightning(module: Optional[str], level: int) -> bool:
    return not level and (module or "").split(".")[0] in ("pytorch_lightning", "lightning")


class TrainerSpreads:
    """One pass over a file for its Trainer spreads: the names its imports bind, its functions
    and assignments, and the ``**value`` arguments of its calls of a ``...Trainer``."""

    def __init__(self, tree: ast.AST, path: str) -> None:
        self.path = path
        self.names: Dict[str, Tuple[Tuple[str, ...], str]] = {}  # local name -> (module patterns, its name there)
        self.modules: Dict[str, Tuple[str, ...]] = {}  # local name -> patterns of a module it may be
        self.lightning_trainers: Set[str] = set()
        self.lightning_packages: Set[str] = set()
        self.local_functions: Set[str] = set()
        self.assigned: Dict[str, List[ast.expr]] = {}
        self.spreads: List[Tuple[ast.expr, str, str]] = []  # (value, the callee as written, its last name)
        self.has_tune = False
        names, modules = self.names, self.modules
        for node in ast_nodes(tree):
            kind = type(node)
            if kind is ast.ImportFrom:
                mod, level = node.module, node.level  # type: ignore[attr-defined]
                for alias in node.names:  # type: ignore[attr-defined]
                    local = alias.asname or alias.name
                    if _is_lightning(mod, level):
                        (self.lightning_trainers if alias.name == "Trainer" else self.lightning_packages).add(local)
                        continue
                    names[local] = (module_patterns(mod or "", level, path), alias.name)
                    modules[local] = module_patterns(((mod + ".") if mod else "") + alias.name, level, path)
            elif kind is ast.Import:
                for alias in node.names:  # type: ignore[attr-defined]
                    if _is_lightning(alias.name, 0):
                        self.lightning_packages.add(alias.asname or alias.name.split(".")[0])
                    elif alias.asname:
                        modules[alias.asname] = module_patterns(alias.name, 0, path)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                self.local_functions.add(node.name)  # type: ignore[attr-defined]
            elif kind is ast.Assign:
                for t in node.targets:  # type: ignore[attr-defined]
                    if type(t) is ast.Name:
                        self.assigned.setdefault(t.id, []).append(node.value)  # type: ignore[attr-defined]
            elif kind is ast.Call:
                func = node.func  # type: ignore[attr-defined]
                last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
                if last == "tune":
                    self.has_tune = True
                for k in node.keywords:  # type: ignore[attr-defined]
                    if k.arg is None:
                        self.spreads.append((k.value, ast_dotted(func) or "", last))
        # the calls of a ``...Trainer``, also under an import alias (``from pytorch_lightning import
        # Trainer as PLT``, ``from pkg.trainer import MyTrainer as Runner``)
        self.spreads = [(value, dotted, last) for value, dotted, last in self.spreads if self.is_trainer(dotted, last)]

    def is_trainer(self, dotted: str, last: str) -> bool:
        """Whether a call of ``dotted`` (its last name ``last``) may make a Trainer."""
        names = self.names
        return (last.endswith("Trainer") or last in self.lightning_trainers
                or (last in names and last == dotted and names[last][1].endswith("Trainer")))

    def callee_of(self, dotted: str) -> Tuple[str, Tuple[str, ...]]:
        """The callee ("lightning" or a class name) and where its class comes from."""
        head = dotted.split(".")[0]
        if ("." not in dotted and dotted in self.lightning_trainers) or (
                "." in dotted and head in self.lightning_packages):
            return "lightning", ()
        if "." not in dotted:
            return (self.names[dotted][1], self.names[dotted][0]) if dotted in self.names else (dotted, ())
        return dotted.rsplit(".", 1)[-1], self.modules.get(dotted.rsplit(".", 1)[0], ("?",))


def trainer_feeds(tree: ast.AST, path: str, read: Optional[TrainerSpreads] = None) -> Tuple[Feed, ...]:
    """The feeds of the file ``path`` (its ``ast`` tree; ``read``: its :class:`TrainerSpreads`, if made)."""
    r = read or TrainerSpreads(tree, path)
    names, modules = r.names, r.modules
    out: List[Feed] = []

    def source_of(value: ast.expr, callee: Tuple[str, Tuple[str, ...]], depth: int = 0) -> None:
        def feed(patterns: Tuple[str, ...], name: str, kind: str) -> None:
            out.append(Feed(patterns, name, kind, callee[0], path, r.has_tune, callee[1]))

        if type(value) is ast.Name:
            name = value.id  # type: ignore[attr-defined]
            if name in names:
                feed(*names[name], "value")
            elif depth == 0:
                for v in r.assigned.get(name, ()):
                    source_of(v, callee, 1)
        elif type(value) is ast.Call:
            func = value.func  # type: ignore[attr-defined]
            if type(func) is ast.Name:
                fname = func.id  # type: ignore[attr-defined]
                if fname in names:
                    feed(*names[fname], "call")
                elif fname in r.local_functions:
                    feed(("=" + _norm(path),), fname, "call")
            elif type(func) is ast.Attribute:
                head = ast_dotted(func.value)  # type: ignore[attr-defined]
                if head is not None and head in modules:
                    feed(modules[head], func.attr, "call")  # type: ignore[attr-defined]
        elif type(value) is ast.Attribute:
            head = ast_dotted(value.value)  # type: ignore[attr-defined]
            if head is not None and head in modules:
                feed(modules[head], value.attr, "value")  # type: ignore[attr-defined]

    for value, dotted, _ in r.spreads:
        source_of(value, r.callee_of(dotted))
    return tuple(dict.fromkeys(out))


def from_module(class_path: str, patterns: Tuple[str, ...]) -> bool:
    """Whether a class (or function) defined in ``class_path`` can be what a module at
    ``patterns`` exports: it is that module, or that module is a package above it (``from pkg
    import MyTrainer`` with ``pkg/__init__.py`` importing it from ``pkg/trainer.py``)."""
    if matches(patterns, class_path):
        return True
    folder = class_path.replace("\\", "/").rsplit("/", 1)[0]
    while "/" in folder:
        if matches(patterns, folder + "/__init__.py"):
            return True
        folder = folder.rsplit("/", 1)[0]
    return matches(patterns, folder + "/__init__.py") if folder else False
