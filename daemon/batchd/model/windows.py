"""Time windows: when a class of jobs may run, as pure functions of time.

A window is open or closed at each second. A queue's ``window`` (site config,
``[[queue]] window``) is one of

- ``"any"``: always open (the default);
- ``"prime"`` or ``"nonprime"``: open in that window of the prime-time calendar
  (``[server] calendar``), holidays being non-prime days;
- a list of weekly spans in local time, e.g. ``["Mon-Fri 07:00-19:30"]`` (each of
  Monday to Friday), ``["Mon-Fri 23:00-04:00"]`` (each night, across midnight) or
  ``["Fri 20:00-Mon 07:00"]`` (one span across days). The queue is open in the union
  of its spans. Spans ignore holidays.

Times are integer seconds since the epoch; local times are those of the calendar's
time zone. :func:`make_window` gives a :class:`TimeWindow` (``is_open(t)``,
``next_change(t)``); :func:`openings`, :func:`next_fit` and :func:`longest_opening`
answer the questions of a job that must end before its window closes. The
scheduler's window gate (``batchd.sched.policies.gate``) holds jobs by these, for queue
windows and for prime time alike (docs/scheduling.md).
"""

from __future__ import annotations

import datetime as dt
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from batchd.model.calendar import NONPRIME, PRIME, PrimeCalendar
from batchd.model.spans import SPAN_HELP, Span, WindowError, spans_of, week_intervals
from batchd.model.times import local_epoch

DAY: Final = 86_400
WEEK: Final = 7 * DAY
# How far ahead next_fit and longest_opening look for an opening: two weeks.
HORIZON: Final = 14 * DAY
# A weekly pattern changes at least once a week when it changes at all.
_SCAN_DAYS: Final = 9
_MAX_CACHED_DAYS: Final = 4096


class TimeWindow(Protocol):
    """When something is open: ``next_change`` is the first second after ``t`` that differs.

    ``text`` is the window as ``qstat -Q`` shows it. ``next_change`` answers None when
    nothing changes within the window's look-ahead.
    """

    @property
    def text(self) -> str: ...

    def is_open(self, t: int) -> bool: ...

    def next_change(self, t: int) -> int | None: ...


@dataclass(frozen=True, slots=True)
class AlwaysOpen:
    text: str = "any"

    def is_open(self, t: int) -> bool:
        return True

    def next_change(self, t: int) -> int | None:
        return None


@dataclass(frozen=True, slots=True)
class Stopped:
    """Never open: a queue whose ``started`` is false holds its jobs until it is started."""

    text: str = "stopped"

    def is_open(self, t: int) -> bool:
        return False

    def next_change(self, t: int) -> int | None:
        return None


@dataclass(frozen=True, slots=True)
class CalendarWindow:
    """Open while the prime-time calendar is in ``window`` ("prime" or "nonprime")."""

    calendar: PrimeCalendar
    window: str

    @property
    def text(self) -> str:
        return self.window

    def is_open(self, t: int) -> bool:
        return self.calendar.period_at(t) == self.window

    def next_change(self, t: int) -> int | None:
        return self.calendar.next_change(t)


