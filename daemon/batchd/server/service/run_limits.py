"""The server's scheduling switch and the run and queued limits in force, and qsub's check.

Queue limits live in the queue's definition (the site file's ``[[queue]]``, or what
a manager set with qmgr, saved with the queue). The server's come from ``[server]``
unless a manager set them (qmgr ``set server``): those are saved in the state
(meta ``server_limits``, ``scheduling``) and win over the file at every start.

``max_run`` and ``max_user_run`` hold jobs back from starting (the scheduler's limit
gate, ``batchd.sched.policies.limits``); ``max_queued`` and ``max_user_queued`` refuse a job
at submission, or a move, that would put the queue (or the server) over them,
counting every unfinished job, in OpenPBS's words.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from batchd.sched.policies.limits import RunCaps, RunLimits
from batchd.server.errors import ApiError
from batchd.server.records import JobRecord
from batchd.site.config import SiteConfig

SERVER_LIMITS = ("max_run", "max_user_run", "max_queued", "max_user_queued")


def server_limit(site: SiteConfig, meta: Mapping[str, Any], name: str) -> int | None:
    """A server limit: as a manager set it (saved; None: unset), else the site file's."""
    saved = meta.get("server_limits") or {}
    if name in saved:
        value = saved[name]
        return None if value is None else int(value)
    limit: int | None = getattr(site.server, name)
    return limit


def scheduling(site: SiteConfig, meta: Mapping[str, Any]) -> bool:
    """Whether the scheduler starts jobs: as a manager set it (saved), else the file's."""
    saved = meta.get("scheduling")
    return bool(saved) if saved is not None else site.server.scheduling


def run_limits(site: SiteConfig, meta: Mapping[str, Any]) -> RunLimits:
    queues = {
        q.name: RunCaps(q.max_run, q.max_user_run)
        for q in site.queues()
        if q.max_run is not None or q.max_user_run is not None
    }
    server = RunCaps(server_limit(site, meta, "max_run"), server_limit(site, meta, "max_user_run"))
    return RunLimits(server, queues, scheduling(site, meta))


def max_queued(where: str) -> ApiError:
    return ApiError(409, "max_queued", f"Maximum number of jobs already in {where}")


def check_queued(
    site: SiteConfig,
    meta: Mapping[str, Any],
    records: Iterable[JobRecord],
    queue: str,
    owner: str,
    moving: int = 0,
) -> None:
    """Refuse one more job of ``owner`` in ``queue`` if it would break a queued limit
    (``moving``: the job being moved, not counted where it is)."""
    q = next((q for q in site.queues() if q.name == queue), None)
    q_all = q.max_queued if q is not None else None
    q_user = q.max_user_queued if q is not None else None
    s_all = server_limit(site, meta, "max_queued")
    s_user = server_limit(site, meta, "max_user_queued")
    if q_all is None and q_user is None and s_all is None and s_user is None:
        return
    in_queue = of_user_in_queue = total = of_user = 0
    for rec in records:
        if rec.seq == moving:
            continue
        total += 1
        mine = rec.owner == owner
        of_user += mine
        if rec.job.queue == queue:
            in_queue += 1
            of_user_in_queue += mine
    if q_all is not None and in_queue >= q_all:
        raise max_queued(f"queue {queue}")
    if q_user is not None and of_user_in_queue >= q_user:
        raise ApiError(409, "max_queued", "would exceed queue generic's per-user limit")
    if s_all is not None and total >= s_all:
        raise max_queued("complex")
    if s_user is not None and of_user >= s_user:
        raise ApiError(409, "max_queued", "would exceed complex's per-user limit")
