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

A deep queue's state and answers are made in steps (``planview.STEP_ROWS`` rows, and as
many rows compared or encoded), with the event loop free between two: other requests
and the scheduling loop go on while a state of 100,000 jobs is made. One state is made
at a time; a request that comes while one is being made is answered with it.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from batchd.server.errors import bad_request
from batchd.server.planview import (
    STEP_ROWS,
    PlanState,
    Row,
    plan_stamp,
    plan_state_steps,
    run_through,
)
from batchd.server.service import BatchService, Caller
from batchd.ui.data import INFO_FIELDS, JOB_FIELDS, utc_offset, zone_name

VERSION_PATTERN = r"^[0-9a-f]{8}-[0-9]{1,18}$"
_VERSION = re.compile(VERSION_PATTERN)
T = TypeVar("T")
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


@dataclass(frozen=True, slots=True)
class Version:
    """One version of the plan, and the one before (the base of a delta)."""

    boot: str
    number: int
    state: PlanState
    prev: PlanState | None

    @property
    def name(self) -> str:
        return f"{self.boot}-{self.number}"

    @property
    def etag(self) -> str:
        return f'"{self.name}"'


class PlanFeed:
    def __init__(self) -> None:
        self.boot = secrets.token_hex(4)
        self.number = 0
        self.last: PlanState | None = None
        self.prev: PlanState | None = None
        self.stamp: tuple[object, ...] | None = None  # plan_stamp of ``last``
        self._making: asyncio.Future[None] | None = None  # the state being made

    def current(self) -> Version:
        """The version made last (after ``refresh``)."""
        assert self.last is not None
        return Version(self.boot, self.number, self.last, self.prev)

    async def refresh(self, svc: BatchService) -> None:
        """The plan now: a new version if anything changed since the last request. The
        state is made again only when its stamp moved (a poll of an unchanged plan costs
        no plan), and a new version only when it differs. While a state is being made, a
        request waits for it rather than making another."""
        if self._making is not None:
            await asyncio.shield(self._making)
            return
        stamp = plan_stamp(svc)
        if self.last is not None and stamp == self.stamp:
            return
        self._making = asyncio.get_running_loop().create_future()
        try:
            state = await in_steps(plan_state_steps(svc))
            self.stamp = stamp  # as it was when the state began: a change since makes it again
            if self.last is None or not state.same_as(self.last):
                self.prev, self.last = self.last, state
                self.number += 1
        finally:
            making, self._making = self._making, None
            making.set_result(None)