@dataclass(frozen=True, slots=True)
class SpanWindow:
    """Open in the union of weekly spans, in local time of ``tz``."""

    spans: tuple[Span, ...]
    tz: dt.tzinfo = dt.UTC
    intervals: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)
    _cache: dict[int, tuple[tuple[int, bool], ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if not self.spans:
            raise WindowError(f"a span window needs at least one span ({SPAN_HELP})")
        object.__setattr__(self, "intervals", tuple(week_intervals(self.spans)))

    @property
    def text(self) -> str:
        labels: list[str] = []
        for s in self.spans:
            if s.text not in labels:
                labels.append(s.text)
        return ", ".join(labels)

    def open_at_week_second(self, sec: int) -> bool:
        iv = self.intervals
        i = bisect_right(iv, (sec, WEEK + 1)) - 1
        return i >= 0 and iv[i][0] <= sec < iv[i][1]

    def is_open(self, t: int) -> bool:
        today = dt.datetime.fromtimestamp(t, self.tz).date().toordinal()
        steps = self._day(today)
        i = bisect_right(steps, t, key=_at) - 1
        if i < 0:  # before local midnight's instant (a DST jump at midnight)
            return self._day(today - 1)[-1][1]
        return steps[i][1]

    def next_change(self, t: int) -> int | None:
        if self.intervals == ((0, WEEK),):
            return None
        state = self.is_open(t)
        today = dt.datetime.fromtimestamp(t, self.tz).date().toordinal()
        for ordinal in range(today, today + _SCAN_DAYS):
            for at, is_open in self._day(ordinal):
                if at > t and is_open != state:
                    return at
        return None

    def _day(self, ordinal: int) -> tuple[tuple[int, bool], ...]:
        """The local day as (instant, open from then on) steps, the first at midnight."""
        cached = self._cache.get(ordinal)
        if cached is not None:
            return cached
        day = dt.date.fromordinal(ordinal)
        base = day.weekday() * DAY
        marks = {0}
        for a, b in self.intervals:
            for x in (a, b):
                if base < x < base + DAY:
                    marks.add(x - base)
        steps: list[tuple[int, bool]] = []
        for sec in sorted(marks):
            at = local_epoch(self.tz, day, sec)
            is_open = self.open_at_week_second(base + sec)
            if steps and at <= steps[-1][0]:
                steps[-1] = (steps[-1][0], is_open)  # two marks inside one DST jump
            else:
                steps.append((at, is_open))
        result = tuple(steps)
        if len(self._cache) >= _MAX_CACHED_DAYS:
            self._cache.clear()
        self._cache[ordinal] = result
        return result


def _at(step: tuple[int, bool]) -> int:
    return step[0]


def make_window(value: str | Sequence[str], calendar: PrimeCalendar) -> TimeWindow:
    """The window of a queue: ``value`` as ``parse_window`` returns it."""
    if isinstance(value, str):
        key = value.strip().lower()
        if key == "any":
            return AlwaysOpen()
        if key in (PRIME, NONPRIME):
            return CalendarWindow(calendar, key)
    return SpanWindow(tuple(spans_of(value)), calendar.tz)


# ------------------------------------------------------------------ jobs and windows


def close_of(win: TimeWindow, t: int) -> int | None:
    """When the window open at ``t`` closes (None: not in the look-ahead)."""
    return win.next_change(t) if win.is_open(t) else None


def fits(win: TimeWindow, t: int, walltime: int) -> bool:
    """Whether a job starting at ``t`` is in its window and ends by the close."""
    if not win.is_open(t):
        return False
    close = win.next_change(t)
    return close is None or t + walltime <= close


def next_opening(win: TimeWindow, t: int) -> int | None:
    """``t`` if the window is open then, else when it next opens (None: not in its look-ahead)."""
    return t if win.is_open(t) else win.next_change(t)


def openings(win: TimeWindow, t: int, horizon: int = HORIZON) -> list[tuple[int, int | None]]:
    """(open, close) of the window at ``t`` (from ``t``) and of those opening before t + horizon."""
    out: list[tuple[int, int | None]] = []
    at = next_opening(win, t)
    while at is not None and at < t + horizon:
        close = win.next_change(at)
        out.append((at, close))
        if close is None:
            break
        at = win.next_change(close)
    return out


def next_fit(win: TimeWindow, t: int, walltime: int, horizon: int = HORIZON) -> int | None:
    """The first time from ``t`` at which a job of ``walltime`` can start and end in its window."""
    at = next_opening(win, t)
    while at is not None and at < t + horizon:
        close = win.next_change(at)
        if close is None or at + walltime <= close:
            return at
        at = win.next_change(close)
    return None


def longest_opening(win: TimeWindow, t: int, horizon: int = HORIZON) -> int | None:
    """The longest time a job can run in one opening from ``t`` on (None: no limit).

    0 when the window does not open within the horizon.
    """
    best = 0
    for start, close in openings(win, t, horizon):
        if close is None:
            return None
        best = max(best, close - start)
    return best


__all__ = [
    "HORIZON",
    "AlwaysOpen",
    "CalendarWindow",
    "SpanWindow",
    "Stopped",
    "TimeWindow",
    "close_of",
    "fits",
    "longest_opening",
    "make_window",
    "next_fit",
    "next_opening",
    "openings",
]
