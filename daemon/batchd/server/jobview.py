"""A job as the API shows it (``JobOut``), and its brief form for listings (``JobBrief``).

Plain dicts, built without pydantic. A finished job's view never changes, so it is
rendered once, when the job finishes, and saved as JSON beside its row: listing the
history then sends saved text.
"""

from __future__ import annotations

import json
from typing import Any

from batchd.model.cores import piece_starts
from batchd.model.states import JobState
from batchd.server.arrays import label
from batchd.server.jobresources import TABLE_RESOURCES, JobResources, whole_nodes
from batchd.server.records import JobRecord

# The fields of JobBrief: what qstat's tables show (the array flag qstat -t follows), without
# hosts, comments or variables; of the resource list what qstat -a shows (TABLE_RESOURCES).
BRIEF = (
    "id", "seq", "name", "owner", "queue", "state", "nodes", "walltime",
    "stime", "est_start", "elapsed", "front_end", "workdir", "account", "slurm",
    "pending_reason", "term_signal", "resource_list", "array",
)  # fmt: skip


def shown_state(rec: JobRecord, now: int) -> str:
    """The state letter qstat shows: an array's B once a subjob has begun (its own Q, H or
    W before, F when every subjob has expired); a finished subjob's X."""
    job = rec.job
    spec = rec.array
    if spec is not None:
        if job.state is JobState.FINISHED:
            return "F"
        if spec.begun:
            return "B"
        if job.state is JobState.WAITING and (rec.exec_time is None or rec.exec_time <= now):
            return "Q"  # its subjobs' execution time has come
        return job.state.letter
    if rec.subjob_index is not None and job.state is JobState.FINISHED:
        return "X"
    return job.state.letter


def job_view(
    rec: JobRecord,
    server: str,
    hosts: list[str],
    *,
    now: int,
    est: int | None,
    comment: str | None,
    machine: str | None = None,
    prefix: str = "",
    exec_host: list[str] | None = None,
    planned: int | None = None,
) -> dict[str, Any]:
    """``JobOut``; ``hosts`` are the node names of the job's machine, ``est`` its planned
    start, ``comment`` what to say about it, ``machine`` the machine it runs on or waits
    for (None: not yet), ``prefix`` what goes before each host (a grid's ``machine/``);
    ``exec_host`` given: the hosts as they are (a multi-site job's, every part's);
    ``planned`` the width a waiting moldable job is planned with."""
    job = rec.job
    res = rec.resources or whole_nodes(job.width)
    if exec_host is None:
        exec_host = exec_hosts(rec, hosts, prefix)
    return {
        **_table_fields(rec, server, now, est, res, exec_host),
        "runtime": rec.runtime_given,
        "priority": job.priority,
        "hold_types": rec.hold_types,
        "depend": rec.depend_text,
        "ctime": rec.ctime,
        "qtime": rec.qtime,
        "etime": rec.etime,
        "exec_time": rec.exec_time,
        "end_time": job.end if job.state is JobState.FINISHED else None,
        "machine": machine,
        "exec_host": exec_host,
        "exec_vnode": res.exec_vnode(exec_host) if exec_host else None,
        "resource_list": res.resource_list(),
        "exit_status": rec.exit_status,
        "outcome": job.result.outcome or None,
        "comment": comment,
        "started_by": job.result.started_by or None,
        "variables": rec.variables,
        **_utility_view(rec, now),
        **_mold_view(rec, planned),
        **_array_view(rec, server),
        **_run_view(rec),
        "mail_points": rec.mail_points,
        "mail_users": rec.mail_users,
    }


def brief_view(
    rec: JobRecord,
    server: str,
    hosts: list[str],
    *,
    now: int,
    est: int | None,
    prefix: str = "",
    exec_host: list[str] | None = None,
) -> dict[str, Any]:
    """``JobBrief``: what ``brief_of`` cuts from ``job_view``, made without the rest."""
    res = rec.resources or whole_nodes(rec.job.width)
    if exec_host is None and res.cores:  # the node count of a job on shared nodes
        exec_host = exec_hosts(rec, hosts, prefix)
    view = _table_fields(rec, server, now, est, res, exec_host or [])
    view["resource_list"] = res.table_resources()
    return view


