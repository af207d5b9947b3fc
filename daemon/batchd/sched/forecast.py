"""Profiles of what a machine holds, and full plans of a waiting queue onto them.

Every planner starts from the same picture: the running jobs until their
estimated ends, and the advance reservations not yet begun, which no policy
may move.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from batchd.model.job import Job
from batchd.sched.profile import NEVER, Profile

if TYPE_CHECKING:
    from batchd.sched.policy import MachineView


def running_profile(view: MachineView, room: int) -> Profile:
    """Free nodes over time: running jobs and reservations, room for ``room`` more jobs."""
    pending = view.reservations()
    profile = Profile.of_running(
        view.capacity,
        view.now,
        view.running_ends(),
        view.running_widths(),
        room=room + len(pending),
    )
    for start, end, width in pending:
        profile.reserve(start, end, width)
    return profile


NO_START = 2**62  # no job has a planned start


def machine_signature(view: MachineView) -> tuple[object, ...]:
    """What a forecast depends on besides the queue and the time."""
    return (
        view.capacity,
        tuple(view.running_ends()),
        tuple(view.running_widths()),
        tuple(view.reservations()),
    )


class Forecaster:
    """Full plans of a queue for policies that keep none, kept between calls.

    A live daemon asks for the plan after every submission. When the machine is
    unchanged and the only difference is a job added at the end of the order
    (the usual case in FCFS order), the new job is placed on the profile of the
    previous plan instead of planning the whole queue again. Time passing alone
    changes nothing while no planned start has been reached: each start was the
    earliest at or after the old time, and it is still at or after the new one. With ``in_order``
    no job starts before the one ahead of it (FCFS without backfilling).
    """

    def __init__(self, in_order: bool = False) -> None:
        self.in_order = in_order
        self._sig: tuple[object, ...] | None = None
        self._jobs: list[Job] = []
        self._starts: list[int] = []
        self._profile: Profile | None = None
        self._now = 0
        self._first = NO_START  # earliest planned start

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
        self._first = NO_START
        self._jobs = []
        self._starts = []
        self._profile = running_profile(view, len(jobs))
        if self.in_order:
            for job in jobs:
                self._place(job, view.now)
        else:
            self._starts = forecast_onto(self._profile, jobs, view.now)
            self._first = min((s for s in self._starts if s != NEVER), default=NO_START)
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


def forecast_onto(profile: Profile, jobs: Sequence[Job], now: int) -> list[int]:
    """Planned starts of ``jobs`` placed in this order on ``profile``, each at its earliest."""
    if not jobs:
        return []
    widths = np.fromiter((j.width for j in jobs), dtype=np.int64, count=len(jobs))
    durations = np.fromiter((j.duration for j in jobs), dtype=np.int64, count=len(jobs))
    return profile.plan(widths, durations, now).tolist()
