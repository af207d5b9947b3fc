"""Reading the PBS ``holidays`` file into a ``PrimeCalendar``.

The file grammar follows the OpenPBS scheduler (``src/scheduler/prime.cpp``): ``*`` or ``#``
comment lines, ``HOLIDAYFILE_VERSION1``, ``YEAR yyyy``, day lines ``weekday|monday..sunday
<prime start> <non-prime start>`` with ``HHMM``/``all``/``none`` values, and holiday lines
``<day-of-year> <Mon> <DD> [name]``. docs/calendar.md describes what batchd accepts. Every
error names the file and the line.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from batchd.model.calendar import (
    ALL_NONPRIME,
    ALL_PRIME,
    DAY,
    DAY_NAMES,
    CalendarError,
    DaySlots,
    PrimeCalendar,
    valid_date,
)
from batchd.model.small_files import NOT_SHOWN, FileRefused, read_small_file

_MONTHS: Final = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_TIME_HELP: Final = "HHMM from 0000 to 2359 or 2400 for midnight, 'all' or 'none'"
_HOLIDAY_HELP: Final = "'<day-of-year> <Mon> <DD> [name]', e.g. '359 Dec 25 Christmas Day'"
_KEYWORD_HELP: Final = (
    "YEAR, HOLIDAYFILE_VERSION1, weekday, monday..sunday, or a holiday line " + _HOLIDAY_HELP
)

TimeValue = int | Literal["all", "none"]


@dataclass(slots=True)
class _Holiday:
    lineno: int
    doy: int
    month: int
    mday: int


@dataclass(slots=True)
class _Parser:
    source: str
    quotable: bool = True  # whether messages may quote the file (small_files.may_quote)
    year: int | None = None
    year_line: int = 0
    days: list[DaySlots | None] = field(default_factory=lambda: [None] * 7)
    day_lines: dict[str, int] = field(default_factory=dict)
    holidays: list[_Holiday] = field(default_factory=list)

    def error(self, lineno: int, message: str) -> CalendarError:
        if not self.quotable:  # the message may quote the line: say only where it is
            message = f"not a valid holidays line{NOT_SHOWN}"
        return CalendarError(f"{self.source}:{lineno}: {message}")

    def line(self, lineno: int, text: str) -> None:
        tokens = text.split()
        if not tokens or tokens[0][0] in "*#":
            return
        keyword = tokens[0].lower()
        if keyword == "holidayfile_version1":
            return
        if keyword == "year":
            self.year_keyword(lineno, tokens)
        elif keyword == "weekday" or keyword in DAY_NAMES:
            self.day_line(lineno, keyword, tokens)
        elif len(tokens[0]) == 4 and _is_number(tokens[0]):
            self.legacy_line(lineno, tokens)
        elif _is_number(tokens[0]):
            self.holiday_line(lineno, tokens)
        else:
            raise self.error(lineno, f"unknown keyword {tokens[0]!r} (expected {_KEYWORD_HELP})")

    def year_keyword(self, lineno: int, tokens: list[str]) -> None:
        if len(tokens) < 2:
            raise self.error(lineno, "YEAR needs a year (e.g. 'YEAR 2026')")
        self.no_extra(lineno, tokens, 2)
        if not _is_number(tokens[1]):
            raise self.error(lineno, f"YEAR {tokens[1]!r} is not a number (e.g. 'YEAR 2026')")
        self.set_year(lineno, int(tokens[1]))

    def set_year(self, lineno: int, year: int) -> None:
        if self.year_line:
            raise self.error(lineno, f"duplicate YEAR line (first on line {self.year_line})")
        if year > 9999:
            raise self.error(
                lineno, f"YEAR {year} out of range (0 to 9999; 0 turns prime time off)"
            )
        self.year, self.year_line = year, lineno

    def legacy_line(self, lineno: int, tokens: list[str]) -> None:
        # OpenPBS 2.3 / Torque also read a UNICOS-style "1998 0400 1530" line: YEAR + weekday.
        self.set_year(lineno, int(tokens[0]))
        self.day_line(lineno, "weekday", tokens)

    def day_line(self, lineno: int, keyword: str, tokens: list[str]) -> None:
        if len(tokens) < 3:
            raise self.error(
                lineno,
                f"{tokens[0]!r} needs a prime start and a non-prime start "
                f"(e.g. '{keyword} 0600 1900'; each {_TIME_HELP})",
            )
        self.no_extra(lineno, tokens, 3)
        self.check_duplicate(lineno, keyword)
        prime = self.time_value(lineno, tokens[1], "prime start", keyword)
        nonprime = self.time_value(lineno, tokens[2], "non-prime start", keyword)
        slots = _slots(prime, nonprime)
        targets = range(5) if keyword == "weekday" else (DAY_NAMES.index(keyword),)
        for i in targets:
            self.days[i] = slots

    def check_duplicate(self, lineno: int, keyword: str) -> None:
        first = self.day_lines.get(keyword)
        if first is not None:
            raise self.error(lineno, f"duplicate '{keyword}' line (first on line {first})")
        if keyword == "weekday":
            for name in DAY_NAMES[:5]:
                if name in self.day_lines:
                    raise self.error(
                        lineno,
                        f"'weekday' would override the '{name}' line {self.day_lines[name]} "
                        "(put 'weekday' before single days)",
                    )
        self.day_lines[keyword] = lineno

    def time_value(self, lineno: int, token: str, what: str, keyword: str) -> TimeValue:
        word = token.lower()
        if word in ("all", "none"):
            return "all" if word == "all" else "none"
        if _is_number(token) and 3 <= len(token) <= 4:
            hours, minutes = divmod(int(token), 100)
            if minutes < 60 and (hours < 24 or (hours, minutes) == (24, 0)):
                return hours * 3600 + minutes * 60
        raise self.error(lineno, f"bad {what} {token!r} on the '{keyword}' line ({_TIME_HELP})")

    def holiday_line(self, lineno: int, tokens: list[str]) -> None:
        if len(tokens) < 3:
            raise self.error(lineno, f"a holiday line needs three fields ({_HOLIDAY_HELP})")
        doy = int(tokens[0])
        month = _month(tokens[1])
        if month is None:
            raise self.error(
                lineno, f"bad month {tokens[1]!r} (Jan, Feb, Mar, ..., Dec; {_HOLIDAY_HELP})"
            )
        if not _is_number(tokens[2]) or not 1 <= int(tokens[2]) <= 31:
            raise self.error(lineno, f"bad day of month {tokens[2]!r} (1 to 31; {_HOLIDAY_HELP})")
        self.holidays.append(_Holiday(lineno, doy, month, int(tokens[2])))

    def no_extra(self, lineno: int, tokens: list[str], count: int) -> None:
        if len(tokens) > count and tokens[count][0] not in "*#":
            raise self.error(
                lineno,
                f"unexpected {tokens[count]!r} after {' '.join(tokens[:count])!r} "
                "(a trailing comment starts with '*' or '#')",
            )

    def holiday_dates(self) -> tuple[frozenset[dt.date], frozenset[tuple[int, int]]]:
        dated: set[dt.date] = set()
        annual: set[tuple[int, int]] = set()
        for h in self.holidays:
            if self.year:
                dated.add(self.dated_holiday(h, self.year))
            else:
                self.check_any_year(h)
                annual.add((h.month, h.mday))
        return frozenset(dated), frozenset(annual)

    def dated_holiday(self, h: _Holiday, year: int) -> dt.date:
        name = f"{_MONTHS[h.month - 1][:3].title()} {h.mday}"
        if not valid_date(year, h.month, h.mday):
            raise self.error(h.lineno, f"there is no {name} in {year} (check the date)")
        day = dt.date(year, h.month, h.mday)
        actual = day.timetuple().tm_yday
        if actual != h.doy:
            raise self.error(
                h.lineno,
                f"day of year {h.doy} does not match {name}: in {year} {name} is day {actual} "
                "(fix the day-of-year or the date)",
            )
        return day

    def check_any_year(self, h: _Holiday) -> None:
        # Without a YEAR the day-of-year must fit the date in a common or in a leap year.
        name = f"{_MONTHS[h.month - 1][:3].title()} {h.mday}"
        doys = {
            dt.date(y, h.month, h.mday).timetuple().tm_yday
            for y in (2023, 2024)
            if valid_date(y, h.month, h.mday)
        }
        if not doys:
            raise self.error(h.lineno, f"there is no {name} in any year (check the date)")
        if h.doy not in doys:
            expected = " or ".join(str(d) for d in sorted(doys))
            raise self.error(
                h.lineno,
                f"day of year {h.doy} does not match {name}, which is day {expected} "
                "(fix the day-of-year or the date)",
            )

    def calendar(self, tz: dt.tzinfo) -> PrimeCalendar:
        dated, annual = self.holiday_dates()
        if self.year == 0:
            # PBS: "YEAR 0" turns prime-time scheduling off, i.e. prime all the time.
            return PrimeCalendar(days=(ALL_PRIME,) * 7, year=0, tz=tz, source=self.source)
        # PBS (since openpbs#979): a day without a line is prime all day.
        days = tuple(d if d is not None else ALL_PRIME for d in self.days)
        return PrimeCalendar(
            days=days,
            holidays=dated,
            year=self.year,
            tz=tz,
            source=self.source,
            annual_holidays=annual,
        )


def _slots(prime: TimeValue, nonprime: TimeValue) -> DaySlots:
    """Canonical DaySlots for one day line, with the precedence of PBS ``check_prime``."""
    if prime == "all":
        return ALL_PRIME
    if nonprime == "all":
        return ALL_NONPRIME
    if prime == "none":
        return ALL_PRIME if nonprime == "none" else ALL_NONPRIME
    if nonprime == "none":
        return ALL_PRIME
    assert isinstance(prime, int) and isinstance(nonprime, int)
    # 2400 is midnight at the end of the day; fold it into the canonical forms.
    if nonprime > prime:  # prime from prime to nonprime
        if prime == 0 and nonprime == DAY:
            return ALL_PRIME
        return DaySlots(prime, 0) if nonprime == DAY else DaySlots(prime, nonprime)
    if nonprime == prime:
        return ALL_PRIME
    if nonprime == 0 and prime == DAY:
        return ALL_NONPRIME
    return DaySlots(0, nonprime) if prime == DAY else DaySlots(prime, nonprime)


def _is_number(token: str) -> bool:
    return token.isascii() and token.isdigit()


def _month(token: str) -> int | None:
    word = token.lower().rstrip(".")
    if len(word) < 3:
        return None
    for i, name in enumerate(_MONTHS):
        if name.startswith(word):
            return i + 1
    return None


def parse_holidays(
    text: str, source: str = "<holidays>", tz: dt.tzinfo | None = None, quotable: bool = True
) -> PrimeCalendar:
    """Parse a PBS holidays file; raise CalendarError("source:LINE: ...") on the first bad line."""
    parser = _Parser(source, quotable)
    for lineno, line in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        parser.line(lineno, line)
    return parser.calendar(tz or dt.UTC)


def load_holidays(path: str | Path, tz: dt.tzinfo | None = None) -> PrimeCalendar:
    """Read and parse the holidays file at ``path`` (a regular file of at most 1 MiB)."""
    name = str(path)
    try:
        file = read_small_file(path)
    except FileNotFoundError:
        raise CalendarError(f"{name}: no such holidays file") from None
    except FileRefused as exc:
        raise CalendarError(f"{name}: {exc}, not a holidays file") from None
    except PermissionError:
        raise CalendarError(f"{name}: permission denied reading the holidays file") from None
    except OSError as exc:
        raise CalendarError(f"{name}: cannot read the holidays file ({exc.strerror})") from None
    # Holiday names may be in any 8-bit charset; only ASCII keywords and numbers matter.
    return parse_holidays(file.data.decode("utf-8", errors="replace"), name, tz, file.quotable)
