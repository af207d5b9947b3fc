"""Times in the core: integer seconds since the epoch, durations, and the one "never".

``NEVER`` is a time later than any real one: the start of a job that can never fit,
the change of a window that never comes. Being a number, it sorts after every real
time, so ``min`` and comparisons need no special case.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from typing import Final

NEVER: Final = 2**62

# The plausible range of a time given to batchd (an execution time, a reservation's
# start, --start): years 1970 through 9999 UTC, the range every tool can show as a date.
TIME_MIN: Final = 0  # 1970-01-01T00:00:00Z
TIME_MAX: Final = 253_402_300_799  # 9999-12-31T23:59:59Z
TIME_RANGE: Final = "years 1970 to 9999 (0 to 253402300799 seconds since the epoch)"
# The longest duration (walltime, runtime, reservation): 3650 days.
MAX_DURATION: Final = 3650 * 86_400
# The emulated clock stays a century short of TIME_MAX, so that whatever is planned
# ahead of it (walltimes, windows, reservations) still has a date.
CLOCK_MAX: Final = 250_246_627_199  # 9899-12-31T23:59:59Z
CLOCK_RANGE: Final = "years 1970 to 9899 (0 to 250246627199 seconds since the epoch)"

_HMS = re.compile(r"^(?:(?:(\d+):)?(\d+):)?(\d+)$")


def parse_duration(value: str | int) -> int:
    """Seconds from ``SS``, ``MM:SS`` or ``HH:MM:SS`` (PBS walltime), or an int."""
    if isinstance(value, bool):
        raise ValueError("expected seconds or HH:MM:SS")
    if isinstance(value, int):
        return value
    m = _HMS.match(value.strip())
    if not m:
        raise ValueError(f"{value!r} is not a duration: use seconds or [[HH:]MM:]SS")
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    if m.group(1) is not None and (mi >= 60 or s >= 60):
        raise ValueError(f"{value!r}: minutes and seconds must be below 60")
    if m.group(1) is None and m.group(2) is not None and s >= 60:
        raise ValueError(f"{value!r}: seconds must be below 60")
    return h * 3600 + mi * 60 + s


def hms(seconds: int) -> str:
    """``HH:MM:SS`` (hours may exceed 24), as PBS shows walltimes."""
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def stamp(t: int) -> str:
    """A time in the host's local time, as comments and refusals show it."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def local_epoch(tz: dt.tzinfo, day: dt.date, sec: int) -> int:
    """The first instant whose local wall time in ``tz`` is ``sec`` seconds into ``day``.

    An ambiguous wall time (clocks set back) maps to its first occurrence; a wall time
    skipped by the clocks going forward maps to the instant of the jump.
    """
    naive = dt.datetime.combine(day, dt.time()) + dt.timedelta(seconds=sec)
    t0 = int(naive.replace(tzinfo=tz).timestamp())
    if dt.datetime.fromtimestamp(t0, tz).replace(tzinfo=None) == naive:
        return t0
    t1 = int(naive.replace(tzinfo=tz, fold=1).timestamp())
    lo, hi = min(t0, t1), max(t0, t1)
    while lo < hi:
        mid = (lo + hi) // 2
        if dt.datetime.fromtimestamp(mid, tz).replace(tzinfo=None) >= naive:
            hi = mid
        else:
            lo = mid + 1
    return lo


def positive_duration(value: object, what: str) -> int | None:
    """A positive duration from seconds or ``HH:MM:SS`` (None stays None)."""
    if value is None:
        return None
    if not isinstance(value, str | int):
        raise ValueError(f"{what} must be seconds or HH:MM:SS")
    seconds = parse_duration(value)
    if seconds <= 0:
        raise ValueError(f"{what} must be positive")
    if seconds > MAX_DURATION:
        raise ValueError(f"{what} must be at most {hms(MAX_DURATION)} (3650 days)")
    return seconds


def plausible_time(value: int) -> int:
    """``value`` (seconds since the epoch) if it lies in TIME_RANGE, else ValueError."""
    if not TIME_MIN <= value <= TIME_MAX:
        raise ValueError(f"{value} is not a plausible time: use {TIME_RANGE}")
    return value
