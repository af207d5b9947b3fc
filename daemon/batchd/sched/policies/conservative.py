"""Conservative backfilling on a planned full schedule (Streit's dynP paper, sec. 3.1 and 5).

Every waiting job holds a planned start. A new job is placed into the existing
plan at its earliest start that delays no planned job, and that start is its
promise. When a job ends, the plan of the waiting jobs is made again in policy
order, in one of three ways (the ``replan`` parameter):

``rebuild``
    Streit's dynP paper: the whole plan is rebuilt in policy order onto the profile of the
    running jobs' estimated ends.
``compress``
    every job, in policy order, leaves its slot and takes its earliest start
    among all other reservations; nobody ever moves later.
``guarded``
    a rebuild, unless it would put some job later than its current planned
    start (list-scheduling anomalies make that possible even in FCFS order);
    then a compression instead, so no job starts later than its promise.

With ``depth`` K (0: every job), a re-plan concerns the first K waiting jobs in
policy order only, in any of the three modes: the jobs behind keep their planned
starts and are held like advance reservations, and those K are rebuilt, compressed
or guarded around them. Each re-plan then costs about what K jobs cost, however deep
the queue (Slurm's ``bf_max_job_test`` bounds its backfill the same way); the plan
is no longer the exact one of the whole queue, but no job starts later than its
promise under ``compress`` and ``guarded``.

A re-plan is skipped when its result cannot differ from the plan in hand: the
plan was rebuilt (or compressed to a fixed point), every job since was placed at
the end of the order, and the job that ended did so at its estimated end. A
compression is made from the last plan (``KeptCompression``): its profile is made
that of now from what changed (the base, the jobs that left the plan), not laid
out again from every job's slot, and the jobs no room can have opened for keep
their starts without a search.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.compression import KeptCompression
from batchd.sched.core.front import Looked, compress_front
from batchd.sched.core.order import OrderedQueue, OrderKey
from batchd.sched.core.outline import EMPTY, Extent, PlanOutline
from batchd.sched.core.plans import base_profile
from batchd.sched.core.policy import MachineView, Placement, Policy
from batchd.sched.core.profile import Profile

Replan = Literal["rebuild", "compress", "guarded"]


class ConservativeParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    replan: Replan | None = None  # None: the policy's default
    depth: int = Field(
        0, ge=0, description="waiting jobs a re-plan moves, first in order (0: every job)"
    )


class ReplanCounts:
    __slots__ = ("rebuilds", "compressions", "skipped")

    def __init__(self) -> None:
        self.rebuilds = 0
        self.compressions = 0
        self.skipped = 0


class ConservativePolicy(Policy):
    """FCFS, SJF or LJF order with conservative backfilling."""

    # Tests: each compression's profile, made from what changed, is checked against
    # one laid out afresh from the base and every job's slot.
    check_compressions: ClassVar[bool] = False

    def __init__(
        self, name: str, key: OrderKey, replan: Replan = "rebuild", depth: int = 0
    ) -> None:
        self.name = name
        self.replan_mode: Replan = replan
        self.depth = depth
        # Compressing, or re-planning the first jobs only, it keeps what the plan in force
        # is made that of now from: the base it was made on and the slots of the jobs
        # that left it.
        self.compresses = replan != "rebuild" or depth > 0
        # The jobs behind the first ``depth`` keep starts that the ends since may no
        # longer fall at: the engine wakes the policy at the next planned start.
        self.wakes = depth > 0
        self._wake_at: int | None = None  # that start, None: to be found
        self._looked = Looked()  # the jobs a depth-bounded compression need not search anew
        self.queue = OrderedQueue(key)
        self.kept_compression = KeptCompression()  # what the next compression is made from
        self.profile: Profile | None = None  # running jobs plus every reservation
        self.stale = True  # the plan must be made again before it is used
        self.settled = False  # making it again would give the same plan
        self.counts = ReplanCounts()
        self._due: list[Job] = []
        self._due_check = False
        self.guessed = False  # the plan was made while a job overran its estimate
        self.reshaped = False  # nodes or reservations changed: promises may not hold
        self._extent = Extent()  # of the plan in force

    def must_replan(self, view: MachineView) -> bool:
        """The plan cannot be used as it is: a job ended, a job overran, or it was a guess.

        A plan made while a job ran past its estimate (no kill) assumed it would end
        in a second; its starts may have passed unused, so such a plan is rebuilt at
        the next event even when the overrun is over.
        """
        return self.profile is None or self.stale or self.guessed or view.overrun

    # -- events -----------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        if self.must_replan(view):
            # Ends at this second come first: re-plan the queue, then place the newcomer.
            self.replan(view)
        assert self.profile is not None
        self.profile.advance(view.now)
        width, duration = self.shape(job, self.profile, view.now)
        start = self.profile.place(width, duration, view.now)
        at = self.queue.insert(job, start, None if width == job.width else (width, duration))
        if at != len(self.queue) - 1:
            self.settled = False  # a re-plan would put it elsewhere in the order
        if self.depth:
            self._looked.add(job)
        if start == view.now:
            self._due.append(job)
        elif self._wake_at is not None and start < self._wake_at:
            self._wake_at = start
        promise(job, start)

    def shape(self, job: Job, profile: Profile, now: int) -> tuple[int, int]:
        """The width and planned duration a new job takes in the plan (its own here)."""
        return job.width, job.duration

    def job_ended(self, view: MachineView, job: Job) -> None:
        if not (self.settled and job.end == job.start + job.duration):
            self.stale = True
        elif not self.stale:
            # The plan stands, but jobs planned to start at this second must still start.
            self.counts.skipped += 1
            self._due_check = True

    def withdraw(self, view: MachineView, job: Job) -> None:
        if self.compresses:
            self._leaves(job)
        self.queue.remove(job)
        self.stale = True

    def _leaves(self, job: Job) -> None:
        """``job`` leaves the queue: its slot leaves the plan in force (one that is
        not waiting here holds none)."""
        queue = self.queue
        try:
            i = queue.index(job)
        except KeyError:
            return
        self.kept_compression.leave(queue.start_at(i), queue.durations[i], queue.widths[i])

    def invalidate(self) -> None:
        self.stale = True
        self.settled = False
        self.reshaped = True

    def schedule(self, view: MachineView) -> list[Placement]:
        return self.place_all(self._starting(view))

    def _starting(self, view: MachineView) -> list[Job]:
        """The jobs whose planned start is now; they leave the queue."""
        if self.must_replan(view):
            self.replan(view)
        elif self._due_check or (
            self.wakes and self._wake_at is not None and view.now >= self._wake_at
        ):
            planned = self.queue.starts_array()
            due_idx = np.flatnonzero(planned == view.now).tolist()
            seen = {id(j) for j in self._due}
            self._due += [j for i in due_idx if id(j := self.queue.jobs[i]) not in seen]
        self._due_check = False
        due = self._due
        self._due = []
        if due:
            if self.compresses:
                for job in due:
                    self._leaves(job)
            self.queue.remove_many(due)
        return due

    # -- planning ---------------------------------------------------------------
    def replan(self, view: MachineView) -> None:
        now = view.now
        queue = self.queue
        mode = self.replan_mode
        # Only the first jobs are made again; a queue no deeper than that, whose jobs the
        # last re-plan all looked at, is planned whole, as without a depth.
        front = self.depth > 0 and not (len(queue) <= self.depth and self._looked.every())
        if view.overrun or self.guessed or self.reshaped or self.profile is None:
            # Promises cannot hold once a job ran past its estimate or the machine
            # itself changed (nodes out of service, a new reservation).
            mode = "rebuild"
            front = False
        # The starts held are what a compression moves and a guarded rebuild keeps.
        held = queue.starts_array() if mode != "rebuild" or front else None
        if held is not None and held.size and int(held.min()) < now:
            # A planned start passed unused (a job ran past its estimate and ended
            # since): held at now, the jobs would overlap; the plan is made afresh.
            mode = "rebuild"
            front = False
        self.guessed = view.overrun
        self.reshaped = False
        self._wake_at = None
        if front:
            assert held is not None
            self._replan_front(view, mode, held)
            return
        starts: np.ndarray | None = None
        out: np.ndarray | None = None  # the queue's own starts, when a plan is written there
        # The base (running jobs, reservations) is made once: a guarded re-plan that
        # falls back to compression plans a copy; the plan in force keeps the base it
        # was made on, for the next compression to be made from.
        base = base_profile(view, len(queue))
        kept = base
        # Read while the queue stands: the plan is made before it changes.
        widths, durations = queue.views()
        if mode == "rebuild":
            if self.compresses:
                kept = base.copy(extra=0)
            profile = base
            # A deep queue's plan is written straight into its starts.
            out = queue.starts_out()
            starts = profile.plan(widths, durations, now, out)
        elif mode == "guarded":
            # A guarded re-plan keeps each job's promise: its held start, none of them
            # before now (a passed one forces a rebuild); NEVER promises nothing, and
            # no start is later than NEVER. The rebuild stops at the first it breaks.
            assert held is not None
            profile = base.copy(extra=2 * len(widths) + 2)  # the room a plan takes
            starts = profile.plan_within(widths, durations, now, held)
        if starts is None:
            assert self.profile is not None and held is not None  # a first plan is a rebuild
            profile = self.profile
            gains = self.kept_compression.changed(profile, base, now, len(widths))
            if self.check_compressions:
                check_profile(profile, base, (widths, durations), held)
            # The jobs move in a deep queue's own starts (they hold what ``held`` does).
            out = queue.starts_out()
            starts = self.kept_compression.compress(
                profile, gains, (widths, durations), held if out is None else out, base, now
            )
            self.settled = False
            self.counts.compressions += 1
        else:
            self.settled = True
            self.kept_compression.made_on(kept if self.compresses else None)
            self.counts.rebuilds += 1
        self._looked.all()
        self.profile = profile
        if starts is not out:
            queue.set_starts(starts)
        self._due = [queue.jobs[i] for i in np.flatnonzero(starts == now).tolist()]
        self.stale = False

    def _replan_front(self, view: MachineView, mode: Replan, held: np.ndarray) -> None:
        """Re-plan the first ``depth`` jobs in ``mode`` around the slots the others hold,
        on the plan in force made that of now."""
        now = view.now
        queue = self.queue
        k = min(self.depth, len(queue))
        base = base_profile(view, k)
        profile = self.profile
        assert profile is not None
        kept = self.kept_compression
        gains = kept.changed(profile, base, now, 2 * k + 2)
        widths, durations = queue.views()
        if self.check_compressions:
            check_profile(profile, base, (widths, durations), held)
        widths, durations = widths[:k], durations[:k]
        starts: np.ndarray | None = None
        if mode != "compress":
            # The first k leave their slots; a guarded plan is tried on a copy.
            trial = profile if mode == "rebuild" else profile.copy(extra=2 * k + 2)
            slots = (held[:k] != NEVER) & (widths > 0) & (durations > 0)
            trial.release_all(widths[slots], durations[slots], held[:k][slots])
            if mode == "rebuild":
                starts = trial.plan(widths, durations, now)
            else:
                starts = trial.plan_within(widths, durations, now, held[:k])
            if starts is not None:
                profile = trial
                kept.made_on(base)
                self.counts.rebuilds += 1
        # A rebuild of every job settles the plan as a full one does; with jobs behind,
        # not looked at, a re-plan may move them once they are among the first.
        self.settled = starts is not None and k == len(queue)
        if starts is None:
            # Every one of the first k takes its earliest start among all the others; a
            # job the last re-plan did not look at is searched everywhere.
            starts = held[:k].copy()
            entered = self._looked.entered(queue, k)
            left = compress_front(profile, gains, (widths, durations), starts, entered, now)
            kept.made_on(base, left)
            self.counts.compressions += 1
        self._looked.front(queue, k)
        self.profile = profile
        queue.set_front_starts(starts)
        behind = np.flatnonzero(held[k:] == now) + k
        due = np.concatenate((np.flatnonzero(starts == now), behind)).tolist()
        self._due = [queue.jobs[i] for i in due]
        self._wake_at = _next_start((starts, held[k:]), now)
        self.stale = False

    def next_wakeup(self, now: int) -> int | None:
        if self._wake_at is None or self._wake_at <= now:
            self._wake_at = _next_start((self.queue.starts_array(),), now)
        return self._wake_at

    def waiting(self) -> list[Job]:
        return list(self.queue.jobs)

    def head(self) -> Job | None:
        return self.queue.jobs[0] if self.queue.jobs else None

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        if self.must_replan(view):
            return super().planned_starts(view)
        return list(zip(self.queue.jobs, self.queue.starts, strict=True))

    def planned_start(self, view: MachineView, job: Job) -> int | None:
        if self.must_replan(view):
            return None
        try:
            return self.queue.start_at(self.queue.index(job))
        except KeyError:  # not waiting here
            return NEVER

    def plan_outline(self, view: MachineView) -> PlanOutline | None:
        if self.must_replan(view):
            return None
        queue = self.queue
        if not queue.jobs:
            return EMPTY
        # A job's planned duration is its own (Job.duration) unless ``shape`` chose another.
        extent = self._extent.of(queue.starts, queue.durations, queue.changes)
        return PlanOutline(queue.jobs[0].submit, queue.starts[0], extent.end, extent.first)


def check_profile(
    profile: Profile, base: Profile, arrays: tuple[np.ndarray, np.ndarray], held: np.ndarray
) -> None:
    """Raise unless ``profile`` is ``base`` with every job at its ``held`` start."""
    afresh = base.copy()
    afresh.reserve_all(*arrays, held)
    if not profile.same_steps(afresh):
        raise AssertionError(
            f"the plan's profile made from what changed, {profile.steps()[:8]}..., is not "
            f"the one laid out afresh, {afresh.steps()[:8]}..."
        )


def _next_start(parts: tuple[np.ndarray, ...], now: int) -> int | None:
    """The earliest planned start after ``now`` in these arrays of starts."""
    later = [int(a[(a > now) & (a != NEVER)].min(initial=NEVER)) for a in parts]
    first = min(later)
    return first if first != NEVER else None


def promise(job: Job, start: int) -> None:
    """The start a planner promised a job when it was first placed (it keeps the first)."""
    if job.result.submit_plan < 0 and start != NEVER:
        job.result.submit_plan = start
