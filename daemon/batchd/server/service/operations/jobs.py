"""Operations on jobs: qsub, qdel, qhold, qrls, qalter, qrerun, qmove and qsig.

A plain job goes to the lifecycle, a job array or one of its subjobs to ``arrays``;
qrerun, qmove and qsig to ``jobcontrol``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from batchd.server.errors import bad_request
from batchd.server.records import JobRecord
from batchd.server.schemas import JobAlter, JobSubmit
from batchd.server.service.access import Caller

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")


def _in_array(rec: JobRecord) -> bool:
    return rec.array is not None or rec.subjob_index is not None


def submit(svc: BatchService, caller: Caller, body: JobSubmit) -> JobRecord:
    if body.max_run_subjobs is not None and body.array_indices is None:
        raise bad_request("max_run_subjobs: only a job array (array_indices) has a limit")
    with svc.change():
        if body.array_indices is not None:
            rec = svc.array_jobs.submit(caller, body)
        else:
            rec = svc.lifecycle.submit(caller, body)
    count = rec.array.count if rec.array is not None else 1
    for _ in range(count):  # each subjob counts as a job
        svc.metrics.job_submitted(rec.job.queue, rec.owner)
    log.info(
        "job_submitted",
        job=svc.jid(rec),
        owner=rec.owner,
        queue=rec.job.queue,
        nodes=rec.job.width,
        walltime=rec.job.estimate,
        state=rec.state.value,
        **({"subjobs": count} if rec.array is not None else {}),
    )
    return rec


def delete(svc: BatchService, caller: Caller, text: str) -> JobRecord:
    with svc.change():
        rec = svc.find(text)
        if _in_array(rec):
            rec = svc.array_jobs.delete(caller, rec)
        else:
            rec = svc.lifecycle.delete_record(caller, rec)
    log.info("job_deleted", job=svc.jid(rec), by=caller.user)
    return rec


def hold(svc: BatchService, caller: Caller, text: str, types: str) -> JobRecord:
    with svc.change():
        rec = svc.find(text)
        if _in_array(rec):
            rec = svc.array_jobs.hold(caller, rec, types)
        else:
            rec = svc.lifecycle.hold(caller, text, types)
    log.info("job_held", job=svc.jid(rec), types=types, by=caller.user)
    return rec


def release(svc: BatchService, caller: Caller, text: str, types: str) -> JobRecord:
    with svc.change():
        rec = svc.find(text)
        if _in_array(rec):
            rec = svc.array_jobs.release(caller, rec, types)
        else:
            rec = svc.lifecycle.release(caller, text, types)
    log.info("job_released", job=svc.jid(rec), types=types, by=caller.user)
    return rec


def alter(svc: BatchService, caller: Caller, text: str, body: JobAlter) -> JobRecord:
    with svc.change():
        rec = svc.find(text)
        if _in_array(rec):
            rec = svc.array_jobs.alter(caller, rec, body)
        else:
            rec = svc.lifecycle.alter_record(caller, rec, body)
    log.info("job_altered", job=svc.jid(rec), by=caller.user)
    return rec


def rerun(svc: BatchService, caller: Caller, text: str) -> JobRecord:
    with svc.change():
        rec = svc.control.rerun(caller, text)
    log.info("job_rerun", job=svc.jid(rec), by=caller.user)
    return rec


def move(svc: BatchService, caller: Caller, text: str, queue: str) -> JobRecord:
    with svc.change():
        rec = svc.control.move(caller, text, queue)
    log.info("job_moved", job=svc.jid(rec), queue=queue, by=caller.user)
    return rec


def signal(
    svc: BatchService, caller: Caller, text: str, name: str, target: str = "all"
) -> JobRecord:
    with svc.change():
        rec = svc.control.signal(caller, text, name, target)
    log.info("job_signalled", job=svc.jid(rec), signal=name, by=caller.user)
    return rec
