"""What is saved, and when: changed job rows, settings and the clock, in one transaction.

Every part of the service marks what it changed (``touch`` a job record, ``meta``
a setting, ``node`` a node's state); ``commit`` writes all of it, with the
reservations whose state moved, in one SQLite transaction, then tells the
listeners (the scheduling loop's wake-up). The job tally of the metrics moves
with the same changes, so it is exactly as current as the state file. A finished
job goes to the history with its views; once a commit has written it, the
``on_retired`` listeners let it go from memory.

A commit that fails raises ``SaveError`` and leaves what it gathered in the
store, for the next commit; ``SaveStatus`` hears of every outcome. Finished jobs
stay in memory until a commit has written them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from batchd.metrics.tally import JobTally
from batchd.model.states import JobState
from batchd.server.records import JobRecord
from batchd.server.service.history import History
from batchd.server.service.saving import SaveStatus
from batchd.server.store import SaveError, Store

log = structlog.get_logger("batchd")


class Journal:
    def __init__(
        self,
        store: Store | None,
        tally: JobTally,
        status: SaveStatus,
        on_change: list[Callable[[], None]],
        history: History,
    ) -> None:
        self.store = store
        self.tally = tally
        self.status = status
        self.history = history
        self.meta: dict[str, Any] = {}
        self._dirty: dict[int, JobRecord] = {}
        self._saved_now: int | None = None
        self._events: list[tuple[str, dict[str, Any]]] = []
        self.before_commit: list[Callable[[], None]] = []
        self.on_change = on_change
        self.on_retired: list[Callable[[JobRecord], None]] = []
        # Told after a commit has written everything gathered: what may only follow a
        # saved change (a job's process is launched once its start is saved).
        self.on_saved: list[Callable[[], None]] = []
        self._retiring: list[JobRecord] = []  # finished, in the store, not yet written

    def log(self, event: str, **fields: Any) -> None:
        """Log a change once it is saved: at the end of the next commit that succeeds."""
        self._events.append((event, fields))

    def touch(self, rec: JobRecord) -> None:
        self._dirty[rec.seq] = rec

    def dirty(self) -> list[JobRecord]:
        """The records changed since the last commit."""
        return list(self._dirty.values())

    def save_meta(self, **values: Any) -> None:
        self.meta.update(values)
        if self.store is not None:
            for k, v in values.items():
                self.store.put_meta(k, v)

    def put_node(self, machine: int, node: int, state: str | None, comment: str | None) -> None:
        if self.store is not None:
            self.store.put_node(machine, node, state, comment)

    def event(self, seq: int, time: int, source: str, message: str) -> None:
        """A line of job ``seq``'s history, saved with the next commit (``tracejob``)."""
        if self.store is not None:
            self.store.put_event(seq, time, source, message)

    def put_reservation(self, row: dict[str, Any]) -> None:
        if self.store is not None:
            self.store.put_reservation(row)

    def flush_tally(self) -> None:
        """Count the changed records by queue and state (again: it is idempotent). A job
        array is not counted: its subjobs are."""
        for rec in self._dirty.values():
            if rec.array is None:
                self.count(rec)

    def count(self, rec: JobRecord) -> None:
        """Count a job in the tally without saving it (a subjob made from its array, which
        a restart makes again)."""
        job = rec.job
        self.tally.observe(rec.seq, job.queue, rec.state.value, job.width * job.estimate, rec.owner)

    def commit(self, now: int, *, clock: bool = False, write: bool = True) -> None:
        """Write what changed. The emulated time is saved with any change, and on its own
        only with ``clock`` (the heartbeat, or an answer about to show a time not saved yet:
        see ``clock_moved``). ``write=False`` only gathers it in the store (while a retry
        is not due yet). What ``log`` was told is logged once a commit has written it."""
        for flush in self.before_commit:
            flush()
        self.flush_tally()
        store = self.store
        if store is not None:
            for rec in self._dirty.values():
                if rec.state is JobState.FINISHED:
                    self.history.save(rec)
                    self._retiring.append(rec)
                else:
                    store.put_job(rec.to_row())
            if now != self._saved_now and (clock or store.pending):
                self._saved_now = now
                store.put_meta("now", now)
        self._dirty.clear()
        if store is None:
            self._log_events()  # nothing is saved any more: the daemon is stopping
        elif write:
            try:
                wrote = store.commit()
            except SaveError as exc:
                self.status.failed(exc.cause)
                raise
            if wrote:
                self.status.saved()
            retiring, self._retiring = self._retiring, []
            for rec in retiring:
                for retire in self.on_retired:
                    retire(rec)
            self._log_events()
            for saved in self.on_saved:
                saved()
        for fn in self.on_change:
            fn()

    def _log_events(self) -> None:
        events, self._events = self._events, []
        for event, fields in events:
            log.info(event, **fields)

    def clock_moved(self, now: int) -> bool:
        """Whether ``now`` differs from the last time gathered for saving."""
        return now != self._saved_now and self.store is not None
