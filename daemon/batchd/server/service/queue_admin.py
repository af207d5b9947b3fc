"""Queues a manager creates, changes and deletes live (qmgr), kept across restarts.

The site file's queues are the base; each change a manager makes is saved in the
state database (meta ``queue_changes``: a queue's whole definition, or None for a
deleted one) and laid over the file's queues at every start and every re-read of
the file, so a restart, a SIGHUP and a change undone all give the same queues.

As in PBS, a new queue is an execution queue that is neither enabled nor started
until a manager says so (``create queue q enabled=True,started=True``); a queue
with unfinished jobs cannot be deleted, and neither can the default queue.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import structlog
from pydantic import ValidationError

from batchd.server.errors import ApiError
from batchd.site.config import SiteConfig
from batchd.site.tables import QueueConfig

log = structlog.get_logger("batchd")
Changes = dict[str, dict[str, Any] | None]
RESV_QUEUE = re.compile(r"R[0-9]+")


def unknown_queue(name: str) -> ApiError:
    return ApiError(404, "unknown_queue", f"Unknown queue {name}")


def bad_value(message: str) -> ApiError:
    return ApiError(400, "bad_value", f"Illegal attribute or resource value: {message}")


def effective_site(site: SiteConfig, changes: Mapping[str, dict[str, Any] | None]) -> SiteConfig:
    """The site file's queues with the saved changes laid over them."""
    if not changes:
        return site
    queues: list[QueueConfig] = []
    for q in site.queues():
        if q.name not in changes:
            queues.append(q)
        elif (changed := changes[q.name]) is not None:
            queues.append(QueueConfig.model_validate(changed))
    names = {q.name for q in site.queues()}
    for name, changed in changes.items():
        if name not in names and changed is not None:
            queues.append(QueueConfig.model_validate(changed))
    return site.model_copy(update={"queue": queues})


def usable_changes(site: SiteConfig, saved: object) -> Changes:
    """The saved changes that still make sense with this site file (a queue on a machine
    the file no longer has is dropped, with a warning)."""
    if not isinstance(saved, dict):
        return {}
    machines = {m.name for m in site.machine}
    out: Changes = {}
    for name, changed in saved.items():
        if changed is not None:
            try:
                q = QueueConfig.model_validate(changed)
            except ValidationError as exc:
                log.warning("queue_change_dropped", queue=name, error=str(exc))
                continue
            if q.machine is not None and q.machine not in machines:
                log.warning("queue_change_dropped", queue=name, machine=q.machine)
                continue
        out[str(name)] = changed
    return out


def _validated(fields: dict[str, Any]) -> QueueConfig:
    try:
        return QueueConfig.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "queue"
        raise bad_value(f"{where}: {err['msg'].removeprefix('Value error, ')}") from None


class QueueAdmin:
    """Checks and records the changes; the service applies the resulting site."""

    def __init__(self) -> None:
        self.changes: Changes = {}

    def _check_machine(self, site: SiteConfig, q: QueueConfig) -> None:
        if q.machine is not None and all(m.name != q.machine for m in site.machine):
            names = ", ".join(m.name for m in site.machine)
            raise bad_value(f"machine: unknown machine {q.machine!r}; machines: {names}")

    def create(self, site: SiteConfig, name: str, fields: dict[str, Any]) -> QueueConfig:
        if RESV_QUEUE.fullmatch(name):
            raise ApiError(
                409, "queue_exists", f"{name}: queue names R<number> belong to advance reservations"
            )
        if any(q.name == name for q in site.queues()):
            raise ApiError(409, "queue_exists", f"Queue already exists: {name}")
        q = _validated({"enabled": False, "started": False, **fields, "name": name})
        self._check_machine(site, q)
        self.changes[name] = q.model_dump(mode="json")
        return q

    def change(
        self, site: SiteConfig, name: str, fields: dict[str, Any], busy: bool
    ) -> QueueConfig:
        old = next((q for q in site.queues() if q.name == name), None)
        if old is None:
            raise unknown_queue(name)
        q = _validated({**old.model_dump(mode="json"), **fields})
        self._check_machine(site, q)
        if busy and site.machine_index(q.machine) != site.machine_index(old.machine):
            raise ApiError(
                409,
                "queue_busy",
                f"queue {name}: its machine cannot change while it holds unfinished jobs",
            )
        self.changes[name] = q.model_dump(mode="json")
        return q

    def delete(self, site: SiteConfig, name: str, busy: bool) -> None:
        if all(q.name != name for q in site.queues()):
            raise unknown_queue(name)
        if busy:
            raise ApiError(
                409, "queue_busy", f"Cannot delete busy object: queue {name} has unfinished jobs"
            )
        if name == site.default_queue:
            raise ApiError(
                409, "queue_busy", f"Cannot delete busy object: {name} is the default queue"
            )
        self.changes[name] = None
