"""Runs of a study in worker processes, with a progress bar on a terminal."""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def progress_bar(total: int, desc: str) -> Any:
    """A tqdm bar over finished runs on a terminal; None in a pipe."""
    if total == 0 or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="run", file=sys.stderr)


def run_parallel(
    items: Sequence[T],
    work: Callable[[T], R],
    workers: int,
    on_done: Callable[[T, R | None, BaseException | None], None],
    *,
    desc: str,
    label: Callable[[T], str],
) -> None:
    """``work`` on every item, in spawned processes (in this one with one worker).

    ``work`` must be a module-level function (it is pickled). ``on_done`` gets
    each item with its result, or with the exception that ended it.
    """
    if not items:
        return
    bar = progress_bar(len(items), desc)

    def finished(item: T, result: R | None, error: BaseException | None) -> None:
        on_done(item, result, error)
        if bar is not None:
            bar.set_postfix_str(label(item))
            bar.update(1)

    try:
        if workers <= 1:
            for item in items:
                try:
                    result = work(item)
                except Exception as exc:  # noqa: BLE001 - reported as a failed run
                    finished(item, None, exc)
                else:
                    finished(item, result, None)
            return
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=min(workers, len(items)), mp_context=context)
        try:
            futures = {pool.submit(work, item): item for item in items}
            for future in as_completed(futures):
                error = future.exception()
                finished(futures[future], None if error else future.result(), error)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        if bar is not None:
            bar.close()
