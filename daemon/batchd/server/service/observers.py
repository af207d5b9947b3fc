"""What a machine's policy reports (switches, tuning, searches): counted in the live
metrics, and its latest self-tuning decisions kept for the web page's Queue view (docs/ui.md)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from batchd.metrics.live import LiveMetrics

# How many of a machine's latest decisions are kept (a dynP decision per submission).
DECISIONS_KEPT = 20


class DecisionLog:
    """A machine's latest self-tuning decisions: (when, Table 1 case, order chosen,
    whether it switched), newest last."""

    def __init__(self, now: Callable[[], int], size: int = DECISIONS_KEPT) -> None:
        self.now = now
        self.entries: deque[tuple[int, str, str, bool]] = deque(maxlen=size)
        self._switched_to: str | None = None

    def switched(self, new: str) -> None:
        self._switched_to = new

    def decided(self, case: str, order: str) -> None:
        switched = self._switched_to is not None
        self.entries.append((self.now(), case, self._switched_to or order, switched))
        self._switched_to = None


class PoolObserver:
    """A machine's self-tuning policy reports to the live metrics under its pool, and to
    the machine's decision log."""

    def __init__(
        self,
        metrics: LiveMetrics,
        pool: str,
        decisions: DecisionLog | None = None,
        order: Callable[[], str] | None = None,
    ) -> None:
        self.metrics = metrics
        self.pool = pool
        self.decisions = decisions
        self.order = order

    def switched(self, old: str, new: str) -> None:
        self.metrics.policy_switched(self.pool, old, new)
        if self.decisions is not None:
            self.decisions.switched(new)

    def tuned(self, case: str, seconds: float) -> None:
        self.metrics.tuned(self.pool, case, seconds)
        if self.decisions is not None:
            self.decisions.decided(case, self.order() if self.order is not None else "")

    def searched(self, seconds: float, stopped: str) -> None:
        self.metrics.searched(seconds, stopped)
