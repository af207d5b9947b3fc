"""Nodes allocated over emulated time: the running total and a sliding window of it."""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Callable

PeriodOf = Callable[[int], tuple[str, int | None]]  # t -> (calendar period, when it ends)


class BusyIntegral:
    """The step function of allocated nodes, integrated as it goes.

    ``update(now, busy)`` is called whenever the number of allocated nodes may
    have changed; the previous value held from the last call until ``now``.
    Only the points inside the window, or inside ``keep`` seconds if that is
    longer (the web page's last day), and one before, are kept.
    """

    def __init__(self, window: int, now: int, busy: int = 0, keep: int = 0) -> None:
        self.window = window
        self.keep = max(window, keep)
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
        self._prune(now - self.keep)

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
        area_lo = self._area_at(max(lo, self._points[0][0]))
        return (self.area - area_lo) / (nodes * span)

    def series(self, now: int, step: int, count: int) -> tuple[int, list[float]]:
        """Mean allocated nodes in each whole ``step`` (aligned to multiples of it) of the
        last ``count`` that end by ``now``: the start of the first, and the means. Steps
        that begin before the first kept point are left out."""
        end = now // step * step
        kept = -(-self._points[0][0] // step) * step  # the first step boundary kept
        first = max(end - count * step, kept)
        if first >= end:
            return end, []
        areas = [self._area_at(t) for t in range(first, end + 1, step)]
        return first, [(b - a) / step for a, b in zip(areas, areas[1:], strict=False)]

    def _area_at(self, t: int) -> int:
        """Node-seconds from the start until ``t``, for ``t`` from the first kept point on."""
        if t >= self.t:
            return self.area + self.busy * (t - self.t)
        t0, area0, busy0 = self._points[bisect_right(self._points, t, key=_time) - 1]
        return area0 + busy0 * (t - t0)


def _time(point: tuple[int, int, int]) -> int:
    return point[0]
