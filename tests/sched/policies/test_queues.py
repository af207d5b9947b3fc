"""Queue windows and stopped queues as the gate's classes, and what a waiting job is told."""

from __future__ import annotations

import datetime as dt

from views import View, ids, job

from batchd.model.calendar import PrimeCalendar
from batchd.model.windows import Stopped
from batchd.sched.core.order import fcfs_key
from batchd.sched.policies.gate import Shifted
from batchd.sched.policies.inorder import InOrderPolicy
from batchd.sched.policies.queues import QueueClass, QueueSpec, queue_classes, queue_gate

MONDAY = 4 * 86400  # 1970-01-05 00:00 UTC, a Monday: time 0 of the emulated clock
PLUS_ONE = dt.timezone(dt.timedelta(hours=1))


def test_a_queue_is_gated_when_stopped_or_windowed() -> None:
    assert not QueueSpec("q").gated
    assert QueueSpec("q", started=False).gated
    assert QueueSpec("q", window="prime").gated
    assert QueueSpec("q", window=["Mon-Fri 07:00-19:30"], started=False).gated


def test_jobs_are_classed_by_their_queue() -> None:
    specs = [
        QueueSpec("day", ["Mon-Fri 07:00-19:30"]),
        QueueSpec("off", started=False),
        QueueSpec("off-day", ["Mon-Fri 07:00-19:30"], started=False),
        QueueSpec("any"),
    ]
    classify = queue_classes(specs, PrimeCalendar.default(), MONDAY)
    day = classify(job(1, 1, 5, queue="day"))
    assert isinstance(day, QueueClass) and day.name == "day"
    assert isinstance(day.window, Shifted) and day.window.origin == MONDAY
    assert day.window.text == "Mon-Fri 07:00-19:30"
    assert not day.window.is_open(0) and day.window.next_change(0) == 7 * 3600
    assert day.window.is_open(7 * 3600) and day.window.next_change(7 * 3600) == 19.5 * 3600
    assert day.origin == MONDAY and day.tz is dt.UTC
    for stopped in ("off", "off-day"):
        cls = classify(job(2, 1, 5, queue=stopped))
        assert isinstance(cls, QueueClass) and isinstance(cls.window, Stopped)
        assert cls.name == stopped
    assert classify(job(3, 1, 5, queue="any")) is None
    assert classify(job(4, 1, 5, queue="unknown")) is None


def test_without_an_origin_the_window_is_the_calendars_own() -> None:
    classify = queue_classes([QueueSpec("night", "nonprime")], PrimeCalendar.default())
    cls = classify(job(1, 1, 5, queue="night"))
    assert cls is not None and not isinstance(cls.window, Shifted)
    assert cls.window.text == "nonprime"
    assert cls.window.is_open(0)  # a Thursday 00:00 UTC: non-prime


def test_waits_are_told_in_the_calendars_local_time() -> None:
    calendar = PrimeCalendar.default(PLUS_ONE)
    classify = queue_classes(
        [QueueSpec("day", ["Mon-Fri 07:00-19:30"]), QueueSpec("off", started=False)],
        calendar,
        MONDAY,
    )
    day = classify(job(1, 1, 5, queue="day"))
    assert day is not None and day.stamp(0) == "1970-01-05 01:00:00"
    assert day.closed(6 * 3600) == (
        "queue day is closed (Mon-Fri 07:00-19:30), opens at 1970-01-05 07:00:00"
    )
    assert day.closed(None) == "queue day is closed (Mon-Fri 07:00-19:30) and does not open"
    assert day.unfit(job(2, 1, 5400), 3600) == (
        "walltime 01:30:00 does not fit before queue day closes at 1970-01-05 02:00:00"
    )
    off = classify(job(3, 1, 5, queue="off"))
    assert off is not None and off.closed(None) == "queue off is stopped"
    assert off.closed(100) == "queue off is stopped"


def test_the_queue_gate_holds_the_jobs_of_closed_queues() -> None:
    inner = InOrderPolicy("fcfs", fcfs_key)
    specs = [QueueSpec("day", ["Mon-Fri 07:00-19:30"]), QueueSpec("batch")]
    gate = queue_gate(inner, specs, PrimeCalendar.default(), origin=MONDAY,
                      overflow="requeue", must_fit=False)  # fmt: skip
    assert (gate.name, gate.inner, gate.overflow, gate.must_fit) == (
        "fcfs",
        inner,
        "requeue",
        False,
    )
    view = View(free=4)
    day, batch = job(1, 1, 5, queue="day"), job(2, 1, 5, queue="batch")
    gate.job_submitted(view, day)
    gate.job_submitted(view, batch)
    assert ids(gate.schedule(view)) == [2]
    assert gate.explain(day, 0) == (
        "queue day is closed (Mon-Fri 07:00-19:30), opens at 1970-01-05 07:00:00"
    )
    defaults = queue_gate(InOrderPolicy("fcfs", fcfs_key), specs, PrimeCalendar.default())
    assert (defaults.overflow, defaults.must_fit) == ("kill", True)
    cls = defaults.classify(day)
    assert cls is not None and not isinstance(cls.window, Shifted)  # no origin: none
