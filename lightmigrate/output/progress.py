"""The progress bar of ``lightmigrate rewrite``: on stderr, only on a terminal, never under CI."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import IO, Dict, Iterator, Optional

from lightmigrate.engine.parallel import Progress as ProgressCallback

# A bar is only worth drawing when a run has this many files to work on.
MIN_FILES = 20


def wants_progress(stream: Optional[IO] = None) -> bool:
    """A bar on ``stream`` (stderr by default): it is a terminal and ``CI`` is not set."""
    stream = sys.stderr if stream is None else stream
    if "CI" in os.environ:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def progress_bar(enabled: bool, stream: Optional[IO] = None) -> Iterator[Optional[ProgressCallback]]:
    """A ``progress(stage, done, total)`` callback that drives a rich bar (None when not
    ``enabled``). The bar disappears when the run ends, so the report prints as usual."""
    if not enabled:
        yield None
        return
    # (rich is imported only for a bar: a run without one starts faster)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr if stream is None else stream, force_terminal=True)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        tasks: Dict[str, object] = {}

        def update(stage: str, done: int, total: int) -> None:
            if total < MIN_FILES:
                return
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done)  # type: ignore[arg-type]

        yield update
