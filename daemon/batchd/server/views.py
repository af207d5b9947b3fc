"""What the API shows: plain dicts in the shape of the schemas, built without pydantic.

Listings of ten thousand jobs must stay fast, so responses are built as dicts
and serialised once; the tests check them against the pydantic models.
"""

from __future__ import annotations

from typing import Any

from batchd import __version__
from batchd.model.chunks import NodeShape, Value, show_value
from batchd.model.cores import piece_nodes
from batchd.model.job import Job
from batchd.model.reservation import Reservation
from batchd.model.sizes import format_size
from batchd.model.states import JobState
from batchd.server.errors import ApiError
from batchd.server.jobview import brief_view, job_view
from batchd.server.pending import pending_reason
from batchd.server.records import JobRecord
from batchd.server.service import BatchService
from batchd.server.service.run_limits import SERVER_LIMITS, scheduling, server_limit
from batchd.site.resources import show
from batchd.site.tables import QueueConfig


def job_out(
    svc: BatchService, rec: JobRecord, plan: dict[int, int], *, brief: bool = False
) -> dict[str, Any]:
    """``JobOut``, or ``JobBrief`` (without the comment, which may ask the policy why)."""
    job = rec.job
    if job.state is JobState.QUEUED:
        est = plan.get(job.id)
    elif job.state is JobState.RUNNING:
        est = job.start
    else:
        est = None
    hosts = svc.nodes.unit_names[job.machine]
    machine, prefix = svc.job_machine(rec)
    exec_host = svc.part_hosts(rec)
    if brief:
        view = brief_view(
            rec, svc.server, hosts, now=svc.now, est=est, prefix=prefix, exec_host=exec_host
        )
    else:
        planned = None
        if job.mold is not None and job.state is JobState.QUEUED and rec.array is None:
            planned = svc.engine.machines[job.machine].policy.planned_width(job)
        view = job_view(
            rec,
            svc.server,
            hosts,
            now=svc.now,
            est=est,
            comment=comment_of(svc, rec, est),
            machine=machine,
            prefix=prefix,
            exec_host=exec_host,
            planned=planned,
        )
    parent = svc.arrays.get(rec.pbs_seq) if view["state"] == "X" else None
    if view["state"] == "X" and (parent is None or parent.state is JobState.FINISHED):
        view["state"] = "F"  # its array has finished: so have its subjobs, as PBS shows them
    view["pending_reason"] = pending_reason(svc, rec, view["state"], est)
    return view


def comment_of(svc: BatchService, rec: JobRecord, est: int | None) -> str | None:
    """What happened to a job last or, for a queued one, why it is not running (PBS's words)."""
    if rec.array is not None:
        return svc.array_jobs.comment(rec)
    if rec.subjob_index is not None and svc.records.get(rec.seq) is not rec:
        # Not made yet: waiting for its turn under the array's limit (or shown from the history).
        return svc.array_jobs.comment(rec) or rec.comment
    if rec.job.state is not JobState.QUEUED:
        return rec.comment
    shared = svc.site.machine[rec.job.machine].shared
    return waiting_comment(svc.explain(rec.job), rec.comment, est, shared)


NO_NODES = "Not Running: more nodes requested than are in service"
BUSY = "Not Running: Insufficient amount of resource: nodes"
BUSY_CORES = "Not Running: Insufficient amount of resource: ncpus"  # shared nodes


def waiting_comment(
    why: str | None, comment: str | None, est: int | None, shared: bool = False
) -> str:
    """Why a queued job is not running: a window or rule that holds it back (``why``, its
    policy's explanation) says so first; then the job's own comment (requeued,
    released); then the nodes (cores, when nodes are ``shared``) it waits for (``est``:
    its planned start, if any)."""
    if why:
        return f"Not Running: {why}"
    if comment:
        return comment
    if est is None:
        return NO_NODES
    return BUSY_CORES if shared else BUSY


