"""The run-limit gate around every policy family: never more jobs running than the
limits allow, every job still runs, and the gate is invisible without limits."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.times import NEVER
from batchd.sched.core.policy import MachineView, Placement
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


class WalksAll(LimitGate):
    """The gate as it was: every pass walks every waiting job."""

    def schedule(self, view: MachineView) -> list[Placement]:
        self.walked = None
        return super().schedule(view)


@pytest.mark.parametrize("policy", POLICIES)
def test_a_pass_walks_only_the_newcomers_and_decides_as_a_whole_walk(policy: str) -> None:
    rng = random.Random(policy)
    limits = RunLimits(
        server=RunCaps(max_run=5, max_user_run=3), queues={"q": RunCaps(max_user_run=2)}
    )
    gates = [LimitGate(make_policy(policy), lambda: limits) for _ in range(2)]
    gates[1] = WalksAll(make_policy(policy), lambda: limits)
    engines = [Engine(Grid([Machine("m", 16)]), [g], kill=True) for g in gates]
    resumed: list[int] = []
    walk = gates[0]._walk

    def counted(view: MachineView, waiting: list[Job], offered: set[int], *rest: Any) -> None:
        if waiting and len(waiting) < len(gates[0].waiting()):
            resumed.append(len(waiting))
        walk(view, waiting, offered, *rest)

    gates[0]._walk = counted  # type: ignore[method-assign]
    seq = 0
    for _ in range(150):
        specs = []
        for _ in range(rng.choice([1, 1, 3, 8])):
            seq += 1
            estimate = rng.randint(1, 300)
            specs.append((seq, rng.randint(1, 16), estimate, rng.randint(1, estimate)))
            specs[-1] += (rng.choice("abc"), rng.choice(["q", "r"]), rng.choice([0, 0, 1]))
        withdraw = rng.random() < 0.1
        for engine, gate in zip(engines, gates, strict=True):
            for i, w, e, r, u, q, p in specs:
                job = Job(id=i, submit=engine.now, width=w, estimate=e, runtime=r, user=u, queue=q)
                job.priority = p
                engine.submit(job)
            engine.instant(engine.now)
            offered = gate.inner.waiting()  # admitted, or too wide to start now
            if withdraw and offered:
                engine.withdraw(offered[-1])
                engine.instant(engine.now)
        a, b = gates
        assert [j.id for j in a.inner.waiting()] == [j.id for j in b.inner.waiting()]
        assert a.held.keys() == b.held.keys() and a.why == b.why
        step = rng.randint(1, 60)
        for engine in engines:
            engine.run(until=engine.now + step)
        assert a.book.running == b.book.running
    assert len(resumed) > 30  # passes that walked the newcomers alone
