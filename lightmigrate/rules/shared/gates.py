"""Shared pieces of the rules' gates (``Rule.needed``): cheap questions about one file, answered
from :func:`lightmigrate.analysis.facts.file_facts`, a few regular expressions over the text, and the
project index, never from libcst. Every helper errs on the side of "may": a gate built on them
may say "needed" for nothing, never "not needed" when the rule's walk would change or report
something. Trainer rules' helpers first, then the hook rules' (``hooks_``/``hook_``), then the import and
API rules'.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

from lightmigrate import MARKER_PREFIX
from lightmigrate.analysis.facts import FileFacts, file_facts, nodes_of, parse_tree
from lightmigrate.analysis.project import LIGHTNING_IMPORT_ROOTS, ClassInfo, ProjectIndex
from lightmigrate.rules.base import RuleContext
from lightmigrate.rules.shared.class_edit import KIND_NAMES, class_kind
from lightmigrate.analysis.text_patterns import COMMENT, DEF, one_of, word_at_start  # noqa: F401  (rules import them from here)

# Whitespace, line continuations, closing parentheses and comments: what may stand between two
# tokens of one expression (a comment only inside brackets, which is fine for a "may" test).
_GAP = rf"(?:[\s\\)]|{COMMENT})*"
_DOT = rf"\.(?:[\s\\]|{COMMENT})*"
# ``Trainer as NAME`` in an import (brackets allow newlines and comments in between).
_TRAINER_ALIAS = re.compile(word_at_start("Trainer") + rf"(?:[\s\\]|{COMMENT})+as(?:[\s\\]|{COMMENT})+([^\W\d]\w*)")


def imports_pl_root(facts: FileFacts) -> bool:
    """Some import names ``pytorch_lightning`` or ``lightning`` (or a module under them; a
    relative import of a module so named counts too, which only errs on the safe side).
    Without one, LM101/LM102 know no Trainer, and the import rules nothing to rewrite."""
    return not facts.modules.isdisjoint(LIGHTNING_IMPORT_ROOTS)


def may_import_pl_root(text: str) -> bool:
    """What ``imports_pl_root`` needs of the text: the name of every Lightning root contains
    ``lightning`` (a ``may_need`` for gates that return False without such an import)."""
    return "lightning" in text


def trainer_call_names(text: str) -> FrozenSet[str]:
    """The names a ``Trainer(...)`` call may go by in ``text``: ``Trainer`` and every alias
    ``Trainer as NAME`` of an import (``x.Trainer(...)`` is called ``Trainer`` too)."""
    return frozenset({"Trainer", *_TRAINER_ALIAS.findall(text)})


def trainer_may_call(text: str, facts: FileFacts) -> bool:
    """Whether ``text`` may call a Trainer (by its name or an import alias of it)."""
    return bool(facts.calls & trainer_call_names(text))


Receivers = Optional[FrozenSet[str]]
"""Which expressions an attribute test below accepts before the dot: None for any; a set for a
name or attribute called ``trainer`` and the exact spellings in the set (names or dotted
attributes, as written in the code)."""


def _receiver(receivers: Receivers) -> str:
    if receivers is None:
        return _DOT
    spelled = [word_at_start("trainer"), *(word_at_start(s, r"[\w.]") for s in sorted(receivers))]
    return "(?:" + "|".join(spelled) + ")" + _GAP + _DOT


def attribute_read(text: str, attrs: FrozenSet[str], receivers: Receivers = None) -> bool:
    """Whether some ``<receiver>.attr`` (one of ``attrs``) may be in ``text``."""
    return re.search(_receiver(receivers) + one_of(attrs) + r"\b", text) is not None


# A comparison operator (``not in``, ``is not`` included; not ``<<`` or ``>>``).
_COMPARE_OP = rf"(?:==|!=|<=|>=|<(?!<)|>(?!>)|in\b|not(?:[\s\\]|{COMMENT})+in\b|is\b)"
# What may follow the operator when the comparison cannot be one ``attribute_compared`` looks
# for: a name or dotted name alone as the comparator, followed by something no comparison chain
# continues with (a ``:``, a closing bracket, a comma, ``;``, ``and``/``or``/``if``/``else``/``for``,
# or the end of the text).
_NAME_COMPARATOR = re.compile(
    rf"(?:[\s\\]|{COMMENT})*[^\W\d]\w*(?!\w)(?:(?:[\s\\]|{COMMENT})*\.(?:[\s\\]|{COMMENT})*[^\W\d]\w*(?!\w))*"
    rf"(?:[\s\\]|{COMMENT})*(?:[:),\]}};]|(?:and|or|if|else|for)\b|\Z)")


def attribute_compared(text: str, attr: str, receivers: Receivers = None) -> bool:
    """Whether ``<receiver>.attr`` may be the left side of a comparison chain in which some
    operand is not a name or a dotted name (a literal, say ``== 16`` or ``in ("16", 32)``): every
    comparison of ``<receiver>.attr`` with one (or more, chained) of those is left out."""
    start = re.compile(_receiver(receivers) + re.escape(attr) + r"\b" + _GAP + _COMPARE_OP)
    return any(_NAME_COMPARATOR.match(text, m.end()) is None for m in start.finditer(text))


# the end of an assignment's target: the attribute's name ends, then ``=`` (not ``==``)
_ASSIGNED = r"\b" + _GAP + r"=(?!=)"


def attribute_assigned(text: str, attrs: FrozenSet[str], receivers: Receivers = None) -> bool:
    """Whether some ``<receiver>.attr = ...`` (plain assignment, one of ``attrs``) may be in ``text``."""
    return re.search(_receiver(receivers) + one_of(attrs) + _ASSIGNED, text) is not None


def attribute_of_assigned(text: str, owner: str, attrs: FrozenSet[str]) -> bool:
    """Whether some ``<expr>.owner.attr = ...`` (plain assignment, ``attr`` one of ``attrs``)
    may be in ``text``: ``owner`` (maybe in parentheses) then a dot and the attribute."""
    return re.search(re.escape(owner) + _GAP + _DOT + one_of(attrs) + _ASSIGNED, text) is not None


def string_key(text: str, keys: FrozenSet[str]) -> bool:
    """Whether one of ``keys`` may be a string literal followed by ``:`` (a dict key)."""
    return re.search(r"""['"]""" + one_of(keys) + r"""['"]+""" + _GAP + ":", text) is not None


