"""dynP and basic dynP when a waiting job leaves the queue: schedules worked out by hand."""

from __future__ import annotations

import pytest

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.sched.core.policy import Policy
from batchd.sched.policies.decider import FCFS, LJF, SJF
from batchd.sched.policies.dynp import DynP, DynPBasic
from batchd.sched.registry import make_policy


def _engine(policy: Policy, jobs: list[Job]) -> Engine:
    engine = Engine(Grid([Machine("m", 1)]), [policy])
    engine.load(jobs)
    return engine


# One node, held by job 1 until 1000. Jobs 2 (500 s), 3 (300 s) and 4 (100 s) wait in
# FCFS order (too few to self-tune): 2 at 1000, 3 at 1500, 4 at 1800. Job 3 leaves at
# 10: the plan is made again without it, and job 4 starts at 1500.
@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("dynp-basic", {}),
        ("dynp", {"min_backlog": "10"}),
        ("dynp", {"min_backlog": "10", "fcfs_candidate": "as-queued"}),
    ],
)
def test_a_withdrawn_job_leaves_every_order_and_the_plan(name: str, params: dict[str, str]):
    policy = make_policy(name, params)
    assert isinstance(policy, DynPBasic | DynP)
    jobs = [Job(1, 0, 1, 1000, 1000), Job(2, 1, 1, 500, 500)]
    jobs += [Job(3, 2, 1, 300, 300), Job(4, 3, 1, 100, 100)]
    engine = _engine(policy, jobs)
    engine.advance_to(10)
    assert policy.planned_starts(engine.machines[0])[-1] == (jobs[3], 1800)
    engine.withdraw(jobs[2])
    assert all(jobs[2] not in q.jobs for q in policy.queues.values())
    # Asked at once (qstat), the plan is already without it.
    assert policy.planned_starts(engine.machines[0])[-1] == (jobs[3], 1500)
    if isinstance(policy, DynP) and policy.standing is not None:
        assert jobs[2] not in policy.standing.appended
        assert jobs[3] in policy.standing.appended
    engine.run()
    assert [(j.start, j.end) for j in jobs] == [(0, 1000), (1000, 1500), (-1, -1), (1500, 1600)]


def test_a_withdrawn_estimate_no_longer_counts_in_the_basic_aert():
    # One node held by job 1; threshold 2. Job 2 (50000 s) waits alone (no decision) and
    # leaves at 2. Job 3 (1000 s) comes at 3, alone again; job 4 (1000 s) at 4 makes two
    # waiting jobs counting the newcomer: AERT 2000 / 2 = 1000 <= 7200, SJF. Had job 2's
    # estimate stayed in the sum, the AERT would be 26000 > 9000: LJF.
    policy = make_policy("dynp-basic", {"threshold": "2"})
    assert isinstance(policy, DynPBasic)
    jobs = [Job(1, 0, 1, 100_000, 100_000), Job(2, 1, 1, 50_000, 50_000)]
    jobs += [Job(3, 3, 1, 1000, 1000), Job(4, 4, 1, 1000, 1000)]
    engine = _engine(policy, jobs)
    engine.advance_to(2)
    engine.withdraw(jobs[1])
    engine.run()
    report = policy.report()["dynp"]
    assert report["decider_calls"] == 1
    assert report["switches"] == {FCFS: 0, SJF: 1, LJF: 0}
    assert [j.result.started_by for j in jobs[2:]] == [SJF, SJF]
