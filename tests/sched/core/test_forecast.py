"""One job's planned start (``Policy.planned_start``) is the one the full plan gives it.

The daemon answers a submission with the new job's planned start, told by the policy
alone where it can (the kept plan with the new jobs placed at its end), so a deep
queue is not planned whole for each ``qsub``. On random queues that jobs join, leave,
start and end, every waiting job's single answer must equal its start in
``planned_starts`` and, for the policies that keep no plan, in a plan made afresh.
"""

from __future__ import annotations

import random

import pytest

from batchd.engine.core import Engine
from batchd.engine.machine import MachineState
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.times import NEVER
from batchd.sched.core.forecast import Forecaster
from batchd.sched.core.order import OrderedQueue, fcfs_key
from batchd.sched.core.policy import OrderedPolicy, Policy
from batchd.sched.policies.limits import NO_LIMITS, LimitGate
from batchd.sched.registry import make_policy

NODES = 32
POLICIES = ["fcfs", "fcfs-easy", "sjf-easy", "ljf-easy", "prio-fifo", "fcfs-cons", "sjf-cons"]


def a_job(rng: random.Random, seq: int, now: int) -> Job:
    estimate = rng.randint(1, 400)
    runtime = rng.randint(0, estimate + 50)  # some overrun their estimate
    job = Job(seq, now, rng.randint(1, NODES), estimate, runtime)
    job.priority = rng.choice([0, 0, 0, 1])
    return job


def check(policy: Policy, m: MachineState, rng: random.Random) -> int:
    """Every waiting job's single answer against the full plan; the jobs answered."""
    waiting = policy.waiting()
    asked = rng.sample(waiting, min(len(waiting), 5)) + waiting[-2:]
    single = {id(j): policy.planned_start(m, j) for j in asked}  # before the full plan
    full = {id(j): s for j, s in policy.planned_starts(m)}
    inner = policy.inner if isinstance(policy, LimitGate) else policy
    if isinstance(inner, OrderedPolicy):
        fresh = Forecaster(in_order=inner.serves_in_order).plan(m, waiting)
        assert [full[id(j)] for j in waiting] == fresh
    answered = 0
    for job in asked:
        start = single[id(job)]
        if start is not None:
            assert start == full[id(job)], f"job {job.id}"
            answered += 1
        again = policy.planned_start(m, job)  # after it: the same
        assert again is None or again == full[id(job)]
    return answered


@pytest.mark.parametrize("gated", [False, True])
@pytest.mark.parametrize("name", POLICIES)
def test_one_jobs_planned_start_is_its_start_in_the_full_plan(name: str, gated: bool) -> None:
    rng = random.Random(f"{name}-{gated}")
    policy: Policy = make_policy(name)
    if gated:
        policy = LimitGate(policy, lambda: NO_LIMITS)
    engine = Engine(Grid([Machine("m", NODES)]), [policy], keep_finished=False)
    m = engine.machines[0]
    seq = answered = 0
    for _ in range(150):
        for _ in range(rng.choice([1, 1, 1, 3, 8])):
            seq += 1
            engine.submit(a_job(rng, seq, engine.now))
        engine.instant(engine.now)
        waiting = policy.waiting()
        if waiting and rng.random() < 0.15:
            engine.withdraw(rng.choice(waiting))
            engine.instant(engine.now)
        answered += check(policy, m, rng)
        if rng.random() < 0.4:
            engine.run(until=engine.now + rng.randint(1, 120))
    assert answered > 300  # the single answers were given, not left to the full plan


def test_a_job_not_waiting_has_no_planned_start() -> None:
    policy = make_policy("fcfs-easy")
    engine = Engine(Grid([Machine("m", NODES)]), [policy])
    m = engine.machines[0]
    engine.submit(Job(1, 0, NODES, 100, 100))
    engine.submit(Job(2, 0, 4, 100, 100))
    engine.instant(0)
    assert policy.planned_start(m, Job(3, 0, 1, 10, 10)) == NEVER
    assert policy.planned_start(m, policy.waiting()[0]) == 100


def test_the_kept_plan_places_only_the_jobs_appended_since() -> None:
    queue = OrderedQueue(fcfs_key)
    policy = make_policy("fcfs-easy")
    engine = Engine(Grid([Machine("m", NODES)]), [policy])
    m = engine.machines[0]
    engine.submit(Job(1, 0, NODES, 1000, 1000))
    engine.instant(0)
    forecast = Forecaster()
    for seq in range(2, 200):
        queue.insert(Job(seq, 0, 1 + seq % NODES, 50 + seq, 50))
    forecast.plan_queue(m, queue)
    placed: list[Job] = []
    original = forecast._place

    def counted(job: Job, now: int) -> None:
        placed.append(job)
        original(job, now)

    forecast._place = counted  # type: ignore[method-assign]
    late = Job(200, 0, 3, 10, 10)
    queue.insert(late)
    assert forecast.start_of(m, queue, late) == Forecaster().plan(m, queue.jobs)[-1]
    assert placed == [late]
    queue.remove(queue.jobs[5])  # a change other than an append: planned again
    assert forecast.start_of(m, queue, late) == Forecaster().plan(m, queue.jobs)[-1]
    assert placed == [late]  # a new plan places no job one by one (FCFS with backfilling)
