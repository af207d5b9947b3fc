"""The queue orders and the sorted waiting queue, on jobs whose order is worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.order import (
    ORDERS,
    OrderedQueue,
    fcfs_key,
    ljf_key,
    prio_key,
    sjf_key,
)


def job(id: int, submit: int, estimate: int, priority: int = 0, cls: int = 0) -> Job:
    j = Job(id, submit, 1 + id % 3, estimate, estimate)
    j.priority = priority
    j.priority_class = cls
    return j


def ordered(key, jobs: list[Job]) -> list[int]:  # type: ignore[no-untyped-def]
    return [j.id for j in sorted(jobs, key=key)]


def test_the_orders_by_name() -> None:
    assert {"fcfs": fcfs_key, "sjf": sjf_key, "ljf": ljf_key} == ORDERS


def test_higher_priority_comes_first_in_every_order() -> None:
    # Job 1 came first and is shortest, job 2 has priority 5, job 3 priority -1.
    jobs = [job(1, 0, 10), job(2, 50, 99, priority=5), job(3, 0, 1, priority=-1), job(4, 9, 50)]
    assert ordered(fcfs_key, jobs) == [2, 1, 4, 3]
    assert ordered(sjf_key, jobs) == [2, 1, 4, 3]
    assert ordered(ljf_key, jobs) == [2, 4, 1, 3]
    assert ordered(prio_key, jobs) == [2, 1, 4, 3]


def test_each_order_ranks_equal_priorities_by_its_own_rule() -> None:
    jobs = [job(5, 30, 10), job(2, 10, 300), job(3, 10, 20), job(4, 20, 20), job(1, 40, 20)]
    assert ordered(fcfs_key, jobs) == [2, 3, 4, 5, 1]  # submit, then id
    assert ordered(sjf_key, jobs) == [5, 3, 4, 1, 2]  # estimate, submit, id
    assert ordered(ljf_key, jobs) == [2, 3, 4, 1, 5]  # longest first
    assert fcfs_key(jobs[0]) == (0, 30, 5)
    assert sjf_key(jobs[0]) == (0, 10, 30, 5)
    assert ljf_key(jobs[0]) == (0, -10, 30, 5)


def test_prio_fifo_ranks_by_class_after_the_pbs_priority() -> None:
    jobs = [job(1, 0, 5, cls=2), job(2, 9, 5, cls=0), job(3, 5, 5, cls=0), job(4, 1, 5, 1, cls=3)]
    assert ordered(prio_key, jobs) == [4, 3, 2, 1]
    assert prio_key(jobs[3]) == (-1, 3, 1, 4)


def test_insert_keeps_the_lists_aligned_and_sorted() -> None:
    queue = OrderedQueue(fcfs_key)
    assert len(queue) == 0 and list(queue) == []
    a, b, c = job(1, 10, 30), job(2, 20, 0), job(3, 5, 7)
    assert queue.insert(a) == 0
    assert queue.insert(b, start=40) == 1
    assert queue.changes == 0  # appended at the end
    assert queue.insert(c, start=9, shape=(6, 70)) == 0  # ahead of both: a change
    assert queue.changes == 1
    assert list(queue) == [c, a, b] and len(queue) == 3
    assert queue.keys == [fcfs_key(c), fcfs_key(a), fcfs_key(b)]
    assert queue.widths == [6, a.width, b.width]
    assert queue.durations == [70, 30, 1]  # an estimate of 0 holds its nodes a second
    assert queue.starts == [9, NEVER, 40]
    assert [queue.index(j) for j in (c, a, b)] == [0, 1, 2]
    middle = job(4, 15, 3)
    assert queue.insert(middle, shape=(2, 0)) == 2  # a chosen shape is taken as it is
    assert queue.durations == [70, 30, 0, 1] and queue.widths[2] == 2
    assert queue.changes == 2


def test_membership_and_index_know_the_job_itself() -> None:
    queue = OrderedQueue(fcfs_key)
    a, b = job(1, 10, 30), job(2, 20, 5)
    queue.insert(a)
    queue.insert(b)
    twin = job(1, 10, 30)  # equal key, not the queued job
    assert a in queue and b in queue
    assert twin not in queue
    assert job(3, 30, 5) not in queue  # past the end
    assert job(0, 0, 5) not in queue  # before the first
    with pytest.raises(KeyError, match="job 3 is not waiting in this queue"):
        queue.index(job(3, 30, 5))
    with pytest.raises(KeyError, match="job 1 is not waiting"):
        queue.index(twin)


def test_remove_and_pop_front() -> None:
    queue = OrderedQueue(sjf_key)
    jobs = [job(i, i, 10 * i) for i in range(1, 6)]
    for j in jobs:
        queue.insert(j, start=100 + j.id)
    queue.remove(jobs[2])
    assert [j.id for j in queue] == [1, 2, 4, 5]
    assert queue.starts == [101, 102, 104, 105]
    assert queue.durations == [10, 20, 40, 50]
    assert queue.widths == [j.width for j in queue]
    assert queue.keys == [sjf_key(j) for j in queue]
    assert queue.changes == 1
    assert queue.pop_front(2) == jobs[:2]
    assert [j.id for j in queue] == [4, 5] and queue.starts == [104, 105]
    assert queue.durations == [40, 50] and queue.keys == [sjf_key(j) for j in jobs[3:]]
    assert queue.widths == [jobs[3].width, jobs[4].width]
    assert queue.changes == 2
    with pytest.raises(KeyError):
        queue.remove(jobs[2])


def test_arrays_hold_the_widths_durations_and_starts() -> None:
    queue = OrderedQueue(fcfs_key)
    queue.insert(job(1, 0, 30), start=5)
    queue.insert(job(2, 1, 0), shape=(7, 12))
    widths, durations = queue.arrays()
    assert widths.dtype == np.int64 and durations.dtype == np.int64
    assert widths.tolist() == [2, 7] and durations.tolist() == [30, 12]
    starts = queue.starts_array()
    assert starts.dtype == np.int64 and starts.tolist() == [5, NEVER]


def test_an_empty_queue_gives_empty_int64_arrays() -> None:
    queue = OrderedQueue(fcfs_key)
    widths, durations = queue.arrays()
    starts = queue.starts_array()
    assert [a.dtype for a in (widths, durations, starts)] == [np.dtype(np.int64)] * 3
    assert [a.shape for a in (widths, durations, starts)] == [(0,)] * 3


def test_a_key_equal_to_the_last_goes_before_it_as_a_change() -> None:
    queue = OrderedQueue(fcfs_key)
    first, twin = job(1, 10, 30), job(1, 10, 30)
    queue.insert(first)
    assert queue.insert(twin) == 0
    assert queue.jobs == [twin, first] and queue.changes == 1


def test_removing_jobs_not_waiting_that_sort_last_leaves_the_queue() -> None:
    queue = OrderedQueue(fcfs_key)
    a, b = job(1, 10, 30), job(2, 20, 30)
    queue.insert(a)
    queue.insert(b)
    queue.remove_many([job(3, 99, 1), b])
    assert queue.jobs == [a] and queue.changes == 1


def test_removing_many_counts_one_change_more() -> None:
    queue = OrderedQueue(fcfs_key)
    a, b, c = job(1, 10, 30), job(2, 20, 30), job(3, 5, 30)
    queue.insert(a)
    queue.insert(b)
    queue.insert(c)  # at the front: one change
    queue.remove_many([a])
    assert queue.changes == 2 and queue.jobs == [c, b]
