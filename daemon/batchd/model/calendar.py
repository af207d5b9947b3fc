"""The PBS prime-time calendar: weekly slots of prime and non-prime time, and holidays.

``PrimeCalendar`` answers which period (prime or non-prime) is in force at an instant
and when it changes; ``batchd.model.holidays`` reads it from a PBS ``holidays`` file.
All instants are integer seconds since the epoch; local days come from ``tz``.
"""

from __future__ import annotations

import datetime as dt
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Final, Literal
from zoneinfo import ZoneInfo

from batchd.model.times import local_epoch

Period = Literal["prime", "nonprime"]
PRIME: Final = "prime"
NONPRIME: Final = "nonprime"

DAY: Final = 86_400
# How far next_change/period_bounds look before answering "never" (None).
LOOKAHEAD_DAYS: Final = 732
_MAX_CACHED_DAYS: Final = 4096

DAY_NAMES: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_DAY_ABBR: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
Segment = tuple[int, Period]  # (first second, period in force from then on)


class CalendarError(ValueError):
    """A holidays file or time-zone name that batchd cannot use; the message names the source."""


@dataclass(frozen=True, slots=True)
class DaySlots:
    """When prime and non-prime time start on one local day, in seconds after local midnight.

    Canonical forms: ``DaySlots(0, None)`` is prime all day, ``DaySlots(None, 0)`` non-prime
    all day. With two times, ``prime < nonprime`` is prime from ``prime`` to ``nonprime``;
    ``nonprime < prime`` is non-prime from ``nonprime`` to ``prime`` and prime around it
    (e.g. a night-time prime slot).
    """

    prime: int | None
    nonprime: int | None

    def __post_init__(self) -> None:
        p, n = self.prime, self.nonprime
        for value in (p, n):
            if value is not None and not (isinstance(value, int) and 0 <= value < DAY):
                raise ValueError(f"DaySlots times are seconds in [0, {DAY}), got {value!r}")
        if p is None and n != 0:
            raise ValueError("a day without prime time is DaySlots(None, 0)")
        if n is None and p != 0:
            raise ValueError("a day without non-prime time is DaySlots(0, None)")
        if p is not None and p == n:
            raise ValueError("prime and non-prime cannot start at the same second")

    @classmethod
    def all_prime(cls) -> DaySlots:
        return cls(0, None)

    @classmethod
    def all_nonprime(cls) -> DaySlots:
        return cls(None, 0)

    def period_at(self, sec: int) -> Period:
        """The period at ``sec`` seconds after local midnight (PBS ``check_prime``)."""
        p, n = self.prime, self.nonprime
        if p is None:
            return NONPRIME
        if n is None:
            return PRIME
        if p < n:
            return PRIME if p <= sec < n else NONPRIME
        return NONPRIME if n <= sec < p else PRIME

    def segments(self) -> tuple[Segment, ...]:
        """The day as (second, period) steps, the first at second 0."""
        steps: list[Segment] = [(0, self.period_at(0))]
        marks: tuple[tuple[int | None, Period], ...] = (
            (self.prime, PRIME),
            (self.nonprime, NONPRIME),
        )
        for sec, period in sorted(marks, key=_by_sec):
            if sec is not None and sec > 0:
                steps.append((sec, period))
        return tuple(steps)

    def prime_seconds(self) -> int:
        steps = self.segments()
        ends = [s for s, _ in steps[1:]] + [DAY]
        return sum(end - start for (start, w), end in zip(steps, ends, strict=True) if w == PRIME)


def _by_sec(item: tuple[int | None, Period]) -> int:
    return -1 if item[0] is None else item[0]


ALL_PRIME: Final = DaySlots.all_prime()
ALL_NONPRIME: Final = DaySlots.all_nonprime()
_NAS_WEEKDAY: Final = DaySlots(6 * 3600, 19 * 3600)


