"""The policies' long searches, off the event loop (``batchd.sched.core.policy.Offload``).

A searching policy (``ga``) hands its search to one worker thread and starts no job
until the search is done; the event loop goes on answering requests meanwhile (the
compiled loops of the search release the GIL). The worker touches no job and no
state: it computes an order from arrays the policy copied. When a search is done the
worker marks a pass due and calls the wakers (the daemon's: wake the scheduling loop,
thread-safely); the next catch-up (the loop's tick, or any request's) runs that pass
on the loop and commits it, so the engine stays the one writer of job state and
every answer shows committed state.

The thread is a daemon thread: stopping the daemon never waits for a search, whose
result nobody needs any more; nor does anything of a search survive a restart (the
policy searches again from the restored queue).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

import structlog

log = structlog.get_logger("batchd")
T = TypeVar("T")


class SearchWorker:
    """One worker thread for searches; a finished one makes a scheduling pass due."""

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._due = threading.Event()
        self.wakers: list[Callable[[], None]] = []  # called on the worker thread

    def submit(self, work: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self._work.put((future, work))
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="batchd-search", daemon=True)
            self._thread.start()
        return future

    def _run(self) -> None:
        while True:
            future, work = self._work.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(work())
            except BaseException as exc:  # the policy raises it in its pass, on the loop
                future.set_exception(exc)
            self._due.set()
            for wake in self.wakers:
                try:
                    wake()
                except RuntimeError:  # the event loop has closed: the daemon is stopping
                    log.debug("search_wake_after_stop")

    def take_due(self) -> bool:
        """Whether a search finished since the last call (and so a pass is due)."""
        if self._due.is_set():
            self._due.clear()
            return True
        return False
