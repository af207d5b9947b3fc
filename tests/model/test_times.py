"""Durations as PBS writes them, their bounds, and local wall times across clock changes."""

from __future__ import annotations

import datetime as dt
import re
import time
from zoneinfo import ZoneInfo

import pytest

from batchd.model.times import (
    MAX_DURATION,
    TIME_MAX,
    hms,
    local_epoch,
    parse_duration,
    plausible_time,
    positive_duration,
    stamp,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0", 0),
        ("59", 59),
        ("75", 75),  # plain seconds may pass a minute
        ("1:59", 119),
        ("0:00:59", 59),
        ("01:59:59", 7199),
        ("100:00:00", 360_000),  # hours may pass a day
        (" 2:03:04 ", 7384),
    ],
)
def test_durations_in_every_form(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1:60:00", "'1:60:00': minutes and seconds must be below 60"),
        ("1:00:60", "'1:00:60': minutes and seconds must be below 60"),
        ("1:60", "'1:60': seconds must be below 60"),
        ("1h", "'1h' is not a duration: use seconds or [[HH:]MM:]SS"),
        ("1:2:3:4", "'1:2:3:4' is not a duration: use seconds or [[HH:]MM:]SS"),
    ],
)
def test_a_bad_duration_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_duration(text)
    assert str(refused.value) == says


def test_an_int_is_seconds_and_a_bool_is_refused() -> None:
    assert parse_duration(90) == 90
    with pytest.raises(ValueError) as refused:
        parse_duration(True)
    assert str(refused.value) == "expected seconds or HH:MM:SS"


def test_hms_pads_and_lets_hours_pass_a_day() -> None:
    assert hms(0) == "00:00:00"
    assert hms(3661) == "01:01:01"
    assert hms(7199) == "01:59:59"
    assert hms(5400) == "01:30:00"
    assert hms(100 * 3600 + 59) == "100:00:59"


def test_a_positive_duration_is_above_zero_and_at_most_ten_years() -> None:
    assert positive_duration(None, "walltime") is None
    assert positive_duration("00:00:01", "walltime") == 1
    assert positive_duration(MAX_DURATION, "walltime") == MAX_DURATION
    for value, says in [
        (0, "walltime must be positive"),
        ("0", "walltime must be positive"),
        (MAX_DURATION + 1, "walltime must be at most 87600:00:00 (3650 days)"),
        (1.5, "walltime must be seconds or HH:MM:SS"),
    ]:
        with pytest.raises(ValueError) as refused:
            positive_duration(value, "walltime")
        assert str(refused.value) == says


def test_plausible_times_are_the_years_1970_to_9999() -> None:
    assert plausible_time(0) == 0
    assert plausible_time(TIME_MAX) == TIME_MAX
    for value in (-1, TIME_MAX + 1):
        with pytest.raises(ValueError) as refused:
            plausible_time(value)
        assert str(refused.value) == (
            f"{value} is not a plausible time: use years 1970 to 9999 "
            "(0 to 253402300799 seconds since the epoch)"
        )


BERLIN = ZoneInfo("Europe/Berlin")


def test_local_epoch_on_an_ordinary_day() -> None:
    # 2024-01-15 is winter time, UTC+1: 08:00 local is 07:00 UTC.
    expected = int(dt.datetime(2024, 1, 15, 7, tzinfo=dt.UTC).timestamp())
    assert local_epoch(BERLIN, dt.date(2024, 1, 15), 8 * 3600) == expected


def test_local_epoch_of_a_skipped_wall_time_is_the_jump() -> None:
    # 2024-03-31 02:00 local jumps to 03:00: 02:30 does not exist; it maps to 01:00 UTC.
    jump = int(dt.datetime(2024, 3, 31, 1, tzinfo=dt.UTC).timestamp())
    assert local_epoch(BERLIN, dt.date(2024, 3, 31), 2 * 3600 + 1800) == jump
    assert local_epoch(BERLIN, dt.date(2024, 3, 31), 2 * 3600 + 1) == jump
    assert local_epoch(BERLIN, dt.date(2024, 3, 31), 3 * 3600) == jump


def test_local_epoch_of_a_repeated_wall_time_is_its_first() -> None:
    # 2024-10-27 03:00 local goes back to 02:00: 02:30 happens twice, first at 00:30 UTC.
    first = int(dt.datetime(2024, 10, 27, 0, 30, tzinfo=dt.UTC).timestamp())
    assert local_epoch(BERLIN, dt.date(2024, 10, 27), 2 * 3600 + 1800) == first


def test_stamp_shows_the_local_time_to_the_second() -> None:
    t = 1_700_000_000
    assert stamp(t) == time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", stamp(t))
    assert stamp(t + 1) != stamp(t)
