"""Planned starts for policies that keep no plan: what ``qstat -T`` shows for them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.plans import base_profile, machine_signature, plan_in_order
from batchd.sched.core.profile import Profile

if TYPE_CHECKING:
    from batchd.sched.core.policy import MachineView


class Forecaster:
    """Full plans of a queue for policies that keep none, kept between calls.

    A live daemon asks for the plan after every submission. When the machine is
    unchanged and the only difference is a job added at the end of the order
    (the usual case in FCFS order), the new job is placed on the profile of the
    previous plan instead of planning the whole queue again. Time passing alone
    changes nothing while no planned start has been reached: each start was the
    earliest at or after the old time, and it is still at or after the new one.
    With ``in_order`` no job starts before the one ahead of it (FCFS without
    backfilling).
    """

    def __init__(self, in_order: bool = False) -> None:
        self.in_order = in_order
        self._sig: tuple[object, ...] | None = None
        self._jobs: list[Job] = []
        self._starts: list[int] = []
        self._profile: Profile | None = None
        self._now = 0
        self._first = NEVER  # earliest planned start

    def plan(self, view: MachineView, jobs: list[Job]) -> list[int]:
        sig = machine_signature(view)
        now = view.now
        n = len(self._jobs)
        if (
            sig == self._sig
            and self._profile is not None
            and self._now <= now <= self._first
            and len(jobs) >= n
            and jobs[:n] == self._jobs
        ):
            for job in jobs[n:]:
                self._place(job, view.now)
            self._jobs = list(jobs)
            return list(self._starts)
        self._sig = sig
        self._now = now
        self._jobs = []
        self._starts = []
        self._profile = base_profile(view, len(jobs))
        if self.in_order:
            self._first = NEVER
            for job in jobs:
                self._place(job, view.now)
        else:
            self._starts = plan_in_order(self._profile, jobs, view.now)
            self._first = min(self._starts, default=NEVER)
        self._jobs = list(jobs)
        return list(self._starts)

    def _place(self, job: Job, now: int) -> None:
        assert self._profile is not None
        floor = now
        if self.in_order and self._starts:
            if self._starts[-1] == NEVER:
                self._starts.append(NEVER)  # behind a job that can never start
                return
            floor = max(now, self._starts[-1])
        start = self._profile.earliest_start(job.width, job.duration, floor)
        if start != NEVER:
            self._profile.reserve(start, start + job.duration, job.width)
            self._first = min(self._first, start)
        self._starts.append(start)
