"""The service's operations for qrerun, qmove, qsig, tracejob and qmgr's queues.

Each is a change like the facade's own (checked, applied, one scheduling pass, one
commit: ``svc.change()``) or a read; the parts doing the work are ``jobcontrol``
and ``queue_admin``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from batchd.server.cmd_schemas import QUEUE_LIMITS, QueueChange, QueueCreate
from batchd.server.records import JobRecord
from batchd.server.service.access import Caller, require
from batchd.server.service.queue_admin import effective_site, usable_changes

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")


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


def job_events(svc: BatchService, text: str) -> tuple[JobRecord, list[tuple[int, str, str]]]:
    """A job and its history (``tracejob``), oldest first."""
    rec = svc.find(text)
    return rec, svc.store.events_of(rec.seq)


# -- queues ---------------------------------------------------------------------------
def queue_jobs(svc: BatchService, name: str) -> int:
    """The unfinished jobs, arrays and subjobs in queue ``name``."""
    return sum(rec.job.queue == name for rec in [*svc.records.values(), *svc.arrays.values()])


def _busy(svc: BatchService, name: str) -> bool:
    return queue_jobs(svc, name) > 0


def create_queue(svc: BatchService, caller: Caller, body: QueueCreate) -> None:
    with svc.change():
        require(caller, "manager", "create queues")
        fields = body.model_dump(exclude_none=True, exclude={"name"})
        svc.queue_admin.create(svc.site, body.name, fields)
        _changed(svc)
    log.info("queue_created", queue=body.name, by=caller.user)


def change_queue(svc: BatchService, caller: Caller, name: str, body: QueueChange) -> None:
    fields: dict[str, Any] = body.model_dump(exclude_none=True)
    # A limit given as null is removed.
    fields.update({k: None for k in QUEUE_LIMITS if k in body.model_fields_set and k not in fields})
    with svc.change():
        require(caller, "manager", "set queue attributes")
        svc.queue_admin.change(svc.site, name, fields, _busy(svc, name))
        _changed(svc)
    log.info("queue_set", queue=name, by=caller.user, **fields)


def delete_queue(svc: BatchService, caller: Caller, name: str) -> None:
    with svc.change():
        require(caller, "manager", "delete queues")
        svc.queue_admin.delete(svc.site, name, _busy(svc, name))
        _changed(svc)
    log.info("queue_deleted", queue=name, by=caller.user)


def _changed(svc: BatchService) -> None:
    svc.save_meta(queue_changes=svc.queue_admin.changes)
    svc.use_site(effective_site(svc.file_site, svc.queue_admin.changes))


def saved_queues(svc: BatchService, meta: dict[str, Any]) -> None:
    """At a restore: the queues as managers left them, over the site file's."""
    svc.queue_admin.changes = usable_changes(svc.file_site, meta.get("queue_changes"))
    if svc.queue_admin.changes:
        svc.use_site(effective_site(svc.file_site, svc.queue_admin.changes))
