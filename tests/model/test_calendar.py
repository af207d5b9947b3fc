"""The PBS prime-time calendar: holidays-file parsing, windows, boundaries, DST and errors.

Expected instants are written by hand in UTC (PST = UTC-8, PDT = UTC-7; in 2026 US daylight
time runs from Sun Mar 8 02:00 to Sun Nov 1 02:00), not derived with the code under test.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchd.model import calendar as calendar_module
from batchd.model.calendar import (
    CalendarError,
    DaySlots,
    PrimeCalendar,
    resolve_timezone,
)
from batchd.model.holidays import load_holidays, parse_holidays
from batchd.model.times import local_epoch
from paths import ROOT

DATA = ROOT / "tests" / "data" / "holidays"
H = 3600
LA = resolve_timezone("America/Los_Angeles")
NAS_WEEKDAY = DaySlots(6 * H, 19 * H)
ALL_PRIME = DaySlots(0, None)
ALL_NONPRIME = DaySlots(None, 0)


def utc(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> int:
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))


def pst(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> int:
    return utc(y, mo, d, h, mi, s) + 8 * H


def pdt(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> int:
    return utc(y, mo, d, h, mi, s) + 7 * H


@pytest.fixture(scope="module")
def site() -> PrimeCalendar:
    return load_holidays(ROOT / "conf" / "holidays", LA)


# --------------------------------------------------------------------------- parsing


def test_parse_openpbs_style_file() -> None:
    cal = load_holidays(DATA / "openpbs_2018")
    assert cal.year == 2018
    assert cal.source == str(DATA / "openpbs_2018")
    assert cal.days == (DaySlots(6 * H, 17 * H + 30 * 60),) * 5 + (ALL_NONPRIME,) * 2
    expected = {(1, 1), (1, 15), (2, 19), (5, 28), (7, 4), (9, 3), (10, 8), (11, 12)}
    expected |= {(11, 22), (12, 25)}
    assert cal.holidays == {dt.date(2018, m, d) for m, d in expected}
    assert cal.annual_holidays == frozenset()
    assert cal.describe() == "prime Mon-Fri 06:00-17:30, 10 holidays in 2018, UTC"


def test_conf_holidays_has_the_nas_slots_and_the_2026_federal_holidays(
    site: PrimeCalendar,
) -> None:
    assert site.year == 2026
    assert site.days == (NAS_WEEKDAY,) * 5 + (ALL_NONPRIME,) * 2
    dates = [(1, 1), (1, 19), (2, 16), (5, 25), (6, 19), (7, 3), (9, 7), (10, 12), (11, 11)]
    dates += [(11, 26), (12, 25)]
    assert site.holidays == {dt.date(2026, m, d) for m, d in dates}
    assert all(d.weekday() < 5 for d in site.holidays)  # observed dates are weekdays
    assert site.prime_slot_seconds() == 13 * H
    assert site.describe() == "prime Mon-Fri 06:00-19:00, 11 holidays in 2026, America/Los_Angeles"


def test_pbspro_per_day_format() -> None:
    cal = load_holidays(DATA / "pbspro_2026")
    assert cal.days == (
        DaySlots(8 * H, 18 * H),
        DaySlots(8 * H, 18 * H),
        DaySlots(8 * H, 18 * H),
        DaySlots(8 * H, 18 * H),
        DaySlots(8 * H, 16 * H),
        DaySlots(9 * H, 12 * H),
        ALL_NONPRIME,
    )
    assert cal.holidays == {dt.date(2026, 1, 1), dt.date(2026, 12, 25)}
    # Fri 2026-03-06 and Sat 2026-03-07, UTC.
    assert cal.period_at(utc(2026, 3, 6, 15, 59, 59)) == "prime"
    assert cal.period_at(utc(2026, 3, 6, 16)) == "nonprime"
    assert cal.period_bounds(utc(2026, 3, 7, 10)) == (utc(2026, 3, 7, 9), utc(2026, 3, 7, 12))
    assert cal.next_change(utc(2026, 3, 7, 12)) == utc(2026, 3, 9, 8)
    assert cal.prime_slot_seconds() == 10 * H  # the usual weekday slot, not Friday's
    assert cal.describe() == (
        "prime Mon-Thu 08:00-18:00, Fri 08:00-16:00, Sat 09:00-12:00, 2 holidays in 2026, UTC"
    )


def test_single_day_line_overrides_weekday() -> None:
    cal = parse_holidays("YEAR 2026\nweekday 0600 1900\nfriday 0600 1500\n")
    assert cal.days[:5] == (NAS_WEEKDAY,) * 4 + (DaySlots(6 * H, 15 * H),)


def test_windows_tabs_crlf_bom_case_and_trailing_comment() -> None:
    text = "\ufeffyear 2026\r\nWEEKDAY\t0600\t1900  * NAS slots\r\nSaturday none all\r\n"
    cal = parse_holidays(text)
    assert cal.year == 2026
    assert cal.days[0] == NAS_WEEKDAY
    assert cal.days[5] == ALL_NONPRIME


def test_legacy_unicos_year_line() -> None:
    cal = load_holidays(DATA / "legacy_year_line")
    assert cal.year == 1998
    assert cal.days[:5] == (DaySlots(4 * H, 15 * H + 30 * 60),) * 5
    assert cal.holidays == {dt.date(1998, 12, 25)}


def test_comments_only_file_is_prime_all_the_time_as_in_pbs() -> None:
    for cal in (load_holidays(DATA / "comments_only"), parse_holidays("")):
        assert cal.days == (ALL_PRIME,) * 7
        assert cal.holidays == frozenset() and cal.year is None
        assert cal.period_at(utc(2026, 3, 7, 3)) == "prime"
        assert cal.next_change(utc(2026, 3, 7, 3)) is None
        assert cal.period_bounds(utc(2026, 3, 7, 3)) == (None, None)
        assert cal.describe() == "prime all the time, UTC"


def test_days_without_a_line_are_prime_all_day() -> None:
    cal = parse_holidays("YEAR 2026\nweekday 0600 1900\n")
    assert cal.days[5:] == (ALL_PRIME, ALL_PRIME)


def test_year_zero_turns_prime_time_off() -> None:
    cal = parse_holidays("YEAR 0\nweekday 0600 1900\nsaturday none all\n359 Dec 25 Christmas\n")
    assert cal.year == 0
    assert cal.days == (ALL_PRIME,) * 7
    assert cal.period_at(utc(2026, 12, 25, 12)) == "prime"
    assert cal.next_change(utc(2026, 12, 25, 12)) is None


def test_without_year_holidays_recur_on_month_and_day() -> None:
    cal = load_holidays(DATA / "annual_no_year")
    assert cal.year is None
    assert cal.holidays == frozenset()
    assert cal.annual_holidays == {(1, 1), (2, 29), (7, 4), (12, 25)}
    assert cal.describe() == "prime Mon-Fri 07:00-18:00, 4 holidays every year, UTC"
    # Thu 2030-07-04 is a holiday, Wed 2030-07-03 is not.
    assert cal.period_at(utc(2030, 7, 4, 12)) == "nonprime"
    assert cal.period_bounds(utc(2030, 7, 4, 12)) == (utc(2030, 7, 3, 18), utc(2030, 7, 5, 7))
    assert cal.period_at(utc(2030, 7, 3, 12)) == "prime"
    assert cal.is_holiday(dt.date(2028, 2, 29))
    assert cal.period_at(utc(2028, 2, 29, 12)) == "nonprime"  # a Tuesday
    assert cal.period_at(utc(2027, 3, 1, 12)) == "prime"  # no Feb 29 in 2027; a Monday


def test_holidays_apply_only_in_the_file_year(site: PrimeCalendar) -> None:
    assert site.period_at(pst(2026, 12, 25, 12)) == "nonprime"
    assert site.period_at(pst(2025, 12, 25, 12)) == "prime"  # Thu, not in a 2026 file
    assert site.period_at(pst(2027, 12, 24, 12)) == "prime"  # Fri
    assert not site.out_of_date(pst(2026, 12, 31, 23, 59, 59))
    assert site.out_of_date(pst(2027, 1, 1))
    assert not PrimeCalendar.default().out_of_date(utc(2100, 1, 1))


@pytest.mark.parametrize(
    ("prime", "nonprime", "slots"),
    [
        ("0600", "1900", DaySlots(6 * H, 19 * H)),
        ("all", "none", ALL_PRIME),
        ("none", "all", ALL_NONPRIME),
        ("all", "all", ALL_PRIME),  # PBS: "both all; assuming 24hr primetime"
        ("none", "none", ALL_PRIME),  # PBS: "both none; assuming 24hr primetime"
        ("all", "1700", ALL_PRIME),
        ("0600", "all", ALL_NONPRIME),
        ("none", "1700", ALL_NONPRIME),
        ("0600", "none", ALL_PRIME),
        ("0800", "0800", ALL_PRIME),  # identical starts: no non-prime time
        ("2200", "0600", DaySlots(22 * H, 6 * H)),  # prime overnight
        ("0000", "1200", DaySlots(0, 12 * H)),
        ("1200", "0000", DaySlots(12 * H, 0)),
        ("0800", "2400", DaySlots(8 * H, 0)),  # prime until midnight
        ("0000", "2400", ALL_PRIME),
        ("2400", "0000", ALL_NONPRIME),
        ("2400", "0800", DaySlots(0, 8 * H)),
        ("630", "1845", DaySlots(6 * H + 30 * 60, 18 * H + 45 * 60)),
    ],
)
def test_day_line_values(prime: str, nonprime: str, slots: DaySlots) -> None:
    cal = parse_holidays(f"YEAR 2026\nweekday {prime} {nonprime}\n")
    assert cal.days[0] == slots


# --------------------------------------------------------------------------- windows


def test_boundaries_on_a_weekday() -> None:
    cal = PrimeCalendar.default()  # Wed 2026-03-04, UTC
    assert cal.period_at(utc(2026, 3, 4, 0)) == "nonprime"
    assert cal.period_at(utc(2026, 3, 4, 5, 59, 59)) == "nonprime"
    assert cal.period_at(utc(2026, 3, 4, 6)) == "prime"
    assert cal.period_at(utc(2026, 3, 4, 18, 59, 59)) == "prime"
    assert cal.period_at(utc(2026, 3, 4, 19)) == "nonprime"
    assert cal.period_at(utc(2026, 3, 4, 23, 59, 59)) == "nonprime"


def test_weekends_are_nonprime() -> None:
    cal = PrimeCalendar.default()
    assert cal.period_at(utc(2026, 3, 6, 18, 59, 59)) == "prime"  # Fri
    for t in (utc(2026, 3, 6, 19), utc(2026, 3, 7, 12), utc(2026, 3, 8, 12)):
        assert cal.period_at(t) == "nonprime"
    assert cal.period_at(utc(2026, 3, 9, 5, 59, 59)) == "nonprime"  # Mon
    assert cal.period_at(utc(2026, 3, 9, 6)) == "prime"


def test_next_change_by_hand() -> None:
    cal = PrimeCalendar.default()
    assert cal.next_change(utc(2026, 3, 2)) == utc(2026, 3, 2, 6)  # Mon midnight
    assert cal.next_change(utc(2026, 3, 2, 5, 59, 59)) == utc(2026, 3, 2, 6)
    assert cal.next_change(utc(2026, 3, 2, 6)) == utc(2026, 3, 2, 19)
    assert cal.next_change(utc(2026, 3, 2, 19)) == utc(2026, 3, 3, 6)
    assert cal.next_change(utc(2026, 3, 6, 19)) == utc(2026, 3, 9, 6)  # Fri night
    assert cal.next_change(utc(2026, 3, 8, 23, 59, 59)) == utc(2026, 3, 9, 6)


def test_window_bounds() -> None:
    cal = PrimeCalendar.default()
    day = (utc(2026, 3, 4, 6), utc(2026, 3, 4, 19))
    assert cal.period_bounds(utc(2026, 3, 4, 6)) == day
    assert cal.period_bounds(utc(2026, 3, 4, 12)) == day
    assert cal.period_bounds(utc(2026, 3, 4, 18, 59, 59)) == day
    assert cal.period_bounds(utc(2026, 3, 4, 19)) == (utc(2026, 3, 4, 19), utc(2026, 3, 5, 6))
    weekend = (utc(2026, 3, 6, 19), utc(2026, 3, 9, 6))
    assert cal.period_bounds(utc(2026, 3, 7, 12)) == weekend
    assert cal.period_bounds(utc(2026, 3, 9, 5, 59, 59)) == weekend


def test_prime_slot_overnight_merges_across_midnight() -> None:
    cal = parse_holidays("YEAR 2026\nweekday 2200 0600\nsaturday none all\nsunday none all\n")
    assert cal.period_at(utc(2026, 3, 3, 3)) == "prime"  # Tue 03:00
    assert cal.period_at(utc(2026, 3, 3, 6)) == "nonprime"
    assert cal.period_bounds(utc(2026, 3, 3, 2)) == (utc(2026, 3, 2, 22), utc(2026, 3, 3, 6))
    assert cal.next_change(utc(2026, 3, 6, 23)) == utc(2026, 3, 7)  # Fri night -> Sat
    assert cal.period_bounds(utc(2026, 3, 8, 12)) == (utc(2026, 3, 7), utc(2026, 3, 9))
    assert cal.prime_slot_seconds() == 8 * H


def test_prime_all_week_changes_only_around_holidays() -> None:
    text = "YEAR 2026\nweekday all none\nsaturday all none\nsunday all none\n359 Dec 25 Xmas\n"
    cal = parse_holidays(text)
    assert cal.period_bounds(utc(2026, 6, 1)) == (None, utc(2026, 12, 25))
    assert cal.period_bounds(utc(2026, 12, 25, 12)) == (utc(2026, 12, 25), utc(2026, 12, 26))
    assert cal.period_bounds(utc(2027, 1, 5)) == (utc(2026, 12, 26), None)
    annual = parse_holidays("weekday all none\nsaturday all none\nsunday all none\n1 Jan 1 NY\n")
    assert annual.period_bounds(utc(2030, 6, 1)) == (utc(2030, 1, 2), utc(2031, 1, 1))
    assert annual.period_bounds(utc(2031, 1, 1, 8)) == (utc(2031, 1, 1), utc(2031, 1, 2))


def test_nonprime_all_the_time() -> None:
    cal = parse_holidays("YEAR 2026\nweekday none all\nsaturday none all\nsunday none all\n")
    assert cal.period_at(utc(2026, 3, 4, 12)) == "nonprime"
    assert cal.next_change(utc(2026, 3, 4, 12)) is None
    assert cal.period_bounds(utc(2026, 3, 4, 12)) == (None, None)
    assert cal.prime_slot_seconds() == 0
    assert cal.describe() == "non-prime all the time, UTC"


# --------------------------------------------------------------------------- holidays


def test_weekday_holiday_is_nonprime_all_day_and_joins_the_nights(site: PrimeCalendar) -> None:
    # Thanksgiving, Thu 2026-11-26 (PST): Wed night runs through to Fri 06:00.
    assert site.period_at(pst(2026, 11, 25, 12)) == "prime"
    assert site.period_bounds(pst(2026, 11, 25, 12)) == (
        pst(2026, 11, 25, 6),
        pst(2026, 11, 25, 19),
    )
    for h in (0, 6, 12, 19, 23):
        assert site.period_at(pst(2026, 11, 26, h)) == "nonprime"
    thanksgiving = (pst(2026, 11, 25, 19), pst(2026, 11, 27, 6))
    assert site.period_bounds(pst(2026, 11, 26, 12)) == thanksgiving
    assert site.next_change(pst(2026, 11, 25, 19)) == pst(2026, 11, 27, 6)
    assert site.period_at(pst(2026, 11, 27, 5, 59, 59)) == "nonprime"
    assert site.period_at(pst(2026, 11, 27, 6)) == "prime"


def test_holidays_next_to_weekends(site: PrimeCalendar) -> None:
    # Labor Day Mon 2026-09-07 (PDT): Fri 19:00 to Tue 06:00.
    assert site.period_bounds(pdt(2026, 9, 7, 12)) == (pdt(2026, 9, 4, 19), pdt(2026, 9, 8, 6))
    # Independence Day observed Fri 2026-07-03: Thu 19:00 to Mon 06:00.
    assert site.period_bounds(pdt(2026, 7, 4, 12)) == (pdt(2026, 7, 2, 19), pdt(2026, 7, 6, 6))
    # Christmas Fri 2026-12-25 (PST): Thu 19:00 to Mon 06:00.
    assert site.next_change(pst(2026, 12, 24, 19)) == pst(2026, 12, 28, 6)


# --------------------------------------------------------------------------- DST


def test_spring_forward_weekend_is_one_hour_shorter() -> None:
    cal = PrimeCalendar.default(LA)
    assert cal.period_at(pst(2026, 3, 6, 5, 59, 59)) == "nonprime"
    assert cal.period_at(pst(2026, 3, 6, 6)) == "prime"
    assert pst(2026, 3, 6, 6) == utc(2026, 3, 6, 14)
    weekend = cal.period_bounds(utc(2026, 3, 7, 20))
    assert weekend == (utc(2026, 3, 7, 3), utc(2026, 3, 9, 13))  # Fri 19:00 PST, Mon 06:00 PDT
    assert weekend[1] - weekend[0] == 58 * H
    assert cal.period_at(pdt(2026, 3, 9, 5, 59, 59)) == "nonprime"
    assert cal.period_at(pdt(2026, 3, 9, 6)) == "prime"
    assert cal.next_change(pdt(2026, 3, 9, 6)) == pdt(2026, 3, 9, 19)


def test_fall_back_weekend_is_one_hour_longer() -> None:
    cal = PrimeCalendar.default(LA)
    weekend = cal.period_bounds(utc(2026, 11, 1, 12))
    assert weekend == (utc(2026, 10, 31, 2), utc(2026, 11, 2, 14))  # Fri 19:00 PDT, Mon 06:00 PST
    assert weekend[1] - weekend[0] == 60 * H
    assert cal.period_at(pst(2026, 11, 2, 5, 59, 59)) == "nonprime"
    assert cal.period_at(pst(2026, 11, 2, 6)) == "prime"


_SUNDAY_ONLY = "YEAR 2026\nweekday none all\nsaturday none all\nsunday {} 1200\n"


def test_boundary_skipped_by_spring_forward_is_at_the_jump() -> None:
    # Sun 2026-03-08 02:30 does not exist in Los Angeles: 02:00 PST jumps to 03:00 PDT.
    cal = parse_holidays(_SUNDAY_ONLY.format("0230"), tz=LA)
    jump = utc(2026, 3, 8, 10)
    assert cal.period_at(jump - 1) == "nonprime"
    assert cal.period_at(jump) == "prime"
    assert cal.period_bounds(jump) == (jump, pdt(2026, 3, 8, 12))
    assert cal.next_change(pst(2026, 3, 8, 1)) == jump


def test_ambiguous_boundary_takes_the_first_occurrence_and_does_not_flap() -> None:
    # Sun 2026-11-01 01:30 happens twice: 08:30 UTC (PDT) and 09:30 UTC (PST).
    cal = parse_holidays(_SUNDAY_ONLY.format("0130"), tz=LA)
    assert cal.period_at(utc(2026, 11, 1, 8, 29, 59)) == "nonprime"
    assert cal.period_at(utc(2026, 11, 1, 8, 30)) == "prime"
    assert cal.period_at(utc(2026, 11, 1, 9)) == "prime"  # 01:00 PST, back before 01:30
    assert cal.period_bounds(utc(2026, 11, 1, 9, 30)) == (
        utc(2026, 11, 1, 8, 30),
        pst(2026, 11, 1, 12),
    )


def test_with_tz_moves_the_windows() -> None:
    utc_cal = PrimeCalendar.default()
    la_cal = utc_cal.with_tz(LA)
    assert la_cal.tz is LA and utc_cal.tz is dt.UTC
    t = utc(2026, 3, 4, 12)  # 04:00 PST
    assert utc_cal.period_at(t) == "prime"
    assert la_cal.period_at(t) == "nonprime"
    assert la_cal.next_change(t) == pst(2026, 3, 4, 6)
    assert la_cal.days == utc_cal.days


def _reference_window(cal: PrimeCalendar, t: int) -> str:
    """PBS is_prime_time: look at the local wall clock, holidays first."""
    local = dt.datetime.fromtimestamp(t, cal.tz)
    if local.date() in cal.holidays:
        return "nonprime"
    sec = local.hour * 3600 + local.minute * 60 + local.second
    return cal.days[local.weekday()].period_at(sec)


SITE_LA = load_holidays(ROOT / "conf" / "holidays", LA)
NIGHT_LA = parse_holidays("YEAR 2026\nweekday 2200 0600\nfriday 2200 none\n359 Dec 25 X\n", tz=LA)
_T = st.integers(min_value=utc(2025, 6, 1), max_value=utc(2027, 6, 1))


@settings(max_examples=300, deadline=None)
@given(t=_T)
def test_windows_match_the_wall_clock_and_bounds_are_tight(t: int) -> None:
    for cal in (SITE_LA, NIGHT_LA):
        window = cal.period_at(t)
        assert window == _reference_window(cal, t)
        start, end = cal.period_bounds(t)
        assert start is not None and end is not None
        assert start <= t < end
        assert cal.next_change(t) == end
        assert cal.period_at(start) == window != cal.period_at(start - 1)
        assert cal.period_at(end - 1) == window != cal.period_at(end)
        assert _reference_window(cal, end) != window


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("name", "lineno", "fragment"),
    [
        ("bad_time", 5, "bad non-prime start '2460' on the 'weekday' line (HHMM from 0000"),
        ("bad_month", 4, "bad month 'Fbr' (Jan, Feb"),
        ("bad_day_of_year", 6, "day of year 16 does not match Jan 19: in 2026 Jan 19 is day 19"),
        ("duplicate_day", 5, "duplicate 'saturday' line (first on line 3)"),
        ("missing_fields", 3, "'weekday' needs a prime start and a non-prime start"),
        ("bad_year", 2, "YEAR 'twenty-six' is not a number (e.g. 'YEAR 2026')"),
        ("unknown_keyword", 4, "unknown keyword 'wensday' (expected YEAR, HOLIDAYFILE_VERSION1"),
    ],
)
def test_bad_files_name_file_and_line(name: str, lineno: int, fragment: str) -> None:
    path = DATA / name
    with pytest.raises(CalendarError) as err:
        load_holidays(path)
    message = str(err.value)
    assert message.startswith(f"{path}:{lineno}: ")
    assert fragment in message


@pytest.mark.parametrize(
    ("text", "lineno", "fragment"),
    [
        ("YEAR 2026\nweekday 0600 1900\nfriday 0575 1600\n", 3, "bad prime start '0575'"),
        ("weekday 6am 1900\n", 1, "bad prime start '6am'"),
        ("weekday 06 1900\n", 1, "bad prime start '06'"),
        ("weekday 0600 2401\n", 1, "bad non-prime start '2401'"),
        ("weekday 0600 sometimes\n", 1, "'all' or 'none'"),
        ("YEAR 2026\n\n359 Dec 32 Xmas\n", 3, "bad day of month '32' (1 to 31"),
        ("YEAR 2026\n359 Dce 25 Xmas\n", 2, "bad month 'Dce'"),
        ("YEAR 2026\n60 Feb 29 Leap\n", 2, "there is no Feb 29 in 2026"),
        ("* 2024 was a leap year\nYEAR 2024\n359 Dec 25 Xmas\n", 3, "in 2024 Dec 25 is day 360"),
        ("YEAR 2026\n366 Dec 31 Eve\n", 2, "day of year 366 does not match Dec 31"),
        ("100 Dec 25 Xmas\n", 1, "Dec 25, which is day 359 or 360"),
        ("45 Feb 30 Nope\n", 1, "there is no Feb 30 in any year"),
        ("YEAR 2026\n359 Dec\n", 2, "a holiday line needs three fields"),
        ("YEAR\n", 1, "YEAR needs a year"),
        ("YEAR 20x6\n", 1, "YEAR '20x6' is not a number"),
        ("YEAR -1\n", 1, "YEAR '-1' is not a number"),
        ("YEAR 2026\nYEAR 2027\n", 2, "duplicate YEAR line (first on line 1)"),
        ("YEAR 99999\n", 1, "YEAR 99999 out of range"),
        ("weekday 0600 1900\nweekday 0700 1900\n", 2, "duplicate 'weekday' line"),
        ("monday 0600 1900\nweekday 0600 1900\n", 2, "'weekday' would override the 'monday'"),
        ("sunday none\n", 1, "'sunday' needs a prime start and a non-prime start"),
        ("weekday 0600 1900 2000\n", 1, "unexpected '2000' after 'weekday 0600 1900'"),
        ("YEAR 2026 2027\n", 1, "unexpected '2027' after 'YEAR 2026'"),
        ("Christmas Dec 25\n", 1, "unknown keyword 'Christmas'"),
        ("1/1 New Year's Day\n", 1, "unknown keyword '1/1'"),
        ("YEAR 2026\nweekday 0600 19\u00b200\n", 2, "bad non-prime start"),
        ("YEAR 2026\n\u00b2 Jan 1 NY\n", 2, "unknown keyword"),
    ],
)
def test_every_error_names_source_and_line(text: str, lineno: int, fragment: str) -> None:
    with pytest.raises(CalendarError) as err:
        parse_holidays(text, source="conf/holidays")
    message = str(err.value)
    assert re.match(rf"conf/holidays:{lineno}: \S", message), message
    assert fragment in message


def test_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"^<holidays>:1: "):
        parse_holidays("bogus\n")


def test_load_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "holidays"
    with pytest.raises(CalendarError, match=rf"^{re.escape(str(path))}: no such holidays file$"):
        load_holidays(path)
    with pytest.raises(CalendarError, match=r": is a directory, not a holidays file$"):
        load_holidays(tmp_path)


def test_load_accepts_non_utf8_holiday_names(tmp_path: Path) -> None:
    path = tmp_path / "holidays"
    path.write_bytes("YEAR 2026\nweekday 0600 1900\n 136 May 16 F\xeate\n".encode("latin-1"))
    assert load_holidays(path).holidays == {dt.date(2026, 5, 16)}


# --------------------------------------------------------------------------- time zones


@pytest.mark.parametrize("name", ["America/Los_Angeles", "US/Pacific", "UTC", "Europe/Berlin"])
def test_resolve_timezone(name: str) -> None:
    tz = resolve_timezone(name)
    assert getattr(tz, "key", "UTC") == name


def test_resolve_timezone_is_not_fixed_offset() -> None:
    tz = resolve_timezone(" America/Los_Angeles ")
    assert dt.datetime(2026, 1, 15, tzinfo=tz).utcoffset() == dt.timedelta(hours=-8)
    assert dt.datetime(2026, 7, 15, tzinfo=tz).utcoffset() == dt.timedelta(hours=-7)


@pytest.mark.parametrize(
    "name", ["Mars/Olympus_Mons", "", "   ", "America", "../etc/passwd", "PST8"]
)
def test_resolve_timezone_errors_name_the_value(name: str) -> None:
    with pytest.raises(CalendarError) as err:
        resolve_timezone(name)
    message = str(err.value)
    assert message.startswith(f"unknown time zone {name!r} ")
    assert "America/Los_Angeles" in message


# --------------------------------------------------------------------------- DaySlots


@pytest.mark.parametrize(
    ("prime", "nonprime"),
    [(None, None), (None, 3600), (3600, None), (3600, 3600), (-1, 0), (0, 86_400)],
)
def test_dayslots_rejects_non_canonical_values(prime: int | None, nonprime: int | None) -> None:
    with pytest.raises(ValueError):
        DaySlots(prime, nonprime)


def test_default_calendar() -> None:
    cal = PrimeCalendar.default()
    assert cal.days == (NAS_WEEKDAY,) * 5 + (ALL_NONPRIME,) * 2
    assert cal.holidays == frozenset() and cal.year is None and cal.tz is dt.UTC
    assert cal.prime_slot_seconds() == 13 * H
    assert cal.describe() == "prime Mon-Fri 06:00-19:00, no holidays, UTC"
    assert PrimeCalendar.default(LA).describe().endswith(", America/Los_Angeles")


def test_calendar_needs_seven_days() -> None:
    with pytest.raises(ValueError, match="7 DaySlots"):
        PrimeCalendar(days=(NAS_WEEKDAY,) * 5)


def test_open_ended_answers_are_reused_only_where_they_hold() -> None:
    text = "YEAR 2026\nweekday all none\nsaturday all none\nsunday all none\n359 Dec 25 Xmas\n"
    cal = parse_holidays(text, tz=LA)
    times = [pst(2026, 12, 30), pst(2027, 3, 1), pst(2026, 12, 26), pst(2026, 12, 25, 12)]
    times += [pdt(2026, 6, 1), pst(2025, 1, 1), pdt(2026, 7, 1), pst(2028, 12, 31)]
    for t in times + times[::-1]:
        fresh = parse_holidays(text, tz=LA)
        assert cal.period_bounds(t) == fresh.period_bounds(t), t
        assert cal.period_at(t) == fresh.period_at(t), t
        assert cal.next_change(t) == fresh.next_change(t), t


# --------------------------------------------------------------- descriptions and zones


def test_describe_names_each_group_of_days_and_counts_holidays() -> None:
    nine = DaySlots(9 * H + 30 * 60, 17 * H)
    week = (NAS_WEEKDAY, nine, NAS_WEEKDAY, NAS_WEEKDAY, NAS_WEEKDAY, ALL_PRIME, ALL_NONPRIME)
    one = PrimeCalendar(week, holidays=frozenset({dt.date(2026, 1, 1)}), year=2026)
    assert one.describe() == (
        "prime Mon 06:00-19:00, Tue 09:30-17:00, Wed-Fri 06:00-19:00, Sat all day, "
        "1 holiday in 2026, UTC"
    )
    annual = PrimeCalendar(
        (ALL_PRIME,) * 7, annual_holidays=frozenset({(1, 1), (12, 25)}), tz=dt.UTC
    )
    assert annual.describe() == "prime Mon-Sun all day, 2 holidays every year, UTC"
    plus_two = dt.timezone(dt.timedelta(hours=2))
    assert PrimeCalendar((ALL_PRIME,) * 7, tz=plus_two).describe() == (
        "prime all the time, UTC+02:00"
    )
    assert PrimeCalendar((ALL_NONPRIME,) * 7, tz=LA).describe() == (
        "non-prime all the time, America/Los_Angeles"
    )


def test_a_calendar_needs_seven_days() -> None:
    with pytest.raises(ValueError, match=r"^PrimeCalendar needs 7 DaySlots, Monday first$"):
        PrimeCalendar((ALL_PRIME,) * 6)
    with pytest.raises(ValueError, match=r"^PrimeCalendar needs 7 DaySlots, Monday first$"):
        PrimeCalendar((ALL_PRIME,) * 6 + ((0, None),))  # type: ignore[arg-type]
    assert PrimeCalendar([ALL_PRIME] * 7).days == (ALL_PRIME,) * 7  # type: ignore[arg-type]


def test_the_usual_prime_slot_falls_back_to_the_weekend_and_prefers_the_longer() -> None:
    weekend_only = (ALL_NONPRIME,) * 5 + (DaySlots(8 * H, 12 * H), ALL_NONPRIME)
    assert PrimeCalendar(weekend_only).prime_slot_seconds() == 4 * H
    assert PrimeCalendar((ALL_NONPRIME,) * 7).prime_slot_seconds() == 0
    short, long = DaySlots(8 * H, 10 * H), DaySlots(8 * H, 12 * H)
    tie = (short, long, ALL_NONPRIME, ALL_NONPRIME, ALL_NONPRIME, ALL_PRIME, ALL_PRIME)
    assert PrimeCalendar(tie).prime_slot_seconds() == 4 * H
    most = (short, short, long, ALL_NONPRIME, ALL_NONPRIME, ALL_PRIME, ALL_PRIME)
    assert PrimeCalendar(most).prime_slot_seconds() == 2 * H


def test_a_year_of_zero_is_never_out_of_date() -> None:
    cal = PrimeCalendar((NAS_WEEKDAY,) * 7, year=0)
    assert not cal.out_of_date(utc(2030, 1, 1))
    assert PrimeCalendar((NAS_WEEKDAY,) * 7, year=2029).out_of_date(utc(2030, 1, 1))


def test_time_zone_names() -> None:
    berlin = resolve_timezone(" Europe/Berlin ")
    assert getattr(berlin, "key", None) == "Europe/Berlin"
    assert resolve_timezone("UTC").utcoffset(None) == dt.timedelta(0)
    # Without a zone of that spelling, any case of "UTC" is still UTC.
    assert resolve_timezone("utc") is dt.UTC
    message = (
        "unknown time zone {!r} (use an IANA name such as 'America/Los_Angeles', "
        "'Europe/Berlin' or 'UTC')"
    )
    for name in ("Mars/Olympus", "", "  ", "America", "../etc/passwd"):
        with pytest.raises(CalendarError) as err:
            resolve_timezone(name)
        assert str(err.value) == message.format(name)


def test_two_boundaries_inside_one_clock_jump_make_one_step() -> None:
    berlin = resolve_timezone("Europe/Berlin")
    # 2026-03-29, a Sunday: 02:00 becomes 03:00 (01:00 UTC). Prime from 02:15 to 02:45
    # never happens; the next change after Sunday 00:00 is Monday 06:00 (CEST).
    sunday = DaySlots(2 * H + 15 * 60, 2 * H + 45 * 60)
    cal = PrimeCalendar((NAS_WEEKDAY,) * 5 + (ALL_NONPRIME, sunday), tz=berlin)
    midnight = utc(2026, 3, 28, 23)
    assert cal.period_at(utc(2026, 3, 29, 1)) == "nonprime"
    assert cal.next_change(midnight) == utc(2026, 3, 30, 4)


def test_holidays_recurring_on_february_29_in_an_all_prime_week() -> None:
    cal = PrimeCalendar((ALL_PRIME,) * 7, annual_holidays=frozenset({(2, 29)}))
    assert cal.next_change(utc(2026, 3, 1)) == utc(2028, 2, 29)
    assert cal.period_bounds(utc(2028, 2, 29, 12)) == (utc(2028, 2, 29), utc(2028, 3, 1))
    # The look back is two years: the holiday of 2024 is beyond it.
    assert cal.period_bounds(utc(2027, 6, 1)) == (None, utc(2028, 2, 29))
    assert cal.period_bounds(utc(2026, 1, 1)) == (utc(2024, 3, 1), None)


def test_the_day_cache_is_bounded() -> None:
    cal = PrimeCalendar.default()
    first = dt.date(2026, 1, 1).toordinal()
    for ordinal in range(first, first + 4096):
        cal._day(ordinal)
    assert len(cal._day_cache) == 4096
    cal._day(first + 4096)
    assert len(cal._day_cache) == 1


def test_a_year_of_one_is_a_year() -> None:
    assert PrimeCalendar((NAS_WEEKDAY,) * 7, year=1).out_of_date(utc(2030, 1, 1))


def test_describe_skips_days_without_prime_time_wherever_they_are() -> None:
    week = (ALL_NONPRIME, *(NAS_WEEKDAY,) * 4, ALL_PRIME, ALL_NONPRIME)
    assert PrimeCalendar(week).describe() == (
        "prime Tue-Fri 06:00-19:00, Sat all day, no holidays, UTC"
    )


def test_holidays_at_the_edges_of_the_look_ahead_count() -> None:
    # In an all-prime week only holidays change the period; the look-ahead is 732 days
    # either way, both ends included.
    start = dt.date(2026, 1, 1)
    noon = utc(2026, 1, 1, 12)
    ahead, behind = start + dt.timedelta(732), start - dt.timedelta(732)
    dated = PrimeCalendar((ALL_PRIME,) * 7, holidays=frozenset({ahead, behind}))
    assert dated.next_change(noon) == utc(ahead.year, ahead.month, ahead.day)
    after_behind = behind + dt.timedelta(1)
    assert dated.period_bounds(noon)[0] == utc(
        after_behind.year, after_behind.month, after_behind.day
    )
    # February 29, 2028 is 732 days after February 27, 2026, with none between.
    leap = PrimeCalendar((ALL_PRIME,) * 7, annual_holidays=frozenset({(2, 29)}))
    assert leap.next_change(utc(2026, 2, 27, 12)) == utc(2028, 2, 29)
    # February 29, 2024 is the first day of the look back from March 2, 2026: asked
    # afresh (not from the answer just kept), it still ends the period's start.
    fresh = PrimeCalendar((ALL_PRIME,) * 7, annual_holidays=frozenset({(2, 29)}))
    assert fresh.period_bounds(utc(2026, 3, 2, 12))[0] == utc(2024, 3, 1)


def test_the_kept_answer_serves_its_whole_period_without_computing_a_day() -> None:
    cal = PrimeCalendar.default()
    monday = utc(2026, 1, 5)  # prime from 06:00 to 19:00
    assert cal.period_bounds(monday + 12 * H) == (monday + 6 * H, monday + 19 * H)
    cal._day_cache.clear()
    for t in (monday + 6 * H, monday + 19 * H - 1):  # its first and last seconds
        assert cal.period_at(t) == "prime"
        assert cal.next_change(t) == monday + 19 * H
        assert cal.period_bounds(t) == (monday + 6 * H, monday + 19 * H)
    assert cal._day_cache == {}  # every answer came from the one kept


def test_the_look_back_reaches_the_first_day_of_the_calendar() -> None:
    cal = PrimeCalendar((ALL_PRIME,) * 7, annual_holidays=frozenset({(1, 1)}))
    assert cal.period_bounds(utc(1, 1, 3, 12)) == (utc(1, 1, 2), utc(2, 1, 1))


def test_the_look_ahead_ends_with_its_last_day_in_a_week_that_changes() -> None:
    # Mondays are non-prime, the other days prime; two years of holidays from Monday,
    # January 5, 2026 leave no prime time up to the last day of the look-ahead.
    week = (ALL_NONPRIME,) + (ALL_PRIME,) * 6
    monday = dt.date(2026, 1, 5)
    last = monday + dt.timedelta(732)  # Friday, January 7, 2028
    days = frozenset(monday + dt.timedelta(i) for i in range(733))
    assert PrimeCalendar(week, holidays=days - {last}).next_change(utc(2026, 1, 5, 12)) == utc(
        2028, 1, 7
    )
    assert PrimeCalendar(week, holidays=days).next_change(utc(2026, 1, 5, 12)) is None


def test_an_open_ended_answer_is_kept_for_its_own_second_alone() -> None:
    # All prime with one holiday 733 days after January 1, 2026: from that day's last
    # second the look-ahead (732 days) does not reach it; from the next second it does.
    holiday = dt.date(2026, 1, 1) + dt.timedelta(733)
    cal = PrimeCalendar((ALL_PRIME,) * 7, holidays=frozenset({holiday}))
    last = utc(2026, 1, 1, 23, 59, 59)
    assert cal.next_change(last) is None
    cal._day_cache.clear()
    assert cal.period_bounds(last) == (None, None)
    assert cal._day_cache == {}  # asked again at the same second: the kept answer
    assert cal.next_change(last + 1) == utc(holiday.year, holiday.month, holiday.day)


def test_a_boundary_inside_a_jump_at_midnight_moves_the_days_first_step() -> None:
    havana = resolve_timezone("America/Havana")
    # 2026-03-08, a Sunday: the clocks go from 00:00 to 01:00 (05:00 UTC). Midnight and
    # the prime start at 00:30 fall on the jump: the day is prime from it to noon.
    sunday = DaySlots(30 * 60, 12 * H)
    cal = PrimeCalendar((NAS_WEEKDAY,) * 5 + (ALL_NONPRIME, sunday), tz=havana)
    jump = utc(2026, 3, 8, 5)
    assert cal.period_bounds(jump + H) == (jump, utc(2026, 3, 8, 16))
    assert cal.period_at(jump - 1) == "nonprime"


def test_a_calendar_works_out_each_local_day_once(monkeypatch: pytest.MonkeyPatch) -> None:
    worked: list[tuple[dt.date, int]] = []

    def counted(tz: dt.tzinfo, day: dt.date, sec: int) -> int:
        worked.append((day, sec))
        return local_epoch(tz, day, sec)

    monkeypatch.setattr(calendar_module, "local_epoch", counted)
    cal = PrimeCalendar.default()
    monday = utc(2026, 1, 5)
    for t in (monday + 5 * H, monday + 12 * H, monday + 20 * H, monday + 2 * H):
        cal.period_bounds(t)
    assert (dt.date(2026, 1, 5), 6 * H) in worked
    assert len(worked) == len(set(worked))


def test_a_week_of_the_same_prime_slot_every_day_is_not_constant() -> None:
    cal = PrimeCalendar((NAS_WEEKDAY,) * 7)
    saturday = utc(2026, 1, 10)
    assert cal.period_at(saturday + 12 * H) == "prime"
    assert cal.period_bounds(saturday + 12 * H) == (saturday + 6 * H, saturday + 19 * H)
    assert PrimeCalendar.default().source == "<default>"


def test_an_all_prime_week_visits_only_the_days_around_holidays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    worked: set[dt.date] = set()

    def counted(tz: dt.tzinfo, day: dt.date, sec: int) -> int:
        worked.add(day)
        return local_epoch(tz, day, sec)

    monkeypatch.setattr(calendar_module, "local_epoch", counted)
    cal = PrimeCalendar((ALL_PRIME,) * 7, holidays=frozenset({dt.date(2026, 12, 25)}))
    assert cal.period_bounds(utc(2026, 6, 1, 12)) == (None, utc(2026, 12, 25))
    # June 1 itself, then December 24 and 25 (where the change is found): not every
    # day of the two years around.
    assert worked == {dt.date(2026, 6, 1), dt.date(2026, 12, 24), dt.date(2026, 12, 25)}


def test_the_look_back_ends_with_its_first_day_in_a_week_that_changes() -> None:
    # As the look-ahead, backwards: from Sunday, January 9, 2028 the look back reaches
    # Wednesday, January 7, 2026, 732 days before, and no further.
    week = (ALL_NONPRIME,) + (ALL_PRIME,) * 6
    sunday = dt.date(2028, 1, 9)
    first = sunday - dt.timedelta(732)  # Wednesday, January 7, 2026
    days = frozenset(first + dt.timedelta(i) for i in range(733))
    noon = utc(2028, 1, 9, 12)
    assert PrimeCalendar(week, holidays=days - {first}).period_bounds(noon)[0] == utc(2026, 1, 8)
    assert PrimeCalendar(week, holidays=days).period_bounds(noon)[0] is None
