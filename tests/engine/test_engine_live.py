"""The engine's live operations under every registered policy: reservations, nodes, policy changes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.reservation import Reservation, ResvState
from batchd.model.states import JobState
from batchd.sched.registry import make_policy, policy_names

NODES = 6


def engine_for(policy: str) -> Engine:
    return Engine(Grid([Machine("m", NODES)]), [make_policy(policy)])


def busy_at(jobs: list[Job], t: int) -> int:
    return sum(j.width for j in jobs if j.start <= t < j.end)


jobs_strategy = st.lists(
    st.tuples(st.integers(0, 120), st.integers(1, NODES), st.integers(1, 80), st.integers(0, 90)),
    min_size=1,
    max_size=14,
)


@pytest.mark.parametrize("policy", policy_names())
@settings(max_examples=25, deadline=None)
@given(specs=jobs_strategy, resv_width=st.integers(1, NODES), resv_start=st.integers(0, 100))
def test_no_policy_uses_reserved_nodes(
    policy: str, specs: list[tuple[int, int, int, int]], resv_width: int, resv_start: int
) -> None:
    eng = engine_for(policy)
    resv = Reservation(id=1, start=resv_start, end=resv_start + 60, width=resv_width)
    eng.add_reservation(resv)
    jobs = [
        Job(id=i, submit=s, width=w, estimate=e, runtime=min(r, e))
        for i, (s, w, e, r) in enumerate(specs, 1)
    ]
    eng.load(jobs)
    eng.run()
    assert resv.state is ResvState.FINISHED
    assert all(j.state is JobState.FINISHED for j in jobs)
    for t in range(0, max(j.end for j in jobs) + 1):
        held = resv_width if resv.start <= t < resv.end else 0
        assert busy_at(jobs, t) + held <= NODES, (t, policy)
    for j in jobs:
        assert j.start >= j.submit
        if j.start < resv.end and j.end > resv.start:
            assert not set(j.units) & set(resv.units), (j, resv)


@pytest.mark.parametrize("policy", policy_names())
def test_node_out_of_service_is_never_handed_out(policy: str) -> None:
    eng = engine_for(policy)
    first = Job(id=1, submit=0, width=NODES, estimate=100, runtime=100)
    eng.load([first])
    eng.run(until=0)
    eng.node_out(0, 2)  # busy: the job keeps it until it ends
    later = [Job(id=i, submit=10, width=2, estimate=50, runtime=50) for i in (2, 3, 4)]
    wide = Job(id=5, submit=10, width=NODES, estimate=10, runtime=10)
    eng.load([*later, wide])
    eng.run(until=400)
    assert first.end == 100
    for j in later:
        assert j.state is JobState.FINISHED and 2 not in j.units
    assert wide.state is JobState.QUEUED  # wider than the nodes in service: it waits
    eng.node_in(0, 2)
    eng.instant(400)
    assert wide.state is JobState.RUNNING and wide.start == 400


def test_requeue_and_terminate() -> None:
    eng = engine_for("fcfs-easy")
    a = Job(id=1, submit=0, width=4, estimate=100, runtime=100)
    b = Job(id=2, submit=0, width=4, estimate=100, runtime=100)
    eng.load([a, b])
    eng.run(until=10)
    assert a.state is JobState.RUNNING and b.state is JobState.QUEUED
    eng.advance_to(20)
    eng.requeue(a)  # its node failed: back in the queue, ahead of b by submit time
    eng.instant(eng.now)
    assert a.state is JobState.RUNNING and a.start == 20 and b.state is JobState.QUEUED
    eng.advance_to(30)
    eng.terminate(a, "cancelled")
    eng.instant(eng.now)
    assert (a.state, a.result.outcome, a.end) == (JobState.FINISHED, "cancelled", 30)
    assert b.state is JobState.RUNNING and b.start == 30
    eng.run()
    assert b.end == 130 and b.result.outcome == "ok"


@pytest.mark.parametrize("new", ["fcfs", "sjf-easy", "ljf-cons", "dynp"])
def test_set_policy_moves_the_queue(new: str) -> None:
    eng = engine_for("fcfs-cons")
    jobs = [Job(id=i, submit=0, width=NODES, estimate=10 * i, runtime=10 * i) for i in (1, 2, 3)]
    eng.load(jobs)
    eng.run(until=0)
    eng.set_policy(0, make_policy(new))
    eng.instant(eng.now)
    assert sorted(j.id for j in eng.machines[0].policy.waiting()) == [2, 3]
    eng.run()
    assert all(j.state is JobState.FINISHED for j in jobs)
    order = [j.id for j in sorted(jobs, key=lambda j: j.start)]
    assert order == ([1, 3, 2] if new.startswith("ljf") else [1, 2, 3])


def test_time_never_goes_back() -> None:
    eng = engine_for("fcfs")
    eng.advance_to(50)
    with pytest.raises(RuntimeError, match="time cannot go back from 50 to 10"):
        eng.instant(10)


@pytest.mark.parametrize("policy", ["fcfs", "fcfs-easy", "sjf-easy"])
def test_incremental_forecast_equals_a_full_one(policy: str) -> None:
    from batchd.sched.core.forecast import Forecaster

    eng = engine_for(policy)
    eng.load([Job(id=0, submit=0, width=NODES, estimate=500, runtime=500)])
    eng.run(until=0)
    m = eng.machines[0]
    widths = [3, 6, 1, 2, 5, 4, 1, 6, 2, 2]
    for i, w in enumerate(widths, 1):
        eng.submit(Job(id=i, submit=0, width=w, estimate=37 * i % 200 + 10, runtime=5))
        eng.instant(0)
        got = dict((j.id, s) for j, s in m.policy.planned_starts(m))
        fresh = Forecaster(in_order=m.policy.serves_in_order)
        jobs = m.policy.waiting()
        assert got == dict(zip([j.id for j in jobs], fresh.plan(m, jobs), strict=True))
    eng.advance_to(250)  # time passes, nothing planned has started: the same plan
    got = dict((j.id, s) for j, s in m.policy.planned_starts(m))
    jobs = m.policy.waiting()
    fresh = Forecaster(in_order=m.policy.serves_in_order).plan(m, jobs)
    assert got == dict(zip([j.id for j in jobs], fresh, strict=True))
    assert min(got.values()) == 500
    starts = [s for _, s in m.policy.planned_starts(m)]
    if policy == "fcfs":
        assert starts == sorted(starts)  # in order: nobody starts before the job ahead


@pytest.mark.parametrize("step", ["run", "instant"])
def test_a_loaded_job_of_a_reservation_queue_runs_on_the_reserved_nodes(step: str) -> None:
    """``run`` and ``instant`` handle a second with one loop: an arrival from the trace
    goes to its reservation as a live one does, never to the machine's policy."""
    eng = engine_for("fcfs")
    resv = Reservation(id=1, start=10, end=100, width=2, queue="R1")
    eng.add_reservation(resv)
    job = Job(id=1, submit=20, width=2, estimate=30, runtime=30, queue="R1")
    eng.load([job])
    if step == "run":
        eng.run(until=20)
    else:
        eng.run(until=19)
        eng.instant(20)
    assert job.state is JobState.RUNNING and job.start == 20
    assert sorted(job.units) == sorted(resv.units)
    assert eng.machines[0].free == NODES - 2  # no node beyond the reservation's
