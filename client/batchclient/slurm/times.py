"""Slurm's durations and times, as its commands read and print them
(src/common/parse_time.c: time_str2secs, secs2time_str, parse_time; squeue's
_print_secs)."""

from __future__ import annotations

import datetime as dt
import re

UNLIMITED = "UNLIMITED"
_TIMESPEC = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")
_UNITS = {
    "": 1,
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
_NAMED_HOURS = {"midnight": (0, 0), "noon": (12, 0), "elevenses": (11, 0), "fika": (15, 0),
                "teatime": (16, 0)}  # fmt: skip


def parse_duration(text: str) -> int | None:
    """Seconds of a time limit in any of Slurm's forms: ``minutes``, ``minutes:seconds``,
    ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes``,
    ``days-hours:minutes:seconds``; None for ``UNLIMITED``, ``INFINITE`` or ``-1``.
    ValueError (Slurm's words: ``Invalid time limit specification``) otherwise."""
    t = text.strip()
    if t.upper() in ("UNLIMITED", "INFINITE", "-1"):
        return None
    m = _TIMESPEC.match(t)
    if m is None:
        raise ValueError("Invalid time limit specification")
    days, a, b, c = m.groups()
    if days is not None:  # days-hours[:minutes[:seconds]]
        return int(days) * 86400 + int(a) * 3600 + int(b or 0) * 60 + int(c or 0)
    if c is not None:  # hours:minutes:seconds
        return int(a) * 3600 + int(b) * 60 + int(c)
    return int(a) * 60 + int(b or 0)  # minutes[:seconds]


def _parts(seconds: int) -> tuple[int, int, int, int]:
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return days, hours, minutes, secs


def clock(seconds: int | None) -> str:
    """``HH:MM:SS`` or ``D-HH:MM:SS`` (sacct's Elapsed and Timelimit, scontrol's
    RunTime and TimeLimit); ``UNLIMITED`` for None."""
    if seconds is None:
        return UNLIMITED
    if seconds < 0:
        return "INVALID"
    days, hours, minutes, secs = _parts(seconds)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"


def short_clock(seconds: int | None) -> str:
    """squeue's TIME and TIME_LIMIT: ``M:SS``, ``H:MM:SS`` or ``D-HH:MM:SS``;
    ``UNLIMITED`` for None."""
    if seconds is None or seconds < 0 or seconds >= 86400:
        return clock(seconds)
    _, hours, minutes, secs = _parts(seconds)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def timestamp(epoch: int | float | None, missing: str = "N/A") -> str:
    """A time as Slurm prints it (``%FT%T``, local time); ``missing`` for None."""
    if epoch is None:
        return missing
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%dT%H:%M:%S")


def parse_time(text: str, now: float) -> int:
    """Epoch seconds of a time as --begin, sacct -S/-E and scontrol take it:
    ``now[+COUNT[UNIT]]``, ``today``, ``tomorrow``, ``midnight``, ``noon``, ``teatime``,
    ``HH:MM[:SS]`` (today, or tomorrow if past), ``YYYY-MM-DD[THH:MM[:SS]]``,
    ``MM/DD[/YY]``, ``MMDDYY``. ValueError (``Invalid time specification``) otherwise."""
    t = text.strip().lower()
    base = dt.datetime.fromtimestamp(now)
    m = re.fullmatch(r"now(?:\s*([+-])\s*(\d+)\s*([a-z]*))?", t)
    if m is not None:
        if m.group(1) is None:
            return int(now)
        unit = _UNITS.get(m.group(3))
        if unit is None:
            raise ValueError("Invalid time specification")
        sign = 1 if m.group(1) == "+" else -1
        return int(now) + sign * int(m.group(2)) * unit
    midnight = base.replace(hour=0, minute=0, second=0, microsecond=0)
    if t == "today":
        return int(midnight.timestamp())
    if t == "tomorrow":
        return int((midnight + dt.timedelta(days=1)).timestamp())
    if t in _NAMED_HOURS:
        hour, minute = _NAMED_HOURS[t]
        return _next_at(base, hour, minute, 0)
    m = re.fullmatch(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", t)
    if m is not None:
        return _next_at(base, int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}(t\d{1,2}(:\d{2}){0,2})?", t):
            day, _, clock_part = t.partition("t")
            parts = [int(p) for p in clock_part.split(":")] if clock_part else []
            parts += [0] * (3 - len(parts))
            when = dt.datetime.fromisoformat(day).replace(
                hour=parts[0], minute=parts[1], second=parts[2]
            )
            return int(when.timestamp())
        m = re.fullmatch(r"(\d{2})[/.](\d{2})(?:[/.](\d{2}))?|(\d{2})(\d{2})(\d{2})", t)
        if m is not None:
            month, day_s, year = (
                (m.group(1), m.group(2), m.group(3))
                if m.group(1)
                else (m.group(4), m.group(5), m.group(6))
            )
            full_year = 2000 + int(year) if year else base.year
            return int(dt.datetime(full_year, int(month), int(day_s)).timestamp())
    except ValueError:
        pass
    raise ValueError("Invalid time specification")


def _next_at(base: dt.datetime, hour: int, minute: int, second: int) -> int:
    if not (0 <= hour < 24 and 0 <= minute < 60 and 0 <= second < 60):
        raise ValueError("Invalid time specification")
    when = base.replace(hour=hour, minute=minute, second=second, microsecond=0)
    if when < base:
        when += dt.timedelta(days=1)
    return int(when.timestamp())