@dataclass(frozen=True, slots=True)
class PrimeCalendar:
    """A week of :class:`DaySlots` (Monday=0 .. Sunday=6) plus holidays, in time zone ``tz``.

    ``holidays`` holds the dates of a file with a ``YEAR`` line; a file without one gives
    ``annual_holidays`` (month, day) pairs that recur every year. Use :meth:`is_holiday`.
    """

    days: tuple[DaySlots, ...]
    holidays: frozenset[dt.date] = frozenset()
    year: int | None = None
    tz: dt.tzinfo = dt.UTC
    source: str = "<default>"
    annual_holidays: frozenset[tuple[int, int]] = frozenset()
    _day_cache: dict[int, tuple[Segment, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    # The last answer as (lo, hi, start, end, period), valid for lo <= t < hi; the daemon
    # asks about "now" over and over.
    _hot: list[tuple[int, int, int | None, int | None, Period]] = field(
        default_factory=list, init=False, repr=False, compare=False
    )
    _constant: Period | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        days = tuple(self.days)
        if len(days) != 7 or not all(isinstance(d, DaySlots) for d in days):
            raise ValueError("PrimeCalendar needs 7 DaySlots, Monday first")
        object.__setattr__(self, "days", days)
        object.__setattr__(self, "_constant", _constant_period(days))

    @classmethod
    def default(cls, tz: dt.tzinfo | None = None) -> PrimeCalendar:
        """The NAS SP/2 slots: weekdays prime 06:00-19:00, weekends non-prime, no holidays."""
        week = (_NAS_WEEKDAY,) * 5 + (ALL_NONPRIME,) * 2
        return cls(days=week, tz=tz or dt.UTC, source="<default>")

    def with_tz(self, tz: dt.tzinfo) -> PrimeCalendar:
        return replace(self, tz=tz)

    # ----------------------------------------------------------------- queries

    def is_holiday(self, day: dt.date) -> bool:
        return day in self.holidays or (day.month, day.day) in self.annual_holidays

    def period_at(self, t: int) -> Period:
        """The period in force at ``t`` (seconds since the epoch)."""
        hot = self._hot
        if hot and hot[0][0] <= t < hot[0][1]:
            return hot[0][4]
        return self._bounds(t)[2]

    def next_change(self, t: int) -> int | None:
        """The first second after ``t`` whose period differs, or None within the look-ahead."""
        hot = self._hot
        if hot and hot[0][0] <= t < hot[0][1]:
            return hot[0][3]
        return self._bounds(t)[1]

    def period_bounds(self, t: int) -> tuple[int | None, int | None]:
        """(start, end) of the period holding ``t``: start <= t < end; None where unbounded."""
        hot = self._hot
        if hot and hot[0][0] <= t < hot[0][1]:
            return hot[0][2], hot[0][3]
        start, end, _ = self._bounds(t)
        return start, end

    def prime_slot_seconds(self) -> int:
        """Length of the usual weekday prime slot (the most common Mon-Fri length; 0 if none)."""
        for group in (self.days[:5], self.days[5:]):
            lengths = Counter(d.prime_seconds() for d in group if d.prime is not None)
            if lengths:
                return max(lengths.items(), key=lambda kv: (kv[1], kv[0]))[0]
        return 0

    def out_of_date(self, t: int) -> bool:
        """True once the local year at ``t`` is past the file's YEAR (PBS logs a warning then)."""
        year = self.year
        return year is not None and year > 0 and self._local_date(t).year > year

    def describe(self) -> str:
        """One line for ``qstat -Q`` and logs."""
        zone = getattr(self.tz, "key", None) or str(self.tz)
        if all(d == ALL_NONPRIME for d in self.days):
            return f"non-prime all the time, {zone}"
        count = len(self.holidays) + len(self.annual_holidays)
        if all(d == ALL_PRIME for d in self.days) and count == 0:
            return f"prime all the time, {zone}"
        if count == 0:
            hol = "no holidays"
        else:
            when = f"in {self.year}" if self.year else "every year"
            hol = f"{count} holiday{'s' if count != 1 else ''} {when}"
        return f"prime {_describe_week(self.days)}, {hol}, {zone}"

    # ----------------------------------------------------------------- internals

    def _local_date(self, t: int) -> dt.date:
        return dt.datetime.fromtimestamp(t, self.tz).date()

    def _day(self, ordinal: int) -> tuple[Segment, ...]:
        """The local day ``ordinal`` as (epoch second, period) steps."""
        cached = self._day_cache.get(ordinal)
        if cached is not None:
            return cached
        day = dt.date.fromordinal(ordinal)
        slots = ALL_NONPRIME if self.is_holiday(day) else self.days[day.weekday()]
        steps: list[Segment] = []
        for sec, period in slots.segments():
            at = local_epoch(self.tz, day, sec)
            if steps and at <= steps[-1][0]:
                steps[-1] = (steps[-1][0], period)  # two boundaries inside one DST jump
            else:
                steps.append((at, period))
        result = tuple(steps)
        if len(self._day_cache) >= _MAX_CACHED_DAYS:
            self._day_cache.clear()
        self._day_cache[ordinal] = result
        return result

    def _ordinals(self, start: int, step: int) -> Iterator[int]:
        """Local days to visit from ``start`` in direction ``step``, within the look-ahead.

        In an all-prime week the period can only change around holidays, so only holidays
        and their neighbours are visited (such a calendar may not change for years).
        """
        lo = max(1, start - LOOKAHEAD_DAYS)
        hi = min(dt.date.max.toordinal(), start + LOOKAHEAD_DAYS)
        if self._constant != PRIME:
            stop = hi + 1 if step > 0 else lo - 1
            yield from range(start, stop, step)
            return
        marks = {start}
        for day in self._holiday_dates(dt.date.fromordinal(lo), dt.date.fromordinal(hi)):
            o = day.toordinal()
            marks.update((o - 1, o, o + 1))
        if step > 0:
            yield from sorted(o for o in marks if start <= o <= hi)
        else:
            yield from sorted((o for o in marks if lo <= o <= start), reverse=True)

    def _holiday_dates(self, lo: dt.date, hi: dt.date) -> Iterator[dt.date]:
        yield from (d for d in self.holidays if lo <= d <= hi)
        for year in range(lo.year, hi.year + 1):
            for month, mday in self.annual_holidays:
                if valid_date(year, month, mday) and lo <= dt.date(year, month, mday) <= hi:
                    yield dt.date(year, month, mday)

    def _bounds(self, t: int) -> tuple[int | None, int | None, Period]:
        if self._constant == NONPRIME:
            return None, None, NONPRIME
        today = self._local_date(t).toordinal()
        steps = self._day(today)
        at = max(bisect_right(steps, t, key=_step_start) - 1, 0)
        period = steps[at][1]
        start = self._scan_back(t, today, period)
        end = self._scan_forward(t, today, period)
        # An open end stays open for earlier t in the period and an open start for later t,
        # but not the other way round: the look-ahead moves with t.
        lo = t if start is None else start
        hi = t + 1 if end is None else end
        self._hot[:] = [(lo, hi, start, end, period)]
        return start, end, period

    def _scan_forward(self, t: int, today: int, period: Period) -> int | None:
        for ordinal in self._ordinals(today, +1):
            for at, w in self._day(ordinal):
                if at > t and w != period:
                    return at
        return None

    def _scan_back(self, t: int, today: int, period: Period) -> int | None:
        start: int | None = None
        for ordinal in self._ordinals(today, -1):
            for at, w in reversed(self._day(ordinal)):
                if at > t:
                    continue
                if w != period:
                    return start
                start = at
        return None


def _step_start(step: Segment) -> int:
    return step[0]


def _constant_period(days: tuple[DaySlots, ...]) -> Period | None:
    """The period of a week whose days are all prime or all non-prime all day, else None."""
    if all(d == ALL_PRIME for d in days):
        return PRIME
    if all(d == ALL_NONPRIME for d in days):
        return NONPRIME
    return None


def _describe_week(days: tuple[DaySlots, ...]) -> str:
    groups: list[tuple[int, int, DaySlots]] = []
    for i, slots in enumerate(days):
        if groups and groups[-1][2] == slots and groups[-1][1] == i - 1:
            groups[-1] = (groups[-1][0], i, slots)
        else:
            groups.append((i, i, slots))
    parts = []
    for first, last, slots in groups:
        if slots.prime is None:
            continue
        span = _DAY_ABBR[first] if first == last else f"{_DAY_ABBR[first]}-{_DAY_ABBR[last]}"
        if slots.nonprime is None:
            parts.append(f"{span} all day")
        else:
            parts.append(f"{span} {_hhmm(slots.prime)}-{_hhmm(slots.nonprime)}")
    return ", ".join(parts)


def _hhmm(sec: int) -> str:
    return f"{sec // 3600:02d}:{sec % 3600 // 60:02d}"


def valid_date(year: int, month: int, mday: int) -> bool:
    try:
        dt.date(year, month, mday)
    except ValueError:
        return False
    return True


def resolve_timezone(name: str) -> dt.tzinfo:
    """The IANA time zone ``name`` (e.g. "America/Los_Angeles", "UTC", "US/Pacific")."""
    key = name.strip()
    if key:
        try:
            return ZoneInfo(key)
        except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
            pass
        if key.upper() == "UTC":  # no tz database installed
            return dt.UTC
    raise CalendarError(
        f"unknown time zone {name!r} (use an IANA name such as 'America/Los_Angeles', "
        "'Europe/Berlin' or 'UTC')"
    )
