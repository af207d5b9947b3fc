"""Each job's history as PBS's logs would tell it, kept in the state database for ``tracejob``.

Every line has the emulated time, the log it would be in (``S`` server, ``L``
scheduler, ``M`` the MoM that ran it, ``A`` accounting) and PBS's wording. The
lines are saved with the commit of the change they describe and purged with the
job when it leaves the history.
"""

from __future__ import annotations

from collections.abc import Callable

from batchd.model.times import hms
from batchd.server.records import JobRecord
from batchd.server.service.journal import Journal

STATE_CODES = {"Q": 1, "H": 2, "W": 3}  # PBS's job_state numbers, in "enqueuing" lines


class JobEvents:
    def __init__(
        self,
        journal: Journal,
        server: str,
        exec_vnode: Callable[[JobRecord], str],
        now: Callable[[], int],
    ) -> None:
        self.journal = journal
        self.server = server
        self.exec_vnode = exec_vnode
        self.now = now

    def add(self, rec: JobRecord, source: str, message: str) -> None:
        self.journal.event(rec.seq, self.now(), source, message)

    def who(self, user: str) -> str:
        return f"{user}@{self.server}"

    # -- what happens to a job ---------------------------------------------------------
    def queued(self, rec: JobRecord, by: str) -> None:
        job = rec.job
        state = STATE_CODES.get(job.state.value, 1)
        self.add(rec, "S", f"enqueuing into {job.queue}, state {state} hop 1")
        self.add(
            rec,
            "S",
            f"Job Queued at request of {self.who(by)}, owner = {self.who(rec.owner)}, "
            f"job name = {job.name}, queue = {job.queue}",
        )
        self.add(rec, "A", f"queue={job.queue}")

    def run(self, rec: JobRecord) -> None:
        """The job's start: its exec_vnode as qstat -f shows it."""
        vnodes = self.exec_vnode(rec)
        self.add(rec, "L", "Job run")
        self.add(rec, "S", f"Job Run at request of Scheduler@{self.server} on exec_vnode {vnodes}")
        self.add(rec, "M", "Started")

    def ended(self, rec: JobRecord) -> None:
        """The job's end as MoM, the server and accounting tell it. An emulated job ran no
        process: it has no Exit_status, and its lines say so instead of showing one."""
        job = rec.job
        used = hms(max(job.end - job.start, 0)) if job.start >= 0 else hms(0)
        if job.result.outcome == "walltime":
            self.add(rec, "M", f"walltime {used} exceeded limit {hms(job.estimate)}")
        if rec.exit_status is not None:
            status = f"Exit_status={rec.exit_status}"
        else:
            status = "run emulated" if job.start >= 0 else "never ran"
        self.add(rec, "S", f"{status} resources_used.walltime={used}")
        self.add(
            rec,
            "A",
            f"user={rec.owner} queue={job.queue} ctime={rec.ctime} qtime={rec.qtime} "
            f"etime={rec.etime if rec.etime is not None else 0} start={max(job.start, 0)} "
            f"end={job.end} {status} resources_used.walltime={used}",
        )

    def said(self, rec: JobRecord, message: str) -> None:
        """A server line in the job's history (holds, alterations, comments...)."""
        self.add(rec, "S", message)

    def left_unrun(self, rec: JobRecord, why: str) -> None:
        self.add(rec, "S", why)
        self.add(rec, "S", f"dequeuing from {rec.job.queue}, state 5")
