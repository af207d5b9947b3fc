"""Iterative moldable scheduling (Sabin et al.'s moldable paper, sec. 6, Fig. 6) on conservative backfilling.

At every scheduling step the widths of all waiting jobs are chosen again, by
Fig. 6 on the conservative plan of the queue in FCFS order (the running jobs
until their estimated ends and the advance reservations underneath): every job
at its minimum width, then one node at a time to the job whose estimate falls
most, kept only if the plan's average turnaround improves
(``sched.kernels.iterative.iterate``). The plan found is used: the jobs it starts
now start at their widths, the others wait and are molded again at the next step.

A step is a scheduling pass after anything changed: a job arrived, ended or left
the queue, the machine changed (nodes, reservations), or a job runs past its
estimate (its end is then a guess, as in conservative backfilling). A pass with
nothing new starts the jobs the plan in hand starts now. A rigid job keeps its
width; a job's width is fixed when it starts.

While no waiting job is moldable, Fig. 6 has nothing to try and the plan is the
conservative FCFS plan: a step whose running jobs are the last step's plus those its
plan started (no job ended before its estimate, nothing else changed), and whose queue
only gained jobs, places the new jobs and those behind the first of them on the plan
kept from the last step (``kept_orders.placed_again``, as dynP does).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from batchd.model.job import Job
from batchd.sched.core.order import OrderedQueue, fcfs_key
from batchd.sched.core.plans import base_profile
from batchd.sched.core.policy import MachineView, Placement, Policy
from batchd.sched.core.profile import Profile
from batchd.sched.kernels.iterative import iterate
from batchd.sched.policies.kept_orders import (
    KEEP_FROM,
    OrderPlan,
    placed_again,
    planned_on,
    with_newcomers,
)

# One row of a waiting job's shape: low, high, requested width, estimate on it, fixed.
Shape = tuple[int, int, int, int, int]
Model = tuple[float, float]  # Downey's A and sigma (unused when fixed)
_NO_MODELS = np.empty((0, 2), dtype=np.float64)


def job_shape(job: Job) -> tuple[Shape, Model]:
    """What the search needs of a job: its range, and its estimate and how it scales."""
    mold = job.mold
    if mold is None:
        return (job.width, job.width, job.width, job.estimate, 1), (1.0, 0.0)
    speed = mold.speedup
    fixed = 1 if speed.kind == "fixed" else 0
    return (mold.low, mold.high, mold.width, mold.estimate, fixed), (speed.a, speed.sigma)


@dataclass(frozen=True, slots=True)
class StepInput:
    """One step's arrays: the base profile and the queue's shapes, in queue order."""

    now: int
    t: np.ndarray
    f: np.ndarray
    n: int
    shapes: np.ndarray  # (jobs, 5) int64: low, high, requested width, estimate, fixed
    models: np.ndarray  # (jobs, 2) float64: A, sigma

    @classmethod
    def of(
        cls,
        profile: Profile,
        now: int,
        shapes: list[Shape] | np.ndarray,
        models: list[Model] | np.ndarray,
    ) -> StepInput:
        return cls(
            now,
            profile.t,
            profile.f,
            profile.n,
            np.asarray(shapes, dtype=np.int64).reshape(len(shapes), 5),
            np.asarray(models, dtype=np.float64).reshape(len(models), 2),
        )


@dataclass(frozen=True, slots=True)
class StepResult:
    widths: np.ndarray
    starts: np.ndarray
    trials: int
    accepted: int


def iterative_step(step: StepInput) -> StepResult:
    """Fig. 6 on one step's arrays: the chosen widths and planned starts."""
    q = len(step.shapes)
    widths = np.empty(q, dtype=np.int64)
    starts = np.empty(q, dtype=np.int64)
    s, m = step.shapes, step.models
    trials, accepted = iterate(
        step.t,
        step.f,
        step.n,
        step.now,
        np.ascontiguousarray(s[:, 0]),
        np.ascontiguousarray(s[:, 1]),
        np.ascontiguousarray(s[:, 2]),
        np.ascontiguousarray(s[:, 3]),
        s[:, 4] != 0,
        np.ascontiguousarray(m[:, 0]),
        np.ascontiguousarray(m[:, 1]),
        widths,
        starts,
    )
    return StepResult(widths, starts, int(trials), int(accepted))


