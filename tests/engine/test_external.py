"""Jobs that really run (Job.external): the engine never ends them itself; their stops
hold the nodes until the processes are gone (engine/external.py)."""

from __future__ import annotations

import pytest

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.reservation import Reservation
from batchd.model.states import JobState
from batchd.sched.registry import make_policy, policy_names

NODES = 4


def engine(policy: str = "fcfs-easy") -> tuple[Engine, list[Job]]:
    eng = Engine(Grid([Machine("m", NODES)]), [make_policy(policy)], keep_finished=True)
    stops: list[Job] = []
    eng.on_stop.append(stops.append)
    return eng, stops


def real(i: int, width: int = NODES, estimate: int = 100, submit: int = 0) -> Job:
    return Job(id=i, submit=submit, width=width, estimate=estimate, runtime=estimate, external=True)


def test_a_real_job_runs_until_its_end_is_reported() -> None:
    eng, _ = engine()
    job = real(1, estimate=100)
    eng.submit(job)
    eng.instant(0)
    assert job.state is JobState.RUNNING
    eng.advance_to(500)  # far past its walltime: nothing of the engine's ends it
    assert job.state is JobState.RUNNING and eng.next_event_time() is None
    eng.exited(job, "failed", end=480)
    assert (job.state, job.result.outcome, job.end) == (JobState.FINISHED, "failed", 480)
    assert eng.machines[0].free == NODES


def test_a_reported_end_is_kept_between_its_start_and_now() -> None:
    eng, _ = engine()
    job = real(1)
    eng.submit(job)
    eng.advance_to(10)
    eng.advance_to(20)
    eng.exited(job, "ok", end=99)  # a clock a little ahead of the engine's
    assert job.end == 20
    other = real(2, submit=20)
    eng.submit(other)
    eng.instant(20)
    eng.exited(other, "ok", end=3)
    assert other.end == other.start == 20


@pytest.mark.parametrize("policy", policy_names())
def test_a_stopped_job_keeps_its_nodes_until_its_processes_end(policy: str) -> None:
    eng, stops = engine(policy)
    first, second = real(1), real(2, submit=5)
    eng.submit(first)
    eng.instant(0)
    eng.submit(second)
    eng.advance_to(5)
    eng.terminate(first, "cancelled")
    assert first.state is JobState.EXITING and stops == [first]
    eng.terminate(first, "cancelled")  # asked again while stopping: one request
    assert stops == [first]
    eng.instant(6)
    assert second.state is JobState.QUEUED  # the nodes are still the stopping job's
    eng.exited(first, "ok", end=9)
    eng.instant(eng.now)
    assert (first.state, first.result.outcome) == (JobState.FINISHED, "cancelled")
    assert second.state is JobState.RUNNING and second.start == 6


def test_a_requeued_real_job_waits_for_its_processes_then_runs_again() -> None:
    eng, stops = engine()
    job = real(1)
    eng.submit(job)
    eng.instant(0)
    eng.advance_to(30)
    eng.requeue(job)
    assert job.state is JobState.EXITING and job.result.stopping == "requeue" and stops == [job]
    eng.exited(job, "ok", end=31)
    assert job.state is JobState.QUEUED and job.start == -1 and job.result.stopping == ""
    eng.instant(eng.now)
    assert job.state is JobState.RUNNING and job.start == 30


def test_an_end_asked_after_a_requeue_is_the_requeue() -> None:
    eng, stops = engine()
    job = real(1)
    eng.submit(job)
    eng.instant(0)
    eng.requeue(job)
    eng.terminate(job, "cancelled")  # the first request stands
    eng.exited(job, "ok")
    assert job.state is JobState.QUEUED and stops == [job]


def test_exited_refuses_an_emulated_job_and_one_not_running() -> None:
    eng, _ = engine()
    emulated = Job(id=1, submit=0, width=1, estimate=10, runtime=5)
    eng.submit(emulated)
    eng.instant(0)
    with pytest.raises(ValueError, match="does not run for real"):
        eng.exited(emulated, "ok")
    waiting = real(2, width=NODES)
    eng.submit(waiting)
    eng.instant(0)
    with pytest.raises(ValueError, match="not running"):
        eng.exited(waiting, "ok")


def test_a_reservation_closing_stops_its_real_jobs() -> None:
    eng, stops = engine()
    resv = Reservation(id=1, start=10, end=50, width=2, queue="R1")
    eng.add_reservation(resv)
    job = Job(id=1, submit=0, width=2, estimate=100, runtime=100, queue="R1", external=True)
    eng.submit(job)
    eng.advance_to(10)
    assert job.state is JobState.RUNNING and sorted(job.units) == sorted(resv.units)
    eng.advance_to(50)
    assert job.state is JobState.EXITING and stops == [job]
    eng.exited(job, "ok", end=51)
    assert (job.state, job.result.outcome) == (JobState.FINISHED, "resv_end")


def test_a_restored_exiting_job_is_back_on_its_nodes() -> None:
    eng, _ = engine()
    job = real(1, width=2)
    job.state, job.start, job.units, job.result.stopping = JobState.EXITING, 0, [0, 1], "end"
    job.result.outcome = "cancelled"
    eng.restore_running(job)
    assert eng.machines[0].free == NODES - 2 and eng.next_event_time() is None
    eng.exited(job, "ok", end=0)
    assert (job.state, job.result.outcome) == (JobState.FINISHED, "cancelled")
    assert eng.machines[0].free == NODES


def test_a_stop_is_forgotten_once_the_job_has_ended_and_ends_now_by_default() -> None:
    eng, stops = engine()
    job = real(1)
    eng.submit(job)
    eng.instant(0)
    eng.advance_to(30)
    eng.terminate(job, "deleted")
    assert job.result.stopping == "end" and stops == [job]
    eng.exited(job, "ok")
    assert (job.end, job.result.outcome, job.result.stopping) == (30, "deleted", "")


def test_only_a_running_real_job_is_stopped() -> None:
    eng, stops = engine()
    blocker, waiting = real(1), real(2)
    eng.submit(blocker)
    eng.submit(waiting)
    eng.instant(0)
    with pytest.raises(ValueError, match="^job 2 is not running$"):
        eng.terminate(waiting, "deleted")
    assert waiting.state is JobState.QUEUED and stops == []


def test_a_real_job_of_a_closed_reservation_ends_on_its_nodes_beside_an_open_one() -> None:
    eng, _ = engine()
    closing = Reservation(id=1, start=0, end=50, width=2, queue="R1")
    open_on = Reservation(id=2, start=0, end=90, width=1, queue="R2")
    eng.add_reservation(closing)
    eng.add_reservation(open_on)
    job = Job(id=1, submit=0, width=2, estimate=100, runtime=100, queue="R1", external=True)
    eng.submit(job)
    eng.advance_to(50)
    assert job.state is JobState.EXITING
    eng.exited(job, "ok")
    assert (job.state, job.result.outcome, job.end) == (JobState.FINISHED, "resv_end", 50)
    assert eng.machines[0].free == NODES - 1  # only the open reservation's node is held
