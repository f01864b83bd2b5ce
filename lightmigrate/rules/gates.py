"""Shared pieces of the rules' gates (``Rule.needed``): cheap questions about a file's facts
(:mod:`lightmigrate.facts`) that several rules ask.

Every function here must be conservative: it may say "could be" for nothing, never "cannot"
when the rule's walk would find something.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

from lightmigrate import MARKER_PREFIX
from lightmigrate.facts import FileFacts
from lightmigrate.rules.base import RuleContext

# The import roots through which a file reaches Lightning's 1.x / 2.x names: ``lightning``
# covers ``lightning.pytorch`` and ``lightning.fabric``.
PL_IMPORT_ROOTS = frozenset({"pytorch_lightning", "lightning"})


def imports_pl_root(facts: FileFacts) -> bool:
    """Some import names ``pytorch_lightning`` or ``lightning`` (or a module under them; a
    relative import of a module so named counts too, which only errs on the safe side)."""
    return not PL_IMPORT_ROOTS.isdisjoint(facts.modules)


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


def classes_of_kind_here(ctx: RuleContext, facts: FileFacts, kinds: FrozenSet[str]) -> bool:
    """Some class defined in this file is, by the project index, of one of ``kinds``
    ("module", "callback", "datamodule"; see ``class_edit.class_kind``). Asks only about the
    classes the file defines, not the whole index. A file the index has not seen may have any."""
    from lightmigrate.rules.class_edit import class_kind

    if not ctx.project.has_path(ctx.path):
        return True
    return any(class_kind(ctx, name) in kinds for name in facts.classes)
