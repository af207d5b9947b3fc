"""What a request changes in an existing job: qdel, qhold, qrls and qalter of a plain
job or subjob (``Lifecycle`` is a ``JobRequests``; job arrays are ``arrays``')."""

from __future__ import annotations

from typing import TYPE_CHECKING

from batchd.engine.core import Engine
from batchd.model.states import JobState
from batchd.model.utility import Utility
from batchd.server.errors import conflict
from batchd.server.jobresources import shape_job
from batchd.server.records import JobRecord, drop_holds, merge_holds
from batchd.server.schemas import JobAlter
from batchd.server.service.access import Caller, may_act_on, may_hold
from batchd.server.service.admission import Admission
from batchd.server.service.events import JobEvents
from batchd.server.service.journal import Journal
from batchd.server.service.molding import altered_mold
from batchd.server.service.multisite import Parts
from batchd.server.service.resources import ResourceRules
from batchd.server.service.run_rules import check_move, moved

if TYPE_CHECKING:
    from batchd.site.config import SiteConfig


class JobRequests:
    site: SiteConfig
    engine: Engine
    journal: Journal
    admission: Admission
    events: JobEvents
    parts: Parts

    if TYPE_CHECKING:

        def find(self, text: str) -> JobRecord: ...

        def jid(self, rec: JobRecord) -> str: ...

        def machine_of(self, queue: str) -> int: ...

        def finish_unrun(self, rec: JobRecord, outcome: str, comment: str) -> None: ...

        def _arm_exec(self, rec: JobRecord) -> None: ...

        def _queue_again(self, rec: JobRecord) -> None: ...

    def delete(self, caller: Caller, text: str) -> JobRecord:
        return self.delete_record(caller, self.find(text))

    def delete_record(self, caller: Caller, rec: JobRecord) -> JobRecord:
        may_act_on(caller, rec.owner, "delete", self.jid(rec))
        if rec.state is JobState.FINISHED:
            raise conflict(f"job {self.jid(rec)} has already finished")
        if rec.state is JobState.EXITING:
            raise conflict(
                f"Request invalid for state of job {self.jid(rec)} (it is exiting: its "
                "processes are being stopped)"
            )
        self.events.said(rec, f"Job deleted at request of {self.events.who(caller.user)}")
        if rec.state is JobState.RUNNING and rec.parts:
            self.parts.end_all(rec, "cancelled")
        elif rec.state is JobState.RUNNING:
            self.engine.terminate(rec.job, "cancelled")
        else:
            self.finish_unrun(rec, "cancelled", f"Job deleted by {caller.user}")
        return rec

    def hold(self, caller: Caller, text: str, types: str) -> JobRecord:
        rec = self.find(text)
        may_hold(caller, rec.owner, types, "hold", self.jid(rec))
        if rec.state in (JobState.RUNNING, JobState.EXITING, JobState.FINISHED):
            raise conflict(
                f"job {self.jid(rec)} is {rec.state.name.lower()}; only queued, "
                "waiting or held jobs can be held"
            )
        self.engine.hold(rec.job)
        rec.hold_types = merge_holds(rec.hold_types, types)
        rec.comment = f"Job held by {caller.user}"
        self.events.said(rec, f"Holds {types} set at request of {self.events.who(caller.user)}")
        self.journal.touch(rec)
        return rec

    def release(self, caller: Caller, text: str, types: str) -> JobRecord:
        rec = self.find(text)
        may_hold(caller, rec.owner, types, "release", self.jid(rec))
        if rec.state is not JobState.HELD:
            raise conflict(f"job {self.jid(rec)} is not held")
        who = self.events.who(caller.user)
        self.events.said(rec, f"Holds {types} released at request of {who}")
        self._release(rec, types)
        return rec

    def release_record(self, rec: JobRecord, types: str) -> None:
        """Drop holds of a held job (a subjob, as its array is released)."""
        self._release(rec, types)

    def _release(self, rec: JobRecord, types: str) -> None:
        rec.hold_types = drop_holds(rec.hold_types, types)
        if "s" in types:
            rec.depend = []  # met, or a manager released the dependency hold
        self.journal.touch(rec)
        if rec.hold_types:
            return
        if rec.exec_time is not None and rec.exec_time > self.engine.now:
            self.engine.defer(rec.job)
            rec.comment = None
            self._arm_exec(rec)
            return
        self._queue_again(rec)

    def alter(self, caller: Caller, text: str, body: JobAlter) -> JobRecord:
        return self.alter_record(caller, self.find(text), body)

    def alter_record(
        self, caller: Caller, rec: JobRecord, body: JobAlter, *, in_engine: bool = True
    ) -> JobRecord:
        """Change a waiting job (``in_engine``: it is in its queue when queued; an array's
        own record never is)."""
        may_act_on(caller, rec.owner, "alter", self.jid(rec))
        if rec.state not in (JobState.QUEUED, JobState.HELD, JobState.WAITING):
            raise conflict(
                f"job {self.jid(rec)} is {rec.state.name.lower()}; qalter changes "
                "queued, held or waiting jobs only"
            )
        job = rec.job
        qname = body.queue if body.queue is not None else job.queue
        nodes = body.nodes if body.nodes is not None else job.width
        walltime = body.walltime if body.walltime is not None else job.estimate
        runtime = rec.runtime_given if rec.runtime_given is not None else walltime
        mold = altered_mold(job, body.nodes, body.nodes_max, body.speedup, walltime, runtime)
        self.admission.queue(qname)  # an unknown queue is refused before anything else
        reshaped = body.nodes is not None or mold is not None
        resources = ResourceRules(self.site).altered(
            rec.resources, reshaped, nodes, mold is not None, job.machine, self.machine_of(qname)
        )
        if resources is not None:
            nodes = resources.width
        self.admission.check(qname, nodes if mold is None else mold.high, walltime, self.engine.now)
        if qname != job.queue:
            self.admission.check_authorized(qname, rec.owner)
            self.admission.check_queued(qname, rec.owner, rec.seq)
        check_move(rec, self.site, self.machine_of(qname), mold is not None)
        queued = in_engine and job.state is JobState.QUEUED
        if queued:
            self.engine.withdraw(job)
        job.queue = qname
        job.machine = self.machine_of(qname)
        job.width = nodes if mold is None else mold.low
        job.runtime = runtime
        job.estimate = walltime
        job.mold = mold
        rec.resources = resources
        shape_job(job, resources)
        moved(rec, self.site, job.machine)
        if body.priority is not None:
            job.priority = body.priority
        if body.name is not None:
            job.name = body.name
        if body.utility is not None:
            job.utility = Utility((t, v) for t, v in body.utility)
        elif "utility" in body.model_fields_set:  # "utility": null takes the function away
            job.utility = None
        if queued:
            self.engine.enqueue(job)
        self.events.said(rec, f"Job Modified at request of {self.events.who(caller.user)}")
        self.journal.touch(rec)
        return rec