async def in_steps(steps: Generator[None, None, T]) -> T:
    """Run a generator of steps to its value, letting the event loop run between two."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            value: T = done.value
            return value
        await asyncio.sleep(0)


def answer_steps(
    svc: BatchService, version: Version, caller: Caller, since: str | None
) -> Generator[None, None, bytes]:
    """The answer for a caller that has version ``since``, made in steps of ``STEP_ROWS``."""
    state = version.state
    base: PlanState | None = None
    if since == version.name:
        base = state
    elif since == f"{version.boot}-{version.number - 1}":
        base = version.prev
    # Other users' jobs are not shown to a caller who may not see them (query_other_jobs).
    own = None if caller.sees_all else caller.user
    out: dict[str, Any] = {
        "server": svc.server,
        "now": svc.now,
        "version": version.name,
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
    shown = yield from _shown(state, own)
    rows: list[Row] = []
    for steps, (seq, row) in enumerate(state.rows.items(), 1):
        if not steps % STEP_ROWS:
            yield
        if (shown is None or seq in shown) and (base is None or base.rows.get(seq) != row):
            rows.append(row)
    info: list[tuple[int, str, str, str]] = []
    for steps, (seq, i) in enumerate(state.info.items(), 1):
        if not steps % STEP_ROWS:
            yield
        if (shown is None or seq in shown) and (base is None or base.info.get(seq) != i):
            info.append((seq, *i))
    gone: list[int] = []
    order: list[list[int] | None] = []
    if base is None:
        for waiting in state.order:
            order.append((yield from _kept(waiting, shown)))
    else:
        for steps, seq in enumerate(base.rows, 1):
            if not steps % STEP_ROWS:
                yield
            if (own is None or base.info[seq][1] == own) and not (
                seq in state.rows and (shown is None or seq in shown)
            ):
                gone.append(seq)
        for m, (old, new) in enumerate(zip(base.order, state.order, strict=True)):
            new = yield from _kept(new, shown)
            # The old order's jobs the caller does not see are left out by kept_order.
            kept = yield from kept_order_steps(old, state.rows, m, shown)
            order.append(None if new == kept else new)
    reasons: dict[str, int] = {}
    jobs = [_with_reason_index(r, reasons) for r in rows]
    out["reasons"] = list(reasons)
    out["info"] = []  # placeholders: the long lists are encoded in steps below
    out["jobs"] = []
    out["gone"] = gone
    out["order"] = order
    head, _, tail = _ENCODER.encode(out).rpartition('"info":[],"jobs":[]')
    parts = [head.encode()]
    for key, items in (("info", info), ("jobs", jobs)):
        parts.append(f'"{key}":['.encode())
        for k in range(0, len(items), STEP_ROWS):
            chunk = _ENCODER.encode(items[k : k + STEP_ROWS])[1:-1]
            parts.append((chunk if not k else "," + chunk).encode())
            yield
        parts.append(b"]," if key == "info" else b"]")
    parts.append(tail.encode())
    return b"".join(parts)


_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _shown(state: PlanState, own: str | None) -> Generator[None, None, set[int] | None]:
    """The seqs of ``own``'s jobs in ``state`` (None: every job is shown)."""
    if own is None:
        return None
    shown: set[int] = set()
    for steps, (seq, i) in enumerate(state.info.items(), 1):
        if not steps % STEP_ROWS:
            yield
        if i[1] == own:
            shown.add(seq)
    return shown


def _kept(seqs: list[int], shown: set[int] | None) -> Generator[None, None, list[int]]:
    """``seqs`` without those not shown."""
    if shown is None:
        return seqs
    out: list[int] = []
    for k in range(0, len(seqs), STEP_ROWS):
        out += [seq for seq in seqs[k : k + STEP_ROWS] if seq in shown]
        yield
    return out


def kept_order(
    old: list[int], rows: dict[int, Row], machine: int, shown: set[int] | None = None
) -> list[int]:
    """The old order of a machine with the jobs no longer waiting on it left out, then
    the jobs waiting on it that it did not hold, by seq: what the page makes of a delta
    that sends no order for the machine (store.js, keptOrder). ``shown``: the jobs the
    caller sees (None: all)."""
    return run_through(kept_order_steps(old, rows, machine, shown))


def kept_order_steps(
    old: list[int], rows: dict[int, Row], machine: int, shown: set[int] | None
) -> Generator[None, None, list[int]]:
    """``kept_order`` in steps of ``STEP_ROWS``."""

    def waiting_on(seq: int) -> bool:
        row = rows.get(seq)
        return (
            row is not None
            and row[1] == "Q"
            and row[2] == machine
            and (shown is None or seq in shown)
        )

    before = set(old)
    yield
    added: list[int] = []
    for steps, seq in enumerate(rows, 1):
        if not steps % STEP_ROWS:
            yield
        if seq not in before and waiting_on(seq):
            added.append(seq)
    kept: list[int] = []
    for k in range(0, len(old), STEP_ROWS):
        kept += [seq for seq in old[k : k + STEP_ROWS] if waiting_on(seq)]
        yield
    return kept + sorted(added)


def _with_reason_index(row: Row, reasons: dict[str, int]) -> tuple[Any, ...]:
    """A row as sent: its reason as an index into the answer's ``reasons``."""
    reason = row[-1]
    if reason is None:
        return row
    index = reasons.setdefault(reason, len(reasons))
    return (*row[:-1], index)
