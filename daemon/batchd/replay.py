"""Trace replay: a workload through the engine on the virtual clock, then its metrics.

A replay runs on a machine size (``--nodes``), a trace header's size, or a site
file (``--machine conf/X.toml``). With a site file it runs as the daemon would
on that file: every machine with the site's policy, trace jobs in the default
queue (and so on that queue's machine), behind the same queue windows, on the
site's calendar. Only what the run needs is imported: an EASY replay of an SWF
file loads neither the compiled profile nor pydantic.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from batchd.engine.core import Engine
from batchd.model.calendar import PrimeCalendar
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.sched.core.policy import BuildContext, Policy
from batchd.sched.registry import make_policy
from batchd.workload.loader import Workload
from batchd.workload.source import TraceError, load_trace, synthetic_count, trace_clock
from batchd.workload.swf import read_header

if TYPE_CHECKING:
    from batchd.site.config import SiteConfig

__all__ = [
    "ReplayError",
    "ReplayOptions",
    "ReplayResult",
    "policy_error",
    "run_replay",
    "trace_clock",
    "trace_policy",
]


class ReplayError(ValueError):
    """Replay options that cannot be used."""


@dataclass
class ReplayOptions:
    trace: str
    policy: str | None = None  # None: the site file's policy
    params: dict[str, str] = field(default_factory=dict)
    machine: str | None = None
    nodes: int | None = None
    shrink: float = 1.0
    perfect_estimates: bool = False
    kill: bool = True
    first: int | None = None
    double: bool = False  # every job twice (batchd.workload.double)
    seed: int = 0
    grid: str | None = None  # a grid structure (docs/grid.md); None: the site file's [grid]
    grid_params: dict[str, str] = field(default_factory=dict)
    records: bool = True  # jobs keep their SWF fields (for write_swf); a grid replay always
    # Jobs get node ids and keep them (jobs.csv and the Gantt chart read them); without,
    # they hold nodes by count and no id is made, so memory does not grow with the widths.
    hosts: bool = True
    # With hosts: a finished job's ids are kept as runs (``Job.unit_runs``), not one by one.
    fold_hosts: bool = False


@dataclass
class ReplayResult:
    summary: dict[str, Any]
    jobs: list[Job]
    workload: Workload
    grid: Grid
    policy: Policy  # the policy of the machine the trace ran on
    # Under a grid structure: every run of a job on a machine (a multi-site job's parts
    # each); ``jobs`` then holds one record per job. Empty otherwise.
    runs: list[Job] = field(default_factory=list)


@dataclass
class Setup:
    """What a replay runs on: machines, the machine the trace goes to, its queue, policies."""

    grid: Grid
    machine: int = 0
    queue: str = ""
    policy: str = ""
    params: dict[str, str] = field(default_factory=dict)
    site: SiteConfig | None = None
    structure: str | None = None  # a grid structure over the machines
    grid_params: dict[str, str] = field(default_factory=dict)
    # Where the trace header sized the machine: "MaxNodes" or "MaxProcs" ("" otherwise).
    # Both given and different: MaxProcs until the jobs are read (see header_nodes).
    size_from: str = ""
    max_nodes: int | None = None


def resolve_setup(opts: ReplayOptions) -> Setup:
    """The machines and the policy: from the site file, the options or the trace header."""
    if opts.nodes is not None and opts.nodes <= 0:
        raise ReplayError(f"--nodes must be a positive integer, got {opts.nodes}")
    if opts.machine is None and (opts.grid is not None or opts.grid_params):
        raise ReplayError("--grid needs --machine with a site file of several machines")
    if opts.machine is not None:
        from batchd.site.config import load_site

        site = load_site(opts.machine)
        structure = opts.grid or (site.grid_table.structure if site.grid_table else None)
        if structure is not None:
            return grid_setup(opts, site, structure)
        if opts.grid_params:
            raise ReplayError("--grid-param needs --grid STRUCTURE (or a site file with [grid])")
        grid = site.grid(opts.nodes)
        queue = site.queue_named(site.default_queue)
        policy = opts.policy or site.server.policy
        params = dict(opts.params) if opts.policy else {**site.server.params(), **opts.params}
        machine = site.machine_index(queue.machine)
        return Setup(grid, machine, queue.name, policy, params, site)
    if opts.policy is None:
        raise ReplayError("give --policy NAME (or --machine with a site file that names one)")
    if opts.nodes is not None:
        return Setup(Grid([Machine("cluster", opts.nodes)]), policy=opts.policy, params=opts.params)
    if synthetic_count(opts.trace) is None:
        try:
            header = read_header(opts.trace)
        except FileNotFoundError:
            raise ReplayError(f"{opts.trace}: no such trace file") from None
        nodes, procs = header.max_nodes, header.max_procs
        if nodes and procs and procs > nodes:  # MaxNodes again if no job is wider
            grid = Grid([Machine("cluster", procs)])
            return Setup(
                grid, policy=opts.policy, params=opts.params, size_from="MaxProcs", max_nodes=nodes
            )
        size = nodes or procs
        if size:
            grid = Grid([Machine("cluster", size)])
            source = "MaxNodes" if nodes else "MaxProcs"
            return Setup(grid, policy=opts.policy, params=opts.params, size_from=source)
    raise ReplayError("give --machine conf/NAME.toml or --nodes N (the trace names no size)")


def grid_setup(opts: ReplayOptions, site: SiteConfig, structure: str) -> Setup:
    """A grid structure over the site's machines: [grid] params, then --grid-param."""
    if opts.policy is not None:
        raise ReplayError(
            "--policy does not apply to a grid structure: give the central scheduler with "
            "--grid-param scheduler=NAME, local policies with --grid-param local=NAME"
        )
    if opts.nodes is not None:
        raise ReplayError("--nodes does not apply to a grid structure (the site file sizes it)")
    if any(q.spec().gated for q in site.queues()):
        raise ReplayError("a grid structure does not run behind queue windows (remove them)")
    params: dict[str, str] = {}
    table = site.grid_table
    if table is not None and table.structure == structure:
        params.update(table.raw())
    params.update(opts.grid_params)
    queue = site.queue_named(site.default_queue)
    return Setup(site.grid(), 0, queue.name, f"grid-{structure}", {}, site, structure, params)