def node_out(
    svc: BatchService,
    machine: int,
    index: int,
    holders: dict[int, list[Job | Reservation]],
    shape: NodeShape | None = None,
) -> dict[str, Any]:
    """A node as ``pbsnodes`` shows it: a shared node that still has free cores is
    ``free`` with its jobs listed, ``job-busy`` when they take all its cores."""
    states: list[str] = []
    jobs: list[str] = []
    resv: str | None = None
    comment: str | None = None
    out = svc.nodes.states.get((machine, index))
    if out is not None:
        states.append(out[0])
        comment = out[1]
    held = holders.get(index, [])
    on_node = [h for h in held if isinstance(h, Job)]
    shape = shape or svc.site.node_shape(machine)
    used: dict[str, int] = {}
    per = svc.nodes.per_node[machine]
    cores: list[tuple[int, str]] = []  # (core, JOB/CORE) as pbsnodes lists them
    for job in on_node:
        jid = svc.job_id(job.id)
        jobs.append(jid)
        assigned = _assigned(svc, job, machine, index)
        for name, amount in assigned.items():
            used[name] = used.get(name, 0) + amount
        if per > 1:
            cores += [(u % per, f"{jid}/{u % per}") for u in job.units if u // per == index]
        else:
            cores += [(i, f"{jid}/{i}") for i in range(max(assigned.get("ncpus", 1), 1))]
    if on_node:
        if per == 1 or any(_exclusive(svc, j) for j in on_node):
            states.append("job-exclusive")
        elif len(cores) >= per:  # a core each
            states.append("job-busy")
    for h in held:
        if isinstance(h, Reservation):
            states.append("resv-exclusive")
            resv = svc.resv_id(h.id)
    if not states:
        states.append("free")
    name = svc.nodes.name(machine, index)
    return {
        "name": name,
        "index": index,
        "machine": svc.nodes.machine_names[machine],
        "state": ",".join(states),
        "jobs": jobs,
        "job_cores": [text for _, text in sorted(cores, key=lambda c: c[0])],
        "reservation": resv,
        "comment": comment,
        "sharing": "default_shared" if svc.site.machine[machine].shared else "default_excl",
        "resources_available": _available(svc, name, shape),
        "resources_assigned": _shown(svc, shape, used),
    }


def _exclusive(svc: BatchService, job: Job) -> bool:
    """A job on shared nodes that asked for its nodes whole (place=excl or exclhost)."""
    rec = svc.records.get(job.id)
    res = rec.resources if rec is not None else None
    return res is not None and res.place.sharing in ("excl", "exclhost")


def _assigned(svc: BatchService, holder: Job, machine: int, index: int) -> dict[str, int]:
    """What the chunks of the job on a node take of it."""
    rec = svc.records.get(holder.id)
    res = rec.resources if rec is not None and not rec.parts else None
    per = svc.nodes.per_node[machine]
    if res is None:
        return {"ncpus": sum(1 for u in holder.units if u // per == index)}
    if not res.cores:
        return res.on_node(holder.units.index(index))
    used: dict[str, int] = {}
    for position, node in enumerate(piece_nodes(holder.units, res.cores, per)):
        if node == index:
            for name, amount in res.on_node(position).items():
                used[name] = used.get(name, 0) + amount
    return used


def _available(svc: BatchService, name: str, shape: NodeShape) -> dict[str, str]:
    out = {"host": name, "ncpus": str(shape.ncpus), "vnode": name}
    if shape.mem is not None:
        out["mem"] = format_size(shape.mem)
    for res_name, amount in shape.amounts.items():
        out[res_name] = _show(svc, res_name, amount)
    for res_name, value in shape.values.items():
        out[res_name] = _show(svc, res_name, value)
    return dict(sorted(out.items()))


def _shown(svc: BatchService, shape: NodeShape, used: dict[str, int]) -> dict[str, str]:
    """resources_assigned: the consumables of the node, zero when unused (as pbsnodes)."""
    out = {"ncpus": str(used.get("ncpus", 0))}
    if shape.mem is not None:
        out["mem"] = format_size(used.get("mem", 0)) if used.get("mem") else "0kb"
    for res_name in shape.amounts:
        out[res_name] = _show(svc, res_name, used.get(res_name, 0))
    return dict(sorted(out.items()))


def _show(svc: BatchService, name: str, value: Value) -> str:
    res = svc.site.resource_named(name)
    return show(res, value) if res is not None else show_value(value)


def node_list(svc: BatchService) -> dict[str, Any]:
    nodes = []
    for machine, names in enumerate(svc.nodes.names):
        holders = svc.nodes.holders(svc.engine, machine)
        shape = svc.site.node_shape(machine)
        nodes += [node_out(svc, machine, i, holders, shape) for i in range(len(names))]
    grid = svc.scheduler.grid
    out: dict[str, Any] = {"server": svc.server, "now": svc.now, "nodes": nodes}
    if grid is not None:
        out["grid"] = grid.structure
    return out


def node_at(svc: BatchService, where: tuple[int, int]) -> dict[str, Any]:
    machine, index = where
    return node_out(svc, machine, index, svc.nodes.holders(svc.engine, machine))


def queue_out(svc: BatchService, q: QueueConfig, counts: dict[str, int]) -> dict[str, Any]:
    is_open, change = svc.scheduler.window_state(q.name, svc.now)
    return {
        "name": q.name,
        "machine": svc.site.machine[svc.site.machine_index(q.machine)].name,
        "queue_type": "Execution",
        "enabled": q.enabled,
        "started": q.started,
        "default": q.name == svc.site.default_queue,
        "max_nodes": q.max_nodes,
        "max_walltime": q.max_walltime,
        "default_walltime": q.default_walltime,
        "max_run": q.max_run,
        "max_user_run": q.max_user_run,
        "max_queued": q.max_queued,
        "max_user_queued": q.max_user_queued,
        "total": sum(counts.values()),
        "counts": counts,
        "window": q.window_text(),
        "window_open": is_open,
        "window_next_change": change,
    }


def queue_list(svc: BatchService) -> dict[str, Any]:
    """The site's queues, then those of the advance reservations that take jobs."""
    counts = svc.counts_by_queue()
    out = [queue_out(svc, q, counts[q.name]) for q in svc.site.queues()]
    tally = svc.metrics.tally
    for q in svc.reservations.queue_configs(svc.nodes.machine_names):
        out.append(queue_out(svc, q, {s: tally.count(q.name, s) for s in "QRHWE"}))
    return {"server": svc.server, "now": svc.now, "queues": out}


def queue_named(svc: BatchService, name: str) -> dict[str, Any]:
    queues: list[dict[str, Any]] = queue_list(svc)["queues"]
    for q in queues:
        if q["name"] == name:
            return q
    raise ApiError(404, "not_found", f"Unknown queue {name!r}")


def reservation_out(svc: BatchService, resv: Reservation) -> dict[str, Any]:
    return {
        "id": svc.resv_id(resv.id),
        "name": resv.name,
        "owner": resv.owner,
        "state": resv.state.value,
        "start": resv.start,
        "end": resv.end,
        "duration": resv.duration,
        "nodes": resv.width // svc.nodes.per_node[resv.machine],
        "machine": svc.nodes.machine_names[resv.machine],
        "node_list": [
            svc.nodes.name(resv.machine, n) for n in svc.nodes.hosts_of(resv.machine, resv.units)
        ],
        "queue": resv.queue,
        "select": resv.select or f"{resv.width // svc.nodes.per_node[resv.machine]}:ncpus=1",
    }


def reservation_list(svc: BatchService) -> dict[str, Any]:
    return {
        "server": svc.server,
        "now": svc.now,
        "reservations": [reservation_out(svc, r) for r in svc.reservations.items.values()],
    }


def scheduler_out(svc: BatchService) -> dict[str, Any]:
    sched = svc.scheduler
    machines = [
        {
            "name": conf.name,
            "policy": choice.name,
            "params": dict(choice.params),
            "order": m.policy.order(),
            "report": _plain(m.policy.report()),
        }
        for conf, choice, m in zip(
            svc.site.machine, sched.choices, svc.engine.machines, strict=True
        )
    ]
    first = machines[0]
    grid = None
    if sched.grid is not None and sched.layer is not None:
        grid = {
            "structure": sched.grid.structure,
            "params": dict(sched.grid.params),
            "in_force": sched.layer.params.describe(),
            "structures": sched.served_structures(),
        }
    return {
        "policy": first["policy"],
        "params": first["params"],
        "policies": sched.catalog(),
        "report": first["report"],
        "switches": list(sched.switches),
        "machines": machines,
        "grid": grid,
    }


def server_out(svc: BatchService) -> dict[str, Any]:
    replay = svc.replay.describe() if svc.replay is not None else None
    return {
        "name": svc.server,
        "version": __version__,
        "now": svc.now,
        "clock": "realtime" if svc.realtime else "accelerated",
        "speed": svc.speed,
        "started": svc.started,
        "machine": svc.site.machine[0].name,
        "nodes": svc.site.machine[0].nodes,
        "machines": [{"name": m.name, "nodes": m.nodes} for m in svc.site.machine],
        "default_queue": svc.site.default_queue,
        "policy": svc.scheduler.choices[0].name,
        "node_fail": svc.site.server.node_fail,
        "overflow": svc.site.server.overflow,
        "jobs": svc.counts(),
        "job_history_duration": svc.history.duration,
        "query_other_jobs": svc.query_other_jobs(),
        "scheduling": scheduling(svc.site, svc.meta),
        **{k: server_limit(svc.site, svc.meta, k) for k in SERVER_LIMITS},
        "replay": replay,
        "state_save_error": svc.saving.cause,
    }


def _plain(value: Any) -> Any:
    """Policy reports hold Fractions and numpy numbers; JSON wants plain numbers."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)
