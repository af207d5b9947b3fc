"""Runs of a study on the sweep's executors (this process, a local pool, Dask),
with a progress bar on a terminal."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from batchd.sweep.executor import make_executor
from batchd.sweep.progress import Progress
from batchd.sweep.spec import ExecutorSpec

T = TypeVar("T")
R = TypeVar("R")


def progress_bar(total: int, desc: str) -> Any:
    """A tqdm bar over finished runs on a terminal; None in a pipe."""
    return Progress(total, desc, lines=False).bar


def run_parallel(
    items: Sequence[T],
    work: Callable[[T], R],
    workers: int,
    on_done: Callable[[T, R | None, BaseException | None], None],
    *,
    desc: str,
    label: Callable[[T], str],
    dask: str | None = None,
) -> int:
    """``work`` on every item, in spawned processes (in this one with one worker), or on
    Dask (``dask``: ``local`` or a scheduler's address, as ``--dask`` takes it).

    ``work`` must be a module-level function (it is pickled). ``on_done`` gets
    each item with its result, or with the exception that ended it. Returns how
    many runs executed at once.
    """
    executor = make_executor(ExecutorSpec(workers=workers, dask=dask))
    if not items:
        return executor.workers()
    progress = Progress(len(items), desc, lines=False)

    def finished(item: T, result: R | None, error: BaseException | None) -> None:
        on_done(item, result, error)
        progress.step(label(item), failed=error is not None)

    try:
        executor.run(items, work, finished)
    finally:
        progress.close()
    return executor.workers()
