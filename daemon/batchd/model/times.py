"""Times in the core: integer seconds since the epoch, durations, and the one "never".

``NEVER`` is a time later than any real one: the start of a job that can never fit,
the change of a window that never comes. Being a number, it sorts after every real
time, so ``min`` and comparisons need no special case.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

NEVER: Final = 2**62

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
    return seconds
