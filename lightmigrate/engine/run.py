"""A whole run: discover files, index them, transform each one, write or describe the result."""

from __future__ import annotations

import difflib
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from lightmigrate.cst.compat import fast_paths_ok
from lightmigrate.cst.walk import field_orders
from lightmigrate.engine.discovery import discover
from lightmigrate.engine.model import EngineError, FileResult, Mode, Problem, RunReport
from lightmigrate.engine import notebook
from lightmigrate.engine.parallel import TRANSFORM_STAGE, Progress, gc_paused, map_in_order
from lightmigrate.engine.source import (
    Source,
    decode_source,
    encode_source,
    read_source,
    remove_stale_temp_files,
    unchanged_on_disk,
    write_atomic,
)
from lightmigrate.engine.survey import prefilter, survey
from lightmigrate.engine.transform import needs_transform, transform_text
from lightmigrate.engine.yaml_config import transform_config
from lightmigrate.analysis.project import ProjectIndex, is_yaml
from lightmigrate.rules.base import Rule


def unified_diff(before: str, after: str, path: str) -> str:
    """A ``--- a/path`` / ``+++ b/path`` unified diff that keeps the files' own line endings."""
    name = path.lstrip("/")
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
    )
    out = []
    for line in lines:
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _migrate(source: Source, rules: Sequence[Rule], project: ProjectIndex,
             matched: Optional[FrozenSet[str]] = None) -> Tuple[FileResult, Optional[str], bytes]:
    """One text's migration, nothing written: its result, and its new text and bytes (None and
    b"" when nothing changed). Raises EngineError."""
    result = FileResult(source.path)
    yaml = is_yaml(source.path)  # a LightningCLI config (engine/yaml_config.py)
    # (``matched`` given: the prefilter passed the file, which is what needs_transform asks)
    if not yaml and matched is None and not needs_transform(source.text, rules, source.path, project):
        return result, None, b""
    if yaml:
        out = transform_config(source.text, rules, source.path, project)
    elif notebook.is_notebook(source.path):
        out = notebook.transform_notebook(source.text, rules, source.path, project)
    else:
        out = transform_text(source.text, rules, source.path, project, matched=matched)
    result.findings = out.findings
    result.markers = out.markers
    result.changes = out.changes
    result.problems = [Problem(source.path, message) for message in out.problems]
    if not out.changed:
        return result, None, b""
    data = encode_source(out.text, source.encoding)
    result.changed = True
    return result, out.text, data


def process_source(source: Source, rules: Sequence[Rule], project: ProjectIndex, mode: Mode,
                   matched: Optional[FrozenSet[str]] = None) -> FileResult:
    """All the work for one file, writing included. Top-level and free of shared state, so a
    process pool can run it. ``matched``: the codes whose triggers the prefilter found."""
    try:
        result, new_text, data = _migrate(source, rules, project, matched)
        if new_text is None:
            return result
        if mode is Mode.DIFF:
            result.diff = unified_diff(source.text, new_text, source.path)
        elif mode is Mode.WRITE:
            if not unchanged_on_disk(source):
                raise EngineError("file changed on disk during the run; not rewritten")
            try:
                write_atomic(source.path, data)
            except OSError as exc:
                raise EngineError(f"cannot write file: {exc.strerror or exc}")
    except EngineError as exc:
        return FileResult(source.path, error=exc.problem(source.path))
    return result


def run_bytes(data: bytes, path: str, rules: Sequence[Rule], mode: Mode = Mode.WRITE,
              settings=None) -> Tuple[RunReport, bytes]:
    """A run over one file's bytes that the caller read (``rewrite -``: standard input), with
    ``path`` (``--stdin-filename``, or ``-``) naming it in messages and choosing its kind and its
    per-file settings; nothing is read or written. Returns the report and the bytes to give
    back: the rewritten file under ``Mode.WRITE`` when it changed, else ``data`` as it came
    (also when it could not be processed, or ``settings`` exclude ``path``). The class index
    holds that one file only."""
    report = RunReport(mode)
    if settings is not None and settings.is_excluded(path):
        return report, data
    try:
        text, encoding = decode_source(data)
        source = Source(path, text, encoding)
        if settings is not None:
            rules = settings.rules_for(path, rules)
        project = survey([(notebook.indexable_text(path, text), path)])
        project.bare_noqa = bool(settings is not None and settings.bare_noqa)
        result, new_text, new_data = _migrate(source, rules, project)
    except EngineError as exc:
        report.files.append(FileResult(path, error=exc.problem(path)))
        return report, data
    report.files.append(result)
    if new_text is None:
        return report, data
    if mode is Mode.DIFF:
        result.diff = unified_diff(source.text, new_text, path)
    return report, new_data if mode is Mode.WRITE else data


def _process_selected(item: tuple, rules: Sequence[Rule], project: ProjectIndex, mode: Mode,
                      sources: Sequence[Optional[Source]]) -> FileResult:
    """``process_source`` with the rules enabled for this file (``item`` is ``(its index in
    sources, codes, matched)``): the rule objects and the texts travel to each worker once (a
    forked worker shares them), the per-file codes with every file, with the codes the
    prefilter matched (None for a YAML config or a notebook)."""
    i, codes, matched = item
    return process_source(sources[i], [r for r in rules if r.code in codes], project, mode, matched)