def _table_fields(
    rec: JobRecord,
    server: str,
    now: int,
    est: int | None,
    res: JobResources,
    exec_host: list[str],
) -> dict[str, Any]:
    """The fields of ``JobBrief`` but the resource list: what the job tables show."""
    job = rec.job
    started = job.start >= 0
    if job.state is JobState.RUNNING:
        elapsed: int | None = now - job.start
    elif job.state is JobState.FINISHED:
        elapsed = job.end - job.start if started else None
    else:
        elapsed = None
    return {
        "id": f"{rec.label()}.{server}",
        "seq": rec.pbs_seq,
        "name": job.name,
        "owner": rec.owner,
        "queue": job.queue,
        "state": shown_state(rec, now),
        "nodes": _node_count(job.width, res, exec_host),
        "walltime": job.estimate,
        "stime": job.start if started else None,
        "est_start": est,
        "elapsed": elapsed,
        "front_end": rec.front_end,
        "workdir": rec.workdir,
        "account": rec.account,
        "slurm": rec.slurm,
        "pending_reason": None,  # the service's to say (views.pending_reason)
        "term_signal": rec.term_signal,
        "array": rec.array is not None,
    }


def exec_hosts(rec: JobRecord, hosts: list[str], prefix: str = "") -> list[str]:
    """The host of each piece of a job: ``hosts`` names the machine's units; on shared
    nodes a piece's node is its first core's."""
    res = rec.resources or whole_nodes(rec.job.width)
    units = rec.job.units
    if res.cores:
        units = piece_starts(units, res.cores)
    return [prefix + hosts[n] for n in units]


def _run_view(rec: JobRecord) -> dict[str, Any]:
    """Where a job that runs for real writes, as whom, and what it used."""
    real = rec.job.external
    return {
        "executed": real,
        "rerunable": rec.rerunable,
        "output_path": rec.output_path if real else None,
        "error_path": rec.error_path if real else None,
        "join_path": rec.join if real else None,
        "shell": rec.shell,
        "euser": rec.euser,
        "egroup": rec.egroup,
        "resources_used": rec.used,
    }


def _node_count(width: int, res: JobResources, exec_host: list[str]) -> int:
    """Nodes as qstat's NDS shows them: the job's width; on shared nodes (where the width
    counts cores) the nodes it runs on, or its chunks (``nodect``) while it waits."""
    if not res.cores:
        return width
    return len(set(exec_host)) if exec_host else res.nodect


def _array_view(rec: JobRecord, server: str) -> dict[str, Any]:
    """An array's range and its subjobs' states; a subjob's array and index (whether it
    is an array: ``_table_fields``)."""
    spec = rec.array
    index = rec.subjob_index
    return {
        "array_indices_submitted": spec.submitted() if spec is not None else None,
        "array_indices_remaining": spec.remaining() if spec is not None else None,
        "array_state_count": spec.state_count() if spec is not None else None,
        "max_run_subjobs": spec.max_run if spec is not None else None,
        "array_id": f"{label(rec.pbs_seq, True)}.{server}" if index is not None else None,
        "array_index": index,
    }


def _mold_view(rec: JobRecord, planned: int | None) -> dict[str, Any]:
    """A moldable job's range and model (``nodes`` is the width in use or requested)."""
    mold = rec.job.mold
    if mold is None:
        return {"nodes_min": None, "nodes_max": None, "speedup": None, "planned_nodes": None}
    return {
        "nodes_min": mold.low,
        "nodes_max": mold.high,
        "speedup": mold.speedup.format(),
        "planned_nodes": planned,
    }


def _utility_view(rec: JobRecord, now: int) -> dict[str, Any]:
    """The job's utility function and what it gives at the job's end, or now."""
    util = rec.job.utility
    if util is None:
        return {"utility": None, "utility_now": None}
    job = rec.job
    end = job.end if job.state is JobState.FINISHED and job.end >= 0 else now
    return {
        "utility": [list(p) for p in util.points],
        "utility_now": util.value_at(max(end - rec.ctime, 0)),
    }


def brief_of(view: dict[str, Any]) -> dict[str, Any]:
    """``JobBrief``: the fields of a view that the job tables show."""
    out = {k: view[k] for k in BRIEF}
    out["resource_list"] = {k: v for k, v in view["resource_list"].items() if k in TABLE_RESOURCES}
    return out


# json.dumps with separators makes an encoder at every call: a microsecond of each
# job's view in a listing.
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def dumps(data: Any) -> str:
    return _ENCODER.encode(data)


def finished_views(
    rec: JobRecord,
    server: str,
    hosts: list[str],
    machine: str | None = None,
    prefix: str = "",
    exec_host: list[str] | None = None,
) -> tuple[str, str]:
    """The saved views of a finished job: ``JobOut`` and ``JobBrief`` as JSON."""
    view = job_view(
        rec,
        server,
        hosts,
        now=rec.job.end,
        est=None,
        comment=rec.comment,
        machine=machine,
        prefix=prefix,
        exec_host=exec_host,
    )
    return dumps(view), dumps(brief_of(view))
