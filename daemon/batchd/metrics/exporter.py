"""The Prometheus exporter of the live daemon: gauges read at scrape time, cheaply.

Counters and histograms live in ``LiveMetrics`` and move with events. What
this collector reads is kept current by the service (the job tally, the busy
integrals, the plan gauges) or is small (nodes, policies), so a scrape costs
the same with ten jobs or ten thousand. It reads the daemon through the
``MetricsSource`` protocol, never the service's insides.
"""

from __future__ import annotations

import platform
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from prometheus_client import GC_COLLECTOR, PLATFORM_COLLECTOR, PROCESS_COLLECTOR, CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from batchd import __version__
from batchd.metrics.catalog import BY_NAME, JOB_STATES, PERIODS
from batchd.metrics.live import LiveMetrics
from batchd.model.calendar import PrimeCalendar
from batchd.sched.registry import policy_names

STATE_LETTERS = {"queued": "Q", "held": "H", "waiting": "W", "running": "R"}
ORDERS = ("FCFS", "SJF", "LJF")


@dataclass(frozen=True)
class PoolState:
    """One machine at a scrape: its nodes by state, its policy and the order in force."""

    name: str
    nodes: int
    by_state: dict[str, int]
    cores_per_node: int | None
    policy: str
    order: str
    # Shared nodes: the scheduler's units are cores; each core's state (a node's own
    # state when it is out of service), and the cores in all.
    cores_by_state: dict[str, int] | None = None
    units: int = 0


class MetricsSource(Protocol):
    """What the exporter reads of a live daemon."""

    @property
    def metrics(self) -> LiveMetrics: ...
    @property
    def now(self) -> int: ...
    @property
    def speed(self) -> float: ...
    @property
    def calendar(self) -> PrimeCalendar: ...

    def queue_names(self) -> list[str]: ...

    def pools(self) -> list[PoolState]: ...

    def flush_tally(self) -> None: ...

    def save_failing(self) -> bool: ...


def gauge(name: str) -> GaugeMetricFamily:
    d = BY_NAME[name]
    return GaugeMetricFamily(name, d.help, labels=list(d.labels))


def counter(name: str) -> CounterMetricFamily:
    d = BY_NAME[name]
    return CounterMetricFamily(name.removesuffix("_total"), d.help, labels=list(d.labels))


def build_info() -> GaugeMetricFamily:
    info = gauge("batchd_build_info")
    info.add_metric([__version__, platform.python_version()], 1.0)
    return info


def single(name: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, BY_NAME[name].help, value=value)


class ServiceCollector(Collector):
    def __init__(self, source: MetricsSource) -> None:
        self.source = source

    def collect(self) -> Iterator[Metric]:
        source = self.source
        live = source.metrics
        source.flush_tally()
        now = source.now
        pools = source.pools()
        yield from self._machines(pools, now)
        tally = live.tally
        jobs = gauge("batchd_jobs")
        backlog = gauge("batchd_backlog_node_seconds")
        for q in source.queue_names():
            for state in JOB_STATES:
                jobs.add_metric([q, state], tally.count(q, STATE_LETTERS[state]))
            backlog.add_metric([q], tally.backlog.get(q, 0))
        yield jobs
        yield backlog
        head_start = gauge("batchd_queue_head_planned_start_timestamp_seconds")
        head_wait = gauge("batchd_queue_head_wait_seconds")
        makespan = gauge("batchd_plan_makespan_seconds")
        for pool, plan in zip(pools, live.plans, strict=True):
            head_start.add_metric([pool.name], plan.head_start)
            head_wait.add_metric([pool.name], plan.head_wait)
            makespan.add_metric([pool.name], plan.makespan)
        yield head_start
        yield head_wait
        yield makespan
        yield single("batchd_plan_age_seconds", min(p.age() for p in live.plans))
        policy = gauge("batchd_scheduler_policy")
        order = gauge("batchd_scheduler_order")
        names = policy_names()
        for pool in pools:
            for name in names:
                policy.add_metric([pool.name, name], 1.0 if name == pool.policy else 0.0)
            for name in sorted({*ORDERS, pool.order}):
                order.add_metric([pool.name, name], 1.0 if name == pool.order else 0.0)
        yield policy
        yield order
        yield single("batchd_emulated_timestamp_seconds", now)
        yield single("batchd_clock_speed", source.speed)
        yield build_info()
        yield single("batchd_state_save_failing", 1.0 if source.save_failing() else 0.0)
        calendar = source.calendar
        period = calendar.period_at(now)
        prime = gauge("batchd_prime_time_window")
        for w in PERIODS:
            prime.add_metric([w], 1.0 if w == period else 0.0)
        yield prime
        by_window = counter("batchd_window_allocated_node_seconds_total")
        seconds = counter("batchd_window_seconds_total")
        for i, pool in enumerate(pools):
            busy = live.busy[i]
            busy.update(now, busy.busy)
            for w in PERIODS:
                by_window.add_metric([pool.name, w], busy.area_by_period.get(w, 0))
        first = live.busy[0]
        for w in PERIODS:
            seconds.add_metric([w], first.seconds_by_period.get(w, 0))
        yield by_window
        yield seconds
        change = calendar.next_change(now)
        yield single(
            "batchd_prime_time_next_change_timestamp_seconds",
            float("nan") if change is None else change,
        )
        if tally.per_user:
            users = gauge("batchd_user_jobs")
            for (user, letter), n in sorted(tally.by_user.items()):
                for state, lt in STATE_LETTERS.items():
                    if lt == letter:
                        users.add_metric([user, state], n)
            yield users

    def _machines(self, pools: list[PoolState], now: int) -> Iterator[Metric]:
        live = self.source.metrics
        nodes = gauge("batchd_nodes")
        cores = gauge("batchd_cores")
        util = gauge("batchd_utilization_ratio")
        window = gauge("batchd_utilization_window_ratio")
        node_seconds = counter("batchd_allocated_node_seconds_total")
        with_cores = False
        for i, pool in enumerate(pools):
            for state, n in pool.by_state.items():
                nodes.add_metric([pool.name, state], n)
            if pool.cores_per_node:
                with_cores = True
                per_core = pool.cores_by_state or {
                    state: n * pool.cores_per_node for state, n in pool.by_state.items()
                }
                for state, n in per_core.items():
                    cores.add_metric([pool.name, state], n)
            busy = live.busy[i]
            units = pool.units or pool.nodes
            util.add_metric([pool.name], busy.busy / units)
            window.add_metric([pool.name], busy.window_ratio(now, units))
            node_seconds.add_metric([pool.name], busy.total(now))
        yield nodes
        if with_cores:
            yield cores
        yield util
        yield window
        yield single("batchd_utilization_window_seconds", live.busy[0].window)
        yield node_seconds


def make_registry(source: MetricsSource) -> CollectorRegistry:
    live = source.metrics
    registry = live.registry
    if live.exported:
        return registry
    live.exported = True

    def period_of(t: int) -> tuple[str, int | None]:
        calendar = source.calendar  # read at each call: a reload may replace it
        return calendar.period_at(t), calendar.next_change(t)

    for busy in live.busy:
        busy.period_of = period_of
    for c in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(c)
    registry.register(ServiceCollector(source))
    return registry
