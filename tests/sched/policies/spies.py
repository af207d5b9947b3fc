"""Test doubles for the policies' unit tests: a policy that notes what is passed on to
it, and a performance counter that moves a fixed step at each reading."""

from __future__ import annotations

from batchd.model.job import Job
from batchd.sched.core.order import fcfs_key
from batchd.sched.core.policy import MachineView
from batchd.sched.policies.inorder import InOrderPolicy


class CallSpy(InOrderPolicy):
    """An in-order policy that notes each event passed on to it, with the view it was
    given: ("submitted" | "withdraw" | "ended" | "resumed", view, job id)."""

    def __init__(self) -> None:
        super().__init__("spy", fcfs_key)
        self.calls: list[tuple[str, object, int]] = []

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.calls.append(("submitted", view, job.id))
        super().job_submitted(view, job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.calls.append(("withdraw", view, job.id))
        super().withdraw(view, job)

    def job_ended(self, view: MachineView, job: Job) -> None:
        self.calls.append(("ended", view, job.id))

    def job_resumed(self, view: MachineView, job: Job) -> None:
        self.calls.append(("resumed", view, job.id))


class QuarterClock:
    """A performance counter that moves a quarter second at each reading."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 0.25
        return self.now
