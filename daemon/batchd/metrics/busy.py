"""Nodes allocated over emulated time: the running total and a sliding window of it."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable

PeriodOf = Callable[[int], tuple[str, int | None]]  # t -> (calendar period, when it ends)


class BusyIntegral:
    """The step function of allocated nodes, integrated as it goes.

    ``update(now, busy)`` is called whenever the number of allocated nodes may
    have changed; the previous value held from the last call until ``now``.
    Only the points inside the window (and one before it) are kept.
    """

    def __init__(self, window: int, now: int, busy: int = 0) -> None:
        self.window = window
        self.origin = now
        self.t = now
        self.busy = busy
        self.area = 0  # node-seconds from origin to t
        self._points: deque[tuple[int, int, int]] = deque([(now, 0, busy)])  # (t, area, busy after)
        # With a calendar: node-seconds and seconds by prime and non-prime period.
        self.period_of: PeriodOf | None = None
        self.area_by_period: Counter[str] = Counter()
        self.seconds_by_period: Counter[str] = Counter()

    def update(self, now: int, busy: int) -> None:
        if now > self.t:
            self.area += self.busy * (now - self.t)
            if self.period_of is not None:
                self._split(self.t, now)
            self.t = now
        if busy != self.busy or now > self._points[-1][0]:
            if self._points[-1][0] == now:
                self._points.pop()
            self._points.append((now, self.area, busy))
        self.busy = busy
        self._prune(now - self.window)

    def _split(self, t: int, now: int) -> None:
        """Share [t, now) at the current busy count among the calendar's periods."""
        assert self.period_of is not None
        while t < now:
            period, end = self.period_of(t)
            stop = now if end is None else min(now, end)
            self.area_by_period[period] += self.busy * (stop - t)
            self.seconds_by_period[period] += stop - t
            t = stop

    def _prune(self, lo: int) -> None:
        points = self._points
        while len(points) > 1 and points[1][0] <= lo:
            points.popleft()

    def total(self, now: int) -> int:
        """Node-seconds allocated from the start until ``now``."""
        return self.area + self.busy * max(0, now - self.t)

    def window_ratio(self, now: int, nodes: int) -> float:
        """Share of ``nodes`` allocated over the last ``window`` seconds (or since the start)."""
        self.update(now, self.busy)
        lo = max(now - self.window, self.origin)
        span = now - lo
        if span <= 0 or nodes <= 0:
            return self.busy / nodes if nodes > 0 else 0.0
        t0, area0, busy0 = self._points[0]
        area_lo = area0 + busy0 * (lo - t0) if lo >= t0 else area0
        return (self.area - area_lo) / (nodes * span)
