"""Sending a Slurm job to batchd: what needs the daemon (its clock, its queues, its
arrays), the submission itself, and waiting for a job to end."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from ..hints import Any
from ..transport import Client, quote
from . import values
from .command import SlurmError
from .request import depend_text
from .times import timestamp

FIRST_WAIT, LONGEST_WAIT = 0.2, 2.0
NEVER_RAN = 1


def resolve(client: Client, opts: argparse.Namespace, body: dict[str, Any]) -> None:
    """Fill in what needs the daemon: ``exec_time`` (--begin on its clock), ``depend``
    (the daemon's ids), the walltime of ``--time=UNLIMITED`` (the partition's maximum)."""
    if opts.begin is not None:
        now = float(client.get("/server")["now"])
        body["exec_time"] = _begin(opts.begin, now)
    if opts.dependency is not None:
        body["depend"] = depend_text(values.dependency(opts.dependency))
    if opts.time is not None and values.time_limit(opts.time) is None:
        limit = _queue_max_walltime(client, body.get("queue"))
        if limit is not None:
            body["walltime"] = limit


def _begin(text: str, now: float) -> int:
    from .times import parse_time

    try:
        return parse_time(text, now)
    except ValueError:
        raise SlurmError(f'Invalid time specification "{text}" for --begin') from None


def _queue_max_walltime(client: Client, name: str | None) -> int | None:
    queues: list[dict[str, Any]] = client.get("/queues")["queues"]
    for queue in queues:
        if (name is None and queue.get("default")) or queue.get("name") == name:
            limit = queue.get("max_walltime")
            return int(limit) if limit is not None else None
    return None


def post_job(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    job: dict[str, Any] = client.post("/jobs", body)
    return job


def test_only(client: Client, body: dict[str, Any]) -> str:
    """``--test-only``: Slurm's line for when and where the job would start."""
    answer: dict[str, Any] = client.post("/plan", body)
    from .hostlist import compress

    nodes = compress(list(answer.get("nodes") or []))
    slurm = body.get("slurm") or {}
    cpus = int(slurm.get("ntasks") or 1) * int(slurm.get("cpus_per_task") or 1)
    start = timestamp(answer.get("est_start"), missing="Unknown")
    queue, seq = answer["queue"], answer["seq"]
    return f"Job {seq} to start at {start} using {cpus} processors on nodes {nodes} in partition {queue}"


def slurm_exit_code(job: dict[str, Any]) -> int:
    """What ``sbatch --wait`` exits with: the script's exit code, 128+N for a script
    killed by signal N, 1 for a job that never ran or that batchd ended."""
    status = job.get("exit_status")
    if status is None or job.get("stime") is None:
        return NEVER_RAN
    status = int(status)
    if status >= 256:
        return 128 + (status - 256)
    if status < 0:
        return 1
    return status & 0xFF


def wait_job(
    client: Client,
    job_id: str,
    sleep: Callable[[float], None] = time.sleep,
    tick: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The job's view once it has ended (asked at growing intervals; ``tick`` between)."""
    wait = FIRST_WAIT
    while True:
        job: dict[str, Any] = client.get(f"/jobs/{quote(job_id)}")
        if job["state"] == "F":
            return job
        if tick is not None:
            tick()
        sleep(wait)
        wait = min(wait * 2, LONGEST_WAIT)


def array_exit_code(client: Client, job: dict[str, Any]) -> int:
    """An array's: the highest of its tasks' (Slurm's --wait)."""
    if not job.get("array"):
        return slurm_exit_code(job)
    query = {"subjobs": "true", "history": "true", "after": str(job["seq"] - 1), "limit": "1"}
    tasks: list[dict[str, Any]] = client.get("/jobs", query)["jobs"]
    codes = [
        slurm_exit_code(t)
        for t in tasks
        if t.get("seq") == job["seq"] and t.get("array_index") is not None
    ]
    return max(codes, default=slurm_exit_code(job))
