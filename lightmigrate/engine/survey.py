"""The survey: cheap passes over a run's files before any rule runs.

The prefilter searches each text for the rules' trigger words, then asks each matching rule's
gate for its text-only first steps (``Rule.may_need``, ``Rule.gate_kinds``). Each file some
gate may still need is parsed once with Python's ``ast`` (C speed; libcst costs about ten
times more): that one tree gives the file's part of the project class index and its facts
(``lightmigrate.analysis.facts``). A file only the index reads is indexed lazily: it is parsed when a
question about the project's classes may concern it, which in most runs is never; so is a
file whose gates only need a class of some Lightning kind, until the index finds one in it.
With the whole index built, the engine asks every rule's gate (``Rule.needed``) about each
prefiltered file, in the main process: only files that some rule needs are sent on to be
parsed with libcst and transformed. A file no rule needs comes out exactly as a transform
would leave it (unchanged, nothing reported), so skipping it changes no output.
"""
from __future__ import annotations

from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from lightmigrate import MARKER_PREFIX
from lightmigrate.engine import transform
from lightmigrate.engine.parallel import INDEX_STAGE, Progress, map_in_order
from lightmigrate.engine.triggers import TextTriggers
from lightmigrate.analysis.facts import FileFacts, file_facts, nodes_of, parse_tree, remember
from lightmigrate.analysis.project import (TEXT_PROBES, LazyEntry, ProjectIndex, is_yaml, lazy_entry, may_index_lazily,
                                  search_text, worth_indexing)
from lightmigrate.rules.base import Rule, RuleContext
from lightmigrate.rules.shared.gates import HookFacts, hook_facts_of_tree, remember_hook_facts

# (text, path, facts wanted[, probes]): text as the index should read it (a notebook's code
# cells); facts wanted is 0 (none), FACTS, or HOOK_FACTS (the facts, and the hook facts some gate
# reads); probes: the ``project.TEXT_PROBES`` the text holds, when the prefilter found them.
SurveyItem = Tuple  # (str, str, int) or (str, str, int, Optional[FrozenSet[str]])
FACTS, HOOK_FACTS = 1, 2
# What the survey found in one file: its part of the index, its facts, its hook facts.
# (or, for a file the index keeps unparsed, only what it reads from the text: the text itself is
# not sent back from the pool)
Found = Union[Tuple[ProjectIndex, Optional[FileFacts], Optional[HookFacts]], LazyEntry]

# How many times more the survey spends on a file it parses for its facts than on one it only
# reads for the lazy index, per character (measured on the torch and lightning sources: about
# 115 ns and 7 ns).
PARSE_COST = 16

# Below this much text the prefilter and the survey run in this process: a pool costs more
# than it saves.
PARALLEL_MIN_CHARS = 1_000_000


def _survey_one(item: SurveyItem) -> Found:
    text, path, want, *rest = item
    probes = rest[0] if rest else None
    if not want and may_index_lazily(text):
        return lazy_entry(text, path, probes)
    part = ProjectIndex()
    index_tree = worth_indexing(text, probes) and not is_yaml(path)
    tree = parse_tree(text) if want or index_tree else None
    nodes = nodes_of(tree) if tree is not None else None  # one pass over the tree serves all
    part.add_source(text, path, tree=tree, nodes=nodes, present=probes)
    if not want:
        return part, None, None
    return (part, *_facts_of(text, tree, nodes, want))


def _facts_of(text: str, tree, nodes: Optional[list], want: int) -> Tuple[FileFacts, Optional[HookFacts]]:
    hooks = hook_facts_of_tree(tree) if want == HOOK_FACTS and tree is not None else None
    return file_facts(text, tree, nodes), hooks


def _survey_span(span: Tuple[int, int], items: Sequence[SurveyItem]) -> List[Found]:
    return [_survey_one(items[i]) for i in range(*span)]


def sized_spans(items: Sequence, size: Callable[[object], int], jobs: int) -> List[Tuple[int, int]]:
    """``(start, end)`` index ranges cutting ``items``, in order, into about eight runs per
    process of about equal ``size``, so the processes finish together. The processes get the
    items themselves once, when they start (``map_in_order``'s ``shared``: a forked process
    shares them with this one), and then only the ranges: the texts are not copied through a
    pipe for every run."""
    target = sum(size(item) for item in items) // (8 * jobs) + 1
    spans: List[Tuple[int, int]] = []
    start = filled = 0
    for i, item in enumerate(items):
        if filled >= target:
            spans.append((start, i))
            start, filled = i, 0
        filled += size(item)
    spans.append((start, len(items)))
    return spans


