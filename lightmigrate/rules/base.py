"""The rule framework: what every rule declares, and what it gets to work with.

A rule is a class with metadata (code, summary, the upgrade-guide row it implements, its
safety, before/after examples) and two methods:

- ``find(source, ctx)`` decides. It reads the file's Python ``ast`` tree (``source.tree``) and
  the project's class index (``ctx.project``) and returns the rule's :class:`Site` s in that
  file: every place it will change, mark or note, and what to do there. It is the only place
  a rule decides, and it is exact: no sites means the rule changes and reports nothing. A
  site may stem from code in another file (a base class the project index knows).
- ``fix(module, sites, ctx)`` carries the sites out on the file's libcst ``Module`` and
  returns the new module. It decides nothing: it edits where the sites say, as they say.

The engine runs ``find`` for every file whose text holds one of the rule's ``triggers`` (or that
holds a subclass of a class defining one of its ``linked_hooks`` in another file), and
parses with libcst and fixes only files with sites. When an earlier rule changed the text, a
later rule's ``find`` reads the new text. Rules never read or write files; the engine does.
"""

from __future__ import annotations

import ast
import enum
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, FrozenSet, List, Mapping, Optional, Sequence, Tuple

import libcst as cst

from lightmigrate.analysis.ast_nodes import ast_nodes
from lightmigrate.cst.codegen import ModulePositions, known_text
from lightmigrate.output.findings import Finding, Kind
from lightmigrate.analysis.project import ProjectIndex


class Handling(str, enum.Enum):
    """How a rule handles one row of the spec catalogue (``../shared/spec/lightning-1-to-2.md``)."""

    REWRITTEN = "rewritten"  # the code is rewritten (forms the rule cannot rewrite get a marker)
    MARKED = "marked"  # a TODO(lightmigrate) marker and a report entry; a human acts
    NOTED = "noted"  # a NOTE finding: behaviour changed silently, nothing to rewrite
    NO_CHANGE = "no change needed"  # the row needs no edit for the targeted 2.x (e.g. T30)


class Safety(str, enum.Enum):
    PRESERVING = "behaviour-preserving"  # the rewrite keeps 1.9 behaviour exactly (checked by verify)
    REVIEW = "needs review"  # the rewrite is the best known port but a human should look


@dataclass(frozen=True)
class Example:
    """A before/after pair. ``after is None`` means the rule must leave ``before`` unchanged."""

    before: str
    after: Optional[str]
    title: str = ""


@dataclass(frozen=True)
class Site:
    """One place where a rule acts, as its ``find`` decided; ``fix`` carries it out.

    Positions are those of the text ``find`` read (the engine runs ``find`` again on the new
    text when an earlier rule changed it, so they are valid when ``fix`` gets them)."""

    line: int = 0  # 1-based line of the node acted on (0: the file as a whole)
    col: int = 0  # its 0-based column (``ast`` col_offset)
    target: str = ""  # what is addressed: "Class", "Class.method", a name; "" for the file
    action: str = ""  # what to do there, in the rule's own words ("rename", "mark", ...)
    data: Any = None  # whatever else ``fix`` needs (hashable)


class SourceFile:
    """What ``find`` reads: one file's path and text, and its Python ``ast`` tree, parsed on
    first use (``tree`` raises ``SyntaxError`` for text Python rejects). ``nodes`` lists the
    tree's nodes; ``shared`` keeps what several rules read from the same text (one
    ``SourceFile`` per text: nothing outlives it)."""

    __slots__ = ("path", "text", "_tree", "_nodes", "_shared", "before_parse", "on_parse")

    def __init__(self, path: str, text: str, tree: Optional[ast.Module] = None) -> None:
        self.path = path
        self.text = text
        self._tree = tree
        self._nodes: Optional[list] = None
        self._shared: dict = {}
        self.before_parse = None  # called before this object parses the text (may raise)
        self.on_parse = None  # called with the tree when this object parses the text

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            if self.before_parse is not None:
                self.before_parse()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._tree = ast.parse(self.text, self.path)
            if self.on_parse is not None:
                self.on_parse(self._tree)
        return self._tree

    @property
    def nodes(self) -> list:
        """Every node of ``tree`` but expression contexts and operators, breadth first (the
        order of ``ast.walk``): ``analysis.ast_nodes.ast_nodes``."""
        if self._nodes is None:
            self._nodes = ast_nodes(self.tree)
        return self._nodes

    def shared(self, key: object, make: Callable[["SourceFile"], Any]) -> Any:
        """``make(self)``, worked out once for this text whichever rule asks first."""
        if key not in self._shared:
            self._shared[key] = make(self)
        return self._shared[key]


