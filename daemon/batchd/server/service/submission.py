"""New jobs: a submission validated whole before anything changes, then accepted
(saved, then queued, held or waiting for its execution time); a trace job injected
by a replay (``Lifecycle`` is a ``Submission``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.engine import transitions
from batchd.engine.core import Engine
from batchd.metrics.live import LiveMetrics
from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.model.times import MAX_DURATION, hms, parse_duration
from batchd.model.utility import Utility
from batchd.server import slurm_paths
from batchd.server.errors import bad_request, forbidden
from batchd.server.records import JobRecord, merge_holds
from batchd.server.schemas import JobSubmit
from batchd.server.service.access import Caller
from batchd.server.service.admission import Admission
from batchd.server.service.dependencies import Dependencies
from batchd.server.service.events import JobEvents
from batchd.server.service.journal import Journal
from batchd.server.service.molding import submitted_mold
from batchd.server.service.resources import ResourceRules
from batchd.server.service.run_rules import run_for_real

if TYPE_CHECKING:
    from batchd.site.config import SiteConfig

RUNTIME_VAR = "BATCHD_RUNTIME"


def check_slurm_paths(body: JobSubmit) -> None:
    """A job from sbatch: its output and error paths' patterns are ones Slurm knows."""
    for given, option in ((body.output_path, "--output"), (body.error_path, "--error")):
        if given is not None:
            try:
                slurm_paths.check(given, option)
            except ValueError as exc:
                raise bad_request(str(exc)) from None


class Submission:
    site: SiteConfig
    engine: Engine
    records: dict[int, JobRecord]
    journal: Journal
    metrics: LiveMetrics
    admission: Admission
    deps: Dependencies
    events: JobEvents
    seq: int

    if TYPE_CHECKING:

        def machine_of(self, queue: str) -> int: ...

        def _arm_exec(self, rec: JobRecord) -> None: ...

    def owner_of(self, caller: Caller, body: JobSubmit) -> str:
        owner = body.user or caller.user
        if owner != caller.user and not caller.at_least("manager"):
            raise forbidden(f"{caller.user} may not submit jobs as {owner}")
        return owner

    def submit(self, caller: Caller, body: JobSubmit) -> JobRecord:
        owner = self.owner_of(caller, body)
        rec = self.new_record(body, owner, caller.user)
        self._accept(rec)
        self.events.queued(rec, caller.user)
        return rec

    def new_record(self, body: JobSubmit, owner: str, submitter: str) -> JobRecord:
        """Validate a submission completely before anything changes."""
        now = self.engine.now
        qname = body.queue or self.site.default_queue
        queue = self.admission.queue(qname)
        resources = ResourceRules(self.site).request(body, self.machine_of(queue.name))
        width = body.nodes if resources is None else resources.width
        widest = max(width, body.nodes_max or 0)  # a moldable job's range is checked whole
        _, walltime = self.admission.check(qname, widest, body.walltime, now)
        self.admission.check_authorized(qname, owner)
        self.admission.check_queued(qname, owner, 0)
        runtime_given: int | None = None
        if RUNTIME_VAR in body.variables:
            text = body.variables[RUNTIME_VAR]
            try:
                runtime_given = parse_duration(text.strip())
            except ValueError:
                raise bad_request(
                    f"{RUNTIME_VAR}={text!r}: give the emulated runtime in seconds or HH:MM:SS"
                ) from None
            if runtime_given > MAX_DURATION:
                raise bad_request(
                    f"{RUNTIME_VAR}={text!r}: the emulated runtime must be at most "
                    f"{hms(MAX_DURATION)} (3650 days)"
                )
        runtime = runtime_given if runtime_given is not None else walltime
        mold = submitted_mold(body.nodes, body.nodes_max, body.speedup, walltime, runtime)
        if body.front_end == "slurm":
            check_slurm_paths(body)
        depend = self.deps.singleton(self.deps.parse(body.depend), owner, body.name)
        job = Job(
            id=self.seq + 1,
            submit=now,
            width=width,
            estimate=walltime,
            runtime=runtime,
            user=owner,
            queue=qname,
            name=body.name,
            machine=self.machine_of(qname),
            priority=body.priority,
            utility=None if body.utility is None else Utility((t, v) for t, v in body.utility),
            mold=mold,
        )
        rec = JobRecord(
            job=job,
            owner=owner,
            ctime=now,
            qtime=now,
            exec_time=body.exec_time,
            depend=self.deps.pending(depend),
            depend_text=body.depend,
            variables=dict(body.variables),
            script=body.script,
            runtime_given=runtime_given,
            resources=resources,
            rerunable=body.rerunable,
            front_end=body.front_end,
            workdir=body.workdir,
            account=body.account,
            mail_points=body.mail_points,
            mail_users=body.mail_users,
            slurm=body.slurm.model_dump() if body.slurm is not None else None,
        )
        if body.front_end == "pbs":
            rec.variables.setdefault("PBS_O_QUEUE", qname)
        if self.site.machine[job.machine].executes:
            run_for_real(rec, body, self.site, submitter)
        if body.hold:
            rec.hold_types = "u"
        if rec.depend:
            rec.hold_types = merge_holds(rec.hold_types, "s")
            rec.comment = "waiting for dependencies"
        return rec

    def _register(self, rec: JobRecord) -> None:
        self.seq = rec.seq
        self.journal.save_meta(seq=self.seq)
        self.records[rec.seq] = rec
        self.deps.index(rec)
        self.journal.touch(rec)

    def _accept(self, rec: JobRecord) -> None:
        """A validated job joins: saved, then queued, held or waiting for its time."""
        self._register(rec)
        job = rec.job
        now = self.engine.now
        # A new job's first state is its state at creation: it was never queued.
        if rec.hold_types:
            transitions.first_state(job, JobState.HELD)
            rec.comment = rec.comment or "Job held by user"
        elif rec.exec_time is not None and rec.exec_time > now:
            transitions.first_state(job, JobState.WAITING)
            self._arm_exec(rec)
        else:
            rec.etime = now
            self.engine.submit(job)

    def inject(self, job: Job, owner: str) -> JobRecord:
        """A trace job arrives (from a timer, at its submit time), in the default queue."""
        now = self.engine.now
        queue = self.site.default_queue
        new = Job(
            id=self.seq + 1,
            submit=now,
            width=job.width,
            estimate=job.estimate,
            runtime=job.runtime,
            user=owner,
            queue=queue,
            name=job.name or f"swf{job.id}",
            machine=self.machine_of(queue),
            utility=job.utility,
            priority_class=job.priority_class,
            mold=job.mold,
        )
        rec = JobRecord(
            job=new, owner=owner, ctime=now, qtime=now, etime=now, runtime_given=job.runtime
        )
        self._register(rec)
        self.events.queued(rec, owner)
        self.metrics.job_submitted(new.queue, owner)
        self.engine.submit(new)
        return rec
