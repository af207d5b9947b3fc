"""The Prometheus exporter of the live daemon: gauges read at scrape time, cheaply.

Counters and histograms live in ``LiveMetrics`` and move with events. What
this collector reads is kept current by the service (the job tally, the busy
integral, the plan gauges) or is small (nodes, policies), so a scrape costs
the same with ten jobs or ten thousand.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import GC_COLLECTOR, PLATFORM_COLLECTOR, PROCESS_COLLECTOR, CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from batchd.metrics.catalog import BY_NAME, JOB_STATES, NODE_STATES, WINDOWS
from batchd.model.job import Job
from batchd.sched.registry import policy_names

if TYPE_CHECKING:
    from batchd.server.service import BatchService

STATE_LETTERS = {"queued": "Q", "held": "H", "waiting": "W", "running": "R"}
ORDERS = ("FCFS", "SJF", "LJF")


def gauge(name: str) -> GaugeMetricFamily:
    d = BY_NAME[name]
    return GaugeMetricFamily(name, d.help, labels=list(d.labels))


def counter(name: str) -> CounterMetricFamily:
    d = BY_NAME[name]
    return CounterMetricFamily(name.removesuffix("_total"), d.help, labels=list(d.labels))


def single(name: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, BY_NAME[name].help, value=value)


def order_of(policy: object) -> str:
    """The queue order a policy serves in: dynP's current one, or the one in its name."""
    current = getattr(policy, "current", None)
    if isinstance(current, str):
        return current
    return str(getattr(policy, "name", "")).split("-")[0].upper()


class ServiceCollector(Collector):
    def __init__(self, svc: BatchService) -> None:
        self.svc = svc

    def collect(self) -> Iterator[Metric]:
        svc = self.svc
        live = svc.metrics
        svc.flush_tally()
        now = svc.now
        pool = svc.mconf.name
        yield from self._machine(pool, now)
        tally = live.tally
        jobs = gauge("batchd_jobs")
        backlog = gauge("batchd_backlog_node_seconds")
        for q in svc.site.queues():
            for state in JOB_STATES:
                jobs.add_metric([q.name, state], tally.count(q.name, STATE_LETTERS[state]))
            backlog.add_metric([q.name], tally.backlog.get(q.name, 0))
        yield jobs
        yield backlog
        plan = live.plan
        for name, value in (
            ("batchd_queue_head_planned_start_seconds", plan.head_start),
            ("batchd_queue_head_wait_seconds", plan.head_wait),
            ("batchd_plan_makespan_seconds", plan.makespan),
        ):
            g = gauge(name)
            g.add_metric([pool], value)
            yield g
        yield single("batchd_plan_age_seconds", plan.age())
        policy = gauge("batchd_scheduler_policy")
        for name in policy_names():
            policy.add_metric([name], 1.0 if name == svc.policy_name else 0.0)
        yield policy
        current = order_of(svc.machine.policy)
        order = gauge("batchd_scheduler_order")
        for name in sorted({*ORDERS, current}):
            order.add_metric([name], 1.0 if name == current else 0.0)
        yield order
        yield single("batchd_emulated_time_seconds", now)
        yield single("batchd_clock_speed", svc.speed)
        calendar = svc.calendar
        window = calendar.window_at(now)
        prime = gauge("batchd_prime_time_window")
        for w in WINDOWS:
            prime.add_metric([w], 1.0 if w == window else 0.0)
        yield prime
        busy = live.busy
        busy.update(now, busy.busy)
        by_window = counter("batchd_window_allocated_node_seconds_total")
        seconds = counter("batchd_window_seconds_total")
        for w in WINDOWS:
            by_window.add_metric([pool, w], busy.area_by_window.get(w, 0))
            seconds.add_metric([w], busy.seconds_by_window.get(w, 0))
        yield by_window
        yield seconds
        change = calendar.next_change(now)
        yield single(
            "batchd_prime_time_next_change_seconds", float("nan") if change is None else change
        )
        if tally.per_user:
            users = gauge("batchd_user_jobs")
            for (user, letter), n in sorted(tally.by_user.items()):
                for state, lt in STATE_LETTERS.items():
                    if lt == letter:
                        users.add_metric([user, state], n)
            yield users

    def _machine(self, pool: str, now: int) -> Iterator[Metric]:
        svc = self.svc
        by_state = dict.fromkeys(NODE_STATES, 0)
        holders = svc.holders()
        for i in range(len(svc.node_names)):
            out = svc.node_states.get(i)
            if out is not None:
                by_state[out[0]] += 1
            elif i in holders:
                by_state["allocated" if isinstance(holders[i], Job) else "reserved"] += 1
            else:
                by_state["idle"] += 1
        total = len(svc.node_names)
        nodes = gauge("batchd_nodes")
        for state, n in by_state.items():
            nodes.add_metric([pool, state], n)
        yield nodes
        cores_per_node = svc.mconf.cores_per_node
        if cores_per_node:
            cores = gauge("batchd_cores")
            for state, n in by_state.items():
                cores.add_metric([pool, state], n * cores_per_node)
            yield cores
        busy = svc.metrics.busy
        util = gauge("batchd_utilization_ratio")
        util.add_metric([pool], busy.busy / total)
        yield util
        window = gauge("batchd_utilization_window_ratio")
        window.add_metric([pool], busy.window_ratio(now, total))
        yield window
        yield single("batchd_utilization_window_seconds", busy.window)
        node_seconds = counter("batchd_allocated_node_seconds_total")
        node_seconds.add_metric([pool], busy.total(now))
        yield node_seconds


def make_registry(svc: BatchService) -> CollectorRegistry:
    registry = svc.metrics.registry
    if svc.metrics.exported:
        return registry
    svc.metrics.exported = True

    def window_of(t: int) -> tuple[str, int | None]:
        calendar = svc.calendar  # read at each call: a reload may replace it
        return calendar.window_at(t), calendar.next_change(t)

    svc.metrics.busy.window_of = window_of
    for c in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(c)
    registry.register(ServiceCollector(svc))
    return registry
