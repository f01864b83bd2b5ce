"""A cheap, project-wide index of class definitions.

Rules need to know what a class inherits: whether a base is a LightningModule, whether an
ancestor defined ``validation_epoch_end`` or a subclass overrides it. Classes are often split
across files, so the engine indexes every file of the run once with the stdlib ``ast`` module
(fast, no libcst) before any rule runs. Names are resolved by their last component, which is
what a file sees after ``from x import Name``; a name defined by several classes is ambiguous
and resolves to nothing.
"""

from __future__ import annotations

import ast
import os
import re
import unicodedata
from bisect import insort
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from lightmigrate.analysis.ast_nodes import ast_nodes
from lightmigrate.analysis.text_patterns import KEYWORD_GAP, one_of
from lightmigrate.analysis.trainer_feeds import Feed, TrainerSpreads, matches, may_feed, trainer_feeds
from lightmigrate.analysis.trainer_spreaders import Spreader, trainer_spreaders

LIGHTNING_MODULE_NAMES = frozenset({"LightningModule"})
# The base names ``ProjectIndex.ancestors`` does not follow (nor does ``may_inherit``).
_ANCESTORS_STOP = LIGHTNING_MODULE_NAMES | {"object"}
CALLBACK_NAMES = frozenset(
    {"Callback", "ModelCheckpoint", "EarlyStopping", "BasePredictionWriter", "ProgressBarBase", "ProgressBar",
     "TQDMProgressBar", "RichProgressBar", "LearningRateMonitor", "BaseFinetuning", "BackboneFinetuning",
     "GradientAccumulationScheduler", "StochasticWeightAveraging", "DeviceStatsMonitor", "Timer",
     "ModelSummary", "RichModelSummary", "LearningRateFinder", "BatchSizeFinder", "LambdaCallback"}
)
LIGHTNING_IMPORT_ROOTS = ("pytorch_lightning", "lightning")
# A class can only matter to a rule if its file mentions Lightning, defines hook-like
# methods, derives from a (project) Trainer or overrides ``nn.Module.train``; other files are
# not parsed at all.
_INDEX_HINTS = ("ightning", "_epoch", "_batch", "_step", "optimizer", "Trainer", "def train(self")
# A method overriding ``nn.Module.train(self, mode=True)`` (``ProjectIndex.train_overrides``).
_TRAIN_OVERRIDE = re.compile(r"^[ \t]+def train\(\s*self\s*(?:,\s*mode\b[^)]*)?\)", re.M)


_DP = re.compile(r"""(strategy|accelerator|distributed_backend)\s*=\s*["']dp["']|DataParallelStrategy""")
_DP_WORDS = ('"dp"', "'dp'", "DataParallelStrategy")  # one is in every text _DP finds something in


# Every substring ``worth_indexing`` and ``_text_settings`` look for. A caller that knows which
# of them a text holds (the engine's prefilter finds them with the rules' triggers) passes that
# set as ``present``, and the text is not searched again.
TEXT_PROBES = ("class ", *_INDEX_HINTS, *_DP_WORDS, "gradient_clip", "accumulate_grad_batches")


def _holds(text: str, present: Optional[FrozenSet[str]]) -> Callable[[str], bool]:
    return text.__contains__ if present is None else present.__contains__


def worth_indexing(text: str, present: Optional[FrozenSet[str]] = None) -> bool:
    has = _holds(text, present)
    return has("class ") and any(has(h) for h in _INDEX_HINTS)


@dataclass(frozen=True)
class ClassInfo:
    name: str
    path: str
    # dotted base expressions as written, e.g. "pl.LightningModule", with an import alias undone
    # ("PLT" for ``from pytorch_lightning import Trainer as PLT`` is "Trainer": ``import_aliases``)
    bases: Tuple[str, ...]
    methods: FrozenSet[str]  # names defined by def (or assigned) in the class body
    super_calls: Dict[str, FrozenSet[str]] = field(default_factory=dict, compare=False, hash=False)
    """method name -> names called as ``super().NAME(...)`` inside it."""
    params: Dict[str, Tuple[str, ...]] = field(default_factory=dict, compare=False, hash=False)
    """method name -> its parameter names, in order."""
    attributes: FrozenSet[str] = field(default=frozenset(), compare=False, hash=False)
    """names used as ``<first parameter>.NAME`` in its methods (``self.NAME``)."""
    self_calls: FrozenSet[str] = field(default=frozenset(), compare=False, hash=False)
    """names called as ``self.NAME(...)`` in its methods."""
    trainer_base: bool = field(default=False, compare=False, hash=False)
    """one of its bases is Lightning's ``Trainer`` (by the imports of its file)."""
    init_spreads: FrozenSet[str] = field(default=frozenset(), compare=False, hash=False)
    """the names its ``__init__`` spreads (``**NAME``) into ``super().__init__(...)``."""
    ordinal: int = 0
    """its place among the classes of the same name in its file, in source order (a test file
    often defines ``class TestModel`` in several test functions)."""
    base_origins: Tuple[str, ...] = field(default=(), compare=False, hash=False)
    """where each of ``bases`` comes from, by the binding of its first name in the class's file:
    ``ORIGIN_LIGHTNING`` (an import from Lightning), ``ORIGIN_LOCAL`` (a class of the file),
    ``ORIGIN_RELATIVE`` (a relative import), ``"abs:<package>"`` (an import from another
    package), or ``""`` (no binding seen: a star import, a builtin, or not known)."""

    @property
    def base_names(self) -> Tuple[str, ...]:
        return tuple(b.rsplit(".", 1)[-1] for b in self.bases)

    def base_origin(self, i: int) -> str:
        return self.base_origins[i] if i < len(self.base_origins) else ""


ORIGIN_LIGHTNING = "lightning"
ORIGIN_LOCAL = "local"
ORIGIN_RELATIVE = "relative"


def _module_level_imports(tree: ast.AST) -> Iterator[ast.stmt]:
    """The imports that bind module-level names: at the top level, or in ``if``, ``try`` and
    ``with`` blocks there (not in functions or classes), in source order."""
    todo = list(getattr(tree, "body", ()))
    while todo:
        st = todo.pop(0)
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            yield st
        elif isinstance(st, (ast.If, ast.Try, ast.With, ast.AsyncWith)) or type(st).__name__ == "TryStar":
            inner = [*st.body, *getattr(st, "orelse", ()), *getattr(st, "finalbody", ())]
            for handler in getattr(st, "handlers", ()):
                inner.extend(handler.body)
            todo[:0] = inner


