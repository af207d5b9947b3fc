"""The Prometheus exporter of the live daemon: a registry per app, values read at scrape time."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from batchd.model.job import Job

if TYPE_CHECKING:
    from batchd.server.service import BatchService

JOB_STATES = {"Q": "queued", "H": "held", "W": "waiting", "R": "running"}


class ServiceCollector(Collector):
    def __init__(self, svc: BatchService) -> None:
        self.svc = svc

    def collect(self) -> Iterator[Metric]:
        svc = self.svc
        jobs = GaugeMetricFamily(
            "batchd_jobs", "Jobs by queue and state", labels=["queue", "state"]
        )
        for queue, counts in svc.counts_by_queue().items():
            for letter, state in JOB_STATES.items():
                jobs.add_metric([queue, state], counts[letter])
        yield jobs
        holders = svc.holders()
        by_state = {"idle": 0, "allocated": 0, "reserved": 0, "offline": 0, "down": 0}
        for i in range(len(svc.node_names)):
            out = svc.node_states.get(i)
            if out is not None:
                by_state[out[0]] += 1
            elif i in holders:
                by_state["allocated" if isinstance(holders[i], Job) else "reserved"] += 1
            else:
                by_state["idle"] += 1
        nodes = GaugeMetricFamily(
            "batchd_nodes", "Nodes by pool and state", labels=["pool", "state"]
        )
        for s, n in by_state.items():
            nodes.add_metric([svc.mconf.name, s], n)
        yield nodes
        yield GaugeMetricFamily(
            "batchd_emulated_time_seconds", "Emulated clock, seconds since the epoch", value=svc.now
        )
        yield GaugeMetricFamily(
            "batchd_clock_speed", "Emulated seconds per wall second", value=svc.speed
        )
        info = InfoMetricFamily("batchd_policy", "Scheduling policy in use")
        info.add_metric([], {"policy": svc.policy_name})
        yield info


def make_registry(svc: BatchService) -> CollectorRegistry:
    from prometheus_client import GC_COLLECTOR, PLATFORM_COLLECTOR, PROCESS_COLLECTOR

    registry = CollectorRegistry(auto_describe=True)
    for c in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(c)
    registry.register(ServiceCollector(svc))
    return registry
