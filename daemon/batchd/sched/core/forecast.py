"""Planned starts for policies that keep no plan: what ``qstat -T`` shows for them."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.outline import EMPTY, Extent, PlanOutline
from batchd.sched.core.plans import base_profile, machine_signature, plan_in_order
from batchd.sched.core.profile import Profile
from batchd.sched.kernels.profile import RECENT

if TYPE_CHECKING:
    from batchd.sched.core.order import OrderedQueue
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

    Given the policy's ``OrderedQueue`` (``plan_queue``, ``start_of``), the kept
    plan is checked against the queue's count of changes instead of job by job,
    so the planned start of a new job costs its own placement, not the queue's.

    That placement searches the kept profile from the start of the last job placed
    on it that was no wider and no longer than the new one, not from now: the kept
    profile only loses room between two plans made afresh, so where that job found
    no room, the new one finds none either (the rule ``kernels.profile.plan_all``
    applies within one plan, with as many placements, ``RECENT``). In a deep queue it
    skips the plan's whole front, which a search from now walks step by step.
    """

    def __init__(self, in_order: bool = False) -> None:
        self.in_order = in_order
        self._sig: tuple[object, ...] | None = None
        self._jobs: list[Job] = []
        self._starts: list[int] = []
        self._profile: Profile | None = None
        self._now = 0
        self._first = NEVER  # earliest planned start
        # The queue planned and its count of changes then (None: a list was planned).
        self._mark: tuple[OrderedQueue, int] | None = None
        self._extent = Extent()  # of the kept plan of a queue
        # (width, duration, start) of the last jobs placed on the kept profile.
        self._placed: deque[tuple[int, int, int]] = deque(maxlen=RECENT)

    def plan(self, view: MachineView, jobs: list[Job]) -> list[int]:
        """The planned start of each of ``jobs``, in this order."""
        self._mark = None
        return list(self._update(view, jobs, self._kept(view, jobs)))

    def plan_queue(self, view: MachineView, queue: OrderedQueue) -> list[int]:
        """The planned start of each job of ``queue``, in its order."""
        return list(self._queue_starts(view, queue))

    def start_of(self, view: MachineView, queue: OrderedQueue, job: Job) -> int:
        """The planned start of ``job`` in the plan of ``queue`` (NEVER if it is not in it):
        the value ``plan_queue`` gives it, with only the jobs new at the end placed."""
        starts = self._queue_starts(view, queue)
        try:
            return starts[queue.index(job)]
        except KeyError:  # not waiting in this queue (or not known to its order)
            return NEVER

    def outline_queue(self, view: MachineView, queue: OrderedQueue) -> PlanOutline:
        """The outline of the plan ``plan_queue`` gives: only the jobs new at the end
        are placed, and only they are read, while the kept plan holds."""
        starts = self._queue_starts(view, queue)
        if not starts:
            return EMPTY
        extent = self._extent.of(starts, queue.durations)
        return PlanOutline(queue.jobs[0].submit, starts[0], extent.end, extent.first)

    def _queue_starts(self, view: MachineView, queue: OrderedQueue) -> list[int]:
        mark = self._mark
        n = len(self._jobs)
        unchanged = (
            mark is not None
            and mark[0] is queue
            and mark[1] == queue.changes
            and len(queue) >= n
            and self._usable(view)
        )
        starts = self._update(view, queue.jobs, unchanged)
        self._mark = (queue, queue.changes)
        return starts

    def _usable(self, view: MachineView) -> bool:
        """The kept plan holds for the machine and time of ``view``."""
        return (
            self._profile is not None
            and self._now <= view.now <= self._first
            and machine_signature(view) == self._sig
        )

    def _kept(self, view: MachineView, jobs: list[Job]) -> bool:
        """The kept plan holds and ``jobs`` begin with the jobs it planned."""
        n = len(self._jobs)
        return len(jobs) >= n and self._usable(view) and jobs[:n] == self._jobs

    def _update(self, view: MachineView, jobs: list[Job], kept: bool) -> list[int]:
        """The kept plan with the jobs after its own placed (``kept``), or a new plan."""
        n = len(self._jobs)
        if kept:
            for job in jobs[n:]:
                self._place(job, view.now)
            self._jobs.extend(jobs[n:])
            return self._starts
        sig = machine_signature(view)
        now = view.now
        self._sig = sig
        self._now = now
        self._jobs = []
        self._starts = []
        self._profile = base_profile(view, len(jobs))
        self._placed.clear()
        if self.in_order:
            self._first = NEVER
            for job in jobs:
                self._place(job, view.now)
        else:
            self._starts = plan_in_order(self._profile, jobs, view.now)
            self._first = min(self._starts, default=NEVER)
            tail = len(jobs) - RECENT
            self._placed.extend(
                (job.width, job.duration, start)
                for job, start in zip(jobs[tail:], self._starts[tail:], strict=True)
            )
        self._jobs = list(jobs)
        return self._starts

    def _place(self, job: Job, now: int) -> None:
        assert self._profile is not None
        floor = now
        if self.in_order and self._starts:
            if self._starts[-1] == NEVER:
                self._starts.append(NEVER)  # behind a job that can never start
                return
            floor = max(now, self._starts[-1])
        width, duration = job.width, job.duration
        for w, d, placed in self._placed:
            if placed > floor and w <= width and d <= duration:
                floor = placed
        # A floor of NEVER: one no wider and no longer never starts, nor will this one.
        start = NEVER if floor == NEVER else self._profile.earliest_start(width, duration, floor)
        if start != NEVER:
            self._profile.reserve(start, start + duration, width)
            self._first = min(self._first, start)
        self._placed.append((width, duration, start))
        self._starts.append(start)
