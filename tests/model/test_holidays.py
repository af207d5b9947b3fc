"""The holidays file's refusals, word for word, and the legacy YEAR-and-weekday line."""

from __future__ import annotations

import datetime as dt
import errno
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from batchd.model import holidays
from batchd.model.calendar import CalendarError
from batchd.model.holidays import load_holidays, parse_holidays


def refusal(text: str) -> str:
    with pytest.raises(CalendarError) as refused:
        parse_holidays(text)
    return str(refused.value)


def test_a_day_of_year_that_misses_its_date_is_refused_with_the_fix() -> None:
    assert refusal("YEAR 2026\n366 Dec 31 Eve\n") == (
        "<holidays>:2: day of year 366 does not match Dec 31: in 2026 Dec 31 is day 365 "
        "(fix the day-of-year or the date)"
    )
    assert refusal("100 Dec 25 Xmas\n") == (
        "<holidays>:1: day of year 100 does not match Dec 25, which is day 359 or 360 "
        "(fix the day-of-year or the date)"
    )


def test_the_legacy_line_sets_the_year_and_the_weekdays_on_its_own_line() -> None:
    assert refusal("1998 0400 1530\nYEAR 1998\n") == (
        "<holidays>:2: duplicate YEAR line (first on line 1)"
    )
    assert refusal("1998 0400 1530\nweekday 0600 1900\n") == (
        "<holidays>:2: duplicate 'weekday' line (first on line 1)"
    )
    assert refusal("* old style\n1998 0475 1530\n") == (
        "<holidays>:2: bad prime start '0475' on the 'weekday' line "
        "(HHMM from 0000 to 2359 or 2400 for midnight, 'all' or 'none')"
    )


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (PermissionError(errno.EACCES, "Permission denied"), "permission denied reading the "
         "holidays file"),
        (OSError(errno.EIO, "Input/output error"), "cannot read the holidays file "
         "(Input/output error)"),
    ],
)  # fmt: skip
def test_a_file_that_cannot_be_read_is_named_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, error: OSError, says: str
) -> None:
    def fail(path: str | Path) -> None:
        raise error

    monkeypatch.setattr(holidays, "read_small_file", fail)
    path = tmp_path / "holidays"
    with pytest.raises(CalendarError) as refused:
        load_holidays(path)
    assert str(refused.value) == f"{path}: {says}"


def test_a_holiday_needs_no_name_and_its_month_may_end_in_a_dot() -> None:
    cal = parse_holidays("YEAR 2026\n359 Dec 25\n1 Jan. 1 New Year\n")
    assert cal.holidays == {dt.date(2026, 12, 25), dt.date(2026, 1, 1)}


def test_year_zero_keeps_the_files_name_and_zone() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    cal = parse_holidays("YEAR 0\n", source="conf/holidays", tz=berlin)
    assert (cal.year, cal.tz, cal.source) == (0, berlin, "conf/holidays")


def test_a_bad_time_names_its_line_and_a_late_weekday_says_where_to_put_it() -> None:
    assert refusal("monday 6am 1900\n") == (
        "<holidays>:1: bad prime start '6am' on the 'monday' line "
        "(HHMM from 0000 to 2359 or 2400 for midnight, 'all' or 'none')"
    )
    assert refusal("monday 0600 1900\nweekday 0600 1900\n") == (
        "<holidays>:2: 'weekday' would override the 'monday' line 1 "
        "(put 'weekday' before single days)"
    )


@pytest.mark.parametrize("token", ["00600", "0660", "2360", "2401"])
def test_a_time_is_three_or_four_digits_of_a_real_clock_time(token: str) -> None:
    assert f"bad prime start '{token}'" in refusal(f"weekday {token} 1900\n")


def test_only_star_and_hash_start_comments() -> None:
    assert refusal("Xmas 359 Dec 25\n") == (
        "<holidays>:1: unknown keyword 'Xmas' (expected YEAR, HOLIDAYFILE_VERSION1, weekday, "
        "monday..sunday, or a holiday line '<day-of-year> <Mon> <DD> [name]', e.g. "
        "'359 Dec 25 Christmas Day')"
    )
    assert refusal("weekday 0600 1900 Xtra\n") == (
        "<holidays>:1: unexpected 'Xtra' after 'weekday 0600 1900' "
        "(a trailing comment starts with '*' or '#')"
    )
    assert parse_holidays("weekday 0600 1900 # office hours\n").days[0].prime == 6 * 3600


def test_a_four_digit_number_first_is_a_legacy_year_line_whatever_follows() -> None:
    assert refusal("2026 Jan 1\n") == (
        "<holidays>:1: bad prime start 'Jan' on the 'weekday' line "
        "(HHMM from 0000 to 2359 or 2400 for midnight, 'all' or 'none')"
    )
    assert refusal("YEAR\n") == "<holidays>:1: YEAR needs a year (e.g. 'YEAR 2026')"


def test_the_last_year_a_file_may_name_is_9999() -> None:
    assert parse_holidays("YEAR 9999\n").year == 9999
    assert refusal("YEAR 10000\n") == (
        "<holidays>:1: YEAR 10000 out of range (0 to 9999; 0 turns prime time off)"
    )
