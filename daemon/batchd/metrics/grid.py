"""The ``grid`` object of a grid replay's summary: structure, machines, what moved."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from batchd.model.job import Job
from batchd.sched.grid.layer import GridLayer


def grid_summary(
    layer: GridLayer, runs: Sequence[Job], jobs: Sequence[Job], rejected: int
) -> dict[str, Any]:
    """Per machine (config order): name, nodes, jobs run there (a multi-site job's part
    counts on each of its machines) and utilization, sum(nodes * run) / (nodes * span)
    with the span of the whole schedule (last end - first submit), as the summary's
    own utilization; then the totals and what the layer did."""
    span = (max(j.end for j in jobs) - min(j.submit for j in jobs)) if jobs else 0
    count = [0] * layer.n
    busy = [0] * layer.n
    for run in runs:
        count[run.machine] += 1
        busy[run.machine] += run.width * (run.end - run.start)
    machines = [
        {
            "name": layer.names[i],
            "nodes": layer.nodes[i],
            "jobs": count[i],
            "utilization": round(busy[i] / (layer.nodes[i] * span), 6) if span > 0 else 0.0,
        }
        for i in range(layer.n)
    ]
    nodes = sum(layer.nodes)
    stats = layer.stats
    return {
        "structure": layer.params.structure,
        "params": layer.params.describe(),
        "machines": machines,
        "totals": {
            "machines": layer.n,
            "nodes": nodes,
            "jobs": len(jobs),
            "utilization": round(sum(busy) / (nodes * span), 6) if span > 0 else 0.0,
        },
        "migrations": stats.migrations,
        "pool_pushes": stats.pool_pushes,
        "pool_pulls": stats.pool_pulls,
        "multisite_jobs": stats.multisite_jobs,
        "multisite_added_node_seconds": stats.multisite_added_node_seconds,
        "rejected": rejected,
    }
