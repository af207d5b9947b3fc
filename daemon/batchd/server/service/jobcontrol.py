"""qrerun, qmove and qsig, and the end of a reservation's jobs.

- ``rerun``: a running job goes back to its queue to run again from the start (one that
  runs for real once its processes are stopped: SIGTERM, SIGKILL after the kill delay);
  a job submitted with ``qsub -r n`` is refused, as PBS refuses it.
- ``move``: a queued, held or waiting job goes to another queue, checked against that
  queue's limits (and, onto a machine that runs scripts, against its owner's account)
  as a submission is; a running job is refused.
- ``signal``: the signal is recorded in the job's history. A job that runs for real gets
  it in every one of its processes and ends as they do. An emulated job has no
  processes: SIGKILL and SIGTERM end it; every other signal, SIGNULL included, is only
  recorded. ``suspend``, ``resume``, ``admin-suspend`` and ``admin-resume`` are refused:
  batchd does not suspend jobs.
"""

from __future__ import annotations

from batchd.model.job import Job
from batchd.model.reservation import Reservation
from batchd.model.states import PENDING_STATES, JobState
from batchd.server.errors import ApiError, bad_request, conflict
from batchd.server.jobresources import JobResources, shape_job
from batchd.server.records import JobRecord
from batchd.server.service.access import Caller, may_act_on
from batchd.server.service.lifecycle import Lifecycle
from batchd.server.service.resources import ResourceRules
from batchd.server.service.run_rules import check_move, moved
from batchd.server.signals import BY_NUMBER, ENDING, SIGNALS, SUSPENDING

BAD_STATE = "Request invalid for state of job"
INVALID = "Invalid request"  # PBSE_IVALREQ: what PBS answers for a subjob it does not act on


def parse_signal(text: str) -> tuple[str, int]:
    """``SIGKILL``, ``KILL`` or ``9`` -> ("KILL", 9); PBS's message for anything else
    (names are upper case, as PBS takes them; qsig upper-cases what it is given)."""
    word = text.strip()
    if word.isdigit():
        number = int(word)
        if number in BY_NUMBER:
            return BY_NUMBER[number], number
    else:
        name = word.removeprefix("SIG")
        if name in SIGNALS:
            return name, SIGNALS[name]
    raise bad_request(
        f"Unknown/illegal signal name {text!r}: give a name (SIGKILL or KILL) or a number 0-31"
    )


