"""What a policy sees and what it must answer.

A policy is handed a ``MachineView`` (now, capacity, free nodes, running jobs
with their estimated ends) whenever something happens and answers which waiting
jobs start now. It does no I/O and reads no clock; its only state is its queue
and plan, so it can be copied and run on copies of the queue.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

from batchd.model.job import Job
from batchd.sched.forecast import Forecaster


class MachineView(Protocol):
    """The engine's picture of one machine at ``now``."""

    @property
    def now(self) -> int: ...
    @property
    def capacity(self) -> int: ...
    @property
    def free(self) -> int: ...

    def running_ends(self) -> list[int]:
        """Estimated ends of running jobs, ascending (never before now + 1)."""
        ...

    def running_widths(self) -> list[int]:
        """Widths of running jobs, in the order of ``running_ends``."""
        ...

    @property
    def overrun(self) -> bool:
        """True while a running job is past its estimate (only without killing)."""
        ...

    def reservations(self) -> list[tuple[int, int, int]]:
        """(start, end, width) of advance reservations not yet begun, by start."""
        ...


class Policy(ABC):
    """A scheduling policy for one machine."""

    name: str = ""
    serves_in_order = False  # no job starts before the one ahead (FCFS without backfill)
    wakes = False  # asks the engine to wake it at times of its own (next_wakeup)
    _forecaster: Forecaster | None = None

    @abstractmethod
    def job_submitted(self, view: MachineView, job: Job) -> None:
        """A job joined the waiting queue."""

    def job_ended(self, view: MachineView, job: Job) -> None:  # noqa: B027
        """A running job ended (completed or killed)."""

    @abstractmethod
    def schedule(self, view: MachineView) -> list[Job]:
        """The waiting jobs to start now; they leave the queue."""

    @abstractmethod
    def waiting(self) -> list[Job]:
        """The waiting jobs in the order the policy serves them."""

    @abstractmethod
    def withdraw(self, view: MachineView, job: Job) -> None:
        """A waiting job leaves the queue without starting (deleted or held)."""

    def invalidate(self) -> None:  # noqa: B027
        """The machine changed shape (nodes, reservations): plans must be made again."""

    def planned_start(self, job: Job) -> int | None:
        """Start the policy plans for a waiting job, when it plans."""
        return None

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        """Every waiting job with its planned start (NEVER: it cannot fit).

        Policies that keep no full plan answer with a full plan of their queue in
        their order: the estimate ``qstat -T`` shows.
        """
        jobs = self.waiting()
        if self._forecaster is None:
            self._forecaster = Forecaster(in_order=self.serves_in_order)
        return list(zip(jobs, self._forecaster.plan(view, jobs), strict=True))

    def next_wakeup(self, now: int) -> int | None:
        """A time after ``now`` at which the policy must be asked again (``wakes`` only)."""
        return None

    def expired(self, view: MachineView) -> list[tuple[Job, str]]:
        """Running jobs to end at a wake-up: (job, "kill" or "requeue")."""
        return []

    def report(self) -> dict[str, Any]:
        """Policy-specific statistics for the replay summary."""
        return {}
