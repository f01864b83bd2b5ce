"""The survey: cheap passes over a run's files before any rule runs.

The prefilter searches each text for the rules' trigger words (and the words the class index
looks for). Then every file goes into the project class index: a file whose class names and
bases a text search can read is indexed lazily (parsed with Python's ``ast`` when a question
about the project's classes may concern it, which in most runs is never); the others are
parsed once, on the pool. With the whole index built, each file some rule's triggers match
goes to a process where the rules' ``find`` read it (``engine/transform.py``).
"""
from __future__ import annotations

from typing import Callable, FrozenSet, List, Optional, Sequence, Tuple, Union

from lightmigrate import MARKER_PREFIX
from lightmigrate.analysis.project import TEXT_PROBES, LazyEntry, ProjectIndex, lazy_entry, may_index_lazily
from lightmigrate.engine.parallel import INDEX_STAGE, Progress, map_in_order
from lightmigrate.engine.triggers import TextTriggers
from lightmigrate.rules.base import Rule

# (text, path[, probes]): text as the index should read it (a notebook's code cells); probes:
# the ``project.TEXT_PROBES`` the text holds, when the prefilter found them.
SurveyItem = Tuple  # (str, str) or (str, str, Optional[FrozenSet[str]])
# What the survey found in one file: its part of the index (or, for a file the index keeps
# unparsed, only what it reads from the text: the text itself is not sent back from the pool)
Found = Union[ProjectIndex, LazyEntry]

# Below this much text the prefilter and the survey run in this process: a pool costs more
# than it saves.
PARALLEL_MIN_CHARS = 1_000_000


def _survey_one(item: SurveyItem) -> Found:
    text, path, *rest = item
    probes = rest[0] if rest else None
    if may_index_lazily(text):
        return lazy_entry(text, path, probes)
    part = ProjectIndex()
    part.add_source(text, path, present=probes, keep_text=False)  # (``survey`` gives the texts)
    return part


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
) -> ProjectIndex:
    """The class index of ``files`` (in run order, as one process would build it). The files
    are handled on ``jobs`` processes (parsed, or read for what the index keeps of a file it
    parses later); the parts are merged in run order."""
    # A file only the index reads is indexed lazily (parsed when a question needs its classes),
    # unless a text search could miss one of its names. The searches run on the pool too.
    if jobs > 1 and sum(len(item[0]) for item in files) >= PARALLEL_MIN_CHARS:
        # Files go to the processes in chunks of about equal size: one file's reading is too
        # short to be worth a round trip of its own.
        spans = sized_spans(files, lambda item: len(item[0]), jobs)
        by_files = None if progress is None else \
            (lambda stage, done, total: progress(stage, spans[done - 1][1] if done else 0, len(files)))
        results = [r for part in map_in_order(_survey_span, spans, jobs, (files,), by_files, INDEX_STAGE)
                   for r in part]
    else:
        results = map_in_order(_survey_one, files, 1, (), progress, INDEX_STAGE)
    project = ProjectIndex()
    for item, found in zip(files, results):
        if isinstance(found, LazyEntry):
            project.add_lazy(item[0], item[1], found)
        else:
            project.merge(found)
    project.keep_texts({item[1]: item[0] for item in files})
    return project




# What the prefilter found in one file: the codes of the rules whose text triggers match, or
# None when nothing matches and the file has no marker (``needs_transform`` is False).
Matched = Optional[FrozenSet[str]]


# ... and the ``project.TEXT_PROBES`` the file holds (found along with the triggers, so that the
# survey need not search the text for them again).
Prefiltered = Tuple[Matched, FrozenSet[str]]


# the rules last searched for and their ``TextTriggers`` (a process searches several spans)
_last_triggers: list = [(), None]


def _triggers(rules: Sequence[Rule]) -> TextTriggers:
    known, triggers = _last_triggers
    if triggers is None or len(known) != len(rules) or any(a is not b for a, b in zip(known, rules)):
        triggers = TextTriggers(rules, TEXT_PROBES)
        _last_triggers[:] = [tuple(rules), triggers]
    return triggers


def _prefilter_span(span: Tuple[int, int], items: Sequence[Tuple[str, Tuple[str, ...]]],
                    rules: Sequence[Rule]) -> List[Prefiltered]:
    triggers = _triggers(rules)
    out: List[Prefiltered] = []
    for i in range(*span):
        text, codes = items[i]
        matched, probes = triggers.matched_and_probes(text, codes)
        out.append((matched if matched or MARKER_PREFIX in text else None, probes))
    return out


def prefilter(items: Sequence[Tuple[str, Tuple[str, ...]]], rules: Sequence[Rule],
              jobs: int = 1) -> List[Prefiltered]:
    """For each ``(text, codes of the rules enabled for it)``: the codes whose triggers match
    (None when nothing matches and the file has no marker: ``needs_transform`` is False), and
    the ``project.TEXT_PROBES`` the text holds. On ``jobs`` processes when there is enough text
    to be worth it: the triggers are substring searches, which cost seconds on a big tree."""
    total = sum(len(item[0]) for item in items)
    if jobs <= 1 or total < PARALLEL_MIN_CHARS:
        return _prefilter_span((0, len(items)), items, rules)
    spans = sized_spans(items, lambda item: len(item[0]), jobs)
    return [flag for part in map_in_order(_prefilter_span, spans, jobs, (items, rules)) for flag in part]


def build_index(files: Sequence[Tuple[str, str]], jobs: int = 1, progress: Optional[Progress] = None) -> ProjectIndex:
    """The class index of ``files`` (``(text, path)`` pairs, in run order)."""
    return survey(list(files), jobs, progress)
