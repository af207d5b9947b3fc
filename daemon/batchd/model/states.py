"""Job states, with the PBS letters users know, and the one place that changes them."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from batchd.model.job import Job


class JobState(Enum):
    QUEUED = "Q"
    HELD = "H"
    WAITING = "W"  # waiting for an execution time (qsub -a)
    RUNNING = "R"
    EXITING = "E"
    FINISHED = "F"

    successors: tuple[JobState, ...]  # the states it may change to (set below)

    @property
    def letter(self) -> str:
        return str(self.value)


PENDING_STATES = (JobState.QUEUED, JobState.HELD, JobState.WAITING)
ACTIVE_STATES = (JobState.RUNNING, JobState.EXITING)

_ALLOWED: dict[JobState, frozenset[JobState]] = {
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.HELD, JobState.FINISHED}),
    JobState.HELD: frozenset({JobState.QUEUED, JobState.WAITING, JobState.FINISHED}),
    JobState.WAITING: frozenset({JobState.QUEUED, JobState.HELD, JobState.FINISHED}),
    # A running job goes back to the queue when its node fails and it is rerun.
    JobState.RUNNING: frozenset({JobState.EXITING, JobState.FINISHED, JobState.QUEUED}),
    # An exiting job's processes are being stopped: it finishes, or is requeued (qrerun).
    JobState.EXITING: frozenset({JobState.FINISHED, JobState.QUEUED}),
    JobState.FINISHED: frozenset(),
}


# Each state carries its successors as a tuple: looking them up by the state would hash
# an enum member, a Python-level call, and the engine changes a state twice per job.
for _state, _successors in _ALLOWED.items():
    _state.successors = tuple(_successors)


class StateError(ValueError):
    """A transition that the job's current state does not allow."""


def change_state(job: Job, new: JobState) -> None:
    """Move a job to a new state, refusing transitions that cannot happen."""
    if new not in job.state.successors:
        raise StateError(f"job {job.id}: cannot go from {job.state.name} to {new.name}")
    job.state = new
