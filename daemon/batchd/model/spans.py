"""Weekly spans of local time, as a queue's ``window`` setting writes them.

``"Mon-Fri 07:00-19:30"`` (each of the days), ``"Mon-Fri 23:00-04:00"`` (each night,
across midnight), ``"Fri 20:00-Mon 07:00"`` (one span across days); ``parse_window``
checks a whole setting and gives its canonical form, ``week_intervals`` the union of
its spans within one week. ``batchd.model.windows`` turns them into time windows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

DAY: Final = 86_400
WEEK: Final = 7 * DAY
DAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_FULL: Final = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
KEYWORDS: Final = ("any", "prime", "nonprime")

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
