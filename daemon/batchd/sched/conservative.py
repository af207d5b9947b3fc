"""Conservative backfilling on a planned full schedule (seed 000, sec. 3.1 and 5).

Every waiting job holds a planned start. A new job is placed into the existing
plan at its earliest start that delays no planned job. When a job ends, the
whole plan is rebuilt in policy order onto the profile of the running jobs'
estimated ends. Jobs whose planned start is now are started.
"""

from __future__ import annotations

import numpy as np

from batchd.model.job import Job
from batchd.sched.order import OrderedQueue, OrderKey
from batchd.sched.policy import MachineView, Policy
from batchd.sched.profile import Profile


def running_profile(view: MachineView, room: int) -> Profile:
    return Profile.of_running(
        view.capacity, view.now, view.running_ends(), view.running_widths(), room=room
    )


class Plan:
    """A queue order together with the profile and starts it produced."""

    __slots__ = ("queue", "profile", "starts", "jobs", "extra")

    def __init__(self, queue: OrderedQueue, profile: Profile, starts: np.ndarray) -> None:
        self.queue = queue
        self.profile = profile
        self.starts = starts  # aligned with ``jobs``, the queue at build time
        self.jobs = list(queue.jobs)
        self.extra: dict[int, int] = {}  # job id -> start, for jobs placed later

    @classmethod
    def build(cls, queue: OrderedQueue, view: MachineView) -> Plan:
        profile = running_profile(view, len(queue))
        widths, durations = queue.arrays()
        starts = profile.plan(widths, durations, view.now)
        return cls(queue, profile, starts)

    def due(self, now: int) -> list[Job]:
        idx = np.flatnonzero(self.starts == now)
        return [self.jobs[i] for i in idx.tolist()]

    def start_of(self, job: Job) -> int | None:
        if job.id in self.extra:
            return self.extra[job.id]
        for j, s in zip(self.jobs, self.starts.tolist(), strict=True):
            if j is job:
                return s
        return None


class ConservativePolicy(Policy):
    """FCFS, SJF or LJF order with conservative backfilling."""

    def __init__(self, name: str, key: OrderKey) -> None:
        self.name = name
        self.queue = OrderedQueue(key)
        self.plan: Plan | None = None
        self.stale = True  # the plan must be rebuilt before it is used again
        self._due: list[Job] = []

    # -- events -----------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        if self.plan is None or self.stale or view.overrun:
            # Ends at this second come first: re-plan the queue, then place the newcomer.
            self.rebuild(view)
        assert self.plan is not None
        self.queue.insert(job)
        self.plan.profile.advance(view.now)
        start = self.plan.profile.place(job.width, job.duration, view.now)
        self.plan.extra[job.id] = start
        if start == view.now:
            self._due.append(job)
        if job.submit_plan < 0:
            job.submit_plan = start

    def job_ended(self, view: MachineView, job: Job) -> None:
        self.stale = True

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.queue.remove(job)
        self.stale = True

    def schedule(self, view: MachineView) -> list[Job]:
        if self.stale or view.overrun:
            self.rebuild(view)
        due = self._due
        self._due = []
        if due:
            self.queue.remove_many(due)
        return due

    # -- planning ---------------------------------------------------------------
    def rebuild(self, view: MachineView) -> None:
        self.plan = Plan.build(self.queue, view)
        self._due = self.plan.due(view.now)
        self.stale = False

    def waiting(self) -> list[Job]:
        return list(self.queue.jobs)

    def planned_start(self, job: Job) -> int | None:
        return self.plan.start_of(job) if self.plan else None
