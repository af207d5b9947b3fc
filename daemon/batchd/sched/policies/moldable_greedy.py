"""Submit-time greedy moldable scheduling (Cirne's scheme; Sabin et al.'s moldable paper's baseline).

Each moldable job, when it arrives, takes the width that ends it soonest on the
current plan, and keeps it: the plan is that of conservative backfilling (the
running jobs until their estimated ends, the advance reservations, and every
waiting job at its planned start and chosen width, in FCFS order). The new job's
planned end at width ``n`` is its earliest start on that plan for ``n`` nodes and
its estimate on ``n`` nodes, plus that estimate; the soonest end wins, the
narrowest width among equal ends. From then on the job is rigid at that width
under conservative backfilling. A rigid job takes its requested width.
"""

from __future__ import annotations

import numpy as np

from batchd.model.job import Job
from batchd.sched.core.order import fcfs_key
from batchd.sched.core.outline import PlanOutline
from batchd.sched.core.plans import plan_queue
from batchd.sched.core.policy import MachineView, Placement
from batchd.sched.core.profile import Profile
from batchd.sched.kernels.moldable import soonest_width
from batchd.sched.policies.conservative import ConservativePolicy


def greedy_width(job: Job, profile: Profile, now: int) -> int:
    """The width in the job's range that ends it soonest on ``profile`` (its requested
    width if no width of the range ever fits)."""
    mold = job.mold
    if mold is None or mold.rigid:
        return job.width
    speed = mold.speedup
    width = soonest_width(
        profile.t,
        profile.f,
        profile.n,
        now,
        mold.low,
        mold.high,
        mold.width,
        mold.estimate,
        speed.kind == "fixed",
        speed.a,
        speed.sigma,
    )
    return int(width) if width > 0 else job.width


class MoldableGreedy(ConservativePolicy):
    """Conservative backfilling in FCFS order; a moldable job's width chosen at arrival."""

    def __init__(self) -> None:
        super().__init__("moldable-greedy", fcfs_key, "rebuild")
        self.chosen: dict[Job, int] = {}  # waiting moldable jobs at a width of their choice

    def shape(self, job: Job, profile: Profile, now: int) -> tuple[int, int]:
        width = greedy_width(job, profile, now)
        if width == job.width:
            self.chosen.pop(job, None)
            return width, job.duration
        assert job.mold is not None
        self.chosen[job] = width
        estimate = job.mold.estimate_on(width)
        return width, estimate if estimate > 0 else 1

    def withdraw(self, view: MachineView, job: Job) -> None:
        super().withdraw(view, job)
        self.chosen.pop(job, None)

    def schedule(self, view: MachineView) -> list[Placement]:
        chosen, machine = self.chosen, self.machine
        return [Placement(j, machine, chosen.pop(j, j.width)) for j in self._starting(view)]

    def planned_width(self, job: Job) -> int:
        return self.chosen.get(job, job.width)

    def plan_outline(self, view: MachineView) -> PlanOutline | None:
        return None  # the plan's durations are the chosen widths', the outline's the jobs' own

    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        if self.must_replan(view):
            # A plan of the queue at the chosen widths, without touching the policy's own.
            _, starts = plan_queue(self.queue, view)
            return list(zip(self.queue.jobs, np.asarray(starts).tolist(), strict=True))
        return super().planned_starts(view)
