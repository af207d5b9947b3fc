"""A machine's policy reports its switches, tuning and searches to the live metrics."""

from __future__ import annotations

from batchd.metrics.live import LiveMetrics


class PoolObserver:
    """The ``PolicyObserver`` of one machine: what it reports counts under its pool."""

    def __init__(self, metrics: LiveMetrics, pool: str) -> None:
        self.metrics = metrics
        self.pool = pool

    def switched(self, old: str, new: str) -> None:
        self.metrics.policy_switched(self.pool, old, new)

    def tuned(self, case: str, seconds: float) -> None:
        self.metrics.tuned(self.pool, case, seconds)

    def searched(self, seconds: float, stopped: str) -> None:
        self.metrics.searched(seconds, stopped)
