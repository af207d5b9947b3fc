"""Times for people: durations, PBS ``-a`` dates, dates as qstat shows them.

All "now" values are the daemon's emulated time (epoch seconds), never the
local wall clock; dates are shown in the local time zone.
"""

from __future__ import annotations

import re
import time

_HMS = re.compile(r"^(?:(?:(\d+):)?(\d+):)?(\d+)$")
SEC_IN_WEEK = 7 * 24 * 3600


def parse_duration(text: str) -> int:
    """Seconds from ``SS``, ``MM:SS`` or ``HH:MM:SS`` (the rule the API applies).

    Raises ValueError with a message that says what is wrong.
    """
    m = _HMS.match(text.strip())
    if not m:
        raise ValueError("not a duration: use [[HH:]MM:]SS")
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    if m.group(1) is not None and (mi >= 60 or s >= 60):
        raise ValueError("minutes and seconds must be below 60")
    if m.group(1) is None and m.group(2) is not None and s >= 60:
        raise ValueError("seconds must be below 60")
    return h * 3600 + mi * 60 + s


def hms(seconds: int) -> str:
    """``HH:MM:SS`` (hours not wrapped at 24)."""
    seconds = max(0, int(seconds))
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def hm(seconds: int) -> str:
    """``HH:MM`` (seconds dropped, as qstat -a shows walltimes)."""
    seconds = max(0, int(seconds))
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}"


def ctime(epoch: int) -> str:
    """C's ctime() without the newline: ``Sat Nov 21 10:00:00 2026`` (local time)."""
    return time.asctime(time.localtime(epoch))


def est_start_short(epoch: int | None, now: int, *, past_ok: bool = False) -> str:
    """A start time in five columns, as OpenPBS ``qstat -T`` shows it.

    Today ``HH:MM``; within a week the weekday's first two letters and the hour
    (``Mo 14``); later this year the month (``Dec``); within five years the
    year; beyond that ``>5yrs``. ``--`` when unknown or already past (unless
    ``past_ok``, used for the actual start of running jobs), ``?`` for 0.
    """
    if epoch is None:
        return "--"
    if epoch == 0:
        return "?"
    if epoch < now and not past_ok:
        return "--"
    then = time.localtime(epoch)
    today = time.localtime(now)
    if then.tm_year == today.tm_year and then.tm_yday == today.tm_yday:
        return time.strftime("%H:%M", then)
    if abs(epoch - now) < SEC_IN_WEEK:
        return f"{time.strftime('%a', then)[:2]} {time.strftime('%H', then)}"
    if then.tm_year == today.tm_year:
        return time.strftime("%b", then)
    if then.tm_year - today.tm_year < 5:
        return time.strftime("%Y", then)
    return ">5yrs"


# -- qsub -a [[[[CC]YY]MM]DD]hhmm[.SS] ----------------------------------------------

_EXEC = re.compile(r"^(\d{4}|\d{6}|\d{8}|\d{10}|\d{12})(?:\.(\d{2}))?$")


def parse_exec_time(text: str, now: int) -> int:
    """Epoch seconds for a PBS ``-a`` date, relative to ``now`` (the daemon's time).

    Follows OpenPBS cvtdate(): missing fields default to the current year,
    month and day; a two-digit year below 69 is 20YY, else 19YY; a month
    before the current one without a year means next year; a day before
    today without a month means next month; a time of day not later than now
    without a day means tomorrow. Out-of-range days roll over as mktime does.
    Raises ValueError naming the problem.
    """
    m = _EXEC.match(text.strip())
    if not m:
        raise ValueError("use [[[[CC]YY]MM]DD]hhmm[.SS]")
    digits, secs = m.group(1), m.group(2)
    second = int(secs) if secs is not None else 0
    if second > 59:
        raise ValueError("seconds must be 00-59")
    cur = time.localtime(now)
    year, month, mday = cur.tm_year, cur.tm_mon, cur.tm_mday  # month 1-12
    year_given = month_given = day_given = False

    fields = [digits[i : i + 2] for i in range(0, len(digits), 2)]
    hh, mm = int(fields[-2]), int(fields[-1])
    head = fields[:-2]  # [CC] [YY] [MM] [DD], the last ones present
    if len(head) == 4:
        year = int(head[0]) * 100 + int(head[1])
        year_given = True
    elif len(head) == 3:
        yy = int(head[0])
        year = 1900 + yy if yy > 68 else 2000 + yy
        year_given = True
    if len(head) >= 2:
        month = int(head[-2])
        if not 1 <= month <= 12:
            raise ValueError("month must be 01-12")
        if not year_given and month < cur.tm_mon:
            year += 1
        month_given = True
    if len(head) >= 1:
        day = int(head[-1])
        if not 1 <= day <= 31:
            raise ValueError("day must be 01-31")
        if not month_given and day < cur.tm_mday:
            month += 1
        mday = day
        day_given = True
    if hh > 23:
        raise ValueError("hour must be 00-23")
    if mm > 59:
        raise ValueError("minute must be 00-59")
    if not day_given and (hh, mm) <= (cur.tm_hour, cur.tm_min):
        mday += 1  # that time today has passed: tomorrow
    try:
        return int(time.mktime((year, month, mday, hh, mm, second, 0, 0, -1)))
    except (OverflowError, ValueError):
        raise ValueError("date out of range") from None