@dataclass
class RuleContext:
    """Per-file state a rule may use: the path, the project's class index, and the findings list."""

    path: str = "<string>"
    project: ProjectIndex = field(default_factory=ProjectIndex)
    findings: List[Finding] = field(default_factory=list)
    _positions: Optional[Tuple[cst.Module, ModulePositions]] = None

    def position(self, module: cst.Module, node: cst.CSTNode) -> Tuple[int, int]:
        """Line and 1-based column of ``node`` inside ``module`` (0, 0 when unknown)."""
        if self._positions is None or self._positions[0] is not module:
            self._positions = (module, ModulePositions(module, known_text(module)))
        pos = self._positions[1].start(node)
        if pos is None:
            return (0, 0)
        return (pos[0], pos[1] + 1)

    def report(self, code: str, message: str, kind: Kind, line: int = 0, col: int = 0) -> None:
        """Record a change or a note. Markers are not reported here: a rule writes the
        ``# TODO(lightmigrate)`` comment and the engine reports every marker it finds in the
        output, at its real line, the same on every run."""
        self.findings.append(Finding(code, message, kind, line, col, self.path))


class Rule:
    """Base class of every rule: metadata, ``find`` and ``fix`` (see the module docstring)."""

    code: ClassVar[str]
    name: ClassVar[str]  # a short slug, e.g. "epoch-end-outputs"
    summary: ClassVar[str]  # one line
    spec_rows: ClassVar[Tuple[str, ...]]  # rows of ../shared/spec/lightning-1-to-2.md, e.g. ("M1",)
    guide: ClassVar[str]  # the upgrade-guide row it implements, with its link
    safety: ClassVar[Safety]
    description: ClassVar[str] = ""  # what it does and why, for `lightmigrate rules CODE`
    # Cheap prefilter: a file that contains none of these substrings cannot need the rule. (A
    # rule that overrides ``may_apply`` keeps that true: its ``may_apply`` refines the triggers.)
    triggers: ClassVar[Tuple[str, ...]]
    # Hook names whose migration in a class must be matched in its subclasses in other files
    # (a renamed or wrapped step, added output-collecting hooks): the engine also runs ``find``
    # on every file ``ProjectIndex.linked_paths(linked_hooks)`` names, whatever its text holds.
    linked_hooks: ClassVar[FrozenSet[str]] = frozenset()
    examples: ClassVar[Sequence[Example]] = ()
    # The coverage ledger: spec row id -> how this rule handles it. Row ids are the ids of the
    # spec tables ("M1", "T-prop2", "R12", "CLI1", "B-3") and, for the bullets of A.8,
    # "A8-trainer-args", "A8-fit-keywords", "A8-hooks", "A8-checkpoint-state", "A8-module",
    # "A8-imports", "A8-trainer-attributes", "A8-callbacks-loggers".
    coverage: ClassVar[Mapping[str, Handling]] = {}
    # False for a rule that only reports (notes): it implements ``report`` instead of ``fix``,
    # and the engine does not parse a file with libcst for it.
    edits_code: ClassVar[bool] = True

    def may_apply(self, text: str) -> bool:
        return any(t in text for t in self.triggers)

    def linked(self, path: str, text: str, project: ProjectIndex) -> bool:
        """Whether ``find`` must read the file ``path`` (its ``text``) whatever ``may_apply``
        says: the project links the file to this rule. By default, when it holds a subclass of
        a class in another file that defines one of ``linked_hooks``. Asked once the project
        index is complete, for a rule that overrides it or has ``linked_hooks``."""
        return bool(self.linked_hooks) and path in project.linked_paths(self.linked_hooks)

    @property
    def links_files(self) -> bool:
        """Whether ``linked`` can say yes (the engine asks only such rules)."""
        return bool(self.linked_hooks) or type(self).linked is not Rule.linked

    def find(self, source: SourceFile, ctx: RuleContext) -> List[Site]:  # pragma: no cover
        """Every site of this rule in ``source`` (none: the rule changes and reports nothing)."""
        raise NotImplementedError

    def fix(self, module: cst.Module, sites: Sequence[Site], ctx: RuleContext) -> cst.Module:  # pragma: no cover
        """``module`` with ``sites`` (what ``find`` returned for its text) carried out."""
        if self.edits_code:
            raise NotImplementedError
        self.report(sites, ctx)
        return module

    def report(self, sites: Sequence[Site], ctx: RuleContext) -> None:  # pragma: no cover
        """A rule that does not edit code (``edits_code`` False): report ``sites`` (``ctx.report``)."""
        raise NotImplementedError


WHOLE_FILE = Site()
