"""A job's life as PBS users see it: submitted, held, released, altered, deleted, ended.

The engine makes every state transition; this module decides which one a request
asks for, keeps the PBS attributes beside it (hold types, comments, times,
execution times) and marks what changed for the journal. New jobs are
``submission``'s, requests on existing ones ``job_requests``'; this module holds the
rest of a job's life: execution times, the engine's hooks (started, ended, requeued),
jobs that run for real, dependencies settled and jobs that leave unrun.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import TYPE_CHECKING

from batchd.engine.core import Engine
from batchd.engine.machine import Timer
from batchd.execution.spec import EndReport
from batchd.metrics.live import LiveMetrics
from batchd.model.cores import nodes_used
from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.model.times import stamp
from batchd.server.arrays import label, parse_ref, subjob_key
from batchd.server.errors import bad_request, not_found
from batchd.server.records import (
    SEQ_DIGITS,
    JobRecord,
)
from batchd.server.service.admission import Admission
from batchd.server.service.dependencies import Dependencies, Verdict
from batchd.server.service.events import JobEvents
from batchd.server.service.job_requests import JobRequests
from batchd.server.service.journal import Journal
from batchd.server.service.multisite import Parts
from batchd.server.service.run_rules import ended_outcome
from batchd.server.service.submission import Submission
from batchd.server.subjobs import shown_subjob

if TYPE_CHECKING:
    from batchd.server.service.runs import Runs
    from batchd.site.config import SiteConfig

ENDINGS = {
    "ok": "Job run and finished",
    "walltime": "Job killed at its walltime",
    "cancelled": "Job deleted while running",
    "node_fail": "Job killed: a node it ran on went down",
    "resv_end": "Job killed: its reservation ended",
    "mem": "Job killed: over its mem",
    "failed": "Job run and failed",
}
EMULATED = "no process ran: the job was emulated"


class Lifecycle(Submission, JobRequests):
    def __init__(
        self,
        site: SiteConfig,
        engine: Engine,
        records: dict[int, JobRecord],
        journal: Journal,
        metrics: LiveMetrics,
        admission: Admission,
        dependencies: Dependencies,
        tz: dt.tzinfo,
        events: JobEvents,
        arrays: dict[int, JobRecord],
    ) -> None:
        self.site = site
        self.engine = engine
        self.records = records
        self.arrays = arrays  # unfinished job arrays (their subjobs are in ``records``)
        # Told when a subjob starts, ends, leaves unrun or goes back to its queue.
        self.on_subjob: list[Callable[[JobRecord], None]] = []
        self.journal = journal
        self.metrics = metrics
        self.admission = admission
        self.deps = dependencies
        self.tz = tz  # local time of the queue windows, for comments
        self.events = events
        self.signalled: dict[int, int] = {}  # job -> the signal qsig ended it with
        self.server = dependencies.server
        self.machine_names = [m.name for m in site.machine]
        self.seq = 0
        self._exec_timers: dict[int, Timer] = {}
        self.runs: Runs | None = None  # jobs that run for real, on executing machines
        self.parts = Parts(engine, metrics, journal, self.machine_names)
        self._end_comments: dict[int, str] = {}  # how a job that ran for real ended
        engine.on_start.append(self.started)
        engine.on_end.append(self.ended)
        engine.on_requeue.append(self.overflow_requeued)

    def job_id(self, key: int) -> str:
        """A job's id from its key (a subjob's ``12[3].server``)."""
        return f"{label(key)}.{self.server}"

    def jid(self, rec: JobRecord) -> str:
        """A job's id: ``12.server``, ``12[].server`` or ``12[3].server``."""
        return f"{rec.label()}.{self.server}"

    def find(self, text: str) -> JobRecord:
        """A job, array or subjob in memory or, finished, from the history (a copy: only to
        read). A subjob of a live array that is in neither is made up as qstat shows it."""
        try:
            ref = parse_ref(text, self.server, SEQ_DIGITS)
        except ValueError as exc:
            raise bad_request(str(exc)) from None
        unknown = not_found(f"Unknown Job Id {ref.text(self.server)}")
        history = self.journal.history
        if not ref.array:
            rec = self.records.get(ref.seq) or history.record(ref.seq)
            if rec is None or rec.array is not None:
                raise unknown  # an array is 12[], as in PBS
            return rec
        parent = self.arrays.get(ref.seq) or history.record(ref.seq)
        if parent is None or parent.array is None:
            raise unknown
        if ref.index is None:
            return parent
        if parent.array.position(ref.index) is None:
            raise unknown
        key = subjob_key(ref.seq, ref.index)
        found = self.records.get(key) or history.record(key)
        return found or shown_subjob(parent, ref.index, self.server, self.engine.now)

    def _subjob_moved(self, rec: JobRecord | None) -> None:
        if rec is not None and rec.subjob_index is not None:
            for fn in self.on_subjob:
                fn(rec)

    def machine_of(self, queue: str) -> int:
        """The machine a queue's jobs go to; under a grid the first machine's port, which
        hands every job to the grid layer (it places the job on a machine), unless the
        queue is an advance reservation's: its jobs run on the reservation's machine."""
        conf = self.admission.queue(queue)
        if self.site.grid_table is not None and self.admission.reserved(queue) is None:
            return 0
        return self.site.machine_index(conf.machine)

    # -- execution times ------------------------------------------------------------
    def arm_one(self, rec: JobRecord) -> None:
        """A job made waiting for its execution time (a subjob of a waiting array)."""
        self._arm_exec(rec)

    def _arm_exec(self, rec: JobRecord) -> None:
        assert rec.exec_time is not None
        when = max(rec.exec_time, self.engine.now)
        self._exec_timers[rec.seq] = self.engine.call_at(when, lambda: self._eligible(rec))

    def arm_waiting(self) -> None:
        """After a restart: the timers of jobs waiting for their execution time."""
        for rec in self.records.values():
            if rec.state is JobState.WAITING and rec.exec_time is not None:
                self._arm_exec(rec)

    def _eligible(self, rec: JobRecord) -> None:
        self._exec_timers.pop(rec.seq, None)
        if rec.state is not JobState.WAITING:
            return
        self._queue_again(rec)

    def _queue_again(self, rec: JobRecord) -> None:
        """A job that was held or waiting becomes eligible now."""
        now = self.engine.now
        rec.etime = now
        rec.comment = None
        job = rec.job
        if job.submit < rec.qtime:
            job.submit = rec.qtime
        if rec.exec_time is not None and job.submit < rec.exec_time:
            # Not eligible before its execution time: it queues from then on.
            job.submit = min(rec.exec_time, now)
        self.engine.release(job)
        self.journal.touch(rec)

    # -- engine hooks ---------------------------------------------------------------
    def started(self, job: Job) -> None:
        rec = self.records.get(job.id)
        if rec is not None and job is not rec.job:
            self.parts.started(rec, job)
            return
        self.metrics.job_started(job, self.engine.now)
        if rec is None:
            return
        nodes = nodes_used(job.units, self.site.machine[job.machine].slots_per_node)
        rec.comment = f"Job run at {stamp(job.start)} on {nodes} nodes"
        self.events.run(rec)
        self.journal.touch(rec)
        self._subjob_moved(rec)
        if self.deps.dependents.get(rec.seq):
            # Its ``after`` dependents go on once the pass that started it is over (a timer
            # now: released into the next pass, not into this one's starts).
            self.engine.call_at(
                self.engine.now, lambda: self._apply_verdicts(self.deps.started_settles(rec))
            )

    def ended(self, job: Job) -> None:
        rec = self.records.get(job.id)
        if rec is not None and job is not rec.job:
            if self.parts.ended(rec, job):
                self._record_end(rec)
            return
        self.metrics.job_ended(job, self.engine.now, busy=not (rec is not None and rec.parts))
        if rec is None:
            return
        self._record_end(rec)

    def _record_end(self, rec: JobRecord) -> None:
        job = rec.job
        signal = self.signalled.pop(job.id, None)
        if not job.external:
            rec.exit_status = None  # no process ran: no exit status to tell (EMULATED)
        if job.result.outcome == "overflow":
            self.journal.log(
                "job_overflow", job=self.job_id(job.id), queue=job.queue, action="kill"
            )
            rec.comment = (
                f"Job killed: {self.closed_what(job)} at {self.local(job.end)} "
                "while it ran (overflow)"
            )
        elif signal is not None:
            rec.comment = f"Job killed by signal {signal}"
        elif job.id in self._end_comments:
            rec.comment = self._end_comments.pop(job.id)
        else:
            rec.comment = ENDINGS.get(job.result.outcome, f"Job ended: {job.result.outcome}")
        if not job.external and job.start >= 0:
            rec.comment = f"{rec.comment} ({EMULATED})"
        self.events.ended(rec)
        self.journal.touch(rec)
        self._subjob_moved(rec)
        self._settle_dependents(rec)

    # -- jobs that run for real ---------------------------------------------------------
    def exited(self, rec: JobRecord, report: EndReport | None, why: str = "") -> None:
        """The processes of a job that runs for real ended (``report`` None: its supervisor
        was lost, ``why`` says what was found): it finishes, or goes back to its queue."""
        job = rec.job
        outcome, back, comment = ended_outcome(rec, report, why, self.site.server.node_fail)
        end = int(report.end) if report is not None else None
        if back is not None:
            job.result.stopping = "requeue"  # what the engine does at its end
            self.engine.exited(job, outcome, end)
            self.requeued(job, *back)
            return
        if comment is not None:
            self._end_comments[job.id] = comment
        self.engine.exited(job, outcome, end)

    def remember_comment(self, key: int, comment: str) -> None:
        """The comment a job that ran for real gets when its end is recorded."""
        self._end_comments[key] = comment

    def overflow_requeued(self, job: Job) -> None:
        """A gate put a job back at the end of its window (overflow = requeue)."""
        self.journal.log("job_overflow", job=self.job_id(job.id), queue=job.queue, action="requeue")
        self.requeued(job, "overflow", f"{self.closed_what(job)} while it ran (overflow)")

    def requeued(self, job: Job, reason: str, why: str, *, counted: bool = False) -> None:
        """After the engine put a running job back: counted, commented, saved. A job that
        runs for real is put back once its processes have ended (``exited``)."""
        rec = self.records.get(job.id)
        if job.state is JobState.EXITING:
            # Told once, with the first reason; a job already stopping to end just ends.
            if rec is not None and job.result.stopping == "requeue" and rec.requeue_why is None:
                rec.requeue_why = (reason, why)
                rec.comment = f"Stopping to requeue: {why}"
                self.journal.touch(rec)
            return
        if not counted:
            self.metrics.job_requeued(job, reason, self.engine.now)
        if rec is not None:
            rec.comment = f"Requeued: {why}"
            rec.etime = self.engine.now
            self.events.said(rec, f"Job requeued: {why}")
            self.journal.touch(rec)
            self._subjob_moved(rec)

    def node_failed(self, job: Job) -> None:
        """The job on a node that went down is killed or requeued; a multi-site job whole."""
        rec = self.records.get(job.id)
        if rec is not None and job is not rec.job and rec.parts:
            if self.site.server.node_fail == "kill":
                self.parts.end_all(rec, "node_fail")
                return
            self.parts.requeue_all(rec)
            self.requeued(rec.job, "node_fail", "a node it ran on went down", counted=True)
            return
        if self.site.server.node_fail == "kill":
            self.engine.terminate(job, "node_fail")
            return
        self.engine.requeue(job)
        self.requeued(job, "node_fail", "a node it ran on went down")

    def closed_what(self, job: Job) -> str:
        if any(q.name == job.queue and q.windowed for q in self.site.queues()):
            return f"queue {job.queue} closed"
        return "non-prime time ended"

    def local(self, t: int) -> str:
        """A time as the windows are written: local time of the calendar's zone."""
        return dt.datetime.fromtimestamp(t, self.tz).strftime("%Y-%m-%d %H:%M:%S")

    # -- dependencies ---------------------------------------------------------------
    def _settle_dependents(self, ended: JobRecord) -> None:
        self._apply_verdicts(self.deps.settled_by(ended))

    def _apply_verdicts(self, verdicts: list[tuple[JobRecord, Verdict]]) -> None:
        for rec, verdict in verdicts:
            if rec.state is not JobState.HELD:
                continue  # settled meanwhile, through another job it depends on
            if verdict == "release":
                self._release(rec, "s")
            elif verdict == "end":
                self.finish_unrun(rec, "dependency", "dependency can never be satisfied")
            else:
                self.journal.touch(rec)  # one dependency fewer to wait for

    def release_met(self, rec: JobRecord) -> None:
        """A job held for dependencies that were all met while the daemon was down (an
        ``after`` job started before the saved state showed it released)."""
        self._release(rec, "s")

    def finish_unrun(self, rec: JobRecord, outcome: str, comment: str) -> None:
        """A job that never ran leaves the system (deleted, its dependency failed, its
        reservation gone)."""
        timer = self._exec_timers.pop(rec.seq, None)
        if timer is not None:
            timer.cancel()
        self.engine.cancel(rec.job, outcome)
        rec.comment = comment
        self.events.left_unrun(rec, comment)
        self.metrics.job_left_unrun(rec.job.queue, outcome)
        self.journal.touch(rec)
        self._subjob_moved(rec)
        self._settle_dependents(rec)
