"""The waiting queue: jobs leave it in any number, and its lists stay aligned."""

from __future__ import annotations

import random

import numpy as np
import pytest

from batchd.model.job import Job
from batchd.sched.core.order import OrderedQueue, fcfs_key


def job(i: int, rng: random.Random) -> Job:
    return Job(
        id=i,
        submit=rng.randrange(50),
        width=rng.randint(1, 9),
        estimate=rng.randint(1, 99),
        runtime=1,
    )


def sixty_queued(rng: random.Random) -> tuple[OrderedQueue, list[Job]]:
    """Sixty jobs queued, each planned to start at its id."""
    queue = OrderedQueue(fcfs_key)
    jobs = [job(i, rng) for i in range(60)]
    for j in jobs:
        queue.insert(j, start=j.id)
    return queue, jobs


def assert_holds_only(queue: OrderedQueue, kept: list[Job]) -> None:
    """The queue holds ``kept``, in order, its lists aligned with them."""
    assert queue.jobs == kept
    assert queue.keys == [fcfs_key(j) for j in kept]
    assert queue.widths == [j.width for j in kept]
    assert queue.durations == [j.duration for j in kept]
    assert queue.starts == [j.id for j in kept]


@pytest.mark.parametrize("count", [0, 1, 3, 16, 17, 40])
def test_remove_many_leaves_the_others_in_order(count: int) -> None:
    rng = random.Random(count)
    queue, jobs = sixty_queued(rng)
    gone = rng.sample(jobs, count)
    outsider = job(99, rng)  # never queued: ignored, as a job removed twice is
    queue.remove_many([*gone, outsider, *gone[:1]])
    assert_holds_only(queue, sorted((j for j in jobs if j not in gone), key=fcfs_key))


@pytest.mark.parametrize("count", [0, 1, 3, 16, 17, 40, 60])
def test_remove_at_leaves_the_others_in_order(count: int) -> None:
    rng = random.Random(count)
    queue, _ = sixty_queued(rng)
    at = sorted(rng.sample(range(60), count))
    gone = {id(queue.jobs[i]) for i in at}
    kept = [j for j in queue.jobs if id(j) not in gone]
    changes = queue.changes
    queue.remove_at(at)
    assert queue.changes == changes + 1
    assert_holds_only(queue, kept)


@pytest.mark.parametrize("count", [1, 3, 16, 17, 40])
def test_every_change_but_an_append_is_counted(count: int) -> None:
    """A forecast kept while ``changes`` stands assumes the first jobs are the same."""
    rng = random.Random(count)
    queue = OrderedQueue(fcfs_key)
    jobs = sorted((job(i, rng) for i in range(60)), key=fcfs_key)
    for j in jobs:
        queue.insert(j)
    assert queue.changes == 0  # each one behind the others
    queue.remove_many(rng.sample(jobs, count))
    assert queue.changes == 1
    queue.remove(queue.jobs[-1])
    queue.pop_front(1)
    queue.insert(Job(id=100, submit=-1, width=1, estimate=1, runtime=1))  # at the front
    assert queue.changes == 4


