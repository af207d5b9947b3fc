"""A plan's outline (``Policy.plan_outline``) is the one a walk of the whole plan gives.

The planned-schedule gauges take the head of each machine's plan and its extent. The
policies that keep their plan tell them from what they keep, reading only the jobs
appended since they were last asked, so that a deep queue is neither planned nor
walked for the gauges. On random queues that jobs join, leave, start and end, every
answer must equal ``PlanOutline.of(planned_starts)``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import SupportsIndex, overload

import pytest

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.times import NEVER
from batchd.sched.core.outline import EMPTY, Extent, PlanOutline
from batchd.sched.core.policy import Policy
from batchd.sched.policies.gate import WindowGate
from batchd.sched.policies.limits import LimitGate, RunCaps, RunLimits
from batchd.sched.registry import make_policy

TOLD = ["fcfs", "fcfs-easy", "sjf-easy", "ljf-easy", "prio-fifo", "fcfs-cons", "sjf-cons"]
TOLD += ["ljf-cons", "dynp", "dynp-basic", "utility-easy", "primetime"]
PRIME = 4 * 86_400 + 10 * 3600  # Monday 10:00 UTC: large jobs wait for non-prime time
WALKED = ["moldable-greedy", "moldable-fairshare", "moldable-iterative"]
NODES = 32


def a_job(rng: random.Random, seq: int, now: int, scale: int = 1) -> Job:
    estimate = rng.randint(1, 400) * scale
    runtime = rng.randint(0, estimate + 50)  # some overrun their estimate
    job = Job(seq, now, rng.randint(1, NODES), estimate, runtime)
    job.priority = rng.choice([0, 0, 0, 1])
    return job


def run(
    policy: Policy, seed: str, rounds: int = 120, start: int = 0, scale: int = 1
) -> tuple[int, int]:
    """Random events from ``start``, estimates up to ``scale`` x 400 s; after each step,
    the outline against the whole plan's. (answers given by the policy, answers left
    to the walk)"""
    rng = random.Random(seed)
    engine = Engine(Grid([Machine("m", NODES)]), [policy], keep_finished=False)
    engine.advance_to(start)
    m = engine.machines[0]
    seq = told = walked = 0
    for _ in range(rounds):
        for _ in range(rng.choice([1, 1, 1, 3, 8])):
            seq += 1
            engine.submit(a_job(rng, seq, engine.now, scale))
        engine.instant(engine.now)
        waiting = policy.waiting()
        if waiting and rng.random() < 0.15:
            engine.withdraw(rng.choice(waiting))
            engine.instant(engine.now)
        for _ in range(2):  # asked twice: the second answer from what the first kept
            outline = policy.plan_outline(m)
            if outline is None:
                walked += 1
            else:
                assert outline == PlanOutline.of(policy.planned_starts(m))
                told += 1
        if rng.random() < 0.4:
            engine.run(until=engine.now + rng.randint(1, 120))
    return told, walked


@pytest.mark.parametrize("name", TOLD)
def test_the_outline_told_is_the_whole_plans(name: str) -> None:
    if name == "primetime":  # large jobs (over 8 nodes or an hour) wait for non-prime time
        policy = make_policy(name, {"prime_nodes": "8", "prime_runtime": "01:00:00"})
        told, walked = run(policy, name, start=PRIME, scale=10)
        assert isinstance(policy, WindowGate) and policy.held  # some wait for the night
    else:
        told, walked = run(make_policy(name), name)
    assert told > 200 and walked < told / 5  # told by the policy, not left to the walk


@pytest.mark.parametrize("name", WALKED)
def test_policies_that_cannot_tell_leave_it_to_the_walk(name: str) -> None:
    assert run(make_policy(name), name, rounds=30) == (0, 60)


@pytest.mark.parametrize("name", ["fcfs-easy", "fcfs-cons"])
def test_jobs_held_by_run_limits_are_in_the_outline(name: str) -> None:
    caps = [RunLimits(server=RunCaps(max_run=2)), RunLimits(server=RunCaps(max_run=0))]
    for limits in caps:
        told, _ = run(LimitGate(make_policy(name), lambda limits=limits: limits), name)
        assert told > 200


def test_an_empty_plan() -> None:
    assert PlanOutline.of([]) == EMPTY
    assert EMPTY.then([]) == EMPTY
    job = Job(1, 5, 1, 10, 10)
    assert EMPTY.then([(job, NEVER)]) == PlanOutline(5, NEVER, None, NEVER)
    assert EMPTY.then([(job, 20)]) == PlanOutline(5, 20, 30, 20)


class Read(list[int]):
    """A list that counts the entries read from it."""

    reads = 0

    def __iter__(self) -> Iterator[int]:
        Read.reads += len(self)
        return super().__iter__()

    @overload
    def __getitem__(self, i: SupportsIndex) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> list[int]: ...
    def __getitem__(self, i: SupportsIndex | slice) -> int | list[int]:
        got = super().__getitem__(i)
        Read.reads += len(got) if isinstance(got, list) else 1
        return got


def test_the_extent_reads_only_what_was_appended() -> None:
    starts = [100 + i for i in range(1000)]
    durations = Read(10 for _ in range(1000))
    extent = Extent()
    assert (extent.of(starts, durations).end, extent.first) == (1109, 100)
    Read.reads = 0
    starts += [50, NEVER]
    durations += [5000, 7]
    assert (extent.of(starts, durations).end, extent.first) == (5050, 50)
    assert Read.reads == 2
    Read.reads = 0
    assert extent.of(starts, durations, changes=1).end == 5050  # another change: read again
    assert Read.reads == len(starts)
    assert Extent().of(list(starts), durations).end == 5050
    assert Extent().of([NEVER], [1]).end is None
