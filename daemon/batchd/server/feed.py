"""Trace replay into the live daemon: jobs arrive at their (shrunk) submit times on its clock."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import structlog

from batchd.model.job import Job
from batchd.server.service import BatchService
from batchd.workload.source import load_trace

log = structlog.get_logger("batchd")


def trace_owner(job: Job) -> str:
    return f"user{job.user}" if job.user.isdigit() else (job.user or "trace")


class TraceColumns:
    """A trace's jobs as columns of ints: what the feed injects, in a few dozen bytes a job.

    A ``Job`` read from a trace keeps its whole SWF record; the feed needs only the
    shape, the owner, the name, the utility function, the priority class and the width
    range and speedup (moldable jobs) of each,
    and holds them for the replay's months.
    """

    def __init__(self, jobs: Sequence[Job]) -> None:
        self.submit = array("q", (j.submit for j in jobs))
        self.width = array("q", (j.width for j in jobs))
        self.estimate = array("q", (j.estimate for j in jobs))
        self.runtime = array("q", (j.runtime for j in jobs))
        self.ids = array("q", (j.id for j in jobs))
        owners: dict[str, int] = {}
        self.owner = array("i", (owners.setdefault(trace_owner(j), len(owners)) for j in jobs))
        self.owners = list(owners)
        names = [j.name for j in jobs]
        self.names = names if any(names) else None
        # Utility functions and priority classes (Lee's utility paper), for the few traces that carry
        # them: by job index.
        self.utilities = {i: j.utility for i, j in enumerate(jobs) if j.utility is not None}
        self.classes = {i: j.priority_class for i, j in enumerate(jobs) if j.priority_class}
        self.molds = {i: j.mold for i, j in enumerate(jobs) if j.mold is not None}

    def __len__(self) -> int:
        return len(self.submit)

    def job(self, i: int) -> tuple[Job, str]:
        """Job ``i`` (its shape, id and name) and its owner."""
        job = Job(
            id=self.ids[i],
            submit=self.submit[i],
            width=self.width[i],
            estimate=self.estimate[i],
            runtime=self.runtime[i],
            name=self.names[i] if self.names is not None else "",
            utility=self.utilities.get(i),
            priority_class=self.classes.get(i, 0),
            mold=self.molds.get(i),
        )
        return job, self.owners[self.owner[i]]


class ReplayFeed:
    """Injects a workload's jobs through timers on the engine, one submit time at a time.

    Trace time ``t`` is ``origin + t`` on the emulated clock. The count of injected jobs
    is saved with them, so after a restart the feed goes on where it stopped.
    """

    def __init__(
        self,
        svc: BatchService,
        trace: str,
        *,
        shrink: float = 1.0,
        seed: int = 0,
        origin: int,
        cursor: int = 0,
    ) -> None:
        self.svc = svc
        self.trace = trace
        self.shrink = shrink
        self.seed = seed
        self.origin = origin
        self.cursor = cursor
        site = svc.site
        if svc.scheduler.grid is not None:  # what the grid takes (the layer refuses the rest)
            nodes = svc.widest_job()
        else:
            nodes = site.machine[  # the widths a trace job may have: nodes, or cores if shared
                site.machine_index(site.queue_named(site.default_queue).machine)
            ].slots
        self.jobs = TraceColumns(load_trace(trace, nodes, shrink=shrink, seed=seed).jobs)
        self._timer: Any = None

    @classmethod
    def starting_now(cls, svc: BatchService, trace: str, *, shrink: float, seed: int) -> ReplayFeed:
        """A feed whose first job arrives now; the gaps between jobs are the trace's.

        On a fresh daemon "now" is when its clock started (``--start``), to the second.
        """
        feed = cls(svc, trace, shrink=shrink, seed=seed, origin=svc.now)
        if len(feed.jobs):
            feed.origin = svc.now - feed.jobs.submit[0]
        return feed

    def start(self) -> None:
        self._save()
        self._arm()

    def resume(self) -> None:
        """After the service went back to its saved state: on from the saved cursor."""
        saved = self.svc.meta.get("replay")
        self.cursor = 0 if saved is None else int(saved["cursor"])
        if self.cursor < len(self.jobs):
            self._arm()

    def _arm(self) -> None:
        if self.cursor < len(self.jobs):
            when = max(self.origin + self.jobs.submit[self.cursor], self.svc.engine.now)
            self._timer = self.svc.engine.call_at(when, self._fire)
        else:
            log.info("replay_done", trace=self.trace, jobs=len(self.jobs))

    def _fire(self) -> None:
        now = self.svc.engine.now
        jobs = self.jobs
        while self.cursor < len(jobs) and self.origin + jobs.submit[self.cursor] <= now:
            self.svc.inject(*jobs.job(self.cursor))
            self.cursor += 1
        self._save()
        self._arm()

    def _save(self) -> None:
        self.svc.save_meta(replay=self.describe())

    def describe(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "shrink": self.shrink,
            "seed": self.seed,
            "origin": self.origin,
            "cursor": self.cursor,
            "jobs": len(self.jobs),
        }
