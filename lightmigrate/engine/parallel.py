"""Running a run's per-file work on several processes (``--jobs``).

Two steps of a run are spread over a process pool: the survey (engine/survey.py: each worker
parses some files with ``ast`` for the class index and the gates' facts; the parts are merged
in file order, so the index is exactly the one a single process builds), then transforming
the files some rule needs (each worker gets the rules and the finished index once, when it
starts). Results come back in
file order whatever order the workers finish in, so output never depends on ``jobs``.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# progress(stage, done, total): called in the main process as files finish.
Progress = Callable[[str, int, int], None]

INDEX_STAGE = "indexing"
TRANSFORM_STAGE = "migrating"


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# A worker's function and the arguments it shares with every call, set once per process.
_worker_call: Optional[Callable[..., Any]] = None
_worker_args: tuple = ()


def _init_worker(func: Callable[..., Any], shared: tuple) -> None:
    global _worker_call, _worker_args
    _worker_call, _worker_args = func, shared
    # The main process may have paused the collector for its run (``gc_paused``): a worker
    # pauses it for each item only, so cycles an item leaves are collected between items.
    gc.enable()


def _call_in_worker(items: List[Any]) -> List[Any]:
    assert _worker_call is not None
    return [call_without_gc(_worker_call, item, _worker_args) for item in items]


# A worker gets items in batches of up to this many (fewer when there are few items, so that
# every process stays busy until the end): each batch is one round trip through the pool, whose
# cost in this process (pickling, the pool's threads) competes with the workers for the cores.
BATCH_MAX = 8


def batch_size(total: int, jobs: int) -> int:
    """How many items go to a worker at once: about sixteen batches per process at least."""
    return max(1, min(BATCH_MAX, total // (16 * jobs)))


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the block (as it was after). A run builds large
    structures that hold no reference cycles and that reference counting frees (``ast`` and
    libcst trees, the survey's results, the class index); while they grow, the collector would
    walk them, and everything else alive, over and over (measured: half of the survey's time on
    a big tree, and a quarter of the gates' in the main process, most of it in the ``ast``
    parses of lazily indexed files). Anything cyclic left behind is collected once it runs
    again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def frozen_for_workers() -> Iterator[None]:
    """Every object alive now moved to the collector's permanent generation (``gc.freeze``)
    for the block, unless the caller froze some already: the processes forked meanwhile
    inherit them frozen, so their collections, between items, never walk what the run held
    before (the texts' sources, the class index, the rules) and never write to those pages
    (which a forked process would then copy)."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def call_without_gc(func: Callable[..., Any], item: Any, shared: tuple = ()) -> Any:
    """``func(item, *shared)`` with the cyclic garbage collector paused (``gc_paused``)."""
    with gc_paused():
        return func(item, *shared)


def map_in_order(
    func: Callable[..., R],
    items: Iterable[Optional[T]],
    jobs: int = 1,
    shared: tuple = (),
    progress: Optional[Progress] = None,
    stage: str = "",
    total: Optional[int] = None,
) -> List[Optional[R]]:
    """``[func(item, *shared) for item in items]`` on up to ``jobs`` processes.

    ``func`` must be a module-level function; ``shared`` is sent to each worker once, not
    with every item. Results are in ``items`` order. With one job (or one item) everything
    runs in this process. ``items`` may be a generator (give its length as ``total``): the
    processes start on the first items while this one is still producing the next. A None
    item stands for a file with nothing to do: its result is None, and it counts as done.
    """
    if total is None:
        items = list(items)
        total = len(items)
    if progress is not None:
        progress(stage, 0, total)
    if jobs <= 1 or total <= 1:
        out: List[Optional[R]] = []
        for done, item in enumerate(items, 1):
            out.append(None if item is None else call_without_gc(func, item, shared))
            if progress is not None:
                progress(stage, done, total)
        return out
    results: List[Optional[R]] = []
    source = iter(items)
    size = batch_size(total, jobs)
    with frozen_for_workers(), ProcessPoolExecutor(
        max_workers=min(jobs, total), initializer=_init_worker, initargs=(func, shared)
    ) as pool:
        # Keep a bounded number of batches in flight so a huge run does not pickle every
        # file's text up front.
        pending: Dict[Future, List[int]] = {}  # a batch -> where its results go
        done = 0
        limit = 4 * min(jobs, total)
        exhausted = False
        while True:
            while not exhausted and len(pending) < limit:
                batch: List[Any] = []
                places: List[int] = []
                while len(batch) < size:
                    item = next(source, _END)
                    if item is _END:
                        exhausted = True
                        break
                    if item is None:
                        done += 1
                    else:
                        batch.append(item)
                        places.append(len(results))
                    results.append(None)
                if batch:
                    pending[pool.submit(_call_in_worker, batch)] = places
            if not pending:
                break
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                places = pending.pop(future)
                for place, result in zip(places, future.result()):
                    results[place] = result
                done += len(places)
            if progress is not None:
                progress(stage, done, total)
    if progress is not None:
        progress(stage, done, total)
    return results


_END = object()
