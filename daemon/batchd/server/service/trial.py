"""A submission tried, not made (``POST /plan``, sbatch --test-only).

The request is validated as a submission is, and the job planned behind every job
already planned on its machine: each keeps its planned start and the new job takes
the earliest start that fits around them, as a job submitted now would be planned
by conservative backfilling. Nothing changes: no record, no job number, no commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from batchd.model.times import NEVER
from batchd.sched.core.plans import base_profile
from batchd.server.errors import bad_request
from batchd.server.records import JobRecord
from batchd.server.schemas import JobSubmit
from batchd.server.service.access import Caller

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService


def planned_start(svc: BatchService, rec: JobRecord) -> int | None:
    """When ``rec``'s job would start if it joined its machine's plan now; None: never
    (more nodes than are in service, say)."""
    job = rec.job
    m = svc.engine.machines[job.machine]
    plan = svc.scheduler.plan(job.machine)
    profile = base_profile(m, len(plan) + 1)
    for other, start in plan:
        if start != NEVER:
            profile.reserve(start, start + other.duration, other.width)
    now = svc.now
    floor = max(now, rec.exec_time or now)
    start = profile.earliest_start(job.width, job.duration, floor)
    return None if start == NEVER else start


def free_nodes(svc: BatchService, machine: int, width: int) -> list[str]:
    """The nodes a job of ``width`` units would get if it started now."""
    m = svc.engine.machines[machine]
    names = svc.nodes.unit_names[machine]
    taken: list[str] = []
    for unit in m.pool.lowest_free(width):
        if names[unit] not in taken:
            taken.append(names[unit])
    return taken


def try_submit(svc: BatchService, caller: Caller, body: JobSubmit) -> dict[str, Any]:
    """``{"est_start": T, "nodes": [...], "now": N, "seq": S, "queue": Q}`` for a job
    validated as if submitted (S: the number it would get if submitted now)."""
    if body.max_run_subjobs is not None and body.array_indices is None:
        raise bad_request("max_run_subjobs: only a job array (array_indices) has a limit")
    life = svc.lifecycle
    owner = life.owner_of(caller, body)
    rec = life.new_record(body, owner, caller.user)
    held = bool(rec.hold_types)
    est = None if held else planned_start(svc, rec)
    nodes = free_nodes(svc, rec.job.machine, rec.job.width) if est == svc.now else []
    return {
        "est_start": est,
        "nodes": nodes,
        "now": svc.now,
        "seq": rec.pbs_seq,
        "queue": rec.job.queue,
    }
