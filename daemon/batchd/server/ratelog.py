"""Log lines at a bounded rate: what an attacker can make the daemon log in a flood
(failed authentications, malformed requests) must not fill the disk or hide the rest."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import structlog

log = structlog.get_logger("batchd")


class RateLimitedLog:
    """At most ``limit`` lines each ``period`` seconds; the first line after lines were
    left out says how many (``suppressed``)."""

    def __init__(
        self, limit: int = 10, period: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.period = period
        self.clock = clock
        self.start = clock()
        self.sent = 0
        self.suppressed = 0

    def warning(self, event: str, **fields: Any) -> bool:
        """Log ``event`` unless the budget of the period is spent; whether it was logged."""
        now = self.clock()
        if now - self.start >= self.period:
            self.start, self.sent = now, 0
        if self.sent >= self.limit:
            self.suppressed += 1
            return False
        self.sent += 1
        if self.suppressed:
            fields["suppressed"] = self.suppressed
            self.suppressed = 0
        log.warning(event, **fields)
        return True
