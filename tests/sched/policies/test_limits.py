"""The run-limit gate around every policy family: never more jobs running than the
limits allow, every job still runs, and the gate is invisible without limits."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.times import NEVER
from batchd.sched.policies.limits import NO_LIMITS, LimitGate, RunCaps, RunLimits
from batchd.sched.registry import make_policy

# In order, EASY backfilling, conservative planning, self-tuning dynP.
POLICIES = ("fcfs", "fcfs-easy", "sjf-cons", "dynp")
SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
Spec = tuple[int, int, int, int, str, str]  # submit, width, estimate, runtime, user, queue


@st.composite
def workloads(draw: st.DrawFn) -> list[Spec]:
    n = draw(st.integers(1, 14))
    t = 0
    out = []
    for _ in range(n):
        t += draw(st.integers(0, 6))
        estimate = draw(st.integers(1, 20))
        runtime = draw(st.integers(1, estimate))
        width = draw(st.integers(1, 6))
        out.append((t, width, estimate, runtime, draw(st.sampled_from("ab")), "q"))
    return out


def run(policy: str, spec: list[Spec], limits: RunLimits) -> tuple[Engine, list[int]]:
    """The schedule, and how many jobs ran at each start (checked against the limits)."""
    jobs = [Job(id=i, submit=s, width=w, estimate=e, runtime=r, user=u, queue=q)
            for i, (s, w, e, r, u, q) in enumerate(spec, 1)]  # fmt: skip
    gate = LimitGate(make_policy(policy), lambda: limits)
    engine = Engine(Grid([Machine("m", 6)]), [gate], kill=True)
    running: dict[int, Job] = {}
    peaks: list[int] = []

    def started(job: Job) -> None:
        running[job.id] = job
        peaks.append(len(running))
        caps = limits.queues.get(job.queue, RunCaps())
        mine = sum(j.user == job.user for j in running.values())
        for cap, count in (
            (caps.max_run, len(running)),
            (caps.max_user_run, mine),
            (limits.server.max_run, len(running)),
            (limits.server.max_user_run, mine),
        ):
            assert cap is None or count <= cap, (job.id, cap, count)

    engine.on_start.append(started)
    engine.on_end.append(lambda job: running.pop(job.id))
    engine.load(jobs)
    engine.run()
    assert sorted(j.id for j in engine.finished) == [j.id for j in jobs]  # all ran
    return engine, peaks


@pytest.mark.parametrize("policy", POLICIES)
@SETTINGS
@given(spec=workloads(), max_run=st.integers(1, 3), max_user_run=st.integers(1, 2))
def test_no_policy_runs_more_than_the_limits(
    policy: str, spec: list[Spec], max_run: int, max_user_run: int
) -> None:
    queue = RunLimits(queues={"q": RunCaps(max_run, max_user_run)})
    run(policy, spec, queue)
    server = RunLimits(server=RunCaps(max_run, max_user_run))
    run(policy, spec, server)


@pytest.mark.parametrize("policy", POLICIES)
@SETTINGS
@given(spec=workloads())
def test_without_limits_the_schedule_is_the_policys_own(policy: str, spec: list[Spec]) -> None:
    gated, _ = run(policy, spec, NO_LIMITS)
    jobs = [Job(id=i, submit=s, width=w, estimate=e, runtime=r, user=u, queue=q)
            for i, (s, w, e, r, u, q) in enumerate(spec, 1)]  # fmt: skip
    plain = Engine(Grid([Machine("m", 6)]), [make_policy(policy)], kill=True)
    plain.load(jobs)
    plain.run()
    starts = sorted((j.id, j.start) for j in gated.finished)
    assert starts == sorted((j.id, j.start) for j in plain.finished)


def test_held_jobs_have_no_planned_start_and_say_why() -> None:
    limits = RunLimits(queues={"q": RunCaps(max_run=1)})
    jobs = [Job(id=i, submit=0, width=1, estimate=10, runtime=10, user="a", queue="q")
            for i in (1, 2)]  # fmt: skip
    gate = LimitGate(make_policy("fcfs-cons"), lambda: limits)
    engine = Engine(Grid([Machine("m", 6)]), [gate], kill=True)
    engine.load(jobs)
    engine.run(until=0)
    assert [j.id for j in engine.running()] == [1]
    plan = dict((j.id, start) for j, start in gate.planned_starts(engine.machines[0]))
    assert plan == {2: NEVER}
    assert gate.explain(jobs[1], 0) == "Queue q job limit has been reached."
    paused = RunLimits(scheduling=False)
    gate.limits = lambda: paused
    engine.run(until=10)  # job 1 ends; job 2 may not start while scheduling is off
    assert engine.running() == [] and jobs[1].start < 0
    assert gate.explain(jobs[1], 10).startswith("Scheduling is turned off")
