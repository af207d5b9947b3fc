"""The job and machine model: plain slotted classes used by the hot paths."""

from batchd.model.job import Job, TraceLine
from batchd.model.machine import Grid, Machine, NodePool
from batchd.model.states import JobState, StateError, change_state

__all__ = [
    "Grid",
    "Job",
    "JobState",
    "Machine",
    "NodePool",
    "StateError",
    "TraceLine",
    "change_state",
]
