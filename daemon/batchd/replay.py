"""Trace replay: a workload through the engine on the virtual clock, then its metrics."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import tzinfo
from pathlib import Path
from typing import Any

from batchd.engine.core import Engine
from batchd.metrics.primetime import primetime_summary
from batchd.metrics.schedule import schedule_metrics
from batchd.model.calendar import CalendarError, resolve_timezone
from batchd.model.job import Job
from batchd.model.machine import Grid
from batchd.sched.policy import Policy
from batchd.sched.primetime import PrimeTime
from batchd.sched.registry import make_policy
from batchd.server.config import load_site
from batchd.workload import (
    SKIP_REASONS,
    Workload,
    load_swf,
    read_header,
    shrink_submits,
    synthetic_header,
    synthetic_jobs,
)

SYNTHETIC = "synthetic"


class ReplayError(ValueError):
    """Replay options that cannot be used."""


@dataclass
class ReplayOptions:
    trace: str
    policy: str
    params: dict[str, str] = field(default_factory=dict)
    machine: str | None = None
    nodes: int | None = None
    shrink: float = 1.0
    perfect_estimates: bool = False
    kill: bool = True
    first: int | None = None
    seed: int = 0


@dataclass
class ReplayResult:
    summary: dict[str, Any]
    jobs: list[Job]
    workload: Workload
    grid: Grid
    policy: Policy


def _synthetic_count(trace: str) -> int | None:
    if trace == SYNTHETIC:
        return 1000
    if trace.startswith(SYNTHETIC + ":"):
        text = trace.split(":", 1)[1]
        if not text.isdigit() or int(text) <= 0:
            raise ReplayError(f"trace {trace!r}: expected synthetic:N with N a positive integer")
        return int(text)
    return None


def resolve_grid(opts: ReplayOptions) -> Grid:
    if opts.nodes is not None and opts.nodes <= 0:
        raise ReplayError(f"--nodes must be a positive integer, got {opts.nodes}")
    if opts.machine is not None:
        grid = load_site(opts.machine).grid(opts.nodes)
        if len(grid.machines) != 1:
            names = ", ".join(m.name for m in grid.machines)
            raise ReplayError(
                f"{opts.machine}: replay runs one machine, this file defines several ({names})"
            )
        return grid
    from batchd.model.machine import Machine

    if opts.nodes is not None:
        return Grid([Machine("cluster", opts.nodes)])
    if _synthetic_count(opts.trace) is None:
        header = read_header(opts.trace)
        size = header.max_nodes or header.max_procs
        if size:
            return Grid([Machine("cluster", size)])
    raise ReplayError("give --machine conf/NAME.toml or --nodes N (the trace names no size)")


def load_workload(opts: ReplayOptions, nodes: int) -> Workload:
    if opts.shrink <= 0:
        raise ReplayError(f"--shrink must be > 0, got {opts.shrink}")
    if opts.first is not None and opts.first <= 0:
        raise ReplayError(f"--first must be a positive integer, got {opts.first}")
    count = _synthetic_count(opts.trace)
    if count is not None:
        if opts.first is not None:
            count = min(count, opts.first)
        jobs = synthetic_jobs(count, nodes=nodes, seed=opts.seed)
        if opts.perfect_estimates:
            for j in jobs:
                j.estimate = j.runtime
        if opts.shrink != 1.0:
            shrink_submits(jobs, opts.shrink)
        return Workload(
            jobs=jobs,
            skipped=dict.fromkeys(SKIP_REASONS, 0),
            header=synthetic_header(count, nodes, opts.seed),
            source=opts.trace,
        )
    if not Path(opts.trace).is_file():
        raise ReplayError(f"{opts.trace}: no such trace file")
    return load_swf(
        opts.trace,
        nodes=nodes,
        first=opts.first,
        perfect_estimates=opts.perfect_estimates,
        shrink=opts.shrink,
    )


def trace_clock(workload: Workload) -> tuple[int, tzinfo | None]:
    """When the trace's time 0 was (UnixStartTime) and its time zone (TimeZoneString).

    A zone the header names but this system does not know counts as none.
    """
    header = workload.header
    start = header.value("UnixStartTime") if header is not None else None
    zone = header.value("TimeZoneString") if header is not None else None
    origin = int(start) if start is not None and start.strip().lstrip("-").isdigit() else 0
    tz = None
    if zone:
        with contextlib.suppress(CalendarError):
            tz = resolve_timezone(zone)
    return origin, tz


def run_replay(
    opts: ReplayOptions, progress: Callable[[int, int], None] | None = None
) -> ReplayResult:
    """Replay one workload with one policy and return the summary and the jobs."""
    policy = make_policy(opts.policy, opts.params)
    grid = resolve_grid(opts)
    workload = load_workload(opts, grid.machines[0].nodes)
    began = time.perf_counter()
    localize = getattr(policy, "localize", None)
    if localize is not None:
        origin, zone = trace_clock(workload)
        localize(origin, zone)
    set_machine = getattr(policy, "set_machine", None)
    if set_machine is not None:
        set_machine(grid.machines[0].nodes)
    engine = Engine(grid, [policy], kill=opts.kill)
    engine.load(workload.jobs)
    total = len(workload.jobs)
    engine.run(progress=(lambda done: progress(done, total)) if progress else None)
    wall = time.perf_counter() - began
    jobs = sorted(engine.finished, key=lambda j: j.id)
    nodes = grid.machines[0].nodes
    summary: dict[str, Any] = schedule_metrics(jobs, nodes)
    summary = {
        "jobs": summary["jobs"],
        "skipped": dict(workload.skipped),
        **{k: v for k, v in summary.items() if k != "jobs"},
        "policy": opts.policy,
        "nodes": nodes,
        "wall_seconds": round(wall, 4),
    }
    summary.update(policy.report())
    if isinstance(policy, PrimeTime):
        summary["primetime"] = primetime_summary(jobs, nodes, policy)
    return ReplayResult(summary=summary, jobs=jobs, workload=workload, grid=grid, policy=policy)
