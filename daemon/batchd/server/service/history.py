"""Finished jobs: out of memory, in the database for ``job_history_duration``.

A job that finishes is saved with its views and then leaves memory (the journal
hands it over when it commits). What is asked about it later (``qstat -x``, one
job by id, the outcome a dependency waits for) is read from the database. A
finished job is purged once it ended ``duration`` emulated seconds ago, as PBS
purges its job history; then it is unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import structlog

from batchd.server.records import JobRecord
from batchd.server.store import Store

Render = Callable[[JobRecord], tuple[str, str]]  # -> (JobOut, JobBrief) as JSON

log = structlog.get_logger("batchd")


class History:
    def __init__(self, store: Store, render: Render, duration: int) -> None:
        self.store = store
        self.render = render
        self.duration = duration
        self.count = store.finished_count()
        self._oldest = store.oldest_end()

    def save(self, rec: JobRecord) -> None:
        """A finished job's last row, with its views (written at the next commit)."""
        view, brief = self.render(rec)
        self.store.put_job(rec.to_row(), view, brief)
        self.count += 1
        end = rec.job.end
        if self._oldest is None or end < self._oldest:
            self._oldest = end

    def record(self, seq: int) -> JobRecord | None:
        row = self.store.finished_row(seq)
        return None if row is None else JobRecord.from_row(row)

    def outcome(self, seq: int) -> str | None:
        """How finished job ``seq`` ended; None if it is not in the history."""
        row = self.store.finished_row(seq)
        return None if row is None else str(row["outcome"])

    def page(
        self,
        after: int,
        limit: int,
        owners: Sequence[str] | None = None,
        queue: str | None = None,
        *,
        brief: bool = False,
    ) -> list[tuple[int, str]]:
        return self.store.finished_page(after, limit, owners, queue, brief=brief)

    def subjobs(self, seq: int, *, brief: bool = False) -> dict[int, str]:
        """Array ``seq``'s finished subjobs in the history: their views by index."""
        return self.store.finished_subjobs(seq, brief=brief)

    def purge(self, now: int) -> int:
        """Forget the finished jobs that ended more than ``duration`` before ``now``."""
        before = now - self.duration
        if self._oldest is None or self._oldest >= before:
            return 0
        gone = self.store.purge_finished(before)
        self.count -= gone
        self._oldest = self.store.oldest_end()
        if gone:
            log.info("history_purged", jobs=gone, before=before, kept=self.count)
        return gone

    def render_old(self) -> None:
        """Views for finished jobs saved by a batchd without them (after the migration),
        a thousand at a time."""
        made = 0
        while rows := self.store.unviewed(1000):
            recs = [JobRecord.from_row(r) for r in rows]
            self.store.set_views([(*self.render(rec), rec.seq) for rec in recs])
            made += len(recs)
        if made:
            log.info("history_views_made", jobs=made)
