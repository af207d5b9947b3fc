"""An advance reservation's queue: priority then submission order, first fit on its nodes."""

from __future__ import annotations

from batchd.model.job import Job
from batchd.sched.policies.reserved import ReservationQueue


def job(i: int, submit: int, width: int, priority: int = 0) -> Job:
    return Job(id=i, submit=submit, width=width, estimate=10, runtime=10, priority=priority)


def test_jobs_wait_by_priority_then_submission_then_id() -> None:
    queue = ReservationQueue()
    a, b, c, d = job(1, 5, 1), job(2, 3, 1), job(3, 9, 1, priority=2), job(4, 3, 1)
    for j in (a, b, c, d):
        queue.add(j)
    assert queue.waiting() == [c, b, d, a]
    assert len(queue) == 4
    queue.remove(b)
    assert queue.waiting() == [c, d, a]
    assert len(queue) == 3


def test_select_takes_the_first_fit_in_order_and_keeps_the_rest() -> None:
    queue = ReservationQueue()
    wide, narrow, mid, last = job(1, 0, 4), job(2, 1, 1), job(3, 2, 2), job(4, 3, 1)
    for j in (wide, narrow, mid, last):
        queue.add(j)
    assert queue.select(3) == [narrow, mid]  # the wide one waits, the narrow pass it
    assert queue.waiting() == [wide, last]
    assert queue.select(0) == []
    assert queue.waiting() == [wide, last]
    assert queue.select(5) == [wide, last]  # exactly fills: 4 + 1
    assert len(queue) == 0


def test_select_with_nothing_that_fits_changes_nothing() -> None:
    queue = ReservationQueue()
    a = job(1, 0, 3)
    queue.add(a)
    assert queue.select(2) == []
    assert queue.waiting() == [a]
    assert queue.select(3) == [a]
