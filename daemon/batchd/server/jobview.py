"""A job as the API shows it (``JobOut``): a plain dict, built without pydantic."""

from __future__ import annotations

from typing import Any

from batchd.model.states import JobState
from batchd.server.records import JobRecord


def job_view(
    rec: JobRecord,
    server: str,
    hosts: list[str],
    *,
    now: int,
    est: int | None,
    comment: str | None,
) -> dict[str, Any]:
    """``JobOut``; ``hosts`` are the node names of the job's machine, ``est`` its planned
    start, ``comment`` what to say about it."""
    job = rec.job
    started = job.start >= 0
    if job.state is JobState.RUNNING:
        elapsed: int | None = now - job.start
        end = None
    elif job.state is JobState.FINISHED:
        elapsed = job.end - job.start if started else None
        end = job.end
    else:
        elapsed = end = None
    return {
        "id": f"{job.id}.{server}",
        "seq": job.id,
        "name": job.name,
        "owner": rec.owner,
        "queue": job.queue,
        "state": job.state.value,
        "nodes": job.width,
        "walltime": job.estimate,
        "runtime": rec.runtime_given,
        "priority": job.priority,
        "hold_types": rec.hold_types,
        "depend": rec.depend_text,
        "ctime": rec.ctime,
        "qtime": rec.qtime,
        "etime": rec.etime,
        "exec_time": rec.exec_time,
        "stime": job.start if started else None,
        "end_time": end,
        "est_start": est,
        "elapsed": elapsed,
        "exec_host": [hosts[n] for n in job.nodes],
        "exit_status": rec.exit_status,
        "outcome": job.outcome or None,
        "comment": comment,
        "started_by": job.started_by or None,
        "variables": rec.variables,
    }