# ---------------------------------------------------------------------------------------------
# Hook rules (LM001-LM004, LM301-LM306): which Lightning classes a file has, and the
# signatures of the methods it defines.


def hooks_gate_facts(text: str, ctx: RuleContext) -> Optional[FileFacts]:
    """The facts of ``text`` for a hook rule's gate, or None when the gate must say "needed":
    the text does not parse with ``ast``, or the index has not seen ``ctx.path`` (the hook
    rules index such a file first, and the rules after them see that index)."""
    facts = file_facts(text)
    if not facts.parsed or not ctx.project.has_path(ctx.path):
        return None
    return facts


def hooks_path_kinds(ctx: RuleContext) -> Optional[FrozenSet[str]]:
    """The kinds (``class_edit.class_kind``: "module", "callback", "datamodule") of the classes
    the index holds for ``ctx.path``; None when the index has not seen the path (a rule that
    indexes the file itself may then find any)."""
    index = ctx.project
    if not index.has_path(ctx.path):
        return None
    kinds = set()
    for c in index.classes_in(ctx.path):
        kind = class_kind(ctx, c.name)
        if kind is not None:
            kinds.add(kind)
    return frozenset(kinds)


def path_may_have_kind(project: ProjectIndex, path: str, kinds: FrozenSet[str]) -> bool:
    """False only when no class ``path`` defines is in the hierarchy of one of ``kinds`` (what a
    rule's ``gate_kinds`` promises to need), without parsing the file when the lazy index can
    tell."""
    return project.may_define_in_hierarchy(path, [KIND_NAMES[k] for k in sorted(kinds)])


@dataclass(frozen=True)
class HookCandidate:
    """A class of the file that ``class_edit.migrate_classes(..., hooks, ...)`` would hand to
    its editor or mark: it defines one of ``hooks`` (``own``) or inherits one, and is not known
    to be outside a LightningModule hierarchy (``lightning`` True, or None when unknown)."""

    info: ClassInfo
    own: bool
    lightning: Optional[bool]


