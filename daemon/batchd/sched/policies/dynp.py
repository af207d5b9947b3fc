"""The dynP scheduler family (Streit's dynP paper): conservative backfilling whose order switches live.

``dynp-basic`` (sec. 3.1) decides at every submission, when enough jobs wait,
from the average estimated runtime of the waiting queue and two bounds.
``dynp`` (sec. 3.2) is self-tuning: at every scheduling step (each submission
and each job end) it builds full plans of the waiting jobs in FCFS, SJF and LJF
order on copies of the current state, measures them with a quality metric and
lets a decider (Table 1) pick the policy whose plan is then used. With
``fcfs_candidate=as-queued`` the FCFS plan it measures is the waiting queue as it
stands (``batchd.sched.policies.standing``), while the FCFS plan it adopts is sorted.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.order import ORDERS, OrderedQueue
from batchd.sched.core.plans import base_profile
from batchd.sched.core.policy import MachineView, Placement
from batchd.sched.core.profile import Profile
from batchd.sched.policies.conservative import ConservativePolicy, promise
from batchd.sched.policies.decider import CASES, FCFS, LJF, POLICIES, SJF, Decider, decide
from batchd.sched.policies.kept_orders import KEEP_FROM, KeptOrders, OrderPlan
from batchd.sched.policies.quality import (
    SUMMED,
    Quality,
    plan_quality,
    queue_terms,
    summed_quality,
)
from batchd.sched.policies.standing import StandingQueue

ORDER_OF = {FCFS: ORDERS["fcfs"], SJF: ORDERS["sjf"], LJF: ORDERS["ljf"]}
_HORIZON = re.compile(r"^(\d+)\s*([smhd])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
FcfsCandidate = Literal["sorted", "as-queued", "as-queued-sjf"]


class DynPParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    decider: Decider = "advanced"
    quality: Quality = "artww"
    slackness: float = Field(0.0, ge=0.0, lt=100.0, description="percent a new policy must win by")
    reduced_future: str | None = Field(
        None, description="measure only the first K jobs to start (K) or those within H (6h, 90m)"
    )
    min_backlog: int = Field(2, ge=1, description="waiting jobs needed to self-tune")
    fcfs_candidate: FcfsCandidate = Field(
        "sorted",
        description="the FCFS plan measured: the queue sorted by submit time, or as it "
        "stands (new jobs appended; as-queued-sjf: in SJF order while LJF is in force)",
    )

    @field_validator("reduced_future")
    @classmethod
    def _horizon(cls, value: str | None) -> str | None:
        if value is None or value.isdigit() and int(value) > 0 or _HORIZON.match(value):
            return value
        raise ValueError("expected a job count K > 0 (e.g. 20) or a horizon like 21600s, 90m, 6h")

    def future(self) -> tuple[int | None, int | None]:
        """(first K jobs, horizon seconds) of the reduced future, or (None, None)."""
        if self.reduced_future is None:
            return None, None
        if self.reduced_future.isdigit():
            return int(self.reduced_future), None
        m = _HORIZON.match(self.reduced_future)
        assert m is not None
        return None, int(m.group(1)) * _UNIT[m.group(2)]


class DynPBasicParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    lower: int = Field(7200, ge=0, description="AERT up to this: SJF")
    upper: int = Field(9000, ge=0, description="AERT above this: LJF")
    threshold: int = Field(5, ge=1, description="waiting jobs needed to decide")

    @model_validator(mode="after")
    def _bounds(self) -> DynPBasicParams:
        if self.lower > self.upper:
            raise ValueError(f"lower ({self.lower}) must not exceed upper ({self.upper})")
        return self


class SwitchingPolicy(ConservativePolicy):
    """Conservative planning in one of three orders, with the queue kept in all three."""

    def __init__(self, name: str) -> None:
        super().__init__(name, ORDER_OF[FCFS], "rebuild")
        self.queues = {p: OrderedQueue(ORDER_OF[p]) for p in POLICIES}
        self.current = FCFS
        self.queue = self.queues[FCFS]
        self.jobs_started = dict.fromkeys(POLICIES, 0)
        self.switches = dict.fromkeys(POLICIES, 0)
        self.decider_calls = 0

    def order(self) -> str:
        return self.current

    def use(self, policy: str) -> None:
        if policy != self.current:
            self.switches[policy] += 1
            self.observer.switched(self.current, policy)
            self.current = policy
            self.queue = self.queues[policy]

    def enqueue(self, job: Job) -> None:
        for q in self.queues.values():
            if q is not self.queue:
                q.insert(job)

    def job_ended(self, view: MachineView, job: Job) -> None:
        self.stale = True

    def withdraw(self, view: MachineView, job: Job) -> None:
        for q in self.queues.values():
            q.remove(job)
        self.stale = True

    def _starting(self, view: MachineView) -> list[Job]:
        due = super()._starting(view)
        if due:
            self.leaving(due, view.now)
            for q in self.queues.values():
                if q is not self.queue:
                    q.remove_many(due)
            for job in due:
                job.result.started_by = self.current
            self.jobs_started[self.current] += len(due)
        return due

    def leaving(self, due: list[Job], now: int) -> None:
        """``due`` start now: they left the current queue, not yet the others."""

    def adopt(self, view: MachineView, profile: Profile, starts: np.ndarray) -> None:
        """Make a plan of the current queue the plan in force."""
        self.profile = profile
        self.queue.set_starts(starts)
        self._due = [self.queue.jobs[i] for i in np.flatnonzero(starts == view.now).tolist()]
        self.stale = False
        self.settled = False
        self.reshaped = False


class DynPBasic(SwitchingPolicy):
    """Basic dynP: the AERT of the waiting queue against two bounds."""

    def __init__(self, params: DynPBasicParams) -> None:
        super().__init__("dynp-basic")
        self.params = params
        self._estimates = 0  # sum of estimates of waiting jobs

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self._estimates += job.estimate
        n = len(self.queue) + 1  # the newcomer counts
        new = self.current
        if n >= self.params.threshold:
            self.decider_calls += 1
            aert = self._estimates / n
            if 0 < aert <= self.params.lower:
                new = SJF
            elif self.params.lower < aert <= self.params.upper:
                new = FCFS
            elif aert > self.params.upper:
                new = LJF
        if new == self.current:
            self.enqueue(job)
            super().job_submitted(view, job)
            return
        # Switch, and plan the whole waiting queue again in the new order.
        self.use(new)
        self.enqueue(job)
        self.queue.insert(job)
        self.replan(view)
        promise(job, self.queue.start_at(self.queue.index(job)))

    def _starting(self, view: MachineView) -> list[Job]:
        due = super()._starting(view)
        self._estimates -= sum(j.estimate for j in due)
        return due

    def withdraw(self, view: MachineView, job: Job) -> None:
        super().withdraw(view, job)
        self._estimates -= job.estimate

    def report(self) -> dict[str, Any]:
        return {
            "dynp": {
                "jobs_started": dict(self.jobs_started),
                "decider_calls": self.decider_calls,
                "switches": dict(self.switches),
            }
        }


class DynP(SwitchingPolicy):
    """Self-tuning dynP with the simple or advanced decider."""

    def __init__(self, params: DynPParams) -> None:
        super().__init__("dynp")
        self.params = params
        self.first_k, self.horizon = params.future()
        # Every job of a plan is measured, by sums: the parts no order changes are
        # summed once a step (``quality.queue_terms``).
        whole = self.first_k is None and self.horizon is None
        self.summed = whole and params.quality in SUMMED
        self.cases = dict.fromkeys(CASES, 0)
        self.kept = 0
        self.backlog_total = 0
        self.tuning_total = 0.0
        self.tuning_max = 0.0
        # The waiting jobs' submits summed, plain and times the width: a plan's ART or
        # ARTwW needs no more of them, whatever order it has the jobs in.
        self.submit_sums = [0, 0]
        self.standing: StandingQueue | None = None
        self.kept_plans = KeptOrders()
        if params.fcfs_candidate != "sorted":
            sjf = params.fcfs_candidate == "as-queued-sjf"
            self.standing = StandingQueue(self.current, ljf_as_sjf=sjf)

    # -- steps ----------------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        if self.must_replan(view):
            self.step(view)  # the step of the job ends at this second comes first
        self.enqueue(job)
        self._count(job, 1)
        if len(self.queue) + 1 >= self.params.min_backlog:
            self.queue.insert(job)
            if self.standing is not None:
                self.standing.append(job)
            self.tune(view, job)
            promise(job, self.queue.start_at(self.queue.index(job)))
        else:
            self.kept_plans.drop()
            super().job_submitted(view, job)  # may re-plan (and sort the list) first
            if self.standing is not None:
                self.standing.append(job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.kept_plans.drop()
        super().withdraw(view, job)
        self._count(job, -1)
        if self.standing is not None:
            self.standing.discard((job,))

    def _starting(self, view: MachineView) -> list[Job]:
        due = super()._starting(view)
        for job in due:
            self._count(job, -1)
        if due and self.standing is not None:
            self.standing.discard(due)
        return due

    def _count(self, job: Job, sign: int) -> None:
        self.submit_sums[0] += sign * job.submit
        self.submit_sums[1] += sign * job.width * job.submit

    def invalidate(self) -> None:
        self.kept_plans.drop()
        super().invalidate()

    def leaving(self, due: list[Job], now: int) -> None:
        self.kept_plans.leaving(self.current, self.queues, due, now)

    def replan(self, view: MachineView) -> None:
        self.kept_plans.drop()
        super().replan(view)
        if self.standing is not None:
            self.standing.sort_as(self.current)

    def schedule(self, view: MachineView) -> list[Placement]:
        if self.must_replan(view):
            self.step(view)
        return super().schedule(view)

    def step(self, view: MachineView) -> None:
        if len(self.queue) >= self.params.min_backlog:
            self.tune(view)
        else:
            self.replan(view)

    # -- self-tuning ------------------------------------------------------------------
    def measure(
        self,
        queue: OrderedQueue,
        starts: np.ndarray,
        widths: np.ndarray,
        durations: np.ndarray,
        now: int,
        terms: tuple[int, int] | None = None,
    ) -> Any:
        """The quality of a plan of ``queue``; ``terms``: its ``queue_terms``, if known."""
        metric = self.params.quality
        if self.summed:
            # Every job scored: sums over the queue do, and they are the same in every order.
            if terms is None:
                terms = queue_terms(metric, widths, durations, *self.submit_sums)
            quality = summed_quality(metric, starts, widths, durations, terms)
            if quality is not None:
                return quality
        return self.measure_arrays(starts, widths, durations, _submits(queue), now)

    def measure_standing(self, view: MachineView, quality: dict[str, Any]) -> Any:
        """The quality of a plan of the waiting queue as it stands (as-queued only)."""
        assert self.standing is not None
        base = self.standing.base
        queue = self.queues[base]
        order = self.standing.permutation(queue)
        if order is None:
            return quality[base]  # the list stands in that order: the same plan
        widths, durations = (a[order] for a in queue.arrays())
        starts = base_profile(view, len(queue)).plan(widths, durations, view.now)
        return self.measure_arrays(starts, widths, durations, _submits(queue)[order], view.now)

    def measure_arrays(
        self,
        starts: np.ndarray,
        widths: np.ndarray,
        durations: np.ndarray,
        submits: np.ndarray,
        now: int,
    ) -> Any:
        keep: np.ndarray | None = None
        placed = starts != NEVER
        if not placed.all():
            keep = placed  # jobs wider than the nodes in service have no start: not scored
        if self.first_k is not None and self.first_k < int(placed.sum()):
            order = np.argsort(starts if keep is None else starts[keep], kind="stable")
            first = order[: self.first_k]
            keep = first if keep is None else np.flatnonzero(keep)[first]
        elif self.horizon is not None:
            soon = starts < now + self.horizon
            keep = soon if keep is None else keep & soon
        if keep is not None:
            starts, widths, durations, submits = (
                a[keep] for a in (starts, widths, durations, submits)
            )
        return plan_quality(self.params.quality, starts, widths, durations, submits)

    def tune(self, view: MachineView, newcomer: Job | None = None) -> None:
        """One self-tuning step; ``newcomer`` is the job queued since the last, if any."""
        began = time.perf_counter()
        now = view.now
        plans: dict[str, OrderPlan] = {}
        quality: dict[str, Any] = {}
        base = base_profile(view, len(self.queue))  # the three plans start from copies
        kept = self.kept_plans
        holding = not view.overrun and kept.base_holds(base, now)
        newcomers = () if newcomer is None else (newcomer,)
        terms: tuple[int, int] | None = None  # the same for every order's plan
        for p in POLICIES:
            queue = self.queues[p]
            twin = next((q for q in plans if self.queues[q].jobs == queue.jobs), None)
            if twin is not None:
                # Two orders agree on the queue (often when few jobs wait): the same plan.
                plans[p] = replace(plans[twin])
                quality[p] = quality[twin]
                continue
            plans[p] = plan = kept.plan(p, queue, newcomers, base, now, holding=holding)
            if terms is None and self.summed:
                terms = queue_terms(
                    self.params.quality, plan.widths, plan.durations, *self.submit_sums
                )
            quality[p] = self.measure(queue, plan.starts, plan.widths, plan.durations, now, terms)
        if self.standing is not None:
            # Measured as the list stands; adopted (below) as plans[FCFS], sorted.
            quality[FCFS] = self.measure_standing(view, quality)
        if self.params.slackness:
            # The plan in force looks better by the slackness: others must beat that.
            factor = (100 - Fraction(str(self.params.slackness))) / 100
            q = quality[self.current]
            quality[self.current] = q * (float(factor) if isinstance(q, float) else factor)
        new, case = decide(
            quality[FCFS], quality[SJF], quality[LJF], self.current, self.params.decider
        )
        self.decider_calls += 1
        self.cases[case] += 1
        self.backlog_total += len(self.queue)
        if new == self.current:
            self.kept += 1
        self.use(new)
        # The plan in force shares its profile with the kept plan: only a newcomer placed
        # by ConservativePolicy.job_submitted changes it, and that drops the kept plans.
        self.adopt(view, plans[new].profile, plans[new].starts)
        if len(self.queue) >= KEEP_FROM:
            kept.keep(base, plans)
        else:
            kept.drop()
        if self.standing is not None:
            self.standing.sort_as(new)
        spent = time.perf_counter() - began
        self.tuning_total += spent
        self.tuning_max = max(self.tuning_max, spent)
        self.observer.tuned(case, spent)

    def report(self) -> dict[str, Any]:
        calls = self.decider_calls
        return {
            "dynp": {
                "jobs_started": dict(self.jobs_started),
                "decider_calls": calls,
                "switches": dict(self.switches),
                "kept_share": self.kept / calls if calls else 0.0,
                "avg_backlog": self.backlog_total / calls if calls else 0.0,
                "cases": dict(self.cases),
                "tuning_seconds_mean": self.tuning_total / calls if calls else 0.0,
                "tuning_seconds_max": self.tuning_max,
            }
        }


def _submits(queue: OrderedQueue) -> np.ndarray:
    return np.array([j.submit for j in queue.jobs], dtype=np.int64)
