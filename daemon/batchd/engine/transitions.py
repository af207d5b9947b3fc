"""The state changes of jobs that are not running, and of the records a live daemon
keeps beside the engine's jobs: the one place outside the event loop that sets a
job's state (tests/engine/test_state_writers.py keeps it so).

``JobTransitions`` (``Engine`` is one) changes jobs that are in, or join, its queues:
held, released, deferred to their execution time, cancelled. The functions below
change jobs that no queue holds:

- a new job's first state when it does not queue now (held, or waiting for its
  execution time: it never was queued);
- a job array's own record, whose subjobs are the engine's jobs: it is held and
  released with them and finishes when the last of them has;
- a subjob shown before it was made (qstat of an expired index);
- the parts of a multi-site job that ended while the daemon was down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.model.job import Job
from batchd.model.states import JobState, change_state

if TYPE_CHECKING:
    from collections.abc import Iterable

_FIRST_STATES = (JobState.HELD, JobState.WAITING)


class JobTransitions:
    """Jobs that are not running, in and out of their queues (``Engine`` is one)."""

    now: int

    if TYPE_CHECKING:

        def withdraw(self, job: Job) -> None: ...

        def enqueue(self, job: Job) -> None: ...

    def hold(self, job: Job) -> None:
        """A queued or waiting job is held: it leaves its queue until released."""
        if job.state is JobState.QUEUED:
            self.withdraw(job)
        if job.state is not JobState.HELD:
            change_state(job, JobState.HELD)

    def release(self, job: Job) -> None:
        """A held or waiting job becomes eligible now and joins its queue."""
        change_state(job, JobState.QUEUED)
        self.enqueue(job)

    def defer(self, job: Job) -> None:
        """A held job waits for its execution time (state W) instead."""
        change_state(job, JobState.WAITING)

    def cancel(self, job: Job, outcome: str) -> None:
        """A job that never ran leaves the system now (deleted, or its dependency failed)."""
        if job.state is JobState.QUEUED:
            self.withdraw(job)
        change_state(job, JobState.FINISHED)
        job.result.outcome = outcome
        job.end = self.now


def first_state(job: Job, state: JobState) -> None:
    """A new job that does not join its queue now starts held or waiting (state H or W:
    it never was queued, so this is no transition from Q)."""
    if state not in _FIRST_STATES:
        raise ValueError(f"job {job.id}: a new job starts queued, held or waiting, not {state}")
    if job.state is not JobState.QUEUED or job.start >= 0:
        raise ValueError(f"job {job.id} is no new job (it is {job.state.name})")
    job.state = state


def array_held(job: Job) -> None:
    """A job array's own record is held (its waiting subjobs are held in the engine)."""
    if job.state is not JobState.HELD:
        change_state(job, JobState.HELD)


def array_released(job: Job, *, waiting: bool) -> None:
    """A job array's own record loses its last hold: queued, or waiting for its
    execution time (``waiting``)."""
    change_state(job, JobState.WAITING if waiting else JobState.QUEUED)


def array_finished(job: Job, end: int, outcome: str) -> None:
    """Every subjob of a job array has expired: its own record finishes at ``end``."""
    change_state(job, JobState.FINISHED)
    job.end = end
    job.result.outcome = outcome


def shown_expired(job: Job, end: int) -> None:
    """A subjob that was never made, shown as its array's expired index (state F)."""
    change_state(job, JobState.FINISHED)
    job.end = end


def parts_ended(parts: Iterable[Job], end: int, outcome: str) -> None:
    """Every part of a multi-site job that was running before a restart ended at ``end``
    while nobody watched (a part that had ended before is counted with them)."""
    for part in parts:
        part.end, part.result.outcome, part.state = end, outcome, JobState.FINISHED
