"""The daemon's event-driven metrics: counters and histograms updated as jobs move.

The service calls these hooks from its engine hooks and request handlers; a
scrape only reads. Label children are bound once and kept (a dict lookup per
event, not a label parse).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics

from batchd.metrics.busy import BusyIntegral
from batchd.metrics.catalog import (
    BY_NAME,
    CYCLE_BUCKETS,
    OUTCOMES,
    REQUEUE_REASONS,
    SEARCH_BUCKETS,
    SEARCH_STOPS,
    SLOWDOWN_BOUND,
    SLOWDOWN_BUCKETS,
    TIME_BUCKETS,
    WIDTH_BUCKETS,
    WIDTH_RATIO_BUCKETS,
)
from batchd.metrics.tally import JobTally
from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.outline import PlanOutline
from batchd.sched.policies.decider import CASES

DAY = 86_400

# The _created series (wall time a label set first appeared) mean nothing on an
# emulated clock and double the series count.
disable_created_metrics()  # type: ignore[no-untyped-call]


def _counter(name: str, registry: CollectorRegistry) -> Counter:
    d = BY_NAME[name]
    return Counter(name, d.help, d.labels, registry=registry)


def _histogram(name: str, registry: CollectorRegistry, buckets: tuple[float, ...]) -> Histogram:
    d = BY_NAME[name]
    return Histogram(name, d.help, d.labels, registry=registry, buckets=buckets)


class Children:
    """Label children of one metric, bound on first use."""

    def __init__(self, metric: Counter | Histogram) -> None:
        self.metric = metric
        self._bound: dict[tuple[str, ...], Any] = {}

    def __call__(self, *labels: str) -> Any:
        child = self._bound.get(labels)
        if child is None:
            child = self._bound[labels] = self.metric.labels(*labels)
        return child


class PlanGauges:
    """Figures of the planned schedule, recomputed by the scheduling loop, not per scrape."""

    def __init__(self) -> None:
        self.head_start = math.nan
        self.head_wait = 0.0
        self.makespan = 0.0
        self.at: float | None = None  # monotonic wall time of the last computation
        self.summary: PlanOutline | None = None
        self.stamp: object = None  # the scheduler's version the summary was made at

    def holds(self, stamp: object, now: int) -> bool:
        """The summary made at ``stamp`` is still the plan's: the plan has not changed
        since, and no planned start has been reached (until then, a plan made afresh
        places every job where it did)."""
        return self.summary is not None and self.stamp == stamp and now < self.summary.first

    def take(self, stamp: object, summary: PlanOutline) -> None:
        self.stamp, self.summary = stamp, summary

    def update(self, now: int, running_ends: list[int]) -> None:
        """The gauges at ``now`` from the summary taken and the ends of the running jobs."""
        summary = self.summary
        assert summary is not None
        end = running_ends[-1] if running_ends else now
        if summary.end is not None and summary.end > end:
            end = summary.end
        if summary.head_submit is not None:
            start = summary.head_start
            self.head_start = math.nan if start == NEVER else float(start)
            self.head_wait = float(max(0, now - summary.head_submit))
        else:
            self.head_start = math.nan
            self.head_wait = 0.0
        self.makespan = float(max(0, end - now))
        self.at = time.monotonic()

    def age(self) -> float:
        return math.nan if self.at is None else time.monotonic() - self.at


class LiveMetrics:
    """Counters and histograms of a live daemon, and the per-pool figures events keep.

    ``pools`` are the machine names, in the order of the engine's machines: a job's
    ``machine`` index says which pool its nodes belong to.
    """

    def __init__(
        self,
        *,
        pools: list[str],
        queues: list[str],
        now: int,
        window: int = 3600,
        per_user: bool = False,
        max_users: int = 100,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.exported = False  # the scrape-time collectors are registered
        reg = self.registry
        self.pools = list(pools)
        self.tally = JobTally(per_user=per_user, max_users=max_users)
        # A day of points besides the window: the web page shows the last day (docs/ui.md).
        self.busy = [BusyIntegral(window, now, keep=DAY) for _ in pools]
        self.plans = [PlanGauges() for _ in pools]
        self.submitted = Children(_counter("batchd_jobs_submitted_total", reg))
        self.started = Children(_counter("batchd_jobs_started_total", reg))
        self.completed = Children(_counter("batchd_jobs_completed_total", reg))
        self.earned = Children(_counter("batchd_utility_earned_total", reg))
        self.lost = Children(_counter("batchd_utility_lost_total", reg))
        self.requeued = Children(_counter("batchd_jobs_requeued_total", reg))
        self.switches = Children(_counter("batchd_policy_switches_total", reg))
        self.cases = Children(_counter("batchd_dynp_decider_calls_total", reg))
        self.wait = Children(_histogram("batchd_job_wait_seconds", reg, TIME_BUCKETS))
        self.response = Children(_histogram("batchd_job_response_seconds", reg, TIME_BUCKETS))
        self.slowdown = Children(_histogram("batchd_job_slowdown", reg, SLOWDOWN_BUCKETS))
        self.cycle = _histogram("batchd_scheduler_cycle_seconds", reg, CYCLE_BUCKETS)
        self.tuning = _histogram("batchd_dynp_tuning_seconds", reg, CYCLE_BUCKETS)
        self.search = Children(_histogram("batchd_ga_search_seconds", reg, SEARCH_BUCKETS))
        for stop in SEARCH_STOPS:
            self.search(stop)
        self.mold_width = Children(_histogram("batchd_moldable_width_nodes", reg, WIDTH_BUCKETS))
        self.mold_ratio = Children(
            _histogram("batchd_moldable_width_ratio", reg, WIDTH_RATIO_BUCKETS)
        )
        for pool in pools:
            self.mold_width(pool)
            self.mold_ratio(pool)
        self.user_submitted: Children | None = None
        self.grid_started: Children | None = None  # a grid site's starts by machine
        self.structure = ""
        for pool in pools:
            for case in CASES:
                self.cases(pool, case)
        if per_user:
            self.user_submitted = Children(_counter("batchd_user_jobs_submitted_total", reg))
        for q in queues:
            self.add_queue(q)

    def add_queue(self, queue: str) -> None:
        """Every series of a queue exists from the start, at zero."""
        self.submitted(queue)
        self.earned(queue)
        self.lost(queue)
        for outcome in OUTCOMES:
            self.completed(queue, outcome)
        for reason in REQUEUE_REASONS:
            self.requeued(queue, reason)
        self.wait(queue)
        self.response(queue)
        self.slowdown(queue)

    # -- job events -----------------------------------------------------------------
    def job_submitted(self, queue: str, user: str) -> None:
        self.submitted(queue).inc()
        if self.user_submitted is not None:
            self.user_submitted(self.tally.user_label(user)).inc()

    def grid_structure(self, structure: str) -> None:
        """A grid site: starts are counted by machine under ``structure`` from now on."""
        if self.grid_started is None:
            self.grid_started = Children(_counter("batchd_grid_jobs_started_total", self.registry))
        self.structure = structure
        for pool in self.pools:
            self.grid_started(pool, structure)

    def plan_of(self, machine: int) -> PlanGauges:
        return self.plans[machine]

    def set_allocated(self, machine: int, now: int, nodes: int) -> None:
        """The nodes of a pool held by jobs, counted afresh (after a restart)."""
        self.busy[machine].update(now, nodes)

    def job_started(self, job: Job, now: int) -> None:
        self.started(job.queue, job.result.started_by).inc()
        if self.grid_started is not None:
            self.grid_started(self.pools[job.machine], self.structure).inc()
        self.wait(job.queue).observe(max(0, job.start - job.submit))
        busy = self.busy[job.machine]
        busy.update(now, busy.busy + job.width)
        mold = job.mold
        if mold is not None and not mold.rigid:
            pool = self.pools[job.machine]
            self.mold_width(pool).observe(job.width)
            self.mold_ratio(pool).observe(job.width / mold.width)

    def job_ended(self, job: Job, now: int, *, busy: bool = True) -> None:
        """``busy=False``: a multi-site job, whose parts gave their nodes back each."""
        self.completed(job.queue, job.result.outcome).inc()
        if job.start >= 0:
            response = max(0, job.end - job.submit)
            run = max(0, job.end - job.start)
            self.response(job.queue).observe(response)
            self.slowdown(job.queue).observe(
                max(response, SLOWDOWN_BOUND) / max(run, SLOWDOWN_BOUND)
            )
            if job.utility is not None:
                earned = job.utility.value_at(response)
                self.earned(job.queue).inc(earned)
                self.lost(job.queue).inc(job.utility.start_value - earned)
            if busy:
                self.part_ended(job, now)

    def part_started(self, part: Job, now: int) -> None:
        """A further part of a multi-site job started: a start on its machine, its nodes."""
        if self.grid_started is not None:
            self.grid_started(self.pools[part.machine], self.structure).inc()
        busy = self.busy[part.machine]
        busy.update(now, busy.busy + part.width)

    def part_ended(self, part: Job, now: int) -> None:
        """A job's (or a multi-site part's) nodes are free again."""
        busy = self.busy[part.machine]
        busy.update(now, busy.busy - part.width)

    def job_left_unrun(self, queue: str, outcome: str) -> None:
        self.completed(queue, outcome).inc()

    def job_requeued(self, job: Job, reason: str, now: int, *, busy: bool = True) -> None:
        """A running job went back to its queue (``busy=False``: a multi-site job, whose
        parts gave their nodes back each)."""
        self.requeued(job.queue, reason).inc()
        if busy:
            self.part_ended(job, now)

    # -- the scheduler --------------------------------------------------------------
    def policy_switched(self, pool: str, old: str, new: str) -> None:
        self.switches(pool, old, new).inc()

    def tuned(self, pool: str, case: str, seconds: float) -> None:
        """A self-tuning step of a pool's policy: its Table 1 case and how long it took."""
        self.cases(pool, case).inc()
        self.tuning.observe(seconds)

    def searched(self, seconds: float, stopped: str) -> None:
        """A searching policy's step: its search took ``seconds``, stopped by ``stopped``."""
        self.search(stopped).observe(seconds)

    def timed(self, fn: Callable[[], None]) -> None:
        """Run one scheduling cycle and observe how long it took."""
        began = time.perf_counter()
        fn()
        self.cycle.observe(time.perf_counter() - began)
