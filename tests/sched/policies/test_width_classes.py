"""EASY's queue filed by width class: the counts, the classes kept up to date, when to merge."""

from __future__ import annotations

from views import job

from batchd.model.job import Job
from batchd.sched.core.order import fcfs_key, sjf_key
from batchd.sched.policies.easy_queue import WidthFiledQueue


def filed_ids(queue: WidthFiledQueue) -> dict[int, list[int]]:
    return {c: [e[3].id for e in filed] for c, filed in queue.filed().items() if filed}


def test_counts_follow_every_change() -> None:
    queue = WidthFiledQueue(fcfs_key)
    jobs = [job(1, 1, 5), job(2, 3, 5), job(3, 2, 5), job(4, 4, 5), job(5, 7, 5), job(6, 8, 5)]
    for j in jobs:
        queue.insert(j)
    assert queue.counts[:5] == [0, 1, 2, 2, 1]  # 1 | 2-3 | 4-7 | 8-15
    queue.remove(jobs[1])
    assert queue.counts[:5] == [0, 1, 1, 2, 1]
    assert queue.pop_front(2) == [jobs[0], jobs[2]]
    assert queue.counts[:5] == [0, 0, 0, 2, 1]
    queue.remove_many([jobs[4], job(9, 1, 5)])  # one not waiting: ignored
    assert queue.counts[:5] == [0, 0, 0, 1, 1]
    assert queue.jobs == [jobs[3], jobs[5]]


def test_classes_are_built_by_width_and_kept_in_key_order() -> None:
    queue = WidthFiledQueue(sjf_key)
    for j in (job(1, 1, 9), job(2, 2, 5), job(3, 1, 3), job(4, 3, 7)):
        queue.insert(j)
    assert queue.classes is None
    assert filed_ids(queue) == {1: [3, 1], 2: [2, 4]}
    queue.insert(job(5, 1, 1))  # ahead of the class: put in its place
    queue.insert(job(6, 3, 8))  # after the whole class: appended
    queue.insert(job(7, 4, 1))  # a new class
    assert filed_ids(queue) == {1: [5, 3, 1], 2: [2, 4, 6], 3: [7]}
    entry = queue.filed()[2][0]
    assert entry == (sjf_key(queue.jobs[queue.index(entry[3])]), 2, 5, entry[3])


def deep(n: int = 40) -> tuple[WidthFiledQueue, list[Job]]:
    queue = WidthFiledQueue(fcfs_key)
    jobs = [job(i, 1 + i % 4, 5) for i in range(1, n + 1)]
    for j in jobs:
        queue.insert(j)
    queue.filed()
    return queue, jobs


def test_the_kept_classes_lose_the_jobs_that_leave() -> None:
    queue, jobs = deep()
    queue.remove(jobs[0])
    queue.pop_front(2)  # jobs 2 and 3
    queue.remove_many([jobs[4], jobs[5]])  # 5 and 6
    assert queue.classes is not None  # 34 jobs: still deep enough to keep them
    kept = sorted(e[3].id for c in queue.classes.values() for e in c)
    assert kept == [j.id for j in queue.jobs] == [4, *range(7, 41)]


def test_a_queue_that_gets_short_drops_its_classes() -> None:
    queue, jobs = deep(33)
    queue.pop_front(1)
    assert queue.classes is not None  # 32 left
    queue.pop_front(1)
    assert queue.classes is None  # 31
    queue, jobs = deep(33)
    queue.remove_many([jobs[0]])
    assert queue.classes is not None
    queue.remove_many([jobs[1]])
    assert queue.classes is None
    queue, jobs = deep(33)
    queue.remove(jobs[0])
    queue.remove(jobs[1])
    assert queue.classes is not None  # a single removal keeps them


def test_merging_is_worth_it_for_few_narrow_jobs_behind_a_long_walk() -> None:
    queue = WidthFiledQueue(fcfs_key)
    for i in range(1, 67):
        queue.insert(job(i, 8, 5))
    queue.insert(job(100, 1, 5))
    queue.filed()
    # 67 jobs: after position 0, 66 remain (> 64) and 1 narrow one x 16 < 66.
    assert queue.worth_merging(0, 1)
    assert queue.classes is not None
    assert not queue.worth_merging(2, 1)  # 64 remain: a walk is short enough
    assert queue.classes is None


def test_merging_is_not_worth_it_for_many_narrow_jobs() -> None:
    # 77 wide jobs, 5 of width 1, 1 of width 2: 83 in all.
    queue = WidthFiledQueue(fcfs_key)
    for i in range(1, 78):
        queue.insert(job(i, 8, 5))
    for i in range(100, 105):
        queue.insert(job(i, 1, 5))
    queue.insert(job(105, 2, 5))
    assert queue.worth_merging(1, 1)  # 81 remain, 5 x 16 = 80 fit one node
    assert not queue.worth_merging(2, 1)  # 80 remain
    assert not queue.worth_merging(0, 2)  # 82 remain, 6 x 16 = 96 fit two nodes
    assert not queue.worth_merging(0, 3)
    assert queue.worth_merging(0, 1)


def test_a_job_is_queued_with_the_start_and_shape_given() -> None:
    queue = WidthFiledQueue(fcfs_key)
    queue.insert(job(1, 4, 5), 7, (2, 9))
    queue.insert(job(2, 1, 5))
    assert (queue.starts[0], queue.widths, queue.durations) == (7, [2, 1], [9, 5])
    assert queue.counts[2] == 1 and queue.counts[3] == 0  # filed by the width it takes
