"""Operations on queues (qmgr's create, set and delete queue): ``queue_admin`` checks
and keeps the managers' changes over the site file's queues, saved with the state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import structlog

from batchd.server.cmd_schemas import QUEUE_LIMITS, QueueChange, QueueCreate
from batchd.server.service.access import Caller, require
from batchd.server.service.queue_admin import effective_site

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")


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
        svc.queue_admin.change(svc.site, name, fields, svc.queue_jobs(name) > 0)
        _changed(svc)
    log.info("queue_set", queue=name, by=caller.user, **fields)


def delete_queue(svc: BatchService, caller: Caller, name: str) -> None:
    with svc.change():
        require(caller, "manager", "delete queues")
        svc.queue_admin.delete(svc.site, name, svc.queue_jobs(name) > 0)
        _changed(svc)
    log.info("queue_deleted", queue=name, by=caller.user)


def _changed(svc: BatchService) -> None:
    svc.save_meta(queue_changes=svc.queue_admin.changes)
    svc.use_site(effective_site(svc.file_site, svc.queue_admin.changes))
