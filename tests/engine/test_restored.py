"""Jobs that were running when the daemon stopped, put back after its restart
(engine/restored.py): still running, ended while nobody watched, and reservations
whose window passed."""

from __future__ import annotations

import pytest

from batchd.engine import restored
from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.reservation import Reservation, ResvState
from batchd.model.states import JobState
from batchd.sched.registry import make_policy

NODES = 4


def engine(**kw: bool) -> Engine:
    return Engine(Grid([Machine("m", NODES)]), [make_policy("fcfs")], **kw)


def was_running(i: int, units: list[int], start: int = 0, runtime: int = 50) -> Job:
    job = Job(id=i, submit=0, width=len(units), estimate=100, runtime=runtime)
    job.state, job.start, job.units = JobState.RUNNING, start, list(units)
    return job


def test_a_restored_job_runs_on_its_nodes_from_its_start() -> None:
    eng = engine()
    resumed: list[int] = []
    policy = eng.machines[0].policy
    policy.job_resumed = lambda view, job: resumed.append(  # type: ignore[method-assign]
        job.id if view is eng.machines[0] else -1
    )
    policy.invalidate = lambda: resumed.append(0)  # type: ignore[method-assign]
    job = was_running(1, [1, 2], start=0, runtime=50)
    eng.advance_to(20)
    eng.restore_running(job)
    m = eng.machines[0]
    assert m.pool.free_ids() == [0, 3]
    assert m.running_ends() == [100] and m.running_widths() == [2]  # start + its estimate
    assert resumed == [0, 1]  # its plans made again, then told of the job
    assert eng.next_event_time() == 50  # its end: start + runtime
    waiter = Job(id=2, submit=20, width=3, estimate=10, runtime=10)
    eng.submit(waiter)
    eng.run()
    assert (job.state, job.end, job.result.outcome) == (JobState.FINISHED, 50, "ok")
    assert waiter.start == 50  # three nodes were free only once it ended


def test_a_restored_job_past_its_estimate_is_killed_at_it() -> None:
    eng = engine()
    job = was_running(1, [0], start=0, runtime=500)
    eng.restore_running(job)
    eng.run()
    assert (job.end, job.result.outcome, job.result.killed) == (100, "walltime", True)


def test_only_a_running_job_is_restored_running() -> None:
    eng = engine()
    job = was_running(1, [0])
    job.state = JobState.EXITING  # the engine ends it: not a job that stops for real
    with pytest.raises(ValueError, match="^job 1 is not running$"):
        eng.restore_running(job)
    job.external = False
    job.state = JobState.QUEUED
    with pytest.raises(ValueError, match="^job 1 is not running$"):
        eng.restore_running(job)
    job.external = True
    with pytest.raises(ValueError, match="^job 1 is not running$"):
        eng.restore_running(job)
    assert eng.machines[0].free == NODES


def test_a_real_job_restored_while_stopping_keeps_its_nodes() -> None:
    eng = engine()
    job = was_running(1, [3])
    job.state, job.external = JobState.EXITING, True
    eng.restore_running(job)
    assert eng.machines[0].pool.free_ids() == [0, 1, 2]
    assert eng.next_event_time() is None  # its end is reported, never the engine's
    assert [j.id for j in eng.running()] == [1]


def test_a_restored_job_of_an_open_reservation_runs_on_its_nodes() -> None:
    eng = engine()
    resv = Reservation(id=1, start=0, end=200, width=2, queue="R1")
    resv.state, resv.units = ResvState.RUNNING, [0, 1]
    eng.add_reservation(resv)
    job = was_running(7, [1])
    job.queue = "R1"
    eng.restore_running(job)
    run = eng.reserved.runs["R1"]
    assert run.free == [0] and run.running == {7: job}
    assert eng.machines[0].pool.free_ids() == [2, 3]
    eng.run(until=60)
    assert job.end == 50 and run.free == [0, 1]


@pytest.mark.parametrize(
    ("outcome", "killed"), [("walltime", True), ("ok", False), ("node_fail", False)]
)
def test_a_job_that_ended_while_nobody_watched(outcome: str, killed: bool) -> None:
    eng = engine()
    ends: list[int] = []
    eng.on_end.append(lambda j: ends.append(j.id))
    job = was_running(3, [0])
    eng.restore_finished(job, 77, outcome)
    assert (job.state, job.end, job.result.outcome) == (JobState.FINISHED, 77, outcome)
    assert job.result.killed is killed
    assert eng.ended == 1 and eng.finished == [job] and ends == [3]
    other = was_running(4, [1])
    eng.restore_finished(other, 78, "ok")
    assert eng.ended == 2 and eng.finished == [job, other]
    assert eng.machines[0].free == NODES  # it never took its nodes back


def test_a_daemon_that_keeps_no_finished_jobs_only_counts_them() -> None:
    eng = engine(keep_finished=False)
    job = was_running(3, [0])
    restored.finished(eng, job, 10, "ok")
    assert eng.ended == 1 and eng.finished == []


def test_a_reservation_whose_window_passed_has_finished() -> None:
    resv = Reservation(id=1, start=0, end=10, width=1)
    restored.reservation_passed(resv)
    assert resv.state is ResvState.FINISHED