@pytest.mark.parametrize("keep_from", [1, 16, 1024])
@pytest.mark.parametrize("seed", range(4))
def test_arrays_kept_once_asked_follow_every_change(
    seed: int, keep_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked for arrays when deep enough, the queue keeps them, with its planned starts,
    through every change until it is short again; starts handed over as an array, or
    written into its own, are read back alike, as a list or one by one."""
    monkeypatch.setattr(OrderedQueue, "KEEP_ARRAYS_FROM", keep_from)
    rng = random.Random(seed)
    queue = OrderedQueue(fcfs_key)
    planned: dict[int, int] = {}  # job id -> the start it was last given

    def given(starts: list[int]) -> list[int]:
        planned.update(zip((j.id for j in queue.jobs), starts, strict=True))
        return starts

    for i in range(rng.randrange(5)):
        queue.insert(first := job(i, rng), start=rng.randrange(100))
        planned[first.id] = queue.start_at(queue.index(first))
    handed = queue.arrays()
    before = [a.tolist() for a in handed]
    kept_at: list[int] = []  # the queue's length at each step if it kept arrays, else -1
    for i in range(10, 700):  # the queue grows past the arrays' first room of 64, and 128
        op = rng.random()
        if op < 0.7 or not queue.jobs:
            new = job(i, rng)
            shape = (rng.randint(1, 9), rng.randint(1, 99)) if rng.random() < 0.2 else None
            planned[new.id] = rng.randrange(100)
            queue.insert(new, start=planned[new.id], shape=shape)
        elif op < 0.75:
            queue.remove(rng.choice(queue.jobs))
        elif op < 0.8:
            queue.pop_front(rng.randint(1, min(3, len(queue.jobs))))
        elif op < 0.82:  # one by one up to 16, else the runs between them joined
            many = rng.choice([1, 2, 17])
            queue.remove_many(rng.sample(queue.jobs, min(many, len(queue.jobs))))
        elif op < 0.84:  # by position: one by one up to 16, else the runs between joined
            many = min(rng.choice([1, 2, 17]), len(queue.jobs))
            queue.remove_at(sorted(rng.sample(range(len(queue.jobs)), many)))
        elif op < 0.92:  # a plan's starts
            plan = given([rng.randrange(100) for _ in queue.jobs])
            queue.set_starts(np.array(plan, dtype=np.int64))
        else:  # a plan written into the queue's own starts where it keeps them
            plan = given([rng.randrange(100) for _ in queue.jobs])
            out = queue.starts_out()
            if out is None:
                assert len(queue) < keep_from and queue.arrays_kept is None
                queue.set_starts(np.array(plan, dtype=np.int64))
            else:
                out[:] = plan
        seen = queue.views()
        assert seen[0].tolist() == queue.widths and seen[1].tolist() == queue.durations
        if queue.arrays_kept is not None:  # no copy made: the arrays the queue keeps
            assert np.shares_memory(seen[0], queue.arrays_kept.rows)
        widths, durations = queue.arrays()
        kept_at.append(len(queue) if queue.arrays_kept is not None else -1)
        starts = queue.starts_array().tolist()
        assert starts == [planned[j.id] for j in queue.jobs]
        assert [queue.start_at(k) for k in range(len(queue))] == starts
        if rng.random() < 0.3:  # the list is made, and kept with the arrays from then on
            assert queue.starts == starts
        assert widths.tolist() == queue.widths and durations.tolist() == queue.durations
        assert len(starts) == len(queue.jobs) == len(queue.keys)
    assert [a.tolist() for a in handed] == before  # what was handed out stays as it was
    kept = [length for length in kept_at if length >= 0]
    if keep_from < 1024:  # the queue stays shorter than 1,024 here: it keeps none then
        assert kept and min(kept) * 2 >= keep_from and max(kept) > 128
    assert [type(queue.start_at(k)) for k in range(len(queue))] == [int] * len(queue)


@pytest.mark.parametrize("how", ["remove_many", "pop_front", "remove"])
def test_a_queue_that_kept_arrays_empties(how: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OrderedQueue, "KEEP_ARRAYS_FROM", 1)
    rng = random.Random(7)
    queue = OrderedQueue(fcfs_key)
    jobs = [job(i, rng) for i in range(20)]
    for j in jobs:
        queue.insert(j)
    queue.arrays()
    assert queue.arrays_kept is not None
    if how == "remove_many":  # more than 16: the runs between joined, none kept
        queue.remove_many(list(jobs))
    elif how == "pop_front":
        queue.pop_front(20)
    else:
        for j in jobs:
            queue.remove(j)
    widths, durations = queue.arrays()
    assert widths.tolist() == durations.tolist() == queue.starts_array().tolist() == []
    assert len(queue) == 0 and queue.starts == []
