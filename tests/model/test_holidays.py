"""The holidays file's refusals, word for word, and the legacy YEAR-and-weekday line."""

from __future__ import annotations

import errno
from pathlib import Path

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