def replay_calendar(site: SiteConfig | None, zone: dt.tzinfo | None) -> PrimeCalendar:
    """The prime-time calendar of a replay: the site's, in the site's or the trace's zone."""
    if site is None:
        return PrimeCalendar.default(zone)
    return site.calendar(default_zone=zone or dt.UTC)


def policy_error(name: str, params: Mapping[str, str]) -> str | None:
    """Why a replay could not build policy ``name`` with ``params`` (an unknown name, a bad
    parameter), or None when it could."""
    try:
        make_policy(name, dict(params))
    except ValueError as exc:
        return str(exc)
    return None


def trace_policy(
    name: str, params: Mapping[str, str], workload: Workload, nodes: int, seed: int = 0
) -> Policy:
    """A policy built as a replay of ``workload`` on ``nodes`` nodes builds it."""
    origin, zone = trace_clock(workload)
    context = BuildContext(
        nodes=nodes, calendar=replay_calendar(None, zone), origin=origin, seed=seed
    )
    return make_policy(name, params, context)


def build_policies(setup: Setup, calendar: PrimeCalendar, origin: int, seed: int) -> list[Policy]:
    """One policy per machine, behind the site's queue windows when it has any."""
    site = setup.site
    policies: list[Policy] = []
    for i, machine in enumerate(setup.grid.machines):
        context = BuildContext(
            machine=i, nodes=machine.nodes, calendar=calendar, origin=origin, seed=seed
        )
        policy = make_policy(setup.policy, setup.params, context)
        if site is not None and any(q.spec().gated for q in site.queues()):
            from batchd.sched.policies.queues import queue_gate

            policy = queue_gate(
                policy,
                [q.spec() for q in site.queues() if site.machine_index(q.machine) == i],
                calendar,
                origin=origin,
                overflow=site.server.overflow,
                must_fit=site.server.window_must_fit,
            )
        policies.append(policy)
    return policies


def run_replay(
    opts: ReplayOptions, progress: Callable[[int, int], None] | None = None
) -> ReplayResult:
    """Replay one workload with one policy and return the summary and the jobs."""
    setup = resolve_setup(opts)
    if setup.structure is not None:
        return run_grid_replay(opts, setup, progress)
    workload = _load(opts, setup.grid.machines[setup.machine].nodes)
    if setup.max_nodes is not None and not _wider_than(workload.jobs, setup.max_nodes):
        header_nodes(setup, setup.max_nodes)
        if any(j.mold is not None for j in workload.jobs):  # moldable ranges end at the size
            workload = _load(opts, setup.max_nodes)
    target = setup.grid.machines[setup.machine]
    if setup.site is not None:
        for job in workload.jobs:
            job.queue = setup.queue
            job.machine = setup.machine
    began = time.perf_counter()
    origin, zone = trace_clock(workload)
    policies = build_policies(setup, replay_calendar(setup.site, zone), origin, opts.seed)
    engine = Engine(
        setup.grid, policies, kill=opts.kill, keep_units=opts.hosts, fold_units=opts.fold_hosts
    )
    engine.load(workload.jobs)
    total = len(workload.jobs)
    engine.run(progress=(lambda done: progress(done, total)) if progress else None)
    wall = time.perf_counter() - began
    jobs = sorted(engine.finished, key=attrgetter("id"))
    policy = policies[setup.machine]
    summary = summarize(jobs, workload, target.nodes, setup.policy, wall, policy)
    if setup.size_from:
        summary["nodes_from"] = setup.size_from
    return ReplayResult(
        summary=summary, jobs=jobs, workload=workload, grid=setup.grid, policy=policy
    )