def _prepare_migration() -> None:
    """Make ready, before the processes that migrate are forked, what each of them would
    otherwise work out for itself: libcst's field orders (``cst/walk.py``) and the check of
    the fast paths (``cst/compat.py``)."""
    field_orders()
    fast_paths_ok()


def run(
    paths: Iterable[str],
    rules: Sequence[Rule],
    mode: Mode = Mode.WRITE,
    settings=None,
    jobs: int = 1,
    progress: Optional[Progress] = None,
) -> RunReport:
    """Migrate every Python file under ``paths`` with ``rules`` (in order), on ``jobs``
    processes (the report is the same whatever ``jobs`` is). ``settings`` (a
    ``lightmigrate.config.Settings``) excludes files and switches rules off per file;
    ``progress(stage, done, total)`` is called as files finish. The cyclic garbage collector
    is paused meanwhile (``gc_paused``)."""
    with gc_paused():
        return _run(paths, rules, mode, settings, jobs, progress)


def _add_linked(sources: Sequence[Optional[Source]], file_rules: Sequence[Sequence[Rule]], project: ProjectIndex,
                passed: dict) -> None:
    """Add to ``passed`` (file index -> the codes its prefilter matched) the rules the project
    links a file to (``Rule.linked``: a subclass must get the change its base's migration needs,
    a dict that another file spreads into a Trainer must be migrated, although the file's own
    text may not hold the triggers). Worked out here, once, before the files go to the
    processes (which then share the answer)."""
    if not passed:
        return
    # each distinct list of rules (one per file, mostly the same list) -> its rules that link files
    linking: Dict[int, List[Rule]] = {}
    for rules in file_rules:
        if id(rules) not in linking:
            linking[id(rules)] = [r for r in rules if r.links_files]
    if not any(linking.values()):
        return
    for i, s in enumerate(sources):
        if s is None or is_yaml(s.path):
            continue
        codes = {r.code for r in linking[id(file_rules[i])] if r.linked(s.path, s.text, project)}
        if codes:
            passed[i] = frozenset(passed.get(i) or ()) | codes


def _run(paths: Iterable[str], rules: Sequence[Rule], mode: Mode, settings, jobs: int,
         progress: Optional[Progress]) -> RunReport:
    report = RunReport(mode)
    sources: List[Optional[Source]] = []  # parallel to report.files; None for failed reads
    for entry in discover(paths):
        if settings is not None and settings.is_excluded(entry.path):
            continue
        error = entry.error
        source = None
        if error is None:
            try:
                source = read_source(entry.path)
            except EngineError as exc:
                error = exc.problem(entry.path)
        report.files.append(FileResult(entry.path, error=error))
        sources.append(source)
    # Every file goes into the class index (a subclass may live in a file no rule touches),
    # but when no file passes the prefilter nobody will ask, so skip the cost.
    file_rules = [rules if settings is None or s is None else settings.rules_for(s.path, rules) for s in sources]
    plain_py = [i for i, s in enumerate(sources) if s is not None and not is_yaml(s.path)]
    found = prefilter([(sources[i].text, tuple(r.code for r in file_rules[i])) for i in plain_py], rules, jobs)
    passed = {i: codes for i, (codes, _) in zip(plain_py, found) if codes is not None}
    # the substrings the index looks for, found by the prefilter in each Python file's text
    # (a notebook's index reads its code cells, another text)
    probes = {i: found_probes for i, (_, found_probes) in zip(plain_py, found)
              if not notebook.is_notebook(sources[i].path)}
    todo = [i for i, s in enumerate(sources) if s is not None and (i in passed or is_yaml(s.path))]
    project = ProjectIndex()
    if todo:
        # while the survey's processes work, this one imports what the migrating ones will need
        project = survey([(notebook.indexable_text(s.path, s.text), s.path, probes.get(i))
                          for i, s in enumerate(sources) if s is not None],
                         jobs, progress)
        # a tree the index parses for one of these files is kept for its migration
        project.migrating = frozenset(sources[i].path for i in todo)
        _add_linked(sources, file_rules, project, passed)
        project.bare_noqa = bool(settings is not None and settings.bare_noqa)
        todo = [i for i, s in enumerate(sources) if s is not None and (i in passed or is_yaml(s.path))]
    if mode is Mode.WRITE:  # temporary files left by a run that was killed mid-write
        remove_stale_temp_files(s.path for s in sources if s is not None)
    # Each file goes to a process, which finds the rules' sites and fixes them (a file no rule
    # has a site in is not parsed with libcst). The longest texts go first, so that no process
    # is left with a big file at the end while the others wait; results come back by file.
    if jobs > 1:
        todo.sort(key=lambda i: -len(sources[i].text))
    work = ((i, tuple(r.code for r in file_rules[i]),
             None if notebook.is_notebook(sources[i].path) else passed.get(i)) for i in todo)
    if jobs > 1 and len(todo) > 1:
        _prepare_migration()
    results = map_in_order(_process_selected, work, jobs, (rules, project, mode, sources), progress,
                           TRANSFORM_STAGE, total=len(todo))
    for i, result in zip(todo, results):
        if result is not None:
            report.files[i] = result
    return report