def _import_origins(tree: ast.AST) -> Dict[str, str]:
    """Module-level name -> the origin (see ``ClassInfo.base_origins``) of the import that binds
    it; the first import of a name wins (the preferred branch of a ``try``/``except``)."""
    bound: Dict[str, str] = {}
    for st in _module_level_imports(tree):
        if isinstance(st, ast.Import):
            for alias in st.names:
                top = alias.name.split(".", 1)[0]
                origin = ORIGIN_LIGHTNING if top in LIGHTNING_IMPORT_ROOTS else f"abs:{top}"
                bound.setdefault(alias.asname or top, origin)
        else:
            if st.level:
                origin = ORIGIN_RELATIVE
            else:
                top = (st.module or "").split(".", 1)[0]
                origin = ORIGIN_LIGHTNING if top in LIGHTNING_IMPORT_ROOTS else f"abs:{top}"
            for alias in st.names:
                if alias.name != "*":
                    bound.setdefault(alias.asname or alias.name, origin)
    return bound


def _dotted(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    if isinstance(node, ast.Subscript):  # Generic[T] and the like
        return _dotted(node.value)
    return None


def _method_uses(func: ast.AST, self_name: Optional[str],
                 spreads: Optional[set] = None) -> Tuple[FrozenSet[str], set, set]:
    """What one method does, in one pass over it: the names it calls as ``super().NAME(...)``,
    and (with ``self_name``, its first parameter) the names it uses as ``self.NAME`` and calls
    as ``self.NAME(...)``. ``spreads`` (for ``__init__``) gets the names spread as ``**NAME``
    into ``super().__init__(...)``."""
    supers, attributes, calls = set(), set(), set()
    for node in ast_nodes(func):
        kind = type(node)
        if kind is ast.Call:
            f = node.func  # type: ignore[attr-defined]
            if type(f) is ast.Attribute:
                v = f.value
                if type(v) is ast.Call and type(v.func) is ast.Name and v.func.id == "super":
                    supers.add(f.attr)
                    if spreads is not None and f.attr == "__init__":
                        spreads.update(k.value.id for k in node.keywords  # type: ignore[attr-defined]
                                       if k.arg is None and type(k.value) is ast.Name)
                elif self_name is not None and type(v) is ast.Name and v.id == self_name:
                    calls.add(f.attr)
        elif kind is ast.Attribute and self_name is not None:
            v = node.value  # type: ignore[attr-defined]
            if type(v) is ast.Name and v.id == self_name:
                attributes.add(node.attr)  # type: ignore[attr-defined]
    return frozenset(supers), attributes, calls


def _param_names(func: ast.AST) -> Tuple[str, ...]:
    a = func.args  # type: ignore[attr-defined]
    names = [p.arg for p in (*a.posonlyargs, *a.args)]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    names.extend(p.arg for p in a.kwonlyargs)
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return tuple(names)


def lightning_trainer_names(tree: ast.AST, nodes: Optional[list] = None) -> Tuple[Set[str], Set[str]]:
    """The names a file's imports bind to Lightning's ``Trainer`` (``from pytorch_lightning
    import Trainer as T``) and to Lightning packages or modules (``import pytorch_lightning as
    pl``)."""
    trainers: Set[str] = set()
    packages: Set[str] = set()
    for node in ast_nodes(tree) if nodes is None else nodes:
        if type(node) is ast.Import:
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.name.split(".")[0] in LIGHTNING_IMPORT_ROOTS:
                    packages.add(alias.asname or alias.name.split(".")[0])
        elif type(node) is ast.ImportFrom:
            module = node.module or ""  # type: ignore[attr-defined]
            if node.level or module.split(".")[0] not in LIGHTNING_IMPORT_ROOTS:  # type: ignore[attr-defined]
                continue
            for alias in node.names:  # type: ignore[attr-defined]
                (trainers if alias.name == "Trainer" else packages).add(alias.asname or alias.name)
    return trainers, packages


def is_lightning_trainer_base(base: str, names: Tuple[Set[str], Set[str]]) -> bool:
    """Whether the dotted base expression ``base`` is Lightning's Trainer under ``names``
    (``lightning_trainer_names`` of its file)."""
    trainers, packages = names
    if "." not in base:
        return base in trainers
    return base.rsplit(".", 1)[1] == "Trainer" and base.split(".")[0] in packages


def import_aliases(tree: ast.AST, nodes: Optional[list] = None) -> Dict[str, str]:
    """The names a file's ``from M import NAME as ALIAS`` statements bind under another name:
    ALIAS -> NAME (``from pytorch_lightning import Trainer as PLT``: ``PLT`` -> ``Trainer``;
    ``from .trainer import MyTrainer as Base``). Any import of the file counts (a test function
    often imports its base class itself); an alias bound to several names is left out."""
    found: Dict[str, str] = {}
    ambiguous: Set[str] = set()
    for node in (ast_nodes(tree) if nodes is None else nodes):
        if type(node) is not ast.ImportFrom:
            continue
        for alias in node.names:  # type: ignore[attr-defined]
            if alias.asname is None or alias.asname == alias.name or alias.name == "*":
                continue
            if found.setdefault(alias.asname, alias.name) != alias.name:
                ambiguous.add(alias.asname)
    for name in ambiguous:
        del found[name]
    return found


# ``as ALIAS`` for one ALIAS, and the NAME before it, as a text search finds them (a superset of the
# import aliases of a text: ``with`` and ``except`` items too), for ``header_base_names``.
_NAME_BEFORE = re.compile(r"([^\W\d]\w*)[ \t]+$")
# every ``as NAME`` (the name read ahead, not taken: the next ``as`` may start inside it)
_AS_ANY = re.compile(r"as[ \t]+(?=([^\W\d]\w*))")


def classes_in_source(tree: ast.AST, path: str, nodes: Optional[list] = None) -> List[ClassInfo]:
    """The classes of ``tree`` (``nodes``: ``ast_nodes(tree)``, when the caller has it), in
    ``ast.walk`` order."""
    out = []
    trainer_names: Optional[Tuple[Set[str], Set[str]]] = None
    all_nodes = ast_nodes(tree) if nodes is None else nodes
    imported: Optional[Dict[str, str]] = None
    aliases: Optional[Dict[str, str]] = None
    classes = [node for node in all_nodes if type(node) is ast.ClassDef]
    local: Set[str] = {n.name for n in classes}  # type: ignore[attr-defined]
    ordinals: Dict[int, int] = {}
    seen: Dict[str, int] = {}
    for node in sorted(classes, key=lambda n: (n.lineno, n.col_offset)):  # (source order)
        ordinals[id(node)] = seen.get(node.name, 0)  # type: ignore[attr-defined]
        seen[node.name] = ordinals[id(node)] + 1  # type: ignore[attr-defined]
    for node in classes:
        methods = set()
        attributes: set = set()
        calls: set = set()
        supers: Dict[str, FrozenSet[str]] = {}
        params: Dict[str, Tuple[str, ...]] = {}
        spreads: set = set()
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.add(item.name)
                params[item.name] = _param_names(item)
                first = params[item.name][0] if params[item.name] else None
                supers[item.name], used, called = _method_uses(item, first, spreads if item.name == "__init__" else None)
                attributes |= used
                calls |= called
            elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                methods.update(t.id for t in targets if isinstance(t, ast.Name))
        written = tuple(b for b in (_dotted(x) for x in node.bases) if b)
        bases = written
        if written:
            if aliases is None:
                aliases = import_aliases(tree, all_nodes)
            if aliases:
                bases = tuple(aliases.get(b, b) for b in written)
        trainer_base = False
        if any(b.rsplit(".", 1)[-1] == "Trainer" for b in bases):
            if trainer_names is None:
                trainer_names = lightning_trainer_names(tree)
            trainer_base = any(is_lightning_trainer_base(b, trainer_names) for b in written)
        origins: Tuple[str, ...] = ()
        if bases:
            if imported is None:
                imported = _import_origins(tree)
            origins = tuple(imported.get(first, ORIGIN_LOCAL if first in local else "")
                            for first in (b.split(".", 1)[0] for b in written))
        out.append(ClassInfo(node.name, path, bases, frozenset(methods), supers, params, frozenset(attributes),
                             frozenset(calls), trainer_base=trainer_base, init_spreads=frozenset(spreads),
                             ordinal=ordinals[id(node)], base_origins=origins))
    return out


_MANUAL_REJECTS = ("accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm")
# What ``_trainer_settings`` needs in the text: one of those names as a keyword (before its
# ``=``) or at the end of a string literal (a dict key).
_MANUAL_REJECT_USE = re.compile(one_of(_MANUAL_REJECTS) + rf"""(?:['"]|{KEYWORD_GAP}=(?!=))""")


def _trainer_settings(text: str, tree: Optional[ast.AST] = None) -> Dict[str, object]:
    """``Trainer(...)`` keywords and string keys of dict literals among ``_MANUAL_REJECTS``:
    name -> literal value, or "<expr>" when it is not a literal (``tree``: the parsed text)."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return {}
    found: Dict[str, object] = {}

    def value(node: ast.expr) -> object:
        return node.value if isinstance(node, ast.Constant) else "<expr>"

    nodes = ast_nodes(tree)  # (``ast.walk``'s order, faster)
    aliases = lightning_trainer_names(tree, nodes)[0] if " as " in text else set()  # ``Trainer as PLT``: PLT(...) too
    for node in nodes:
        if isinstance(node, ast.Call) and ((_dotted(node.func) or "").rsplit(".", 1)[-1] == "Trainer"
                                           or (isinstance(node.func, ast.Name) and node.func.id in aliases)):
            for kw in node.keywords:
                if kw.arg in _MANUAL_REJECTS:
                    found.setdefault(kw.arg, value(kw.value))
        elif isinstance(node, ast.Dict):
            for key, val in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value in _MANUAL_REJECTS:
                    found.setdefault(key.value, value(val))
    return found


_YAML_TOP_TRAINER = re.compile(r"^trainer[ \t]*:[ \t]*(#.*)?$")
_YAML_KEY = re.compile(r"^[ ]+(?P<key>[A-Za-z_][A-Za-z0-9_]*)[ \t]*:[ \t]*(?P<value>[^#]*?)[ \t]*(#.*)?$")


def _yaml_literal(text: str) -> object:
    if text in ("", "|", ">"):
        return "<expr>"  # a block value
    if text in ("null", "Null", "NULL", "~"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return "<expr>" if text[:1] in "[{&*!" else text


def yaml_trainer_settings(text: str) -> Dict[str, object]:
    """The keys among ``_MANUAL_REJECTS`` directly under a top-level ``trainer:`` block of a
    LightningCLI YAML config (what ``_trainer_settings`` is for Python files)."""
    found: Dict[str, object] = {}
    inside, indent = False, None
    for raw in text.splitlines():
        if _YAML_TOP_TRAINER.match(raw):
            inside, indent = True, None
            continue
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if not raw[:1].isspace():
            inside = False
            continue
        lead = raw[: len(raw) - len(raw.lstrip())]
        if not inside or (indent is not None and lead != indent):
            continue
        indent = lead
        m = _YAML_KEY.match(raw)
        if m and m.group("key") in _MANUAL_REJECTS:
            found.setdefault(m.group("key"), _yaml_literal(m.group("value")))
    return found


# A class statement's header as a text search can find it: at the start of a line (a compound
# statement begins a logical line), ``class``, the name, then ``(`` or ``:`` (a line continuation
# may stand between the tokens). It finds every class a text defines, and some text in strings.
# Used on ``search_text`` (Python reads identifiers NFKC-normalized).
_GAP = r"(?:[ \t\f]|\\\r?\n|\\\r)"
_CLASS_NAME = re.compile(rf"^[ \t\f]*class{_GAP}+([^\W\d]\w*){_GAP}*[(:]", re.M)


def class_headers(text: str) -> List["re.Match[str]"]:
    """What ``_CLASS_NAME.finditer(text)`` finds, found faster: the search runs only at the start
    of the lines where ``class`` comes first."""
    out = []
    find, rfind, match = text.find, text.rfind, _CLASS_NAME.match
    at = find("class")
    while at >= 0:
        start = rfind("\n", 0, at) + 1  # where ``^`` matches, with re.M
        if not text[start:at].strip(" \t\f"):
            found = match(text, start)
            if found is not None:
                out.append(found)
        at = find("class", at + 5)
    return out


def header_base_names(text: str, headers: Optional[List["re.Match[str]"]] = None) -> Optional[FrozenSet[str]]:
    """The last components of the bases of every class ``text`` may define (a superset, read
    from each ``class NAME(...):`` header found by a text search and parsed alone), or None
    when some header cannot be read that way (``headers``: ``class_headers(text)``, if at hand)."""
    found: set = set()
    for match in (class_headers(text) if headers is None else headers):
        start = match.start(0) + match.group(0).index("class")
        at = match.end() - 1  # the ``(`` or ``:`` the search ended on
        tried = 0
        while True:
            colon = text.find(":", at)
            if colon < 0 or tried == 20:
                return None  # the word ``class`` in a string, or a header too odd to read alone
            tried += 1
            try:
                header = ast.parse(text[start:colon + 1] + " pass").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                at = colon + 1
                continue
            if len(header) != 1 or type(header[0]) is not ast.ClassDef:
                return None
            found.update(b.rsplit(".", 1)[-1] for b in (_dotted(x) for x in header[0].bases) if b)
            break
    if found and (" as" in text or "\tas" in text):
        # ``class MyTrainer(PLT)`` after ``import Trainer as PLT``: "Trainer" too
        names = frozenset(found)
        for m in _AS_ANY.finditer(text):
            if m.group(1) not in names or text[m.start() - 1:m.start()] not in (" ", "\t"):
                continue
            before = _NAME_BEFORE.search(text, max(0, m.start() - 200), m.start())
            if before is not None:
                found.add(before.group(1))
    return frozenset(found)


def may_index_lazily(text: str) -> bool:
    """Whether ``ProjectIndex.add_source(..., lazy=True)`` may keep ``text`` unparsed until a
    question needs its classes: the text searches must find every name it could matter under,
    so its lines end in ``\n`` or ``\r\n`` (the searches look at line starts)."""
    return "\r" not in text or "\r" not in text.replace("\r\n", "")


def search_text(text: str) -> str:
    """The text the index's searches read for ``text``: itself when it is ASCII, else its NFKC
    normalization. Python reads every identifier NFKC-normalized, so each class, base and
    method name of the file is a substring of the result (normalization adds no line break)."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


YAML_SUFFIXES = (".yaml", ".yml")


def is_yaml(path: str) -> bool:
    """A LightningCLI config: the index reads its Trainer settings (``engine/yaml_config.py``
    migrates it)."""
    return path.lower().endswith(YAML_SUFFIXES)


def _text_settings(text: str, path: str, tree: Optional[ast.AST] = None,
                   present: Optional[FrozenSet[str]] = None) -> Tuple[bool, Dict[str, object], bool]:
    """The run-wide settings a file makes: whether it selects the DataParallel strategy, its
    Trainer settings that manual optimization rejects, and whether it may define a method
    overriding ``train(self, mode)`` (``tree``: its parse, if at hand; ``present``: the
    ``TEXT_PROBES`` it holds, if known)."""
    has = _holds(text, present)
    uses_dp = any(has(word) for word in _DP_WORDS) and _DP.search(text) is not None
    trainer: Dict[str, object] = {}
    if has("gradient_clip") or has("accumulate_grad_batches"):
        if is_yaml(path):
            trainer = yaml_trainer_settings(text)
        elif _MANUAL_REJECT_USE.search(text):
            trainer = _trainer_settings(text, tree)
    overrides_train = has("def train(self") and not is_yaml(path) and _TRAIN_OVERRIDE.search(text) is not None
    return uses_dp, trainer, overrides_train


def _common_suffix(names: Iterable[str]) -> str:
    """The longest string every one of ``names`` ends with ("" for none)."""
    return os.path.commonprefix([n[::-1] for n in names])[::-1]


@dataclass(frozen=True)
class LazyEntry:
    """What the index reads from a text it keeps unparsed (``lazy_entry``)."""

    settings: Tuple[bool, Dict[str, object], bool]  # ``_text_settings``
    kept: bool  # worth indexing: the index keeps the text, to parse when a question needs it
    names: Tuple[str, ...]  # the class names the text may define (``_CLASS_NAME``)
    bases: Optional[FrozenSet[str]]  # ``header_base_names``
    feeds: Tuple[Feed, ...] = ()  # ``_feeds``
    spreaders: Tuple[Spreader, ...] = ()  # ``_feeds``


def _feeds(text: str, path: str, tree: Optional[ast.AST] = None) -> Tuple[Tuple[Feed, ...], Tuple[Spreader, ...]]:
    """``trainer_feeds`` and ``trainer_spreaders`` of a text that may spread a dict into a
    Trainer call (parsed here when ``tree`` is not given), else nothing."""
    if not may_feed(text) or is_yaml(path):
        return (), ()
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return (), ()
    read = TrainerSpreads(tree, path)
    return trainer_feeds(tree, path, read), trainer_spreaders(tree, path, read)  # type: ignore[arg-type]


def lazy_entry(text: str, path: str, present: Optional[FrozenSet[str]] = None) -> LazyEntry:
    """The :class:`LazyEntry` of a text ``may_index_lazily`` accepts (the searches read its
    ``search_text``; ``present``: the ``TEXT_PROBES`` the text holds, if known)."""
    if not worth_indexing(text, present) or is_yaml(path):
        return LazyEntry(_text_settings(text, path, present=present), False, (), None, *_feeds(text, path))
    searched = search_text(text)
    headers = class_headers(searched)
    return LazyEntry(_text_settings(text, path, present=present), True, tuple(dict.fromkeys(m.group(1) for m in headers)),
                     header_base_names(searched, headers), *_feeds(text, path))


class ProjectIndex:
    """Class name -> definitions, for every file of a run.

    Files can be indexed lazily (``add_source(..., lazy=True)``): their text is kept and parsed
    only when a question may concern one of their classes, i.e. when it names a class the text
    may define (``class NAME``) or a word every answer's file must contain (the base name of a
    subclass, a method name). Every answer is the same as if every file had been parsed at once,
    in run order: the index's order ("index order") is the files' run order, then the classes'
    order in their file, however late a file was parsed."""

    def __init__(self, classes: Iterable[ClassInfo] = ()) -> None:
        self._by_name: Dict[str, List[ClassInfo]] = {}  # each list in index order
        self.uses_dp = False  # some file selects the DataParallel strategy (gone in 2.x)
        # path -> Trainer arguments that raise under manual optimization, as given in that file
        # (literal values; "<expr>" for anything else). Only files that mention them.
        self.trainer_settings: Dict[str, Dict[str, object]] = {}
        # path -> the dicts its Trainer calls spread that come from other names or files
        # (``analysis/trainer_feeds.py``). Only files that spread something into a Trainer.
        self.trainer_feeds: Dict[str, Tuple[Feed, ...]] = {}
        # path -> its functions that spread a parameter into a Trainer
        # (``analysis/trainer_spreaders.py``), whose callers in any file build what reaches it
        self.trainer_spreaders: Dict[str, Tuple[Spreader, ...]] = {}
        # the files whose text may define a method overriding ``nn.Module.train(self, mode)``
        self.train_overrides: Set[str] = set()
        # path -> its place among the files indexed (in run order); class -> (its file's
        # place, how many classes were added before it): index order is the order of these
        self._rank: Dict[str, int] = {}
        self._place: Dict[ClassInfo, Tuple[int, int]] = {}
        # files indexed lazily and not parsed yet: path -> text; class name -> the paths of
        # those whose text may define a class so named; path -> the base names its classes may
        # have (None: unknown)
        self._lazy: Dict[str, str] = {}
        # path -> text of the files indexed (or given to ``keep_texts``) and not lazily kept
        # above: what ``text_of`` answers for a rule that decides as another file decides
        self._texts: Dict[str, str] = {}
        # The file the engine is migrating now (a ``rules.base.SourceFile``): when the index
        # must parse that file, it takes the tree the rules read (and they, the one it made).
        self.current = None
        # The files the engine will migrate (set once the run knows them): the ``ast`` tree the
        # index parses for one of them is kept for its migration (``take_tree``), and any tree
        # a rule asks for with ``tree_of``: path -> (the text parsed, its tree).
        self.migrating: FrozenSet[str] = frozenset()
        self._trees: Dict[str, Tuple[str, Optional[ast.AST]]] = {}
        self._lazy_search: Dict[str, str] = {}  # path -> its ``search_text`` (non-ASCII, once asked)
        # the project's ``bare-noqa`` setting (engine/suppress.py): set by the engine for a run
        self.bare_noqa = False
        # the words ``classes(mentioning=...)`` loaded every lazily indexed file holding (a file
        # made lazy afterwards clears it)
        self._mentioned: Set[str] = set()
        self._lazy_names: Dict[str, List[str]] = {}
        self._lazy_bases: Dict[str, Optional[FrozenSet[str]]] = {}  # path -> ``header_base_names``
        # ``_lazy_bases`` the other way round, worked out when first asked (dropped when a file is
        # made lazy): base name -> the lazily indexed files whose classes may have it, and the
        # files whose bases are not known, each list in ``_lazy`` order (``_lazy_with_bases``)
        self._lazy_by_base: Optional[Tuple[Dict[str, List[str]], List[str], Dict[str, int]]] = None
        # Caches, dropped whenever a class is added: every class parsed so far, in index order;
        # base name -> the classes that list it among their bases, in index order
        # (``subclasses``); path -> the classes defined in it (``classes_in``).
        self._ordered: Optional[List[ClassInfo]] = None
        self._children: Optional[Dict[str, List[ClassInfo]]] = None
        self._by_path: Optional[Dict[str, List[ClassInfo]]] = None
        # base names -> ``_kind_set`` and ``_hierarchy`` of them, worked out since the last class
        # was added (other than by parsing a lazily indexed file, which cannot change them)
        self._kinds: Dict[FrozenSet[str], Set[ClassInfo]] = {}
        self._hierarchies: Dict[FrozenSet[str], Set[ClassInfo]] = {}
        self._unparsable: set = set()  # paths whose text the index could not parse
        # hook names -> ``linked_paths`` of them, worked out since the last class was added
        self._linked: Dict[FrozenSet[str], Dict[str, FrozenSet[str]]] = {}
        # (how many files were indexed, the names of their folders and modules): ``_project_package``
        self._packages: Optional[Tuple[int, Set[str]]] = None
        # how many files were indexed -> ``cli_options`` for those files
        self._cli_options: Dict[int, FrozenSet[str]] = {}
        for c in classes:
            self.add(c)

    # --- what is indexed -------------------------------------------------------------------------

    def classes(self, mentioning: Optional[str] = None) -> List[ClassInfo]:
        """Every class, in index order. With ``mentioning``: at least every class whose file's
        text contains that word (the lazily indexed files that do not are left unparsed), for
        a caller that looks only for classes whose definition holds the word."""
        if mentioning is None:
            self._load(list(self._lazy))
        elif mentioning not in self._mentioned:
            self._load([p for p, text in self._lazy.items() if mentioning in self._searched(p, text)])
            self._mentioned.add(mentioning)
        return self._loaded()

    def _searched(self, path: str, text: str) -> str:
        """``search_text`` of a lazily indexed file's text (worked out once)."""
        if text.isascii():
            return text
        found = self._lazy_search.get(path)
        if found is None:
            found = self._lazy_search[path] = search_text(text)
        return found

    def _loaded(self) -> List[ClassInfo]:
        """The classes of the files parsed so far, in index order."""
        if self._ordered is None:
            self._ordered = sorted((c for bucket in self._by_name.values() for c in bucket), key=self._place.__getitem__)
        return list(self._ordered)

    def kind_classes(self, names: FrozenSet[str] = LIGHTNING_MODULE_NAMES) -> List[ClassInfo]:
        """The classes ``is_lightning_module(c, names)`` is True for, in index order."""
        return sorted(self._kind_set(names), key=self._place.__getitem__)

    def _kind_set(self, names: FrozenSet[str]) -> Set[ClassInfo]:
        """The classes ``is_lightning_module(c, names)`` is True for: those with a base named in
        ``names``, and their subclasses, and theirs (``is_lightning_module`` follows the same
        ``resolve`` steps upwards). Found from the top down, so a lazily indexed file is parsed
        only when its headers may name one of these classes as a base (or, for ``resolve``,
        its text may define a class of such a name)."""
        found = self._kinds.get(names)
        if found is not None:
            return found
        self._load(self._lazy_with_bases(set(names)))
        found = {c for c in self._loaded() if not names.isdisjoint(c.base_names) and self.lightning_bases(c, names)}
        todo = list(found)
        while todo:
            for sub in self.subclasses(todo.pop()):
                if sub not in found:
                    found.add(sub)
                    todo.append(sub)
        self._kinds[names] = found
        return found

    def _hierarchy(self, names: FrozenSet[str]) -> Set[ClassInfo]:
        """The classes ``in_lightning_hierarchy(c, names)`` is True for: ``_kind_set(names)``
        and every ancestor of theirs (each step ``resolve``s a base from its subclass's file, the
        steps ``descendants`` takes downwards). Kept while only lazily indexed files are parsed:
        none of those can add a class (every file that may hold one was parsed on the way)."""
        found = self._hierarchies.get(names)
        if found is not None:
            return found
        found = set(self._kind_set(names))
        todo = list(found)
        while todo:
            c = todo.pop()
            own = self.lightning_bases(c, names) if not names.isdisjoint(c.base_names) else frozenset()
            for base in c.base_names:
                if base in own:
                    continue  # Lightning's own class (a tree may hold Lightning's source): not a mixin
                up = self.resolve(base, c.path)
                if up is not None and up not in found:
                    found.add(up)
                    todo.append(up)
        self._hierarchies[names] = found
        return found

    def may_define_in_hierarchy(self, path: str, name_sets: Iterable[FrozenSet[str]]) -> bool:
        """False only when no class defined in ``path`` is ``in_lightning_hierarchy(c, names)``
        for any ``names`` of ``name_sets``. A lazily indexed ``path`` stays unparsed when it
        cannot define such a class: working out ``_hierarchy`` parses every file that may. True
        for a file that had to be parsed and could not be (so the engine reports its syntax
        error)."""
        hierarchies = [self._hierarchy(names) for names in name_sets]
        if path in self._lazy:
            return False
        if path in self._unparsable:
            return True
        return any(c in found for c in self.classes_in(path) for found in hierarchies)

    def classes_in(self, path: str) -> List[ClassInfo]:
        """The classes defined in ``path``, in index order (``[c for c in classes() if
        c.path == path]``, without a pass over every class of the project)."""
        if path in self._lazy:
            self._load([path])
        if self._by_path is None:
            by_path: Dict[str, List[ClassInfo]] = {}
            for c in self._loaded():
                by_path.setdefault(c.path, []).append(c)
            self._by_path = by_path
        return list(self._by_path.get(path, ()))

    def tree_of(self, path: str) -> Optional[ast.AST]:
        """The ``ast`` tree of the text ``path`` was indexed from (``text_of``), parsed once for
        every rule that reads that file (None when there is no such text or it does not parse)."""
        text = self.text_of(path)
        return None if text is None else self._parse(text, path, keep=True)

    def take_tree(self, path: str, text: str) -> Optional[ast.AST]:
        """The tree of ``text`` if the index parsed that very text of ``path`` (for the file's
        migration, which then holds it: the index lets it go)."""
        kept = self._trees.pop(path, None)
        return kept[1] if kept is not None and (kept[0] is text or kept[0] == text) else None

    def _parse(self, text: str, path: str, keep: bool) -> Optional[ast.AST]:
        kept = self._trees.get(path)
        if kept is not None and (kept[0] is text or kept[0] == text):
            return kept[1]
        current, _ = self._current_tree(path, text)
        if current is not None:
            return current
        try:
            tree: Optional[ast.AST] = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            tree = None  # (kept too: a text that does not parse is not parsed again)
        if keep:
            self._trees[path] = (text, tree)
        return tree

    def text_of(self, path: str) -> Optional[str]:
        """The text ``path`` was indexed from (None when the index was not given it)."""
        text = self._lazy.get(path)
        return self._texts.get(path) if text is None else text

    def keep_texts(self, texts: Dict[str, str]) -> None:
        """Remember the texts of indexed files (path -> text) for ``text_of``."""
        for path, text in texts.items():
            if path not in self._lazy:
                self._texts.setdefault(path, text)

    def cli_options(self) -> FrozenSet[str]:
        """The ``--name`` options (``-`` read as ``_``) the run's tests and the shell scripts
        near its files pass on a command line (``analysis/cli_options.py``), worked out once."""
        found = self._cli_options.get(len(self._rank))
        if found is None:
            from lightmigrate.analysis.cli_options import project_cli_options

            paths = sorted(self._rank, key=self._rank.__getitem__)
            found = self._cli_options[len(self._rank)] = project_cli_options(paths, self.text_of)
        return found

    def has_path(self, path: str) -> bool:
        return path in self._rank

    def paths(self) -> List[str]:
        """Every path indexed, in run order."""
        return sorted(self._rank, key=self._rank.__getitem__)

    def size(self) -> int:
        """How many classes are indexed so far (parsed: a lazily indexed file counts once it is):
        a cache keyed by it is worked out again after a change."""
        return len(self._place)

    def classes_named(self, name: str) -> List[ClassInfo]:
        """Every indexed class called ``name`` (however many files define one)."""
        self._load(self._lazy_names.get(name, ()))
        return list(self._by_name.get(name, ()))

    def add(self, info: ClassInfo, rank: Optional[int] = None) -> None:
        """Index ``info``, after the classes added so far from files of the same place (``rank``:
        the place of its file in the run; by default the place its path was first given)."""
        if rank is None:
            rank = self._rank.setdefault(info.path, len(self._rank))
        bucket = self._by_name.setdefault(info.name, [])
        if info in bucket:
            return
        self._place[info] = (rank, len(self._place))
        insort(bucket, info, key=self._place.__getitem__)
        self._ordered = self._children = self._by_path = None
        self._kinds, self._hierarchies, self._linked = {}, {}, {}

    def merge(self, other: "ProjectIndex") -> None:
        """Add everything ``other`` indexed, as if its files had been added here after this
        index's own (the engine indexes files on several processes and merges the parts in file
        order). Every attribute is merged by its type, so a new one cannot be dropped silently."""
        self._kinds, self._hierarchies, self._linked = {}, {}, {}
        self._cli_options = {}
        self._mentioned.clear()  # (their lazily indexed files join ours)
        self._lazy_by_base = None
        for path in sorted(other._rank, key=other._rank.__getitem__):  # their files after ours
            self._rank.setdefault(path, len(self._rank))
        for name, theirs in vars(other).items():
            mine = getattr(self, name)
            if name in ("_rank", "_place", "_ordered", "_children", "_by_path", "_kinds", "_hierarchies", "current",
                        "_packages", "_cli_options", "_mentioned", "migrating", "_trees", "_lazy_by_base"):
                continue  # done above, or with the classes; or caches; or this process's file
            if name == "_by_name":
                for info in other._loaded():  # in their order: each gets a place after all of ours
                    self.add(info, self._rank[info.path])
            elif name == "_lazy_names":
                for class_name, paths in theirs.items():
                    mine.setdefault(class_name, []).extend(paths)
            elif isinstance(mine, bool):
                setattr(self, name, mine or theirs)
            elif isinstance(mine, set):
                mine |= theirs
            elif isinstance(mine, dict):
                mine.update(theirs)
            elif isinstance(mine, list):
                mine.extend(x for x in theirs if x not in mine)
            else:
                raise TypeError(f"ProjectIndex.merge does not know how to merge {name!r}")

    def add_source(self, text: str, path: str, tree: Optional[ast.AST] = None, nodes: Optional[list] = None,
                   lazy: bool = False, present: Optional[FrozenSet[str]] = None, keep_text: bool = True) -> None:
        """Index the classes of ``text`` (``tree``: its ``ast`` tree, and ``nodes``:
        ``ast_nodes(tree)``, when the caller has them already) and the run-wide settings it
        makes. ``lazy``: keep the text and parse it only when a question needs its classes
        (only for a text ``may_index_lazily`` accepts; another is parsed at once).
        ``present``: the ``TEXT_PROBES`` the text holds, if known. ``keep_text``: keep the
        text for ``text_of`` (a part of the index built on another process does not, so the
        text is not sent back: the engine gives the texts with ``keep_texts``)."""
        if lazy and tree is None and may_index_lazily(text):
            self.add_lazy(text, path, lazy_entry(text, path, present))
            return
        if keep_text:
            self._texts[path] = text
        self._rank.setdefault(path, len(self._rank))
        self._add_settings(path, _text_settings(text, path, tree, present))
        feeds, spreaders = _feeds(text, path, tree)
        if feeds:
            self.trainer_feeds[path] = feeds
        if spreaders:
            self.trainer_spreaders[path] = spreaders
        if worth_indexing(text, present) and not is_yaml(path):
            self._index_tree(text, path, tree, nodes)

    def add_lazy(self, text: str, path: str, entry: "LazyEntry") -> None:
        """``add_source(text, path, lazy=True)`` with ``entry = lazy_entry(text, path)`` worked
        out already (by a process of the engine's pool, which need not send the text back)."""
        self._rank.setdefault(path, len(self._rank))
        self._add_settings(path, entry.settings)
        if entry.feeds:
            self.trainer_feeds[path] = entry.feeds
        if entry.spreaders:
            self.trainer_spreaders[path] = entry.spreaders
        if not entry.kept:
            return
        self._kinds, self._hierarchies, self._linked = {}, {}, {}
        self._mentioned.clear()
        self._lazy[path] = text
        self._lazy_bases[path] = entry.bases
        self._lazy_by_base = None
        for name in entry.names:
            self._lazy_names.setdefault(name, []).append(path)

    def _add_settings(self, path: str, settings: Tuple[bool, Dict[str, object], bool]) -> None:
        uses_dp, trainer, overrides_train = settings
        self.uses_dp = self.uses_dp or uses_dp
        if trainer:
            self.trainer_settings[path] = trainer
        if overrides_train:
            self.train_overrides.add(path)

    def _index_tree(self, text: str, path: str, tree: Optional[ast.AST], nodes: Optional[list]) -> None:
        if tree is None:
            tree = self._parse(text, path, keep=path in self.migrating)
            if tree is None:
                self._unparsable.add(path)
                return
        for c in classes_in_source(tree, path, nodes):
            self.add(c, self._rank[path])

    def _lazy_with_bases(self, names: set) -> List[str]:
        """The lazily indexed files (not parsed yet) where a class may have a base called one of
        ``names`` (its last component)."""
        if self._lazy_by_base is None:
            by_base: Dict[str, List[str]] = {}
            unknown: List[str] = []
            for p in self._lazy:
                bases = self._lazy_bases[p]
                if bases is None:
                    unknown.append(p)
                else:
                    for base in bases:
                        by_base.setdefault(base, []).append(p)
            self._lazy_by_base = by_base, unknown, {p: k for k, p in enumerate(self._lazy)}
        by_base, unknown, order = self._lazy_by_base
        lazy = self._lazy
        found = {p for p in unknown if p in lazy}
        for name in names:
            found.update(p for p in by_base.get(name, ()) if p in lazy)
        return sorted(found, key=order.__getitem__)  # (in ``_lazy`` order, as they were indexed)

    def _load(self, paths: Iterable[str]) -> None:
        """Parse and index the lazily indexed files among ``paths``."""
        known = self._kinds, self._hierarchies, self._linked  # worked out counting on these files being parsed when needed
        for path in list(paths):
            text = self._lazy.pop(path, None)
            if text is not None:
                self._texts[path] = text
                del self._lazy_bases[path]
                self._lazy_search.pop(path, None)
                self._index_tree(text, path, *self._current_tree(path, text))
        self._kinds, self._hierarchies, self._linked = known

    def _current_tree(self, path: str, text: str) -> Tuple[Optional[ast.AST], Optional[list]]:
        """The ``ast`` tree of ``text`` and its nodes when it is the file being migrated (parsed
        once for the rules and the index), else Nones."""
        current = self.current
        if current is None or current.path != path or current.text != text:
            return None, None
        try:
            return current.tree, current.nodes
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None, None

    def resolve(self, name: str, prefer_path: str = "") -> Optional[ClassInfo]:
        """The one class called ``name``; a definition in ``prefer_path`` wins over others."""
        last = name.rsplit(".", 1)[-1]
        pending = [p for p in self._lazy_names.get(last, ()) if p in self._lazy]
        if prefer_path in pending:  # its definitions first: they may settle the answer
            self._load([prefer_path])
            pending.remove(prefer_path)
        # Files not parsed yet can only add definitions: when the answer cannot change (a
        # definition in ``prefer_path``; or two elsewhere already), skip them.
        if pending and self._settled(last, prefer_path):
            pending = []
        self._load(pending)
        found = self._by_name.get(last, [])
        local = [c for c in found if c.path == prefer_path]
        if len(local) == 1:
            return local[0]
        return found[0] if len(found) == 1 else None

    def local_class(self, name: str, path: str, ordinal: int = 0) -> Optional[ClassInfo]:
        """``resolve(name, path)``; when ``path`` defines several classes called ``name``, the
        one at ``ordinal`` among them (in source order)."""
        found = self.resolve(name, path)
        if found is not None:
            return found
        same = [c for c in self.classes_in(path) if c.name == name and c.ordinal == ordinal]
        return same[0] if len(same) == 1 else None

    def _settled(self, name: str, prefer_path: str) -> bool:
        found = self._by_name.get(name, [])
        return len(found) >= 2 or any(c.path == prefer_path for c in found)

    def feeds_into(self, path: str) -> List[Feed]:
        """The feeds (see ``analysis/trainer_feeds.py``) whose dict the file ``path`` holds."""
        return [f for feeds in self.trainer_feeds.values() for f in feeds if matches(f.patterns, path)]

    def spreaders_named(self, text: str) -> List[Spreader]:
        """The spreaders (see ``analysis/trainer_spreaders.py``) a file of ``text`` may call in
        a way that can be followed (``Spreader.named_in``)."""
        return [s for found in self.trainer_spreaders.values() for s in found if s.named_in(text)]

    def trainer_chain(self, info: ClassInfo) -> Optional[List[ClassInfo]]:
        """``info`` and its project ancestors up to the one whose base is Lightning's Trainer
        (nearest first, following the first base that leads there), or None when ``info`` is
        not known to derive from Lightning's Trainer."""
        seen: Set[Tuple[str, str]] = set()

        def up(c: ClassInfo) -> Optional[List[ClassInfo]]:
            if (c.name, c.path) in seen:
                return None
            seen.add((c.name, c.path))
            if c.trainer_base:
                return [c]
            for base in c.base_names:
                if base in _ANCESTORS_STOP:
                    continue
                found = self.resolve(base, c.path)
                if found is None or found is c:
                    continue
                chain = up(found)
                if chain is not None:
                    return [c, *chain]
            return None

        return up(info)

    def subclasses(self, info: ClassInfo) -> List[ClassInfo]:
        """Direct subclasses of ``info`` anywhere in the project."""
        self._load(self._lazy_with_bases({info.name}))
        if self._children is None:
            children: Dict[str, List[ClassInfo]] = {}
            for c in self._loaded():
                for base in dict.fromkeys(c.base_names):
                    children.setdefault(base, []).append(c)
            self._children = children
        return [c for c in self._children.get(info.name, ()) if self.resolve(info.name, c.path) == info]

    def descendants(self, info: ClassInfo) -> List[ClassInfo]:
        seen: List[ClassInfo] = []
        todo = [info]
        while todo:
            for sub in self.subclasses(todo.pop()):
                if sub not in seen:
                    seen.append(sub)
                    todo.append(sub)
        return seen

    def linked_paths(self, hooks: FrozenSet[str]) -> Dict[str, FrozenSet[str]]:
        """The files whose classes a migration of ``hooks`` elsewhere concerns: path -> the names
        of the classes in other files that define one of ``hooks`` and that a class of the path
        derives from. A rule that rewrites such a hook in a base class (renames it, wraps the
        step, adds the hooks that collect outputs) must make the matching change in the
        subclasses, wherever they are, although their text may not hold any of its triggers."""
        found = self._linked.get(hooks)
        if found is not None:
            return found
        out: Dict[str, Set[str]] = {}
        for c in self._classes_defining(hooks):
            if hooks.isdisjoint(c.methods):
                continue
            for d in self.descendants(c):
                if d.path != c.path:
                    out.setdefault(d.path, set()).add(c.name)
        found = {path: frozenset(names) for path, names in out.items()}
        self._linked[hooks] = found
        return found

    def _classes_defining(self, names: FrozenSet[str]) -> List[ClassInfo]:
        """At least every class that defines one of ``names`` (the lazily indexed files whose
        text holds none of them stay unparsed)."""
        # (every name ends with their common suffix: one search rules most texts out)
        tail = _common_suffix(names)
        self._load([p for p, text in self._lazy.items()
                    if tail in (searched := self._searched(p, text)) and any(n in searched for n in names)])
        return self._loaded()

    def ancestors(self, info: ClassInfo) -> Tuple[List[ClassInfo], bool]:
        """Known ancestors (nearest first, depth-first like a single-inheritance MRO) and whether
        every base resolved to a known class or to Lightning itself."""
        out: List[ClassInfo] = []
        complete = True
        todo = [(info, b) for b in info.bases]
        while todo:
            child, base = todo.pop(0)
            last = base.rsplit(".", 1)[-1]
            if last in _ANCESTORS_STOP:
                continue
            found = self.resolve(last, child.path)
            if found is None or found is info:
                complete = False
                continue
            if found not in out:
                out.append(found)
                todo.extend((found, b) for b in found.bases)
        return out, complete

    def _base_chain(self, info: ClassInfo, skipped: FrozenSet[str] = frozenset()
                    ) -> Iterator[Tuple[str, List[ClassInfo], List[str]]]:
        """Every base name a chain of ``info``'s bases may reach, once each (a name in
        ``skipped`` is not followed), with the classes of that name parsed so far and the lazily
        indexed files not parsed yet whose text may define one. Every class a base name may
        resolve to is followed, without parsing anything: a lazy file's header base names stand
        for the bases of its classes (a file whose headers could not be read is not followed)."""
        seen: Set[str] = set()
        todo = list(info.base_names)
        while todo:
            last = todo.pop()
            if last in seen or last in skipped:
                continue
            seen.add(last)
            classes = self._by_name.get(last, [])
            files = [path for path in self._lazy_names.get(last, ()) if path in self._lazy]
            yield last, classes, files
            for c in classes:
                todo.extend(c.base_names)
            for path in files:
                todo.extend(self._lazy_bases[path] or ())

    def may_inherit(self, info: ClassInfo, names: FrozenSet[str]) -> bool:
        """False only when no class ``ancestors(info)`` finds defines one of ``names`` (as a
        method, or a name assigned in its body). Answered without parsing a lazily indexed file
        whose text settles it: a class of the file can only define a name its text holds
        (``_base_chain`` follows every class a base name may resolve to, so the answer holds
        whichever one ``resolve`` picks; ``ancestors`` stops at the same names)."""
        for _, classes, files in self._base_chain(info, _ANCESTORS_STOP):
            if any(not names.isdisjoint(c.methods) for c in classes):
                return True
            for path in files:
                text = self._searched(path, self._lazy[path])
                if self._lazy_bases[path] is None or any(name in text for name in names):
                    return True
        return False

    def is_lightning_module(self, info: ClassInfo, names: FrozenSet[str] = LIGHTNING_MODULE_NAMES) -> Optional[bool]:
        """True when some ancestor is ``LightningModule`` (or one of ``names``); None when that
        cannot be known."""
        todo, seen, unknown = [info], set(), False
        while todo:
            c = todo.pop()
            if (c.name, c.path) in seen:
                continue
            seen.add((c.name, c.path))
            own = self.lightning_bases(c, names) if not names.isdisjoint(c.base_names) else frozenset()
            for base in c.base_names:
                if base in own:
                    return True
                found = self.resolve(base, c.path)
                if found is None:
                    unknown = unknown or base != "object"
                else:
                    todo.append(found)
        return None if unknown else False

    def lightning_bases(self, info: ClassInfo, names: FrozenSet[str]) -> FrozenSet[str]:
        """The base names of ``info`` in ``names`` that stand for Lightning's class of that name.
        A base is taken by its name unless its file binds it otherwise: to a project class of that
        name (defined in the file, or imported from a module that is not Lightning's and the
        project defines one: ``from .callback import Callback``), or to an import from a package
        that is neither Lightning nor the project's (``from keras.callbacks import Callback``)."""
        out = set()
        for i, base in enumerate(info.base_names):
            if base not in names:
                continue
            origin = info.base_origin(i)
            if origin in ("", ORIGIN_LIGHTNING):
                out.add(base)
                continue
            if origin == ORIGIN_LOCAL:
                continue  # a class of the same file: followed like any other base
            found = self.resolve(base, info.path)
            if found is not None and found is not info:
                continue  # the project's own class of that name: followed like any other base
            if origin.startswith("abs:") and not self._project_package(origin[4:]):
                continue  # another library's class
            out.add(base)  # a re-export the index cannot see through: taken by its name
        return frozenset(out)

    def package_of(self, path: str) -> str:
        """The folder of the top package that holds ``path`` (the highest folder above it with
        an ``__init__.py`` among the files of the run, each folder on the way having one), or
        the file's own folder when it is in no package."""
        sep = "\\" if "\\" in path and "/" not in path else "/"
        folder = path.rsplit(sep, 1)[0] if sep in path else ""
        top = folder
        while folder and f"{folder}{sep}__init__.py" in self._rank:
            top = folder
            folder = folder.rsplit(sep, 1)[0] if sep in folder else ""
        return top

    def _project_package(self, name: str) -> bool:
        """Whether some file of the run is in a folder (or is a module) called ``name``."""
        if self._packages is None or self._packages[0] != len(self._rank):
            parts: Set[str] = set()
            for path in self._rank:
                pieces = re.split(r"[\\/]", path)
                parts.update(pieces[:-1])
                parts.add(pieces[-1].rsplit(".", 1)[0])
            self._packages = (len(self._rank), parts)
        return name in self._packages[1]

    def in_lightning_hierarchy(self, info: ClassInfo, names: FrozenSet[str] = LIGHTNING_MODULE_NAMES) -> Optional[bool]:
        """Like :meth:`is_lightning_module`, but a mixin that some project class combines with
        ``LightningModule`` (``class Model(Mixin, pl.LightningModule)``) counts too: its hooks
        end up on a LightningModule. (True when some descendant is a LightningModule.)"""
        if info in self._hierarchy(names):
            return True
        return self.is_lightning_module(info, names)

    def may_be_in_hierarchy(self, info: ClassInfo, names: FrozenSet[str] = LIGHTNING_MODULE_NAMES) -> bool:
        """False only when ``in_lightning_hierarchy(info, names)`` is not True: ``info`` is not
        in the hierarchy, and no chain of its bases can reach a base named in ``names``
        (``_base_chain``: lazily indexed files stay unparsed)."""
        if info in self._hierarchy(names):
            return True
        return any(last in names or any(self._lazy_bases[path] is None for path in files)
                   for last, _, files in self._base_chain(info))
