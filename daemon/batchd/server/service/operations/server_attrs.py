"""Operations on the server's attributes (qmgr set server): the job history's
duration, whether users see others' jobs, scheduling on or off and the run and queued
limits, saved with the state over the config's."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from batchd.server.admin_schemas import ServerChange
from batchd.server.service.access import Caller, require
from batchd.server.service.run_limits import SERVER_LIMITS

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")


def set_server(svc: BatchService, caller: Caller, change: ServerChange) -> None:
    duration = change.job_history_duration
    others = change.query_other_jobs
    limits = {k: getattr(change, k) for k in SERVER_LIMITS if k in change.model_fields_set}
    with svc.change():
        require(caller, "manager", "set server attributes")
        if duration is not None:
            svc.history.duration = duration
            svc.save_meta(job_history_duration=duration)
        if others is not None:
            svc.save_meta(query_other_jobs=others)
        if change.scheduling is not None:
            svc.save_meta(scheduling=change.scheduling)
        if limits:
            svc.save_meta(server_limits={**(svc.meta.get("server_limits") or {}), **limits})
    if change.scheduling is not None:
        log.info("server_set", scheduling=change.scheduling, by=caller.user)
    if limits:
        log.info("server_set", **limits, by=caller.user)
    if duration is not None:
        log.info("server_set", job_history_duration=duration, by=caller.user)
    if others is not None:
        log.info("server_set", query_other_jobs=others, by=caller.user)
