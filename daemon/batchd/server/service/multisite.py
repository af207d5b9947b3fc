"""Multi-site jobs (grid): one record, several parts in the engine.

The grid layer places one ``Job`` per part (same id, its machine and width); the record's
own job holds the whole job: all its nodes, the start and the stretched times. It runs
with the first part that starts and finishes with the last that ends; deleting it or a
node failure acts on every part through the engine's ordinary transitions
(docs/architecture.md, "A grid in the daemon").
"""

from __future__ import annotations

from batchd.engine.core import Engine
from batchd.metrics.live import LiveMetrics
from batchd.model.job import UNSET, Job
from batchd.model.states import JobState, change_state
from batchd.model.times import stamp
from batchd.server.records import JobRecord
from batchd.server.service.journal import Journal


class Parts:
    def __init__(
        self, engine: Engine, metrics: LiveMetrics, journal: Journal, machine_names: list[str]
    ) -> None:
        self.engine = engine
        self.metrics = metrics
        self.journal = journal
        self.machine_names = machine_names

    def started(self, rec: JobRecord, part: Job) -> None:
        """A part of a multi-site job started (all start in the same pass): the first makes
        the record's job run, stretched as its parts are; the others join it."""
        job = rec.job
        now = self.engine.now
        if job.state is JobState.QUEUED:
            rec.original = (job.runtime, job.estimate)
            rec.parts = [part]
            job.runtime, job.estimate = part.runtime, part.estimate
            change_state(job, JobState.RUNNING)
            job.start = part.start
            job.machine = part.machine
            job.result.started_by = part.result.started_by
            self.metrics.job_started(part, now)
        else:
            rec.parts.append(part)
            self.metrics.part_started(part, now)
        machines = "+".join(self.machine_names[p.machine] for p in rec.parts)
        rec.comment = (
            f"Job run at {stamp(job.start)} on {job.width} nodes, multi-site on {machines}"
        )
        self.journal.touch(rec)

    def ended(self, rec: JobRecord, part: Job) -> bool:
        """A part ended; the job ends with the last (they end together: same runtime).
        Whether the job ended (its end is then the caller's to record)."""
        self.metrics.part_ended(part, self.engine.now)
        if any(p.state is not JobState.FINISHED for p in rec.parts):
            self.journal.touch(rec)
            return False
        job = rec.job
        bad = [p.result.outcome for p in rec.parts if p.result.outcome != "ok"]
        job.result.outcome = bad[0] if bad else "ok"
        job.result.killed = any(p.result.killed for p in rec.parts)
        job.end = max(p.end for p in rec.parts)
        change_state(job, JobState.FINISHED)
        self.metrics.job_ended(job, self.engine.now, busy=False)
        return True

    def end_all(self, rec: JobRecord, outcome: str) -> None:
        """End every running part of a multi-site job now (deleted, a node failed)."""
        for part in list(rec.parts):
            if part.state is JobState.RUNNING:
                self.engine.terminate(part, outcome)

    def requeue_all(self, rec: JobRecord) -> None:
        """A node of one part failed (node_fail = requeue): every part stops and the job
        waits again as submitted (its own runtime and walltime), placed by the layer anew."""
        now = self.engine.now
        for part in rec.parts:
            if part.state is JobState.RUNNING:
                self.engine.requeue(part)  # back in the layer's queue: taken out again
                self.engine.withdraw(part)
                self.metrics.part_ended(part, now)
        job = rec.job
        assert rec.original is not None
        job.runtime, job.estimate = rec.original
        rec.parts, rec.original = [], None
        change_state(job, JobState.QUEUED)
        job.start = job.end = UNSET
        job.units, job.result.killed, job.result.started_by = [], False, ""
        job.machine = 0
        self.engine.enqueue(job)
        self.metrics.job_requeued(job, "node_fail", now, busy=False)
