"""What a re-read site file may not change while the daemon runs (SIGHUP)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from batchd.server.service.scheduler import grid_refusal

if TYPE_CHECKING:
    from batchd.server.service.facade import BatchService
    from batchd.site.config import SiteConfig

log = structlog.get_logger("batchd")


def check_reload(svc: BatchService, site: SiteConfig) -> None:
    """ValueError naming what ``site`` changes that needs a restart (or cannot change)."""
    if svc.machine_identity(site) != svc.machine_identity():
        raise ValueError(
            "the machine and the server name cannot change while the daemon runs; restart it"
        )
    _check_removed_queues(svc, site)
    for q in site.queues():
        old = next((o for o in svc.site.queues() if o.name == q.name), None)
        if old is not None and site.machine_index(q.machine) != svc.site.machine_index(old.machine):
            raise ValueError(
                f"queue {q.name}: its machine cannot change while the daemon runs "
                "(its jobs wait there); add a queue for the other machine"
            )
    if (site.grid_table is None) != (svc.site.grid_table is None):
        raise ValueError(
            "the [grid] table cannot be added or removed while the daemon runs; restart it"
        )
    if site.grid_table is not None:
        grid = svc.scheduler.grid
        refused = grid_refusal(site, grid.structure if grid else None)
        if refused is not None:
            raise ValueError(refused)
    if site.server.max_body != svc.site.server.max_body:
        log.warning("max_body_needs_restart", max_body=site.server.max_body)


def _check_removed_queues(svc: BatchService, site: SiteConfig) -> None:
    """A queue the file no longer has must hold no unfinished job: none is left in a
    queue that qstat -Q does not list (as qmgr refuses to delete a busy queue)."""
    kept = {q.name for q in site.queues()}
    for q in svc.site.queues():
        held = 0 if q.name in kept else svc.queue_jobs(q.name)
        if held:
            raise ValueError(
                f"Cannot delete busy object: queue {q.name}, which the file no longer has, "
                f"holds {held} unfinished job{'s' if held > 1 else ''}: move them (qmove) or "
                "delete them (qdel), or keep the queue with enabled = false until they end, "
                "then SIGHUP again"
            )