def survey(
    files: Sequence[SurveyItem], jobs: int = 1, progress: Optional[Progress] = None,
    started: Optional[Callable[[], None]] = None,
) -> Tuple[ProjectIndex, Dict[int, FileFacts], Dict[int, HookFacts]]:
    """The class index of ``files`` (in run order, as one process would build it), and the
    facts and hook facts of the files that asked for them (by position in ``files``). The
    files are handled on ``jobs`` processes (parsed, or read for what the index keeps of a file
    it parses later); the parts are merged in run order."""
    # A file only the index reads is indexed lazily (parsed when a question needs its classes),
    # unless a text search could miss one of its names. The searches run on the pool too.
    if jobs > 1 and sum(len(item[0]) for item in files) >= PARALLEL_MIN_CHARS:
        # Files go to the processes in chunks: one file's parse is too short to be worth a
        # round trip of its own. The chunks are cut to about equal work: a file parsed for its
        # facts costs some PARSE_COST times what a file read only for the lazy index does (and
        # those files often sit together, e.g. a whole package that imports Lightning).
        spans = sized_spans(files, lambda item: len(item[0]) * (PARSE_COST if item[2] else 1), jobs)
        by_files = None if progress is None else \
            (lambda stage, done, total: progress(stage, spans[done - 1][1] if done else 0, len(files)))
        results = [r for part in map_in_order(_survey_span, spans, jobs, (files,), by_files, INDEX_STAGE,
                                              started=started)
                   for r in part]
    else:
        results = map_in_order(_survey_one, files, 1, (), progress, INDEX_STAGE)
    project = ProjectIndex()
    facts: Dict[int, FileFacts] = {}
    hooks: Dict[int, HookFacts] = {}
    for i, (item, found) in enumerate(zip(files, results)):
        if isinstance(found, LazyEntry):
            project.add_lazy(item[0], item[1], found)
            continue
        part, file_facts_, hook_facts_ = found
        project.merge(part)
        if file_facts_ is not None:
            facts[i] = file_facts_
        if hook_facts_ is not None:
            hooks[i] = hook_facts_
    return project, facts, hooks




# What the prefilter found in one file: the codes of the rules whose text triggers match, or
# None when nothing matches and the file has no marker (``needs_transform`` is False).
Matched = Optional[FrozenSet[str]]


# What the prefilter found in one file: ``Matched``, and the kinds some class of the file must
# have for any gate among them to need it (``Rule.gate_kinds``; None when no such promise).
Gated = Tuple[Matched, Optional[FrozenSet[str]]]
# ... and the ``project.TEXT_PROBES`` the file holds (found along with the triggers, so that the
# survey need not search the text for them again).
Prefiltered = Tuple[Matched, Optional[FrozenSet[str]], FrozenSet[str]]


def text_gates(text: str, matched: FrozenSet[str], rules: Dict[str, Rule]) -> Gated:
    """The gates' text-only first steps (``Rule.may_need``, ``Rule.gate_kinds``) on the codes
    whose triggers ``matched`` a file, asked about ``text``, its ``search_text``: the codes that
    may still be needed, and the kinds one of its classes must have for any of them to be (None
    when some code promises none). A file with markers passes whatever they say (its markers
    are counted)."""
    codes = frozenset(c for c in matched if transform.rule_may_need(rules[c], text))
    if MARKER_PREFIX in text:
        return codes, None
    if not codes:
        return None, None
    kinds: set = set()
    for code in codes:
        needs = transform.rule_gate_kinds(rules[code], text)
        if needs is None:
            return codes, None
        kinds |= needs
    return codes, frozenset(kinds)


def _prefilter_span(span: Tuple[int, int], items: Sequence[Tuple[str, Tuple[str, ...], bool]],
                    rules: Sequence[Rule]) -> List[Prefiltered]:
    triggers = TextTriggers(rules, TEXT_PROBES)
    by_code = {r.code: r for r in rules}
    out: List[Prefiltered] = []
    for i in range(*span):
        text, codes, refine = items[i]
        matched, probes = triggers.matched_and_probes(text, codes)
        if matched and refine:
            out.append((*text_gates(search_text(text), matched, by_code), probes))
        else:
            out.append((matched if matched or MARKER_PREFIX in text else None, None, probes))
    return out


def prefilter(items: Sequence[Tuple[str, Tuple[str, ...], bool]], rules: Sequence[Rule],
              jobs: int = 1) -> List[Prefiltered]:
    """For each ``(text, codes of the rules enabled for it, refine)``: the codes whose triggers
    match (None when ``needs_transform`` is False); with ``refine`` (a Python file, not a
    notebook), only those of them whose text gates pass, and the kinds ``text_gates`` finds;
    and the ``project.TEXT_PROBES`` the text holds.
    On ``jobs`` processes when there is enough text to be worth it. The text triggers are
    substring searches: on a big tree they cost seconds, so they are spread like the rest, and
    done once (the gates reuse the answer). Text gates search for the identifiers Python will
    read, and Python reads each identifier NFKC-normalized, so they are asked about the text
    so normalized (``search_text``)."""
    total = sum(len(item[0]) for item in items)
    if jobs <= 1 or total < PARALLEL_MIN_CHARS:
        return _prefilter_span((0, len(items)), items, rules)
    spans = sized_spans(items, lambda item: len(item[0]), jobs)
    return [flag for part in map_in_order(_prefilter_span, spans, jobs, (items, rules)) for flag in part]


def build_index(files: Sequence[Tuple[str, str]], jobs: int = 1, progress: Optional[Progress] = None) -> ProjectIndex:
    """The class index of ``files`` (``(text, path)`` pairs, in run order)."""
    return survey([(text, path, 0) for text, path in files], jobs, progress)[0]
