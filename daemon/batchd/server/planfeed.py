"""``GET /plan`` with versions: the web page polls it and is sent what changed.

The feed keeps the last two plan states. Each request builds the state of its
moment and compares it with the last one: equal, the version stays; different,
it becomes version n + 1 and the last one is kept as the base of a delta. A caller
that names the current version in ``If-None-Match`` gets 304 and no body; one that
names the version before (``since``) gets a delta: the rows that changed or are new,
the ids that are gone, and each machine's order only where it is not the old order
with the gone jobs left out and the new ones at the end. Anyone else gets it all.
Versions are ``BOOT-N``, BOOT drawn at each start of the daemon, so a version of an
earlier run never matches.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Mapping
from typing import Any

from batchd.server.errors import bad_request
from batchd.server.planview import PlanState, Row, plan_stamp, plan_state
from batchd.server.service import BatchService, Caller
from batchd.ui.data import INFO_FIELDS, JOB_FIELDS, utc_offset, zone_name

VERSION_PATTERN = r"^[0-9a-f]{8}-[0-9]{1,18}$"
_VERSION = re.compile(VERSION_PATTERN)
PARAMS = ("since",)


def parse_since(query: Mapping[str, str]) -> str | None:
    """The ``since`` of a query (a version), or a 400 naming what is wrong."""
    extra = set(query) - set(PARAMS)
    if extra:
        raise bad_request(f"unknown query parameter {sorted(extra)[0]!r}; use since")
    since = query.get("since")
    if since is not None and not _VERSION.fullmatch(since):
        raise bad_request(f"since: expected a version of GET /plan (BOOT-N), got {since!r}")
    return since


def etag_matches(header: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (a quoted version), or is ``*``."""
    if not header:
        return False
    for item in header.split(","):
        tag = item.strip().removeprefix("W/")
        if tag == "*" or tag == etag:
            return True
    return False


class PlanFeed:
    def __init__(self) -> None:
        self.boot = secrets.token_hex(4)
        self.number = 0
        self.last: PlanState | None = None
        self.prev: PlanState | None = None
        self.stamp: tuple[object, ...] | None = None  # plan_stamp of ``last``

    @property
    def version(self) -> str:
        return f"{self.boot}-{self.number}"

    @property
    def etag(self) -> str:
        return f'"{self.version}"'

    def refresh(self, svc: BatchService) -> None:
        """The plan now: a new version if anything changed since the last request. The
        state is made again only when its stamp moved (a poll of an unchanged plan costs
        no plan), and a new version only when it differs."""
        stamp = plan_stamp(svc)
        if self.last is not None and stamp == self.stamp:
            return
        state = plan_state(svc)
        self.stamp = stamp
        if self.last is not None and state.same_as(self.last):
            return
        self.prev, self.last = self.last, state
        self.number += 1

    def answer(self, svc: BatchService, caller: Caller, since: str | None) -> bytes:
        """The answer (JSON) for a caller that has version ``since``, after ``refresh``."""
        state = self.last
        assert state is not None
        base: PlanState | None = None
        if since == self.version:
            base = state
        elif since == f"{self.boot}-{self.number - 1}":
            base = self.prev
        if not caller.sees_all:  # other users' jobs are not shown (query_other_jobs)
            state = state.owned_by(caller.user)
            base = base.owned_by(caller.user) if base is not None else None
        out: dict[str, Any] = {
            "server": svc.server,
            "now": svc.now,
            "version": self.version,
            "base": since if base is not None else None,
            "caller": {"user": caller.user, "role": caller.role},
            "clock": "realtime" if svc.realtime else "accelerated",
            "speed": svc.speed,
            "timezone": zone_name(svc.calendar.tz),
            "utc_offset": utc_offset(svc.calendar.tz, svc.now),
            "fields": JOB_FIELDS,
            "info_fields": INFO_FIELDS,
            "machines": state.machines,
            "reservations": state.reservations,
        }
        if base is None:
            out["node_names"] = svc.nodes.names
            rows: list[Row] = list(state.rows.values())
            info = [(seq, *i) for seq, i in state.info.items()]
            gone: list[int] = []
            order: list[list[int] | None] = list(state.order)
        else:
            rows = [r for seq, r in state.rows.items() if base.rows.get(seq) != r]
            info = [(seq, *i) for seq, i in state.info.items() if base.info.get(seq) != i]
            gone = [seq for seq in base.rows if seq not in state.rows]
            order = [
                None if new == kept_order(old, state.rows, m) else new
                for m, (old, new) in enumerate(zip(base.order, state.order, strict=True))
            ]
        reasons: dict[str, int] = {}
        out["jobs"] = [_with_reason_index(r, reasons) for r in rows]
        out["reasons"] = list(reasons)
        out["info"] = info
        out["gone"] = gone
        out["order"] = order
        return json.dumps(out, separators=(",", ":")).encode()


def kept_order(old: list[int], rows: dict[int, Row], machine: int) -> list[int]:
    """The old order of a machine with the jobs no longer waiting on it left out, then
    the jobs waiting on it that it did not hold, by seq: what the page makes of a delta
    that sends no order for the machine (store.js, keptOrder)."""

    def waiting_on(seq: int) -> bool:
        row = rows.get(seq)
        return row is not None and row[1] == "Q" and row[2] == machine

    before = set(old)
    added = sorted(seq for seq in rows if seq not in before and waiting_on(seq))
    return [seq for seq in old if waiting_on(seq)] + added


def _with_reason_index(row: Row, reasons: dict[str, int]) -> tuple[Any, ...]:
    """A row as sent: its reason as an index into the answer's ``reasons``."""
    reason = row[-1]
    if reason is None:
        return row
    index = reasons.setdefault(reason, len(reasons))
    return (*row[:-1], index)
