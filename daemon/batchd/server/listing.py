"""``GET /jobs``: jobs in id order, a page at a time, from memory and from the history.

Unfinished jobs are in memory; finished ones in the database, with their views
saved as JSON. A page takes the next ``limit`` jobs after a cursor (a job's seq)
from both and merges them, so a listing of the whole history never holds more
than a page. Pages are built from the state of the moment: a job that finishes
between two pages is listed once, in the state it had when its page was built.

Job arrays are listed as one job (``12[]``); with ``subjobs`` each is followed by
its subjobs in index order (``qstat -t``), which the page's ``limit`` does not count.
"""

from __future__ import annotations

import heapq
import json
import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from operator import attrgetter
from typing import Any

from batchd.model.states import JobState
from batchd.server.arrays import subjob_key
from batchd.server.errors import bad_request, not_found
from batchd.server.jobview import dumps, shown_state
from batchd.server.records import JobRecord
from batchd.server.service import BatchService, Caller
from batchd.server.subjobs import shown_subjob
from batchd.server.views import job_out
from batchd.server.visibility import shown, shown_text

MAX_LIMIT = 10_000
CHUNK = 1_000  # jobs per chunk of a listing sent whole
PARAMS = ("user", "state", "queue", "history", "brief", "limit", "after", "subjobs")
STATES = "QHWREFBX"

_seq = attrgetter("seq")


@dataclass(frozen=True, slots=True)
class JobQuery:
    users: tuple[str, ...] | None = None
    states: str | None = None
    queue: str | None = None
    history: bool = False
    brief: bool = False
    subjobs: bool = False

    @property
    def finished(self) -> bool:
        """Whether finished jobs are listed: with history, or when state names F."""
        return "F" in self.states if self.states is not None else self.history

    def matches(self, rec: JobRecord, now: int) -> bool:
        letter = shown_state(rec, now)
        if letter == "F" and not self.finished:
            return False
        if self.states is not None and letter not in self.states:
            return False
        return self.owns(rec)

    def owns(self, rec: JobRecord) -> bool:
        """The owner and queue asked for (the state aside)."""
        if self.users is not None and rec.owner not in self.users:
            return False
        return self.queue is None or rec.job.queue == self.queue

    def opens(self, rec: JobRecord, now: int) -> bool:
        """Listed, or an unfinished array whose subjobs are (in any state of its own)."""
        if self.matches(rec, now):
            return True
        unfinished = rec.state is not JobState.FINISHED
        return self.subjobs and rec.array is not None and unfinished and self.owns(rec)

    def shows_subjob(self, letter: str) -> bool:
        """A subjob of a listed array: X ones too, as qstat -t shows them (F: with -x)."""
        if letter == "F" and not self.finished:
            return False
        return self.states is None or letter in self.states


def flag(value: str | None, name: str) -> bool:
    if value is None:
        return False
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise bad_request(f"{name}: expected true or false, got {value!r}")


def count(value: str | None, name: str, low: int, high: int) -> int | None:
    if value is None:
        return None
    if not re.fullmatch("[0-9]{1,20}", value) or not low <= int(value) <= high:
        raise bad_request(f"{name}: expected an integer from {low} to {high}, got {value!r}")
    return int(value)


def parse(
    svc: BatchService, q: Mapping[str, str], caller: Caller
) -> tuple[JobQuery, int, int | None]:
    """The query, the cursor (``after``, 0 from the start) and the page size (None: all).
    A caller that may not see other users' jobs is listed only its own, as PBS's qstat."""
    extra = set(q) - set(PARAMS)
    if extra:
        raise bad_request(
            f"unknown query parameter {sorted(extra)[0]!r}; use {', '.join(sorted(PARAMS))}"
        )
    states = q.get("state")
    if states is not None:
        bad = set(states) - set(STATES)
        if bad:
            raise bad_request(
                f"state: unknown letters {''.join(sorted(bad))}; use {' '.join(STATES)}"
            )
    queue = q.get("queue")
    # Reservation queues too, those of finished reservations included (their jobs' history).
    names = svc.queue_names() + [r.queue for r in svc.reservations.items.values() if r.queue]
    if queue is not None and queue not in names:
        raise not_found(f"Unknown queue {queue!r}; queues: {', '.join(names)}")
    user = q.get("user")
    users = tuple(u for u in user.split(",") if u) if user is not None else None
    if not caller.sees_all:  # no other user's job: the caller's own, if asked for
        users = (caller.user,) if users is None or caller.user in users else ()
    query = JobQuery(
        users=users,
        states=states,
        queue=queue,
        history=flag(q.get("history"), "history"),
        brief=flag(q.get("brief"), "brief"),
        subjobs=flag(q.get("subjobs"), "subjobs"),
    )
    after = count(q.get("after"), "after", 0, 1 << 62) or 0
    return query, after, count(q.get("limit"), "limit", 1, MAX_LIMIT)


