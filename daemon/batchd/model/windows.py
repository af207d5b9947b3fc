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
scheduler's window gate (``batchd.sched.gate``) holds jobs by these, for queue
windows and for prime time alike (docs/scheduling.md).
"""

from __future__ import annotations

import datetime as dt
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from batchd.model.calendar import NONPRIME, PRIME, PrimeCalendar
from batchd.model.times import local_epoch

DAY: Final = 86_400
WEEK: Final = 7 * DAY
DAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_FULL: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
KEYWORDS: Final = ("any", "prime", "nonprime")
# How far ahead next_fit and longest_opening look for an opening: two weeks.
HORIZON: Final = 14 * DAY
# A weekly pattern changes at least once a week when it changes at all.
_SCAN_DAYS: Final = 9
_MAX_CACHED_DAYS: Final = 4096

SPAN_HELP: Final = (
    "a span is 'DAYS HH:MM-HH:MM' (each of the days, e.g. 'Mon-Fri 07:00-19:30', "
    "'Sat,Sun 00:00-24:00', 'Mon-Fri 23:00-04:00' across midnight) or "
    "'DAY HH:MM-DAY HH:MM' (one span across days, e.g. 'Fri 20:00-Mon 07:00')"
)
WINDOW_HELP: Final = f'"any", "prime", "nonprime", or a list of spans; {SPAN_HELP}'

_SPAN = re.compile(
    r"^(?P<days>[A-Za-z][A-Za-z,\-]*)\s+(?P<t1>\d{1,2}:\d{2})\s*-\s*"
    r"(?:(?P<day2>[A-Za-z]+)\s+)?(?P<t2>\d{1,2}:\d{2})$"
)


class WindowError(ValueError):
    """A window the daemon cannot use; the message says what is allowed."""


@dataclass(frozen=True, slots=True)
class Span:
    """One span: open from ``start`` to ``end`` seconds after Monday 00:00 local time.

    ``end`` may pass the end of the week (``WEEK``): the span then wraps to Monday.
    """

    start: int
    end: int
    text: str


# ------------------------------------------------------------------------- parsing


def _day(token: str, span: str) -> int:
    word = token.strip().lower()
    if len(word) >= 3:
        for i, name in enumerate(_FULL):
            if name.startswith(word):
                return i
    raise WindowError(
        f"bad day {token.strip()!r} in {span!r} (Mon, Tue, Wed, Thu, Fri, Sat, Sun, "
        "a range like Mon-Fri or a list like Sat,Sun)"
    )


def _days(text: str, span: str) -> list[int]:
    """``Mon-Fri``, ``Sat,Sun``, ``Mon-Wed,Fri``, ``Fri-Mon`` (wraps), ``daily``."""
    if text.strip().lower() in ("daily", "all"):
        return list(range(7))
    out: list[int] = []
    for part in text.split(","):
        if not part.strip():
            raise WindowError(f"empty day in {span!r} ({SPAN_HELP})")
        first, dash, last = part.partition("-")
        a = _day(first, span)
        if not dash:
            days = [a]
        else:
            b = _day(last, span)
            days = [(a + i) % 7 for i in range((b - a) % 7 + 1)]
        for d in days:
            if d not in out:
                out.append(d)
    return out


def _clock(token: str, span: str, *, end: bool) -> int:
    hours, _, minutes = token.partition(":")
    h, m = int(hours), int(minutes)
    if m < 60 and (h < 24 or (end and (h, m) == (24, 0))):
        return h * 3600 + m * 60
    allowed = "00:00 to 24:00" if end else "00:00 to 23:59"
    raise WindowError(f"bad time {token!r} in {span!r} ({allowed})")


def parse_span(text: str) -> list[Span]:
    """The spans one string stands for: one per day for ``DAYS HH:MM-HH:MM``."""
    if not isinstance(text, str):
        raise WindowError(f"a span must be a string, got {text!r} ({SPAN_HELP})")
    span = " ".join(text.split())
    m = _SPAN.match(span)
    if not m:
        raise WindowError(f"cannot read the span {text!r}: {SPAN_HELP}")
    t1 = _clock(m.group("t1"), span, end=False)
    t2 = _clock(m.group("t2"), span, end=True)
    day2 = m.group("day2")
    if day2 is not None:
        if any(c in m.group("days") for c in ",-") or m.group("days").lower() == "daily":
            raise WindowError(
                f"{span!r}: a span across days starts on one day (e.g. 'Fri 20:00-Mon 07:00')"
            )
        d1, d2 = _day(m.group("days"), span), _day(day2, span)
        start, end = d1 * DAY + t1, d2 * DAY + t2
        if end == start:
            raise WindowError(
                f'{span!r} starts where it ends; for a queue that is always open use window = "any"'
            )
        if end < start:
            end += WEEK
        label = f"{DAYS[d1]} {_hhmm(t1)}-{DAYS[d2]} {_hhmm(t2)}"
        return [Span(start, end, label)]
    days = _days(m.group("days"), span)
    if t2 == t1:
        raise WindowError(f"{span!r} is empty: it ends when it starts (a whole day is 00:00-24:00)")
    length = t2 - t1 if t2 > t1 else DAY - t1 + t2
    label = f"{_days_label(days)} {_hhmm(t1)}-{_hhmm(t2)}"
    return [Span(d * DAY + t1, d * DAY + t1 + length, label) for d in days]


def parse_window(value: object) -> str | list[str]:
    """Check a ``window`` setting; the canonical form: a keyword or a list of spans."""
    if isinstance(value, str) and value.strip().lower() in KEYWORDS:
        return value.strip().lower()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise WindowError(f"expected {WINDOW_HELP}")
    labels: list[str] = []
    for item in value:
        if isinstance(item, str) and item.strip().lower() in KEYWORDS:
            raise WindowError(
                f"{item.strip()!r} cannot be mixed with spans: use window = "
                f'"{item.strip().lower()}" on its own'
            )
        for span in parse_span(item):
            if span.text not in labels:
                labels.append(span.text)
    return labels


def spans_of(value: str | Sequence[str]) -> list[Span]:
    if isinstance(value, str):
        value = [value]
    return [s for text in value for s in parse_span(text)]


def describe(value: str | Sequence[str]) -> str:
    """The window as ``qstat -Q`` shows it: ``prime`` or ``Mon-Fri 07:00-19:30, ...``."""
    if isinstance(value, str):
        return value
    return ", ".join(value)


def week_intervals(spans: Sequence[Span]) -> list[tuple[int, int]]:
    """The union of the spans as sorted, disjoint [start, end) within one week."""
    pieces: list[tuple[int, int]] = []
    for s in spans:
        start, end = s.start % WEEK, s.start % WEEK + (s.end - s.start)
        if end - start >= WEEK:
            return [(0, WEEK)]
        if end <= WEEK:
            pieces.append((start, end))
        else:
            pieces += [(start, WEEK), (0, end - WEEK)]
    pieces.sort()
    merged: list[tuple[int, int]] = []
    for a, b in pieces:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _hhmm(sec: int) -> str:
    return f"{sec // 3600:02d}:{sec % 3600 // 60:02d}"


def _days_label(days: list[int]) -> str:
    if len(days) == 7:
        return "Mon-Sun"
    runs: list[list[int]] = []
    for d in days:
        if runs and d == (runs[-1][-1] + 1) % 7:
            runs[-1].append(d)
        else:
            runs.append([d])
    parts = []
    for run in runs:
        if len(run) == 1:
            parts.append(DAYS[run[0]])
        elif len(run) == 2:
            parts.append(f"{DAYS[run[0]]},{DAYS[run[1]]}")
        else:
            parts.append(f"{DAYS[run[0]]}-{DAYS[run[-1]]}")
    return ",".join(parts)


# ------------------------------------------------------------------------- windows


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
    "KEYWORDS",
    "WINDOW_HELP",
    "AlwaysOpen",
    "CalendarWindow",
    "Stopped",
    "TimeWindow",
    "Span",
    "SpanWindow",
    "WindowError",
    "close_of",
    "describe",
    "fits",
    "longest_opening",
    "make_window",
    "next_fit",
    "next_opening",
    "openings",
    "parse_span",
    "parse_window",
    "spans_of",
    "week_intervals",
]