def hooks_migrate_candidates(ctx: RuleContext, hooks: FrozenSet[str]) -> Optional[List[HookCandidate]]:
    """The classes of ``ctx.path`` that ``migrate_classes`` with ``hooks`` would visit beyond
    its first checks; None when the index has not seen the path (``migrate_classes`` indexes
    it itself and may find anything)."""
    index = ctx.project
    if not index.has_path(ctx.path):
        return None
    found = []
    for c in index.classes_in(ctx.path):
        own = bool(hooks & c.methods)
        if not own:
            if not index.may_inherit(c, hooks):  # (without parsing files that cannot matter)
                continue
            ancestors, _ = index.ancestors(c)
            if not any(hooks & a.methods for a in ancestors):
                continue
        lightning = index.in_lightning_hierarchy(c)
        if lightning is False:
            continue
        found.append(HookCandidate(c, own, lightning))
    return found


@dataclass(frozen=True)
class HookSignature:
    """One ``def`` of the file, as a hook rule sees its parameters."""

    positional: Tuple[str, ...]  # positional-only and ordinary parameters, in order
    defaults: Tuple[bool, ...]  # whether each of them has a default
    posonly: bool  # some parameter is positional-only
    kwonly: Tuple[str, ...]
    star: bool  # *args, **kwargs or keyword-only parameters


@dataclass(frozen=True)
class HookFacts:
    """What the hook rules' gates read from Python's ``ast`` beyond ``lightmigrate.analysis.facts``."""

    signatures: Dict[str, Tuple[HookSignature, ...]]
    """def name (any depth) -> the signature of every def with that name."""
    class_methods: Tuple[Tuple[str, Tuple[Tuple[str, HookSignature], ...]], ...]
    """Every class statement (any depth) as (class name, its methods: the defs directly in its
    body, as (name, signature))."""
    log_value_kinds: FrozenSet[str]
    """For every ``<expr>.log(...)`` call: the ``ast`` node type of its value argument (the
    second positional argument and any ``value=``), e.g. "Dict", "Name"."""
    log_value_names: FrozenSet[str]
    """The names passed as such a value."""
    dict_bound: FrozenSet[str]
    """Names some ``NAME = {...}`` (a dict display or comprehension) binds."""
    imports_lightning: bool
    """A top-level import statement names a Lightning root (``class_edit.imports_lightning``)."""
    returning: FrozenSet[str] = frozenset()
    """The names among ``RETURNS_WATCHED`` of the defs (any depth) with a ``return`` of a value
    other than ``None`` somewhere in their body (nested functions included)."""


# The defs whose returns ``HookFacts.returning`` records (LM306: a callback's on_save_checkpoint
# that returns its state).
RETURNS_WATCHED = frozenset({"on_save_checkpoint"})


def _returns_a_value(func: ast.AST) -> bool:
    return any(type(n) is ast.Return and n.value is not None  # type: ignore[attr-defined]
               and not (type(n.value) is ast.Constant and n.value.value is None)  # type: ignore[attr-defined]
               for n in ast.walk(func))


def _signature(func: ast.AST) -> HookSignature:
    a = func.args  # type: ignore[attr-defined]
    positional = [*a.posonlyargs, *a.args]
    n_defaults = len(a.defaults)  # they belong to the last positional parameters
    defaults = tuple(i >= len(positional) - n_defaults for i in range(len(positional)))
    return HookSignature(
        tuple(p.arg for p in positional), defaults, bool(a.posonlyargs), tuple(p.arg for p in a.kwonlyargs),
        bool(a.vararg or a.kwarg or a.kwonlyargs),
    )


