"""Whether the state file takes writes, and when to try again after it did not.

A failed commit keeps its writes gathered in the store. The cause is logged
once, when saving starts to fail (and again only if the cause changes), and the
recovery once, when a commit works again. In between, retries wait from
``first_retry`` to ``max_retry`` wall seconds, doubling after each failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import structlog

log = structlog.get_logger("batchd")


class SaveStatus:
    first_retry = 1.0
    max_retry = 30.0

    def __init__(self, state: str, wall: Callable[[], float] = time.monotonic) -> None:
        self.state = state  # the state file, for the log
        self.cause: str | None = None
        self.failures = 0  # commits that failed since saving last worked
        self.wall = wall
        self._since = 0.0
        self._delay = 0.0
        self._next = 0.0

    @property
    def failing(self) -> bool:
        return self.cause is not None

    def due(self) -> bool:
        """Whether to try to save now: always while saving works, else after the backoff."""
        return self.cause is None or self.wall() >= self._next

    def failed(self, cause: str) -> None:
        now = self.wall()
        if self.cause is None:
            self._since = now
            self._delay = self.first_retry
        else:
            self._delay = min(2 * self._delay, self.max_retry)
        if cause != self.cause:
            log.error(
                "state_save_failing",
                error=cause,
                state=self.state,
                retry_seconds=self._delay,
                effect="changes are refused (503); reads and scheduling go on",
            )
        self.cause = cause
        self.failures += 1
        self._next = now + self._delay

    def saved(self) -> None:
        if self.cause is None:
            return
        log.info(
            "state_save_recovered",
            state=self.state,
            failed_seconds=round(self.wall() - self._since, 1),
            failures=self.failures,
        )
        self.cause = None
        self.failures = 0