class StepStats:
    """What the replay summary reports about the steps."""

    __slots__ = ("steps", "jobs", "trials", "accepted", "seconds", "slowest")

    def __init__(self) -> None:
        self.steps = 0
        self.jobs = 0
        self.trials = 0
        self.accepted = 0
        self.seconds = 0.0
        self.slowest = 0.0

    def add(self, jobs: int, result: StepResult, seconds: float) -> None:
        self.steps += 1
        self.jobs += jobs
        self.trials += result.trials
        self.accepted += result.accepted
        self.seconds += seconds
        self.slowest = max(self.slowest, seconds)

    def summary(self) -> dict[str, Any]:
        n = self.steps
        return {
            "steps": n,
            "avg_queue": round(self.jobs / n, 4) if n else 0.0,
            "trials": self.trials,
            "accepted": self.accepted,
            "step_seconds_mean": self.seconds / n if n else 0.0,
            "step_seconds_max": self.slowest,
        }


class MoldableIterative(Policy):
    """FCFS conservative backfilling whose waiting jobs' widths Fig. 6 chooses at every step."""

    name = "moldable-iterative"

    def __init__(self) -> None:
        self.queue = OrderedQueue(fcfs_key)
        # Each waiting job's Shape and Model, rows parallel to the queue: a step hands
        # them to the search as they are. None once no waiting job is moldable and the
        # queue is twice as deep as the kept plan needs (the queue's own widths and
        # estimates say all; made from them when needed).
        self.shapes: np.ndarray | None = None
        self.models = _NO_MODELS
        # The plan in hand, parallel to the queue while it is fresh.
        self.widths = np.empty(0, dtype=np.int64)
        self.starts = np.empty(0, dtype=np.int64)
        self.fresh = False  # the plan in hand is that of the queue and machine as they are
        self.guessed = False  # it was made while a job ran past its estimate
        self.molded = 0  # waiting jobs with a moldable request
        # The last step's plan while the queue is rigid and deep, its arrays the plan in
        # hand's; and whether a job ended before its estimate since (the base moved).
        self.kept: OrderPlan | None = None
        self.base_moved = False
        self.kept_hits = 0  # steps planned from the kept plan
        self.arrived: list[Job] = []  # jobs queued since the last step
        self.stats = StepStats()
        # Called with each step's input before it is searched (bench/moldable_step.py).
        self.on_step: Callable[[StepInput], None] | None = None

    # -- events -----------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        i = self.queue.insert(job)
        self.molded += job.mold is not None
        shapes = self.shapes
        if shapes is not None or self.molded:
            if shapes is None:
                shapes = self._rows(skip=job)
            shape, model = job_shape(job)
            self.shapes = np.insert(shapes, i, shape, axis=0)
            self.models = np.insert(self.models, i, model, axis=0)
        self.arrived.append(job)
        self.fresh = False

    def withdraw(self, view: MachineView, job: Job) -> None:
        i = self.queue.index(job)
        self.queue.remove(job)
        self.molded -= job.mold is not None
        if self.shapes is not None:
            self.shapes = np.delete(self.shapes, i, axis=0)
            self.models = np.delete(self.models, i, axis=0)
        self.kept = None
        self.fresh = False

    def job_ended(self, view: MachineView, job: Job) -> None:
        if job.end != job.start + job.duration:
            self.base_moved = True  # its slot ends early: the room opened moves the plan
        self.fresh = False

    def invalidate(self) -> None:
        self.kept = None
        self.fresh = False

    # -- the step ---------------------------------------------------------------
    def _plan(self, view: MachineView) -> None:
        """Make the plan again unless the one in hand still holds."""
        now = view.now
        holds = self.fresh and not (self.guessed or view.overrun)
        if holds and (len(self.starts) == 0 or int(self.starts.min()) >= now):
            return
        arrived, self.arrived = self.arrived, []
        if self.molded == 0 and len(self.queue) >= KEEP_FROM:
            self._plan_rigid(view, arrived)
        else:
            self.kept = None
            step = StepInput.of(base_profile(view, 0), now, self._rows(), self.models)
            if self.on_step is not None:
                self.on_step(step)
            began = time.perf_counter()
            result = iterative_step(step)
            self.stats.add(len(self.queue), result, time.perf_counter() - began)
            self.widths = result.widths
            self.starts = result.starts
        self.fresh = True
        self.guessed = view.overrun

    def _plan_rigid(self, view: MachineView, arrived: list[Job]) -> None:
        """The conservative FCFS plan of a queue of rigid jobs: Fig. 6's first plan,
        which it keeps (no job can take a node more), made from the kept one if it holds.

        The kept plan holds while the running jobs are those it had plus those it
        started: the engine says when that changes (a job ending before its estimate,
        a withdrawal, ``invalidate``), as conservative backfilling trusts it to."""
        began = time.perf_counter()
        now = view.now
        if len(self.queue) >= 2 * KEEP_FROM:
            # Not needed while the queue stays rigid and deep; kept a while longer, so
            # that a queue going back and forth around KEEP_FROM does not make them anew.
            self.shapes = None
            self.models = _NO_MODELS
        plan = None
        kept = self.kept
        if kept is not None and not (self.base_moved or self.guessed or view.overrun):
            shapes = with_newcomers(kept, self.queue, arrived)
            if shapes is not None:
                plan = placed_again(kept.profile, shapes, now, in_place=True)
                self.kept_hits += plan is not None
        if plan is None:
            plan = planned_on(base_profile(view, len(self.queue)), *self.queue.arrays(), now)
        self.kept = plan
        self.base_moved = False
        self.widths = plan.widths
        self.starts = plan.starts
        result = StepResult(self.widths, self.starts, 0, 0)
        self.stats.add(len(self.queue), result, time.perf_counter() - began)

    def _rows(self, skip: Job | None = None) -> np.ndarray:
        """The queue's shapes (``models`` beside them), made from its jobs if not kept;
        ``skip``: a job queued but not yet given its row."""
        if self.shapes is None:
            rows = [job_shape(job) for job in self.queue.jobs if job is not skip]
            self.shapes = np.array([r[0] for r in rows], dtype=np.int64).reshape(len(rows), 5)
            self.models = np.array([r[1] for r in rows], dtype=np.float64).reshape(len(rows), 2)
        return self.shapes

    def schedule(self, view: MachineView) -> list[Placement]:
        if not self.queue.jobs:
            return []
        self._plan(view)
        due = np.flatnonzero(self.starts == view.now)
        if not len(due):
            return []
        jobs, machine = self.queue.jobs, self.machine
        at = due.tolist()
        placements = [
            Placement(jobs[i], machine, w)
            for i, w in zip(at, self.widths[due].tolist(), strict=True)
        ]
        self.queue.remove_at(at)
        if self.molded:
            self.molded -= sum(p.job.mold is not None for p in placements)
        keep = np.ones(len(self.starts), dtype=bool)
        keep[due] = False
        if self.shapes is not None:
            self.shapes = self.shapes[keep]
            self.models = self.models[keep]
        self.widths = self.widths[keep]
        self.starts = self.starts[keep]
        kept = self.kept
        if kept is not None:  # its arrays are the plan in hand's; its profile has the starts
            kept.widths, kept.starts = self.widths, self.starts
            kept.durations = kept.durations[keep]
        return placements

    def waiting(self) -> list[Job]:
        return list(self.queue.jobs)

    def planned_width(self, job: Job) -> int:
        if self.fresh and job in self.queue:
            return int(self.widths[self.queue.index(job)])
        return job.width

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        if not self.queue.jobs:
            return []
        self._plan(view)
        return list(zip(self.queue.jobs, self.starts.tolist(), strict=True))

    def report(self) -> dict[str, Any]:
        return {"moldable_iterative": self.stats.summary()}
