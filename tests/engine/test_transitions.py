"""The state changes of jobs that are not running (engine/transitions.py): in and out of
their queues through the engine, and the records outside them (arrays, shown subjobs,
the parts of a multi-site job)."""

from __future__ import annotations

import pytest

from batchd.engine import transitions
from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.states import JobState, StateError
from batchd.sched.registry import make_policy


def engine(nodes: int = 4) -> Engine:
    return Engine(Grid([Machine("m", nodes)]), [make_policy("fcfs")])


def job(i: int, width: int = 1, submit: int = 0, runtime: int = 50) -> Job:
    return Job(id=i, submit=submit, width=width, estimate=100, runtime=runtime)


def waiting(eng: Engine) -> list[int]:
    return [j.id for j in eng.waiting()]


def queued_behind_a_wide_job(eng: Engine) -> Job:
    """Job 2 waits in the queue behind job 1, which runs on every node."""
    eng.submit(job(1, width=4))
    second = job(2)
    eng.submit(second)
    eng.instant(0)
    assert waiting(eng) == [2]
    return second


def test_a_queued_job_held_leaves_its_queue() -> None:
    eng = engine()
    second = queued_behind_a_wide_job(eng)
    eng.hold(second)
    assert second.state is JobState.HELD
    assert waiting(eng) == []
    eng.hold(second)  # held again: stays held, no error
    assert second.state is JobState.HELD


def test_a_waiting_job_held_is_in_no_queue_to_leave() -> None:
    eng = engine()
    other = queued_behind_a_wide_job(eng)
    deferred = job(3)
    transitions.first_state(deferred, JobState.WAITING)
    eng.hold(deferred)
    assert deferred.state is JobState.HELD
    assert waiting(eng) == [other.id]  # the queue kept its own job


def test_a_released_job_joins_its_queue_and_runs() -> None:
    eng = engine()
    held = job(5)
    transitions.first_state(held, JobState.HELD)
    eng.submit(job(1, width=4, runtime=10))
    eng.instant(0)
    eng.release(held)
    assert held.state is JobState.QUEUED
    assert waiting(eng) == [5]
    eng.run()
    assert held.start == 10 and held.state is JobState.FINISHED


def test_a_held_job_deferred_waits_for_its_execution_time() -> None:
    eng = engine()
    held = job(5)
    transitions.first_state(held, JobState.HELD)
    eng.defer(held)
    assert held.state is JobState.WAITING


def test_a_cancelled_queued_job_leaves_its_queue_finished_now() -> None:
    eng = engine()
    second = queued_behind_a_wide_job(eng)
    eng.advance_to(7)
    eng.cancel(second, "deleted")
    assert (second.state, second.result.outcome, second.end) == (JobState.FINISHED, "deleted", 7)
    assert waiting(eng) == []


def test_a_cancelled_held_job_was_in_no_queue() -> None:
    eng = engine()
    other = queued_behind_a_wide_job(eng)
    held = job(6)
    transitions.first_state(held, JobState.HELD)
    eng.advance_to(3)
    eng.cancel(held, "dependency")
    assert (held.state, held.result.outcome, held.end) == (JobState.FINISHED, "dependency", 3)
    assert waiting(eng) == [other.id]


@pytest.mark.parametrize("state", [JobState.HELD, JobState.WAITING])
def test_a_new_job_may_start_held_or_waiting(state: JobState) -> None:
    new = job(1)
    transitions.first_state(new, state)
    assert new.state is state


@pytest.mark.parametrize("state", [JobState.QUEUED, JobState.RUNNING, JobState.FINISHED])
def test_a_new_job_starts_in_no_other_state(state: JobState) -> None:
    new = job(9)
    with pytest.raises(
        ValueError, match=f"^job 9: a new job starts queued, held or waiting, not {state}$"
    ):
        transitions.first_state(new, state)
    assert new.state is JobState.QUEUED


def test_a_job_that_ran_or_left_the_queue_is_no_new_job() -> None:
    started = job(3)
    started.start = 0  # it started at second 0
    with pytest.raises(ValueError, match=r"^job 3 is no new job \(it is QUEUED\)$"):
        transitions.first_state(started, JobState.HELD)
    held = job(4)
    held.state = JobState.HELD
    with pytest.raises(ValueError, match=r"^job 4 is no new job \(it is HELD\)$"):
        transitions.first_state(held, JobState.WAITING)
    assert held.state is JobState.HELD


def test_an_array_record_is_held_once_and_released_queued_or_waiting() -> None:
    array = job(1)
    transitions.array_held(array)
    assert array.state is JobState.HELD
    transitions.array_held(array)  # held again: no error
    assert array.state is JobState.HELD
    transitions.array_released(array, waiting=True)
    assert array.state is JobState.WAITING
    transitions.array_held(array)
    transitions.array_released(array, waiting=False)
    assert array.state is JobState.QUEUED


def test_an_array_record_finishes_with_its_last_subjob() -> None:
    array = job(1)
    transitions.array_finished(array, 42, "ok")
    assert (array.state, array.end, array.result.outcome) == (JobState.FINISHED, 42, "ok")
    with pytest.raises(StateError):
        transitions.array_finished(array, 50, "ok")


def test_an_expired_index_is_shown_finished_without_an_outcome() -> None:
    sub = job(7)
    transitions.shown_expired(sub, 30)
    assert (sub.state, sub.end, sub.result.outcome) == (JobState.FINISHED, 30, "")


def test_the_parts_of_a_multi_site_job_end_together() -> None:
    running, ended = job(1), job(2)
    running.state = JobState.RUNNING
    ended.state, ended.end, ended.result.outcome = JobState.FINISHED, 5, "ok"
    transitions.parts_ended([running, ended], 90, "node_fail")
    for part in (running, ended):
        assert (part.state, part.end, part.result.outcome) == (
            JobState.FINISHED,
            90,
            "node_fail",
        )