class JobControl:
    def __init__(self, lifecycle: Lifecycle) -> None:
        self.life = lifecycle
        self.engine = lifecycle.engine
        self.events = lifecycle.events
        self.journal = lifecycle.journal

    def running_subjobs(self, parent: JobRecord) -> list[JobRecord]:
        """An array's running subjobs, in index order."""
        seq = parent.seq
        found = [
            r
            for r in self.life.records.values()
            if r.subjob_index is not None and r.pbs_seq == seq and r.state is JobState.RUNNING
        ]
        return sorted(found, key=lambda r: r.seq)

    def _each_running(self, parent: JobRecord, what: str) -> list[JobRecord]:
        """qrerun and qsig of an array act on its running subjobs; none is a refusal."""
        running = self.running_subjobs(parent)
        if not running:
            raise conflict(
                f"{BAD_STATE} {self.life.jid(parent)} (no subjob of it is running; {what})"
            )
        return running

    def _running(self, rec: JobRecord, what: str) -> None:
        if rec.state is not JobState.RUNNING:
            state = rec.state.name.lower()
            raise conflict(f"{BAD_STATE} {self.life.jid(rec)} (it is {state}; {what})")

    # -- qrerun -----------------------------------------------------------------------
    def rerun(self, caller: Caller, text: str) -> JobRecord:
        rec = self.life.find(text)
        jid = self.life.jid(rec)
        may_act_on(caller, rec.owner, "rerun", jid)
        if rec.array is not None:
            for sub in self._each_running(rec, "qrerun requeues running jobs"):
                self._rerun(caller, sub)
            return rec
        self._running(rec, "qrerun requeues running jobs")
        if not rec.rerunable:
            raise conflict(f"job is not rerunnable {jid} (it was submitted with qsub -r n)")
        self._rerun(caller, rec)
        return rec

    def _rerun(self, caller: Caller, rec: JobRecord) -> None:
        self.events.said(rec, f"Job Rerun at request of {self.events.who(caller.user)}")
        if rec.parts:
            self.life.parts.requeue_all(rec)
            self.life.requeued(rec.job, "rerun", f"rerun by {caller.user}", counted=True)
        else:
            self.engine.requeue(rec.job)
            self.life.requeued(rec.job, "rerun", f"rerun by {caller.user}")

    # -- qmove ------------------------------------------------------------------------
    def move(self, caller: Caller, text: str, queue: str) -> JobRecord:
        rec = self.life.find(text)
        jid = self.life.jid(rec)
        may_act_on(caller, rec.owner, "move", jid)
        if rec.subjob_index is not None:
            raise bad_request(f"{INVALID} {jid} (qmove moves jobs and job arrays, not subjobs)")
        if rec.state not in PENDING_STATES or (rec.array is not None and rec.array.begun):
            state = "begun" if rec.array is not None else rec.state.name.lower()
            raise conflict(
                f"{BAD_STATE} {jid} (it is {state}; qmove moves queued, held or waiting jobs)"
            )
        job = rec.job
        if queue == job.queue:
            return rec
        try:
            self.life.admission.queue(queue)
        except ApiError:
            raise ApiError(404, "not_found", f"Unknown queue {queue}") from None
        moldable = job.mold is not None
        resources = ResourceRules(self.life.site).altered(
            rec.resources, moldable, job.width, moldable, job.machine, self.life.machine_of(queue)
        )
        width = resources.width if resources is not None else job.width
        walltime = job.estimate
        self.life.admission.check(
            queue, width if job.mold is None else job.mold.high, walltime, self.engine.now
        )
        self.life.admission.check_authorized(queue, rec.owner)
        self.life.admission.check_queued(queue, rec.owner, rec.seq)
        check_move(rec, self.life.site, self.life.machine_of(queue), moldable)
        old = job.queue
        moving = [rec]
        if rec.array is not None:  # the array, and each of its subjobs made so far
            seq = rec.seq
            moving += [
                r for r in self.life.records.values()
                if r.subjob_index is not None and r.pbs_seq == seq
            ]  # fmt: skip
        for each in moving:
            self._move(each, queue, resources, in_engine=each.array is None)
        self.events.said(
            rec, f"Job moved from {old} to {queue} at request of {self.events.who(caller.user)}"
        )
        return rec

    def _move(
        self, rec: JobRecord, queue: str, resources: JobResources | None, *, in_engine: bool
    ) -> None:
        """Into ``queue``, with its resources as they are on that queue's machine."""
        job = rec.job
        queued = in_engine and job.state is JobState.QUEUED
        if queued:
            self.engine.withdraw(job)
        job.queue = queue
        job.machine = self.life.machine_of(queue)
        if resources is not None:
            rec.resources = resources
            job.width = resources.width
            shape_job(job, resources)
        moved(rec, self.life.site, job.machine)
        if queued:
            self.engine.enqueue(job)
        self.journal.touch(rec)

    # -- qsig -------------------------------------------------------------------------
    def signal(self, caller: Caller, text: str, signal: str, target: str = "all") -> JobRecord:
        rec = self.life.find(text)
        jid = self.life.jid(rec)
        may_act_on(caller, rec.owner, "signal", jid)
        if signal in SUSPENDING:
            raise conflict(
                f"{signal}: batchd does not emulate suspended jobs (use qhold on a queued job, "
                "or qrerun to put a running one back in its queue)"
            )
        name, number = parse_signal(signal)
        if rec.array is not None:
            for sub in self._each_running(rec, "qsig signals running jobs"):
                self._signal(caller, sub, name, number, target)
            return rec
        self._running(rec, "qsig signals running jobs")
        self._signal(caller, rec, name, number, target)
        return rec

    def _signal(self, caller: Caller, rec: JobRecord, name: str, number: int, target: str) -> None:
        who = self.events.who(caller.user)
        self.events.said(rec, f"Job sent signal SIG{name} at request of {who}")
        runs = self.life.runs
        if rec.job.external and runs is not None:
            runs.signal(rec, number, target)  # to its processes; it ends as it will
            self.journal.touch(rec)
            return
        if name not in ENDING:
            self.journal.touch(rec)
            return
        self.events.add(rec, "M", f"Terminated by signal SIG{name}")
        self.life.signalled[rec.seq] = number
        if rec.parts:
            self.life.parts.end_all(rec, "signal")
        else:
            self.engine.terminate(rec.job, "signal")

    # -- reservations -----------------------------------------------------------------
    def reservation_closed(self, resv: Reservation, waiting: list[Job]) -> None:
        """A reservation ended or was deleted: the jobs of its queue that never ran leave
        (its running ones were killed by the engine already)."""
        why = f"Job deleted: its reservation R{resv.id} ended"
        for rec in list(self.life.records.values()):
            if rec.job.queue == resv.queue and rec.state in PENDING_STATES:
                self.life.finish_unrun(rec, "resv_end", why)