class Pages:
    """The pages of one listing; the plan of queued jobs is made once, for all of them."""

    def __init__(self, svc: BatchService, query: JobQuery, caller: Caller) -> None:
        self.svc = svc
        self.query = query
        self.caller = caller
        self._plan: dict[int, int] | None = None
        # The jobs in memory looked up for the parts of the listing (by seq).
        self._kept: list[JobRecord] = []

    def page(self, after: int, limit: int) -> tuple[list[str], int | None]:
        """The views (JSON) of up to ``limit`` jobs with seq > ``after``, and the cursor of
        the next page (None when none is left)."""
        svc, query = self.svc, self.query
        now = svc.now
        live: list[JobRecord] = []
        for rec in self._from_kept(after):
            if query.opens(rec, now):
                live.append(rec)
                if len(live) > limit:
                    break
        done: list[tuple[int, str]] = []
        if query.finished:
            done = svc.history.page(after, limit + 1, query.users, query.queue, brief=query.brief)
        items: list[tuple[int, JobRecord | str]] = [(rec.seq, rec) for rec in live]
        items += done
        items.sort(key=lambda item: item[0])
        more = len(items) > limit
        del items[limit:]
        texts: list[str] = []
        for _, item in items:
            if isinstance(item, str):
                texts.append(self._shown_text(item))
            elif query.matches(item, now):
                texts.append(self._render(item))
            if query.subjobs:
                texts += self._subjobs(item)
        return texts, items[-1][0] if more else None

    def _walk(self, after: int) -> Iterator[JobRecord]:
        """The jobs and arrays in memory with seq > ``after``, in seq order (each dict
        holds them by increasing seq; subjobs are listed with their arrays)."""
        svc = self.svc
        jobs = (r for r in svc.records.values() if r.subjob_index is None and r.seq > after)
        arrays = (r for r in svc.arrays.values() if r.seq > after)
        return heapq.merge(jobs, arrays, key=_seq)

    def _from_kept(self, after: int) -> Iterator[JobRecord]:
        """Unfinished jobs and arrays with seq > ``after``, in seq order, as they are now:
        ``_walk`` from the jobs looked up for an earlier part of the listing. One that
        left memory since is passed over, and the jobs that came since are looked up
        when the kept ones run out (a walk for every part was a walk of the whole queue
        every 1,000 jobs)."""
        kept = self._kept
        i = bisect_right(kept, after, key=_seq)
        while True:
            for rec in islice(kept, i, None):
                current = (self.svc.records if rec.array is None else self.svc.arrays).get(rec.seq)
                if current is not None:
                    yield current
            kept = list(self._walk(max(after, kept[-1].seq if kept else 0)))
            if not kept:
                return
            self._kept, i = kept, 0

    def _render(self, rec: JobRecord) -> str:
        plan = self._plan
        if plan is None and rec.state is JobState.QUEUED:
            plan = self._plan = self.svc.planned_starts()
        return dumps(self._shown(job_out(self.svc, rec, plan or {}, brief=self.query.brief)))

    def _shown(self, view: dict[str, Any]) -> dict[str, Any]:
        """A view as the caller may see it (the brief view has no variables)."""
        return view if self.query.brief else shown(self.caller, view)

    def _shown_text(self, text: str) -> str:
        """A saved view as the caller may see it."""
        return text if self.query.brief else shown_text(self.caller, text)

    def _subjobs(self, item: JobRecord | str) -> list[str]:
        """The subjobs of an array (nothing for another job), in index order: those in
        memory, those in the history, and those not made yet (or no longer kept)."""
        svc = self.svc
        if isinstance(item, str):
            # An array's id ends in "[]" (brief views saved before they had "array").
            if '"array":true' not in item and "[]." not in item:
                return []
            parent = svc.history.record(json.loads(item)["seq"])
        else:
            parent = item
        if parent is None or parent.array is None:
            return []
        spec = parent.array
        seq = parent.seq
        finished = parent.state is JobState.FINISHED
        saved = svc.history.subjobs(seq, brief=self.query.brief)
        out: list[str] = []
        for pos in range(spec.count):
            index = spec.index(pos)
            rec = svc.records.get(subjob_key(seq, index))
            if rec is not None:
                if self.query.shows_subjob(shown_state(rec, svc.now)):
                    out.append(self._render(rec))
                continue
            text = saved.get(index)
            if text is None:
                view = json.loads(self._render(shown_subjob(parent, index, svc.server, svc.now)))
            else:
                view = json.loads(text)
            if finished and view["state"] == "X":
                view["state"] = "F"
            if self.query.shows_subjob(view["state"]):
                out.append(dumps(self._shown(view)))
        return out

    def chunks(self, after: int) -> Iterator[list[str]]:
        """Every job after ``after``, ``CHUNK`` at a time."""
        for texts, _ in self.parts(after, None):
            yield texts

    def parts(self, after: int, limit: int | None) -> Iterator[tuple[list[str], int | None]]:
        """The page of ``limit`` jobs after ``after`` (None: every job), ``CHUNK`` at a
        time, each part with the cursor after it: the daemon answers other requests
        between two parts. The parts look their jobs up once: a page the first ``limit``
        and one more (more only when a filter leaves some out), a listing sent whole all
        of them."""
        self._kept = [] if limit is None else list(islice(self._walk(after), limit + 1))
        cursor: int | None = after
        left = limit
        while cursor is not None and (left is None or left > 0):
            size = CHUNK if left is None else min(CHUNK, left)
            texts, cursor = self.page(cursor, size)
            if left is not None:
                left -= size
            yield texts, cursor