def _hook_facts(tree: ast.AST) -> HookFacts:
    signatures: Dict[str, List[HookSignature]] = {}
    classes = []
    kinds, names, bound, returning = set(), set(), set(), set()
    for node in nodes_of(tree):
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            signatures.setdefault(node.name, []).append(_signature(node))  # type: ignore[attr-defined]
            if node.name in RETURNS_WATCHED and _returns_a_value(node):  # type: ignore[attr-defined]
                returning.add(node.name)  # type: ignore[attr-defined]
        elif kind is ast.ClassDef:
            methods = tuple((item.name, _signature(item)) for item in node.body  # type: ignore[attr-defined]
                            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
            classes.append((node.name, methods))  # type: ignore[attr-defined]
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if isinstance(func, ast.Attribute) and func.attr == "log":
                positional = [x for x in node.args if not isinstance(x, ast.Starred)]  # type: ignore[attr-defined]
                values = [k.value for k in node.keywords if k.arg == "value"]  # type: ignore[attr-defined]
                if len(positional) > 1:
                    values.append(positional[1])
                for v in values:
                    kinds.add(type(v).__name__)
                    if isinstance(v, ast.Name):
                        names.add(v.id)
        elif kind is ast.Assign and isinstance(node.value, (ast.Dict, ast.DictComp)):  # type: ignore[attr-defined]
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))  # type: ignore[attr-defined]
    return HookFacts({k: tuple(v) for k, v in signatures.items()}, tuple(classes), frozenset(kinds),
                     frozenset(names), frozenset(bound), _imports_lightning(tree), frozenset(returning))


def _imports_lightning(tree: ast.AST) -> bool:
    for st in getattr(tree, "body", ()):
        if isinstance(st, ast.Import):
            heads = [alias.name.split(".")[0] for alias in st.names]
        elif isinstance(st, ast.ImportFrom) and st.module is not None:
            heads = [st.module.split(".")[0]]
        else:
            continue
        if any(h in LIGHTNING_IMPORT_ROOTS for h in heads):
            return True
    return False


_HOOK_FACTS: Dict[str, Optional[HookFacts]] = {}
_HOOK_FACTS_SIZE = 2


def remember_hook_facts(text: str, found: Optional[HookFacts]) -> None:
    """Make ``found`` (``hook_facts(text)`` worked out elsewhere, e.g. by the survey) what
    ``hook_facts(text)`` returns."""
    if text not in _HOOK_FACTS and len(_HOOK_FACTS) >= _HOOK_FACTS_SIZE:
        _HOOK_FACTS.pop(next(iter(_HOOK_FACTS)))
    _HOOK_FACTS[text] = found


def hook_facts_of_tree(tree: ast.AST) -> HookFacts:
    """The :class:`HookFacts` of a parsed file."""
    return _hook_facts(tree)


def hook_facts(text: str) -> Optional[HookFacts]:
    """The :class:`HookFacts` of ``text`` (cached for the last few texts), or None when it does
    not parse. Costs one ``ast.parse``: ask it only once the cheaper checks have passed."""
    if text in _HOOK_FACTS:
        return _HOOK_FACTS[text]
    tree = parse_tree(text)
    found = None if tree is None else _hook_facts(tree)
    remember_hook_facts(text, found)
    return found


def def_parameter_names(text: str, name: str) -> Optional[List[str]]:
    """Every name in the parameter lists of the ``def NAME(...)`` headers of ``text`` (parameter
    names, and the names in their annotations and defaults): a superset of the parameters of
    each function called ``name`` that Python's ``ast`` finds. None when a header could not be
    read to its closing parenthesis (a "may" test then needs the file). Each header is read
    with ``tokenize``, from its ``def`` to its closing parenthesis only; an occurrence that is
    no header (in a string or a comment) may add names, never take one away."""
    found: List[str] = []
    buffer = io.StringIO(text)  # read from each header's ``def`` on (StringIO seeks by character)
    for match in re.finditer(DEF + re.escape(name) + r"\b", text):
        buffer.seek(match.start())
        depth = 0
        try:
            for i, token in enumerate(tokenize.generate_tokens(buffer.readline)):
                if i < 2:
                    continue  # ``def`` and the name
                if token.type == tokenize.OP and token.string in ("(", "[", "{"):
                    depth += 1
                elif token.type == tokenize.OP and token.string in (")", "]", "}"):
                    depth -= 1
                elif token.type == tokenize.NAME and depth:
                    found.append(token.string)
                if depth == 0:
                    break  # the closing parenthesis, or no ``(`` after the name: not a header
            else:
                return None
        except (tokenize.TokenError, SyntaxError):
            return None
    return found


