"""The standing queue: dynP's FCFS candidate as the list stands (the last sort plus newcomers)."""

from __future__ import annotations

from batchd.model.job import Job
from batchd.sched.core.order import OrderedQueue, sjf_key
from batchd.sched.policies.decider import FCFS, LJF, SJF
from batchd.sched.policies.standing import StandingQueue


def job(i: int, estimate: int) -> Job:
    return Job(id=i, submit=i, width=1, estimate=estimate, runtime=1)


def test_a_sort_names_the_base_order_and_empties_the_newcomers() -> None:
    standing = StandingQueue(FCFS)
    assert (standing.base, standing.appended) == (FCFS, [])
    standing.append(job(1, 5))
    standing.sort_as(LJF)
    assert (standing.base, standing.appended) == (LJF, [])
    standing.sort_as(SJF)
    assert standing.base == SJF


def test_ljf_as_sjf_leaves_the_list_in_sjf_order() -> None:
    standing = StandingQueue(LJF, ljf_as_sjf=True)
    assert standing.base == SJF
    standing.sort_as(FCFS)
    assert standing.base == FCFS
    standing.sort_as(LJF)
    assert standing.base == SJF


def test_discard_drops_newcomers_that_left() -> None:
    standing = StandingQueue(FCFS)
    a, b, c = job(1, 5), job(2, 5), job(3, 5)
    for j in (a, b, c):
        standing.append(j)
    standing.discard([b, job(9, 1)])
    assert standing.appended == [a, c]
    standing.discard(iter([a, c]))
    assert standing.appended == []


def test_the_permutation_moves_the_newcomers_to_the_end_in_arrival_order() -> None:
    queue = OrderedQueue(sjf_key)
    jobs = [job(1, 30), job(2, 10), job(3, 20), job(4, 5)]
    for j in jobs:
        queue.insert(j)  # SJF: 4, 2, 3, 1
    standing = StandingQueue(SJF)
    assert standing.permutation(queue) is None  # nothing appended
    standing.append(jobs[2])  # job 3 (index 2), then job 4 (index 0)
    standing.append(jobs[3])
    perm = standing.permutation(queue)
    assert perm is not None
    assert perm.tolist() == [1, 3, 2, 0]
    assert [queue.jobs[i].id for i in perm.tolist()] == [2, 1, 3, 4]


def test_no_permutation_when_the_newcomers_already_sort_last_in_arrival_order() -> None:
    queue = OrderedQueue(sjf_key)
    jobs = [job(1, 10), job(2, 20), job(3, 30)]
    for j in jobs:
        queue.insert(j)
    standing = StandingQueue(SJF)
    standing.append(jobs[1])
    standing.append(jobs[2])
    assert standing.permutation(queue) is None
    standing = StandingQueue(SJF)
    standing.append(jobs[2])
    standing.append(jobs[1])  # last two, but not in arrival order
    perm = standing.permutation(queue)
    assert perm is not None and perm.tolist() == [0, 2, 1]
