"""Operations on the server's attributes (qmgr set server): the job history's
duration and whether users see others' jobs, saved with the state over the config's."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from batchd.server.admin_schemas import ServerChange
from batchd.server.service.access import Caller, require

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService

log = structlog.get_logger("batchd")


def set_server(svc: BatchService, caller: Caller, change: ServerChange) -> None:
    duration = change.job_history_duration
    others = change.query_other_jobs
    with svc.change():
        require(caller, "manager", "set server attributes")
        if duration is not None:
            svc.history.duration = duration
            svc.save_meta(job_history_duration=duration)
        if others is not None:
            svc.save_meta(query_other_jobs=others)
    if duration is not None:
        log.info("server_set", job_history_duration=duration, by=caller.user)
    if others is not None:
        log.info("server_set", query_other_jobs=others, by=caller.user)
