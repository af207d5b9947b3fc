"""Jobs that were running when the daemon stopped, back in the engine after its restart.

Each is put back through one of three transitions: still running (on the same nodes,
from the same start), ended while nobody watched, or gone back to its queue. A saved
reservation whose window passed meanwhile has finished.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.model.job import Job
from batchd.model.reservation import Reservation, ResvState
from batchd.model.states import JobState, change_state

if TYPE_CHECKING:
    from batchd.engine.core import Engine


def running(engine: Engine, job: Job) -> None:
    """Same nodes, same start; a job that really runs may be stopping (state E)."""
    if job.state is not JobState.RUNNING and not (job.external and job.state is JobState.EXITING):
        raise ValueError(f"job {job.id} is not running")
    run = engine.reserved.run_of(job)
    if run is not None:
        engine.reserved.restore_running(run, job)
        return
    m = engine.machines[job.machine]
    m.pool.take(job.units)
    m.add_running(job.start + job.duration, job)
    engine.push_end(job)
    m.policy.invalidate()
    m.policy.job_resumed(m, job)


def finished(engine: Engine, job: Job, end: int, outcome: str) -> None:
    """It ended at ``end`` while nobody watched."""
    job.end = end
    if outcome == "walltime":
        job.result.killed = True
    job.result.outcome = outcome
    change_state(job, JobState.FINISHED)
    engine.ended += 1
    if engine.keep_finished:
        engine.finished.append(job)
    for hook in engine.on_end:
        hook(job)


def reservation_passed(resv: Reservation) -> None:
    """A saved reservation whose window passed while the daemon was down has finished."""
    resv.state = ResvState.FINISHED
