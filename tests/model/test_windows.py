"""Time windows and weekly spans: parsing, opening and closing, fitting jobs in them.

T0 = 1_000_000 is Monday 1970-01-12 13:46:40 UTC, in prime time; MON_19 is 19:00 that
day, as an offset from T0.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from batchd.model import windows
from batchd.model.calendar import PrimeCalendar
from batchd.model.spans import (
    WEEK,
    WindowError,
    describe,
    parse_window,
    spans_of,
    week_intervals,
)
from batchd.model.times import local_epoch
from batchd.model.windows import (
    SpanWindow,
    Stopped,
    close_of,
    fits,
    longest_opening,
    make_window,
    next_fit,
    next_opening,
    openings,
)

T0 = 1_000_000
H = 3600
MON_19 = 18_800


def test_parse_window_forms() -> None:
    assert parse_window("any") == "any"
    assert parse_window(" Prime ") == "prime"
    assert parse_window("NONPRIME") == "nonprime"
    assert parse_window("mon-fri 7:00-19:30") == ["Mon-Fri 07:00-19:30"]
    assert parse_window(
        [
            "Monday-Thursday 20:00-06:00",
            "fri 20:00-mon 6:00",
            "Sat,Sun 00:00-24:00",
            "daily 12:00-13:00",
        ]
    ) == [
        "Mon-Thu 20:00-06:00",
        "Fri 20:00-Mon 06:00",
        "Sat,Sun 00:00-24:00",
        "Mon-Sun 12:00-13:00",
    ]
    assert parse_window(["Fri-Mon 01:00-02:00", "Mon,Wed,Fri 01:00-02:00"]) == [
        "Fri-Mon 01:00-02:00",
        "Mon,Wed,Fri 01:00-02:00",
    ]


@pytest.mark.parametrize(
    "value,message",
    [
        ("Fryday 20:00-Mon 07:00", "bad day 'Fryday' in 'Fryday 20:00-Mon 07:00' (Mon, Tue,"),
        (["Mon-Fri 7-19"], "cannot read the span 'Mon-Fri 7-19': a span is 'DAYS HH:MM-HH:MM'"),
        ("Mon 25:00-26:00", "bad time '25:00' in 'Mon 25:00-26:00' (00:00 to 23:59)"),
        ("Mon 24:00-01:00", "bad time '24:00' in 'Mon 24:00-01:00' (00:00 to 23:59)"),
        ("Mon 07:60-08:00", "bad time '07:60'"),
        ("Mon 07:00-07:00", "'Mon 07:00-07:00' is empty: it ends when it starts"),
        ("Mon 07:00-Mon 07:00", "starts where it ends; for a queue that is always open use"),
        ("Mon-Fri 20:00-Tue 01:00", "a span across days starts on one day"),
        (["prime", "Mon 07:00-08:00"], "'prime' cannot be mixed with spans"),
        ([], 'expected "any", "prime", "nonprime", or a list of spans'),
        (3, 'expected "any", "prime", "nonprime", or a list of spans'),
        ([3], "a span must be a string, got 3"),
        ("Mon,,Tue 07:00-08:00", "empty day in 'Mon,,Tue 07:00-08:00'"),
    ],
)
def test_parse_window_errors(value: Any, message: str) -> None:
    with pytest.raises(WindowError) as err:
        parse_window(value)
    assert message in str(err.value)


def test_span_windows_in_local_time() -> None:
    utc = PrimeCalendar.default()
    assert week_intervals(spans_of(["Fri 20:00-Mon 07:00"])) == [
        (0, 7 * 3600),
        (4 * 86_400 + 20 * H, WEEK),
    ]
    nights = make_window(["Mon-Fri 23:00-04:00"], utc)
    assert nights.text == "Mon-Fri 23:00-04:00"
    assert not nights.is_open(T0) and nights.next_change(T0) == T0 + MON_19 + 4 * H
    got = [(o - T0, c - T0) for o, c in openings(nights, T0, 5 * 86_400) if c is not None]
    assert got[:2] == [(MON_19 + 4 * H, MON_19 + 9 * H), (MON_19 + 28 * H, MON_19 + 33 * H)]
    assert len(got) == 5  # Mon..Fri nights; Friday's ends Saturday 04:00
    assert longest_opening(nights, T0) == 5 * H
    assert next_fit(nights, T0, 6 * H) is None
    assert next_fit(nights, T0, 5 * H) == T0 + MON_19 + 4 * H
    assert fits(nights, T0 + MON_19 + 4 * H, 5 * H) and not fits(
        nights, T0 + MON_19 + 4 * H + 1, 5 * H
    )
    # Spans that touch or overlap make one opening: Thursday night runs into Friday 06:00,
    # Friday 20:00 into the weekend and Monday 06:00.
    spans = ["Mon-Thu 20:00-06:00", "Fri 20:00-Mon 06:00"]
    joined = make_window(spans, utc)
    week_nights = [(d * 86_400 + 20 * H, (d + 1) * 86_400 + 6 * H) for d in range(4)]
    weekend = (4 * 86_400 + 20 * H, WEEK)
    assert week_intervals(spans_of(spans)) == [(0, 6 * H), *week_nights, weekend]
    assert longest_opening(joined, T0) == 58 * H
    always = make_window(["Mon 00:00-Sun 24:00"], utc)
    assert always.is_open(T0) and always.next_change(T0) is None
    assert longest_opening(always, T0) is None and next_fit(always, T0, 10**6) == T0
    # Prime time of the calendar: the weekend is the longest non-prime opening.
    assert longest_opening(make_window("nonprime", utc), T0) == 59 * H
    assert make_window("any", utc).next_change(T0) is None


def test_span_windows_across_daylight_saving_time() -> None:
    la = ZoneInfo("America/Los_Angeles")
    cal = PrimeCalendar.default(la)
    night = make_window(["Sat 20:00-Sun 08:00"], cal)
    # 2026-03-08 is the spring-forward Sunday: the night is an hour shorter.
    sat = int(dt.datetime(2026, 3, 7, 12, 0, tzinfo=la).timestamp())
    ((start, end),) = openings(night, sat, 86_400)
    assert end is not None and end - start == 11 * H
    assert dt.datetime.fromtimestamp(start, la).hour == 20
    assert dt.datetime.fromtimestamp(end, la).hour == 8
    # A boundary the clocks skip (02:30 that Sunday) happens at the jump.
    skip = make_window(["Sun 02:30-04:00"], cal)
    sun = int(dt.datetime(2026, 3, 8, 0, 0, tzinfo=la).timestamp())
    opens = skip.next_change(sun)
    assert opens is not None and dt.datetime.fromtimestamp(opens, la).strftime("%H:%M") == "03:00"
    assert skip.is_open(opens) and not skip.is_open(opens - 1)


def test_a_stopped_queue_never_opens() -> None:
    stopped = Stopped()
    assert not stopped.is_open(T0) and stopped.next_change(T0) is None
    assert next_opening(stopped, T0) is None and openings(stopped, T0) == []
    assert longest_opening(stopped, T0) == 0 and next_fit(stopped, T0, 60) is None


def test_an_opening_exactly_two_weeks_ahead_is_beyond_the_horizon() -> None:
    utc = PrimeCalendar.default()
    nights = make_window(["Mon-Fri 23:00-04:00"], utc)
    opens = next_opening(nights, T0)
    assert opens == T0 + MON_19 + 4 * H
    # Looking from one opening, the one 14 days later is out; the one 7 days later is in.
    starts = [o for o, _ in openings(nights, opens)]
    assert starts[-1] < opens + 14 * 86_400 and opens + 7 * 86_400 in starts


def test_window_texts_and_the_always_open_window() -> None:
    utc = PrimeCalendar.default()
    assert make_window("any", utc).text == "any" and make_window(" ANY ", utc).is_open(T0)
    assert Stopped().text == "stopped"
    prime = make_window(" Prime", utc)
    assert prime.text == "prime" and prime.is_open(T0)
    assert make_window("nonprime", utc).text == "nonprime"
    # A span named twice is shown once; distinct spans are joined with a comma.
    twice = make_window(["Mon 08:00-09:00", "mon 8:00-9:00", "Tue 08:00-09:00"], utc)
    assert twice.text == "Mon 08:00-09:00, Tue 08:00-09:00"


def test_a_span_window_needs_a_span() -> None:
    with pytest.raises(WindowError, match=r"^a span window needs at least one span \("):
        SpanWindow(())


def test_a_span_opens_at_its_first_second_and_closes_at_its_last() -> None:
    utc = PrimeCalendar.default()
    monday = T0 - (13 * H + 46 * 60 + 40)  # Monday 00:00 UTC
    win = make_window(["Mon 08:00-09:00"], utc)
    assert not win.is_open(monday + 8 * H - 1)
    assert win.is_open(monday + 8 * H) and win.is_open(monday + 9 * H - 1)
    assert not win.is_open(monday + 9 * H)
    assert win.next_change(monday + 8 * H) == monday + 9 * H
    assert win.next_change(monday + 9 * H) == monday + WEEK + 8 * H
    assert close_of(win, monday + 8 * H + 5) == monday + 9 * H
    assert close_of(win, monday + 9 * H) is None
    # A span ending at midnight hands over to the next day's first step.
    late = make_window(["Mon 22:00-24:00", "Tue 00:00-01:00"], utc)
    assert late.next_change(monday + 22 * H) == monday + 25 * H
    assert late.is_open(monday + 24 * H) and not late.is_open(monday + 25 * H)


def test_two_span_boundaries_inside_one_clock_jump_make_one_step() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    cal = PrimeCalendar.default(berlin)
    # 2026-03-29, a Sunday: the clocks go from 02:00 to 03:00. A span inside the skipped
    # hour opens and closes at the same instant: it is never open that day.
    inside = make_window(["Sun 02:15-02:45"], cal)
    sunday = int(dt.datetime(2026, 3, 29, 0, 0, tzinfo=berlin).timestamp())
    jump = int(dt.datetime(2026, 3, 29, 3, 0, tzinfo=berlin).timestamp())
    assert jump - sunday == 2 * H
    assert not inside.is_open(jump) and not inside.is_open(jump - 1)
    following = int(dt.datetime(2026, 4, 5, 2, 15, tzinfo=berlin).timestamp())
    assert inside.next_change(sunday) == following
    # One boundary in the jump and one after: open from the jump.
    after = make_window(["Sun 02:30-04:00"], cal)
    assert after.next_change(sunday) == jump and after.is_open(jump)
    assert after.next_change(jump) == jump + H


def test_the_day_cache_is_bounded() -> None:
    win = SpanWindow(tuple(spans_of(["Mon 08:00-09:00"])))
    noon = 12 * H
    for day in range(4096):
        win.is_open(day * 86_400 + noon)
    assert len(win._cache) == 4096
    win.is_open(4096 * 86_400 + noon)
    assert len(win._cache) == 1
    assert win.is_open(4 * 86_400 + 8 * H)  # 1970-01-05 was a Monday


@pytest.mark.parametrize(
    "value,message",
    [
        (
            "Mo 07:00-08:00",
            "bad day 'Mo' in 'Mo 07:00-08:00' (Mon, Tue, Wed, Thu, Fri, Sat, Sun, "
            "a range like Mon-Fri or a list like Sat,Sun)",
        ),
        ("Mon 07:00-24:01", "bad time '24:01' in 'Mon 07:00-24:01' (00:00 to 24:00)"),
        ("Mon 07:00-25:00", "bad time '25:00' in 'Mon 07:00-25:00' (00:00 to 24:00)"),
        ("Mon 07:00-08:60", "bad time '08:60' in 'Mon 07:00-08:60' (00:00 to 24:00)"),
        (
            "Mon,Tue 20:00-Wed 01:00",
            "'Mon,Tue 20:00-Wed 01:00': a span across days starts on one day "
            "(e.g. 'Fri 20:00-Mon 07:00')",
        ),
        (
            "daily 20:00-Wed 01:00",
            "'daily 20:00-Wed 01:00': a span across days starts on one day",
        ),
        (
            "Mon  07:00-Mon 07:00",
            "'Mon 07:00-Mon 07:00' starts where it ends; for a queue that is always open "
            'use window = "any"',
        ),
        (
            "Tue 07:00-07:00",
            "'Tue 07:00-07:00' is empty: it ends when it starts (a whole day is 00:00-24:00)",
        ),
        (
            [" Any ", "Mon 07:00-08:00"],
            "'Any' cannot be mixed with spans: use window = \"any\" on its own",
        ),
        ("Mon, 07:00-08:00", "empty day in 'Mon, 07:00-08:00' (a span is 'DAYS HH:MM-HH:MM'"),
    ],
)
def test_parse_window_errors_say_what_is_allowed(value: Any, message: str) -> None:
    with pytest.raises(WindowError) as err:
        parse_window(value)
    assert str(err.value).startswith(message)


def test_span_days_and_labels() -> None:
    assert parse_window("all 07:00-08:00") == ["Mon-Sun 07:00-08:00"]
    assert parse_window(" DAILY 07:00-24:00") == ["Mon-Sun 07:00-24:00"]
    assert parse_window("tues,THURSDAY 0:05-1:00") == ["Tue,Thu 00:05-01:00"]
    assert parse_window("Sat-Sun 07:00-08:00") == ["Sat,Sun 07:00-08:00"]
    assert parse_window("Sun-Tue 07:00-08:00") == ["Sun-Tue 07:00-08:00"]
    assert parse_window("Sun,Mon 07:00-08:00") == ["Sun,Mon 07:00-08:00"]
    assert parse_window("Wed-Tue 07:00-08:00") == ["Mon-Sun 07:00-08:00"]
    assert parse_window("Mon,Mon-Tue,Sun 07:00-08:00") == ["Mon,Tue,Sun 07:00-08:00"]
    assert parse_window("Fri 07:00-08:00") == ["Fri 07:00-08:00"]
    assert parse_window("Sun 20:00-Mon 07:00") == ["Sun 20:00-Mon 07:00"]
    assert parse_window("Mon 20:00-Sun 24:00") == ["Mon 20:00-Sun 24:00"]


def test_spans_in_seconds_of_the_week() -> None:
    D = 86_400
    (across,) = spans_of("Sun 20:00-Mon 07:00")
    assert (across.start, across.end) == (6 * D + 20 * H, WEEK + 7 * H)
    (forward,) = spans_of("Mon 20:00-Tue 07:00")
    assert (forward.start, forward.end) == (20 * H, D + 7 * H)
    night = spans_of("Sat,Sun 23:00-01:30")
    assert [(s.start, s.end) for s in night] == [
        (5 * D + 23 * H, 6 * D + H + 1800),
        (6 * D + 23 * H, WEEK + H + 1800),
    ]
    (day,) = spans_of(["Wed 00:00-24:00"])
    assert (day.start, day.end) == (2 * D, 3 * D)
    assert week_intervals(night) == [
        (0, H + 1800),
        (5 * D + 23 * H, 6 * D + H + 1800),
        (6 * D + 23 * H, WEEK),
    ]
    # Spans that touch make one interval; a span of the whole week is the whole week.
    touching = spans_of(["Mon 08:00-09:00", "Mon 09:00-10:00", "Mon 09:30-09:45"])
    assert week_intervals(touching) == [(8 * H, 10 * H)]
    assert week_intervals(spans_of(["Mon 00:00-Sun 24:00", "Tue 01:00-02:00"])) == [(0, WEEK)]
    apart = spans_of(["Tue 01:00-02:00", "Mon 08:00-09:00"])
    assert week_intervals(apart) == [(8 * H, 9 * H), (D + H, D + 2 * H)]


def test_describe_shows_a_window_as_qstat_does() -> None:
    assert describe("prime") == "prime"
    assert describe(["Mon-Fri 07:00-19:30", "Sat 10:00-12:00"]) == (
        "Mon-Fri 07:00-19:30, Sat 10:00-12:00"
    )
    assert describe(("Sun 01:00-02:00",)) == "Sun 01:00-02:00"


def test_fitting_a_job_in_a_window() -> None:
    utc = PrimeCalendar.default()
    monday = T0 - (13 * H + 46 * 60 + 40)
    nights = make_window(["Mon-Fri 23:00-04:00"], utc)
    assert not fits(nights, T0, 60)  # closed at T0: nothing fits, however short
    two = make_window(["Mon 08:00-09:00", "Mon 10:00-14:00"], utc)
    # The first opening is too short for two hours; the second is the answer.
    assert next_fit(two, monday + 7 * H, 2 * H) == monday + 10 * H
    # An opening exactly at the end of the horizon is beyond it.
    assert next_fit(two, monday + 7 * H, 60, horizon=H) is None
    assert next_fit(two, monday + 7 * H, 60, horizon=H + 1) == monday + 8 * H
    uneven = make_window(["Mon 20:00-22:00", "Wed 08:00-18:00"], utc)
    assert longest_opening(uneven, monday, 86_400) == 2 * H
    assert longest_opening(uneven, monday) == 10 * H


def test_the_longest_opening_is_looked_for_from_the_time_given() -> None:
    friday = dt.date(2026, 3, 6)
    cal = PrimeCalendar(PrimeCalendar.default().days, holidays=frozenset({friday}), year=2026)
    monday = int(dt.datetime(2026, 3, 2, tzinfo=dt.UTC).timestamp())
    # Thursday 19:00 to Monday 06:00: the holiday joins the weekend.
    assert longest_opening(make_window("nonprime", cal), monday) == 83 * H


def test_a_span_window_changes_on_its_own_local_day() -> None:
    la = ZoneInfo("America/Los_Angeles")
    win = make_window(["Sun 21:00-22:00"], PrimeCalendar.default(la))
    # Sunday 20:00 in Los Angeles is Monday 04:00 UTC: the change is still that Sunday.
    sunday_20 = int(dt.datetime(2026, 3, 1, 20, 0, tzinfo=la).timestamp())
    assert win.next_change(sunday_20) == sunday_20 + H
    assert close_of(win, sunday_20 + H) == sunday_20 + 2 * H


def test_bad_days_in_ranges_and_second_days_name_the_span() -> None:
    for span, day in (("Mon-Xyz 07:00-08:00", "Xyz"), ("Mon 20:00-Xyz 07:00", "Xyz")):
        with pytest.raises(WindowError) as err:
            parse_window(span)
        assert str(err.value).startswith(f"bad day {day!r} in {span!r} (Mon, Tue")
    with pytest.raises(WindowError, match=r"^bad day 'MONX' in 'MONX 20:00-Tue 07:00'"):
        parse_window("MONX 20:00-Tue 07:00")


def test_a_span_to_the_end_of_the_week_and_one_from_midnight() -> None:
    utc = PrimeCalendar.default()
    assert week_intervals(spans_of("Sun 20:00-24:00")) == [(6 * 86_400 + 20 * H, WEEK)]
    monday = T0 - (13 * H + 46 * 60 + 40)
    tuesday = make_window(["Tue 00:00-01:00"], utc)
    assert tuesday.is_open(monday + 86_400) and not tuesday.is_open(monday + 86_400 - 1)


def test_a_span_window_is_open_by_its_own_local_day() -> None:
    kiritimati = ZoneInfo("Pacific/Kiritimati")  # UTC+14: its Monday starts on Sunday UTC
    win = make_window(["Mon 08:00-09:00"], PrimeCalendar.default(kiritimati))
    monday_0830 = int(dt.datetime(2026, 3, 2, 8, 30, tzinfo=kiritimati).timestamp())
    assert win.is_open(monday_0830) and not win.is_open(monday_0830 + H)


def test_marks_inside_one_clock_jump_leave_the_steps_before_it_alone() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    # 2026-03-29: 02:00 becomes 03:00. The marks 02:15, 02:30 and 02:45 all fall on the
    # jump and make one step, the last one's (closed); the step at 01:00 stays.
    win = make_window(["Sun 01:00-02:15", "Sun 02:30-02:45"], PrimeCalendar.default(berlin))
    one = int(dt.datetime(2026, 3, 29, 1, 0, tzinfo=berlin).timestamp())
    jump = one + H  # 03:00 CEST
    assert not win.is_open(one - 1) and win.is_open(one) and win.is_open(one + H // 2)
    assert win.is_open(jump - 1) and not win.is_open(jump)
    assert win.next_change(one) == jump


def test_a_span_window_works_out_each_local_day_once(monkeypatch: pytest.MonkeyPatch) -> None:
    worked: list[dt.date] = []

    def counted(tz: dt.tzinfo, day: dt.date, sec: int) -> int:
        worked.append(day)
        return local_epoch(tz, day, sec)

    monkeypatch.setattr(windows, "local_epoch", counted)
    win = SpanWindow(tuple(spans_of(["Mon 08:00-09:00"])))
    monday = 4 * 86_400  # 1970-01-05
    assert [win.is_open(monday + h * H) for h in (7, 8, 9)] == [False, True, False]
    assert win.next_change(monday + 8 * H) == monday + 9 * H
    assert worked == [dt.date(1970, 1, 5)] * 3  # midnight, 08:00 and 09:00, once


def test_a_span_opening_inside_a_jump_at_midnight_opens_at_the_jump() -> None:
    havana = ZoneInfo("America/Havana")
    # 2026-03-08, a Sunday: the clocks go from 00:00 to 01:00 (05:00 UTC). Midnight and
    # the opening at 00:30 both fall on the jump: one step, open.
    win = make_window(["Sun 00:30-12:00"], PrimeCalendar.default(havana))
    jump = int(dt.datetime(2026, 3, 8, 5, 0, tzinfo=dt.UTC).timestamp())
    assert [win.is_open(jump - 1), win.is_open(jump)] == [False, True]
    assert win.next_change(jump - 1) == jump
    assert win.next_change(jump) == jump + 11 * H  # noon, EDT