def hooks_kind_methods(text: str, ctx: RuleContext,
                       kinds: FrozenSet[str]) -> Optional[List[Tuple[str, str, HookSignature]]]:
    """(kind, method name, signature) for every method directly in the body of a class
    statement of ``text`` whose ``class_kind`` is among ``kinds``: the methods a rule built on
    ``KindTransformer`` looks at. None when ``text`` does not parse."""
    found = hook_facts(text)
    if found is None:
        return None
    out = []
    kind_of: Dict[str, Optional[str]] = {}
    for name, methods in found.class_methods:
        if not methods:
            continue
        if name not in kind_of:
            kind_of[name] = class_kind(ctx, name)
        kind = kind_of[name]
        if kind in kinds:
            out.extend((kind, method, sig) for method, sig in methods)
    return out


# ---------------------------------------------------------------------------------------------
# Import and API rules (LM090, LM201-LM203, LM210, LM307, LM308).

_PATH_WORDS: List[Tuple[Optional[FileFacts], FrozenSet[str]]] = [(None, frozenset())]


def import_path_words(facts: FileFacts) -> FrozenSet[str]:
    """Every word that can be a component of a dotted name the file reaches through its
    imports: the parts of every imported module, every imported name and alias, and every
    attribute name (``pl.a.b.C`` is the import's path followed by attributes)."""
    cached, words = _PATH_WORDS[0]
    if cached is facts:
        return words
    parts = set(facts.imported) | set(facts.attributes)
    for module in facts.modules:
        parts.update(module.split("."))
    words = frozenset(parts)
    _PATH_WORDS[0] = (facts, words)
    return words


class DottedTable:
    """Dotted names (relative to an import root) a rule acts on, indexed for the question
    "could one of them be a prefix of a name this file reaches?". A name ``a.b.C`` can only be
    reached when ``a``, ``b`` and ``C`` are all components of the file's import paths and
    attribute names; its last component is looked up first."""

    def __init__(self, names: Iterable[str], drop_roots: Iterable[str] = ()) -> None:
        roots = frozenset(drop_roots)
        self._by_last: Dict[str, List[FrozenSet[str]]] = {}
        for name in names:
            parts = name.split(".")
            if parts and parts[0] in roots:
                parts = parts[1:]
            if not parts:
                continue
            self._by_last.setdefault(parts[-1], []).append(frozenset(parts))
        self._lasts = frozenset(self._by_last)

    def may_reach(self, words: FrozenSet[str]) -> bool:
        for last in self._lasts & words:
            if any(parts <= words for parts in self._by_last[last]):
                return True
        return False


class RootedTable:
    """Dotted names relative to a Lightning root (``pytorch_lightning`` or ``lightning.pytorch``)
    that a rule acts on when a name the file reaches *starts with* one of them.

    Every dotted name a rule resolves is an import's binding path followed by attribute names,
    and every binding path is among ``facts.modules`` (which holds every imported module, its
    parents and ``module.name`` of each ``from`` import). So ``root.a.b.C`` can only be reached
    when some prefix of it (``root``, ``root.a``, ...) is in ``facts.modules`` and the rest of
    its components are attribute names of the file."""

    ROOTS = ("pytorch_lightning", "lightning.pytorch")

    def __init__(self, names: Iterable[str]) -> None:
        names = list(names)
        self.coarse = DottedTable(names)
        self._by_last: Dict[str, List[List[Tuple[str, FrozenSet[str]]]]] = {}
        for name in names:
            parts = name.split(".")
            for root in self.ROOTS:
                full = root.split(".") + parts
                ways = [(".".join(full[:i]), frozenset(full[i:])) for i in range(1, len(full) + 1)]
                self._by_last.setdefault(parts[-1], []).append(ways)
        self._lasts = frozenset(self._by_last)

    def may_reach(self, facts: FileFacts) -> bool:
        words = import_path_words(facts)
        if not self.coarse.may_reach(words):
            return False
        modules, attributes = facts.modules, facts.attributes
        for last in self._lasts & words:
            for ways in self._by_last[last]:
                if any(prefix in modules and rest <= attributes for prefix, rest in ways):
                    return True
        return False


def marker_in_head(text: str) -> bool:
    """A ``# TODO(lightmigrate)`` comment among the comment lines above the file's first
    statement (libcst keeps some of them in the module header)."""
    if MARKER_PREFIX not in text:
        return False
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            return False
        if MARKER_PREFIX in stripped:
            return True
    return False