def _load(opts: ReplayOptions, nodes: int, records: bool | None = None) -> Workload:
    """The trace's jobs for a machine of ``nodes``; their SWF fields kept as
    ``opts.records`` says unless ``records`` is given (a grid replay keeps them)."""
    try:
        return load_trace(
            opts.trace,
            nodes,
            shrink=opts.shrink,
            first=opts.first,
            perfect_estimates=opts.perfect_estimates,
            seed=opts.seed,
            double=opts.double,
            records=opts.records if records is None else records,
        )
    except TraceError as exc:
        raise ReplayError(str(exc)) from None


def _wider_than(jobs: list[Job], nodes: int) -> bool:
    return any(j.width > nodes for j in jobs)


def header_nodes(setup: Setup, nodes: int) -> None:
    """Size the machine by the header's MaxNodes after all.

    A trace's widths (SWF fields 5 and 8) count processors; where a header gives more
    processors than nodes, the machine has MaxProcs units when some job is wider than
    MaxNodes (the widths cannot be nodes), and MaxNodes units otherwise (every job fits
    either way, and the machine stays the one the header names first).
    """
    setup.grid = Grid([Machine("cluster", nodes)])
    setup.size_from = "MaxNodes"
    setup.max_nodes = None


def summarize(
    jobs: list[Job], workload: Workload, nodes: int, name: str, wall: float, policy: Policy
) -> dict[str, Any]:
    """The replay summary: schedule metrics, then what the policy reports."""
    from batchd.metrics.schedule import schedule_metrics

    metrics: dict[str, Any] = schedule_metrics(jobs, nodes)
    summary = {
        "jobs": metrics["jobs"],
        "skipped": dict(workload.skipped),
        **{k: v for k, v in metrics.items() if k != "jobs"},
        "policy": name,
        "nodes": nodes,
        "wall_seconds": round(wall, 4),
    }
    summary.update(policy.report())
    if any(j.utility is not None for j in jobs):
        from batchd.metrics.utility import utility_summary

        summary["utility"] = utility_summary(jobs)
    if any(j.mold is not None for j in jobs):
        from batchd.metrics.moldable import moldable_summary

        summary["moldable"] = moldable_summary(jobs, nodes)
    if name == "primetime":
        from batchd.metrics.primetime import primetime_summary
        from batchd.sched.policies.primetime import PrimeTime

        gate = policy.find(PrimeTime)
        if gate is not None:
            summary["primetime"] = primetime_summary(jobs, nodes, gate)
    return summary


def run_grid_replay(
    opts: ReplayOptions, setup: Setup, progress: Callable[[int, int], None] | None = None
) -> ReplayResult:
    """Replay a workload through a grid structure over the site's machines (docs/grid.md).

    Jobs wider than every machine (under multisite: that no split over the idle grid
    in parts of at least ``min_part`` nodes can run) are rejected at load and counted. The summary's metrics count each job once, on
    all the grid's nodes; its ``grid`` object gives each machine's share.
    """
    from batchd.metrics.grid import grid_summary
    from batchd.sched.grid import GridError, make_grid, widest_job

    assert setup.structure is not None
    machines = setup.grid.machines
    total = sum(m.nodes for m in machines)
    widest = widest_job(setup.structure, [m.nodes for m in machines])
    workload = _load(opts, widest, records=True)
    for job in workload.jobs:
        job.queue = setup.queue
        job.machine = 0  # the grid's ports take any width; the layer places it
    began = time.perf_counter()
    origin, zone = trace_clock(workload)
    calendar = replay_calendar(setup.site, zone)
    contexts = [
        BuildContext(machine=i, nodes=m.nodes, calendar=calendar, origin=origin, seed=opts.seed)
        for i, m in enumerate(machines)
    ]
    try:
        layer = make_grid(
            setup.structure,
            setup.grid_params,
            [(m.name, m.nodes) for m in machines],
            contexts,
            seed=opts.seed,
        )
    except GridError as exc:
        raise ReplayError(str(exc)) from None
    never = [j for j in workload.jobs if layer.width_refusal(j.width) is not None]
    if never:  # under multisite: wider than every machine, and no split fits min_part
        workload.jobs = [j for j in workload.jobs if layer.width_refusal(j.width) is None]
        workload.skipped["wider_than_machine"] += len(never)
    engine = Engine(setup.grid, layer.ports, kill=opts.kill, fold_units=opts.fold_hosts)
    layer.attach(engine.machines)
    engine.load(workload.jobs)
    count = len(workload.jobs)
    # A multi-site job's parts each end: the bar counts ends up to the job count.
    engine.run(progress=(lambda done: progress(min(done, count), count)) if progress else None)
    wall = time.perf_counter() - began
    runs = sorted(engine.finished, key=lambda j: (j.id, j.machine))
    jobs = layer.merge_parts(runs)
    summary = summarize(jobs, workload, total, setup.policy, wall, layer.ports[0])
    summary["grid"] = grid_summary(
        layer, runs, jobs, rejected=workload.skipped.get("wider_than_machine", 0)
    )
    return ReplayResult(
        summary=summary,
        jobs=jobs,
        workload=workload,
        grid=setup.grid,
        policy=layer.ports[0],
        runs=runs,
    )
