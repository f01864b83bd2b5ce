"""Progress on stderr: the bar of ``lightmigrate rewrite`` (only on a terminal, never under CI) and
the steps of building environments (``verify --pytest``)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import IO, Callable, Dict, Iterator, Optional

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


@contextmanager
def step_status(stream: Optional[IO] = None) -> Iterator[Callable[[str, bool], None]]:
    """A ``say(text, detail)`` callback for a long job made of steps (building environments):
    a step (``detail`` False) is printed as a line on stderr; a detail (a line of an installer's
    output) is shown next to a spinner on a terminal outside CI, and dropped elsewhere."""
    stream = sys.stderr if stream is None else stream
    if not wants_progress(stream):
        def say(text: str, detail: bool) -> None:
            if not detail:
                print(f"lightmigrate: {text}", file=stream, flush=True)

        yield say
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(file=stream, force_terminal=True)
    current = [""]
    with console.status("") as status:
        def say(text: str, detail: bool) -> None:
            if detail:
                status.update(escape(f"{current[0]}  {text[:100]}"))
                return
            current[0] = text if len(text) <= 60 else text[:57] + "..."
            console.print(escape(text), highlight=False)
            status.update(escape(current[0]))

        yield say
