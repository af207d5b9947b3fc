"""Where runs execute: this process, a local process pool, or a Dask cluster.

An executor calls ``work`` (a module-level function, pickled) on every item and
``on_done`` here, in this process, with each item's result or the exception that
ended it, in the order runs finish. The sweep and every ``batchd report`` study
take one from the same options (``ExecutorSpec``: ``--workers``, ``--dask``).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol, TypeVar

from batchd.sweep.files import FileRef
from batchd.sweep.spec import LOCAL_DASK, ExecutorSpec

T = TypeVar("T")
R = TypeVar("R")
Done = Callable[[Any, Any, BaseException | None], None]


class Executor(Protocol):
    def describe(self) -> str:
        """A few words for messages: "4 local processes", "Dask at tcp://..."."""
        ...

    def workers(self) -> int:
        """How many runs execute at once (known once ``run`` has started, for a cluster)."""
        ...

    def run(
        self,
        items: Sequence[Any],
        work: Callable[[Any], Any],
        on_done: Done,
        *,
        files: Sequence[FileRef] = (),
    ) -> None:
        """``work`` on every item; ``files``: traces workers without them may fetch."""
        ...


class SerialExecutor:
    """Every run in this process, one after another."""

    def describe(self) -> str:
        return "this process"

    def workers(self) -> int:
        return 1

    def run(
        self,
        items: Sequence[Any],
        work: Callable[[Any], Any],
        on_done: Done,
        *,
        files: Sequence[FileRef] = (),
    ) -> None:
        for item in items:
            try:
                result = work(item)
            except Exception as exc:  # noqa: BLE001 - reported as a failed run
                on_done(item, None, exc)
            else:
                on_done(item, result, None)


class PoolExecutor:
    """A pool of spawned processes on this machine (they share its file system)."""

    def __init__(self, count: int) -> None:
        self.count = count

    def describe(self) -> str:
        return f"{self.count} local processes"

    def workers(self) -> int:
        return self.count

    def run(
        self,
        items: Sequence[Any],
        work: Callable[[Any], Any],
        on_done: Done,
        *,
        files: Sequence[FileRef] = (),
    ) -> None:
        if not items:
            return
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=min(self.count, len(items)), mp_context=context)
        try:
            futures = {pool.submit(work, item): item for item in items}
            for future in as_completed(futures):
                error = future.exception()
                on_done(futures[future], None if error else future.result(), error)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def make_executor(spec: ExecutorSpec) -> Executor:
    if spec.dask is not None:
        from batchd.sweep.cluster import DaskExecutor

        return DaskExecutor(None if spec.dask == LOCAL_DASK else spec.dask, spec.workers)
    count = spec.workers or os.cpu_count() or 1
    return SerialExecutor() if count <= 1 else PoolExecutor(count)
