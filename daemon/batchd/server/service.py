"""The batch system behind the API: jobs, holds, dependencies, nodes, reservations, policy.

It owns the engine (the same one replays use), the clock and the store. Every
operation first brings the engine up to the clock's now, then changes state,
runs a scheduling pass and commits, so what a client is told has been saved.
Permission checks live here too, next to the state they protect.
"""

from __future__ import annotations

import datetime as dt
import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import structlog

from batchd.engine.clock import Clock
from batchd.engine.core import Engine, MachineState, Timer
from batchd.metrics.live import LiveMetrics
from batchd.model.calendar import PrimeCalendar
from batchd.model.job import UNSET, Job
from batchd.model.machine import Grid, Machine
from batchd.model.reservation import Reservation, ResvState
from batchd.model.states import JobState, change_state
from batchd.sched.forecast import running_profile
from batchd.sched.policy import Policy
from batchd.sched.profile import NEVER
from batchd.sched.registry import (
    PolicyError,
    get_spec,
    make_policy,
    parse_params,
    policy_names,
)
from batchd.server.config import QueueConfig, SiteConfig
from batchd.server.errors import ApiError, bad_request, conflict, forbidden, not_found
from batchd.server.records import (
    EXIT_STATUS,
    JobRecord,
    drop_holds,
    merge_holds,
    parse_depend,
    parse_job_id,
    resv_from_row,
    resv_to_row,
)
from batchd.server.schemas import (
    JobAlter,
    JobSubmit,
    NodeChange,
    ReservationCreate,
    SchedulerChange,
    parse_duration,
)
from batchd.server.store import Saved, Store
from batchd.server.windows import (
    DAY,
    HORIZON,
    QueueWindow,
    longest_opening,
    make_window,
    next_fit,
)

Role = Literal["user", "operator", "manager"]
RANK = {"user": 0, "operator": 1, "manager": 2}
RUNTIME_VAR = "BATCHD_RUNTIME"
HOLD_NEEDS: dict[str, Role] = {"u": "user", "o": "operator", "s": "manager"}
# Exit status of a job killed at its queue window's close: 256 + SIGTERM, as for a
# running job that qdel ends (records.EXIT_STATUS has no entry for "overflow").

log = structlog.get_logger("batchd")


@dataclass(frozen=True)
class Caller:
    user: str
    role: Role

    def at_least(self, role: Role) -> bool:
        return RANK[self.role] >= RANK[role]


class BatchService:
    def __init__(
        self,
        site: SiteConfig,
        clock: Clock,
        store: Store | None = None,
        *,
        daemon_user: str = "root",
        speed: float = 1.0,
        realtime: bool = True,
    ) -> None:
        if len(site.machine) != 1:
            names = ", ".join(m.name for m in site.machine)
            raise ValueError(f"a daemon runs one machine; the configuration defines {names}")
        self.site = site
        self.clock = clock
        self.store = store
        self.daemon_user = daemon_user
        self.speed = speed
        self.realtime = realtime
        self.server = site.server_name
        self.mconf = site.machine[0]
        self.node_names = self.mconf.node_names()
        self.node_index = {n: i for i, n in enumerate(self.node_names)}
        self.records: dict[int, JobRecord] = {}
        self._dirty: dict[int, JobRecord] = {}
        self._saved_now: int | None = None
        self.parked: dict[int, JobRecord] = {}  # queued in a stopped queue
        self.dependents: dict[int, list[int]] = {}  # job -> jobs that wait for it
        self.reservations: dict[int, Reservation] = {}
        self._resv_saved: dict[int, ResvState] = {}
        self.node_states: dict[int, tuple[str, str | None]] = {}
        self.seq = 0
        self.resv_seq = 0
        self.switches: list[dict[str, Any]] = []
        self.policy_name = site.server.policy
        self.policy_params = site.server.params()
        self.started = clock.now()
        self.replay: Any = None  # a ReplayFeed when a trace is injected
        self.meta: dict[str, Any] = {}
        self.on_change: list[Callable[[], None]] = []
        self._exec_timers: dict[int, Any] = {}
        self._plan_cache: tuple[int, list[tuple[Job, int]]] | None = None
        self._version = 0
        self.calendar: PrimeCalendar = site.calendar()
        # Queue windows (docs/operations.md): the windowed queues' windows, one engine
        # timer per windowed queue at its next change or job deadline, and per queue
        # the (deadline, seq) of its jobs in the scheduler that must end by the close.
        self.windows: dict[str, QueueWindow] = {}
        self._wtimers: dict[str, Timer] = {}
        self._deadlines: dict[str, list[tuple[int, int]]] = {}
        self._wnext: dict[str, int | None] = {}  # each windowed queue's next change
        mconf = site.metrics
        self.metrics = LiveMetrics(
            queues=[q.name for q in site.queues()],
            now=clock.now(),
            window=mconf.utilization_window,
            per_user=mconf.per_user,
            max_users=mconf.max_users,
        )
        self.engine = self._new_engine()
        self._build_windows()
        self._window_all()

    # -- set-up -------------------------------------------------------------------
    def _new_engine(self) -> Engine:
        grid = Grid([Machine(self.mconf.name, self.mconf.nodes, self.mconf.description)])
        engine = Engine(grid, [make_policy(self.policy_name, self.policy_params)], kill=True)
        engine.now = self.clock.now()
        for m in engine.machines:
            m.now = engine.now
        engine.on_start.append(self._started)
        engine.on_end.append(self._ended)
        engine.on_requeue.append(self._overflow_requeued)
        self._prepare_policy(engine.machines[0].policy)
        self._wtimers = {}  # the timers of an older engine are gone with it
        self._deadlines = {}
        self._wnext = {}
        return engine

    @property
    def machine(self) -> MachineState:
        return self.engine.machines[0]

    @property
    def now(self) -> int:
        return self.engine.now

    def restore(self, saved: Saved) -> None:
        """Rebuild the state saved before a stop or a crash; the clock goes on from there."""
        meta = saved.meta
        identity = meta.get("machine")
        if identity is not None and identity != self.machine_identity():
            raise ValueError(
                f"the state was saved by server {identity['server']} for machines "
                f"{identity['machines']}; this config has {self.machine_identity()['machines']} "
                f"(server {self.server}): use that config, or another --state file"
            )
        self.meta = dict(meta)
        self.seq = int(meta.get("seq", 0))
        self.resv_seq = int(meta.get("resv_seq", 0))
        self.switches = list(meta.get("switches", []))
        self.started = int(meta.get("started", self.started))
        if "policy" in meta:
            self.policy_name = meta["policy"]
            self.policy_params = dict(meta.get("params", {}))
            self.engine = self._new_engine()
        saved_now = int(meta.get("now", self.engine.now))
        if saved_now > self.clock.now():
            raise ValueError(
                f"the state was saved at emulated time {saved_now}, after the clock's "
                f"{self.clock.now()}"
            )
        # While the daemon was down (real-time mode) running jobs went on and
        # ended at their times, but nothing could start: the scheduler was down.
        engine = self.engine
        now = engine.now
        records = [JobRecord.from_row(r) for r in saved.jobs]
        for rec in records:
            self.records[rec.seq] = rec
            self._index_depend(rec)
        running = [r for r in records if r.state is JobState.RUNNING]
        overdue: list[JobRecord] = []
        requeued: list[JobRecord] = []
        for rec in running:
            job = rec.job
            killed = job.runtime > job.estimate
            end = job.start + (job.estimate if killed else max(job.runtime, 0))
            close = self._close_after_start(job)
            if close is not None and close < end and close <= now:
                # Its queue's window closed while the daemon was down: overflow then.
                if self.site.server.overflow == "kill":
                    job.end = close
                    job.outcome = "overflow"
                    change_state(job, JobState.FINISHED)
                    overdue.append(rec)
                else:
                    change_state(job, JobState.QUEUED)
                    job.start = job.end = UNSET
                    job.nodes = []
                    job.killed = False
                    job.started_by = ""
                    rec.etime = close
                    requeued.append(rec)
                self._touch(rec)
            elif end <= now:
                job.killed = killed
                job.end = end
                job.outcome = "walltime" if killed else "ok"
                change_state(job, JobState.FINISHED)
                overdue.append(rec)
            else:
                engine.restore_running(job)
        for row in saved.reservations:
            resv = resv_from_row(row)
            self.reservations[resv.id] = resv
            self._resv_saved[resv.id] = resv.state
            if resv.state is not ResvState.FINISHED and resv.end <= now:
                resv.state = ResvState.FINISHED  # its window passed while the daemon was down
            elif resv.state is ResvState.RUNNING:
                engine.add_reservation(resv)
        for machine, node, state, comment in saved.nodes:
            if machine == 0 and 0 <= node < len(self.node_names):
                self.node_states[node] = (state, comment)
                engine.node_out(0, node)
        for resv in self.reservations.values():
            if resv.state is ResvState.CONFIRMED:
                resv.start = max(resv.start, now)  # due while the daemon was down: opens now
                engine.add_reservation(resv)
        waiting = sorted(
            (r for r in records if r.state is JobState.QUEUED),
            key=lambda r: (r.job.submit, r.seq),
        )
        for rec in waiting:
            self._to_queue(rec, arriving=False)
        for rec in records:
            if rec.state is JobState.WAITING and rec.exec_time is not None:
                self._arm_exec(rec)
        for rec in overdue:
            self._ended(rec.job)
        for rec in requeued:
            self.metrics.job_requeued(rec.job.queue, "overflow", now, rec.job.width)
        self._window_all()
        engine.instant(now)
        observe = self.metrics.tally.observe
        for rec in records:
            job = rec.job
            observe(rec.seq, job.queue, rec.state.value, job.width * job.estimate, rec.owner)
        self.metrics.set_allocated(now, self.busy_nodes())
        log.info(
            "state_restored",
            jobs=len(records),
            running=len(running),
            queued=len(waiting),
            overflow=len(requeued) + sum(r.job.outcome == "overflow" for r in overdue),
            now=engine.now,
        )
        self.commit()

    # -- time ---------------------------------------------------------------------
    def sync(self) -> None:
        """Process every event up to the clock's now."""
        now = self.clock.now()
        nxt = self.engine.next_event_time()
        if now > self.engine.now or (nxt is not None and nxt <= now):
            self.metrics.timed(lambda: self.engine.advance_to(now))
            self._version += 1

    def next_event_time(self) -> int | None:
        return self.engine.next_event_time()

    def tick(self) -> None:
        self.sync()
        self.commit()

    def settle(self) -> None:
        """After a change: a scheduling pass at now, then save."""
        self.metrics.timed(self.engine.schedule_pass)
        self._version += 1
        self.commit()

    def commit(self) -> None:
        store = self.store
        self.flush_tally()
        if store is not None:
            for rec in self._dirty.values():
                store.put_job(rec.to_row())
        self._dirty.clear()
        for resv in self.reservations.values():
            if self._resv_saved.get(resv.id) is not resv.state:
                self._resv_saved[resv.id] = resv.state
                if store is not None:
                    store.put_reservation(resv_to_row(resv))
        if store is not None:
            if self.engine.now != self._saved_now:
                self._saved_now = self.engine.now
                store.put_meta("now", self.engine.now)
            store.commit()
        for fn in self.on_change:
            fn()

    def _touch(self, rec: JobRecord) -> None:
        self._dirty[rec.seq] = rec

    def flush_tally(self) -> None:
        """Count the changed records by queue and state (again: it is idempotent)."""
        observe = self.metrics.tally.observe
        for rec in self._dirty.values():
            job = rec.job
            observe(rec.seq, job.queue, rec.state.value, job.width * job.estimate, rec.owner)

    def busy_nodes(self) -> int:
        """Nodes allocated to running jobs, counted on the machine (events keep it after)."""
        return sum(len(h.nodes) for h in self.machine.holders() if isinstance(h, Job))

    def refresh_plan_gauges(self) -> None:
        """Recompute the planned-schedule gauges (the scheduling loop calls this)."""
        self.sync()
        m = self.machine
        self.metrics.plan.compute(self.now, self.plan(), m.running_ends())

    def save_meta(self, **values: Any) -> None:
        self.meta.update(values)
        if self.store is not None:
            for k, v in values.items():
                self.store.put_meta(k, v)

    # -- roles --------------------------------------------------------------------
    def role_of(self, user: str) -> Role:
        auth = self.site.auth
        if user in ("root", self.daemon_user) or user in auth.managers:
            return "manager"
        if user in auth.operators:
            return "operator"
        return "user"

    def caller(self, user: str) -> Caller:
        return Caller(user, self.role_of(user))

    def _may_act_on(self, caller: Caller, rec: JobRecord, what: str) -> None:
        if caller.user != rec.owner and not caller.at_least("operator"):
            raise forbidden(
                f"{caller.user} may not {what} job {self.job_id(rec.seq)}, owned by {rec.owner}"
            )

    # -- names --------------------------------------------------------------------
    def job_id(self, seq: int) -> str:
        return f"{seq}.{self.server}"

    def resv_id(self, seq: int) -> str:
        return f"R{seq}.{self.server}"

    def find(self, text: str) -> JobRecord:
        try:
            seq = parse_job_id(text, self.server)
        except ValueError as exc:
            raise bad_request(str(exc)) from None
        rec = self.records.get(seq)
        if rec is None:
            raise not_found(f"Unknown Job Id {self.job_id(seq)}")
        return rec

    def queue(self, name: str) -> QueueConfig:
        queue = self._queue_conf(name)
        if queue is None:
            names = ", ".join(q.name for q in self.site.queues())
            raise bad_request(f"unknown queue {name!r}; queues: {names}")
        return queue

    def _check_request(
        self, qname: str, nodes: int, walltime: int | None
    ) -> tuple[QueueConfig, int]:
        """The queue and walltime for a job of this shape, or the limit it breaks."""
        queue = self.queue(qname)
        if not queue.enabled:
            raise bad_request(
                f"queue {qname} is not enabled: it takes no new jobs (enabled = true in the "
                "site config, then SIGHUP the daemon)"
            )
        if nodes > self.mconf.nodes:
            raise bad_request(
                f"nodes: {nodes} nodes requested; machine {self.mconf.name} has {self.mconf.nodes}"
            )
        if queue.max_nodes is not None and nodes > queue.max_nodes:
            raise bad_request(
                f"nodes: {nodes} nodes exceed the limit of queue {qname} "
                f"(resources_max.nodect = {queue.max_nodes}){self._takers(nodes, walltime)}"
            )
        asked = walltime
        if walltime is None:
            walltime = queue.default_walltime
        if queue.max_walltime is not None and walltime > queue.max_walltime:
            raise bad_request(
                f"walltime: {_hms(walltime)} exceeds the limit of queue {qname} "
                f"(resources_max.walltime = {_hms(queue.max_walltime)})"
                f"{self._takers(nodes, asked)}"
            )
        win = self.windows.get(qname)
        if win is not None and self.site.server.window_must_fit:
            now = self.engine.now
            if next_fit(win, now, walltime) is None:
                longest = longest_opening(win, now) or 0
                days = HORIZON // DAY
                if longest == 0:
                    raise bad_request(
                        f"queue {qname} is closed ({win.text}) and does not open in the "
                        f"next {days} days: use another queue"
                    )
                raise bad_request(
                    f"walltime: {_hms(walltime)} does not fit in any opening of queue "
                    f"{qname}'s window ({win.text}) in the next {days} days (the longest "
                    f"is {_hms(longest)}): ask for less walltime or use another queue"
                    f"{self._takers(nodes, walltime)}"
                )
        return queue, walltime

    def _takers(self, nodes: int, walltime: int | None) -> str:
        """A hint for a refused job: the queues whose limits (and window) would take it."""
        must_fit = self.site.server.window_must_fit
        names = []
        for q in self.site.queues():
            if not q.enabled or (q.max_nodes is not None and nodes > q.max_nodes):
                continue
            if walltime is not None:
                if q.max_walltime is not None and walltime > q.max_walltime:
                    continue
                win = self.windows.get(q.name)
                if must_fit and win is not None and next_fit(win, self.now, walltime) is None:
                    continue
            names.append(q.name)
        return f"; queues that take it: {', '.join(names)}" if names else ""

    # -- jobs ---------------------------------------------------------------------
    def submit(self, caller: Caller, body: JobSubmit) -> JobRecord:
        self.sync()
        owner = body.user or caller.user
        if owner != caller.user and not caller.at_least("manager"):
            raise forbidden(f"{caller.user} may not submit jobs as {owner}")
        rec = self._new_record(body, owner)
        self._accept(rec)
        self.metrics.job_submitted(rec.job.queue, owner)
        self.settle()
        log.info(
            "job_submitted",
            job=self.job_id(rec.seq),
            owner=owner,
            queue=rec.job.queue,
            nodes=rec.job.width,
            walltime=rec.job.estimate,
            state=rec.state.value,
        )
        return rec

    def _new_record(self, body: JobSubmit, owner: str) -> JobRecord:
        """Validate a submission completely before anything changes."""
        qname = body.queue or self.site.default_queue
        _, walltime = self._check_request(qname, body.nodes, body.walltime)
        runtime_given: int | None = None
        if RUNTIME_VAR in body.variables:
            text = body.variables[RUNTIME_VAR]
            try:
                runtime_given = parse_duration(text.strip())
            except ValueError:
                raise bad_request(
                    f"{RUNTIME_VAR}={text!r}: give the emulated runtime in seconds or HH:MM:SS"
                ) from None
        depend: list[tuple[str, int]] = []
        if body.depend:
            try:
                depend = parse_depend(body.depend, self.server)
            except ValueError as exc:
                raise bad_request(str(exc)) from None
            for kind, seq in depend:
                dep = self.records.get(seq)
                if dep is None:
                    raise bad_request(f"depend: unknown job id {self.job_id(seq)}")
                if dep.state is JobState.FINISHED and _dependency(kind, dep.job) is False:
                    raise bad_request(
                        f"depend: {kind}:{self.job_id(seq)} can never be satisfied: "
                        f"job {self.job_id(seq)} ended ({dep.job.outcome})"
                    )
        now = self.engine.now
        job = Job(
            id=self.seq + 1,
            submit=now,
            width=body.nodes,
            estimate=walltime,
            runtime=runtime_given if runtime_given is not None else walltime,
            user=owner,
            queue=qname,
            name=body.name,
            priority=body.priority,
        )
        rec = JobRecord(
            job=job,
            owner=owner,
            ctime=now,
            qtime=now,
            exec_time=body.exec_time,
            depend=depend,
            depend_text=body.depend,
            variables=dict(body.variables),
            script=body.script,
            runtime_given=runtime_given,
        )
        if body.hold:
            rec.hold_types = "u"
        if any(not self._dep_met(kind, seq) for kind, seq in depend):
            rec.hold_types = merge_holds(rec.hold_types, "s")
            rec.comment = "waiting for dependencies"
        return rec

    def _accept(self, rec: JobRecord) -> None:
        """A validated job joins: saved, then queued, held or waiting for its time."""
        self.seq = rec.seq
        self.save_meta(seq=self.seq)
        self.records[rec.seq] = rec
        self._index_depend(rec)
        job = rec.job
        # A new job's first state is set, not changed: it was never queued.
        if rec.hold_types:
            job.state = JobState.HELD
            rec.comment = rec.comment or "Job held by user"
        elif rec.exec_time is not None and rec.exec_time > self.engine.now:
            job.state = JobState.WAITING
            self._arm_exec(rec)
        else:
            rec.etime = self.engine.now
            self._to_queue(rec, arriving=True)
        self._touch(rec)

    def inject(self, job: Job, owner: str) -> JobRecord:
        """A trace job arrives (from a timer, at its submit time)."""
        new = Job(
            id=self.seq + 1,
            submit=self.engine.now,
            width=job.width,
            estimate=job.estimate,
            runtime=job.runtime,
            user=owner,
            queue=self.site.default_queue,
            name=job.name or f"swf{job.id}",
        )
        now = self.engine.now
        rec = JobRecord(
            job=new, owner=owner, ctime=now, qtime=now, etime=now, runtime_given=job.runtime
        )
        self.seq = new.id
        self.save_meta(seq=self.seq)
        self.records[new.id] = rec
        self.metrics.job_submitted(new.queue, owner)
        self._to_queue(rec, arriving=True, now=False)
        self._touch(rec)
        return rec

    def _to_queue(self, rec: JobRecord, *, arriving: bool, now: bool = True) -> None:
        """A queued job goes to the scheduler, or waits while its queue is stopped.

        ``arriving`` jobs are submissions (counted by the engine); with ``now`` they
        are handled at once, without it (from a timer) in the engine's current second.
        """
        queue = self._queue_conf(rec.job.queue)
        if queue is not None and not queue.started:
            self.parked[rec.seq] = rec
            rec.comment = f"Not Running: queue {queue.name} is stopped"
            return
        if queue is not None and queue.name in self.windows:
            reason = self._window_reason(queue.name, rec.job)
            if reason is not None:
                self.parked[rec.seq] = rec
                rec.comment = reason
                return
            if rec.comment is not None and rec.comment.startswith("Not Running:"):
                rec.comment = None
            self._note_deadline(queue.name, rec.job)
        if not arriving:
            self.engine.enqueue(rec.job)
            return
        self.engine.submit(rec.job)
        if now:
            self.engine.instant(self.engine.now)

    def _from_queue(self, rec: JobRecord) -> None:
        if self.parked.pop(rec.seq, None) is None:
            self.engine.withdraw(rec.job)

    def _queue_conf(self, name: str) -> QueueConfig | None:
        for q in self.site.queues():
            if q.name == name:
                return q
        return None

    def _arm_exec(self, rec: JobRecord) -> None:
        assert rec.exec_time is not None
        when = max(rec.exec_time, self.engine.now)
        self._exec_timers[rec.seq] = self.engine.call_at(when, lambda: self._eligible(rec))

    def _eligible(self, rec: JobRecord) -> None:
        self._exec_timers.pop(rec.seq, None)
        if rec.state is not JobState.WAITING:
            return
        change_state(rec.job, JobState.QUEUED)
        self._queue_again(rec)

    def _queue_again(self, rec: JobRecord) -> None:
        """A job that was held or waiting becomes eligible now."""
        rec.etime = self.engine.now
        rec.comment = None
        if rec.job.submit < rec.qtime:
            rec.job.submit = rec.qtime
        if rec.exec_time is not None and rec.job.submit < rec.exec_time:
            # Not eligible before its execution time: it queues from then on.
            rec.job.submit = min(rec.exec_time, self.engine.now)
        self._to_queue(rec, arriving=False)
        self._touch(rec)

    def _started(self, job: Job) -> None:
        self.metrics.job_started(job, self.engine.now)
        heap = self._deadlines.get(job.queue)
        if heap and heap[0][1] == job.id:
            self._rearm(job.queue)  # its deadline need not wake the daemon
        rec = self.records.get(job.id)
        if rec is None:
            return
        rec.comment = f"Job run at {_stamp(job.start)} on {job.width} nodes"
        self._touch(rec)

    def _ended(self, job: Job) -> None:
        self.metrics.job_ended(job, self.engine.now)
        rec = self.records.get(job.id)
        if rec is None:
            return
        rec.exit_status = EXIT_STATUS.get(job.outcome)
        rec.comment = {
            "ok": "Job run and finished",
            "walltime": "Job killed at its walltime",
            "cancelled": "Job deleted while running",
            "node_fail": "Job killed: a node it ran on went down",
            "overflow": f"Job killed: {self._closed_what(job)} at {self._wstamp(job.end)} "
            "while it ran (overflow)",
        }.get(job.outcome, f"Job ended: {job.outcome}")
        self._touch(rec)
        self._resolve_dependents(rec)

    def _dep_met(self, kind: str, seq: int) -> bool:
        dep = self.records.get(seq)
        return (
            dep is not None and dep.state is JobState.FINISHED and bool(_dependency(kind, dep.job))
        )

    def _index_depend(self, rec: JobRecord) -> None:
        for _, seq in rec.depend:
            self.dependents.setdefault(seq, []).append(rec.seq)

    def _resolve_dependents(self, ended: JobRecord) -> None:
        for child in self.dependents.pop(ended.seq, []):
            rec = self.records[child]
            if rec.state is not JobState.HELD or "s" not in rec.hold_types:
                continue
            if not any(seq == ended.seq for _, seq in rec.depend):
                continue
            verdicts = [
                _dependency(kind, self.records[seq].job)
                if self.records[seq].state is JobState.FINISHED
                else None
                for kind, seq in rec.depend
            ]
            if any(v is False for v in verdicts):
                self._finish_unrun(rec, "dependency", "dependency can never be satisfied")
            elif all(verdicts):
                self._release(rec, "s")

    def _finish_unrun(self, rec: JobRecord, outcome: str, comment: str) -> None:
        """A job that never ran leaves the system (deleted, or its dependency failed)."""
        job = rec.job
        if job.state is JobState.QUEUED:
            self._from_queue(rec)
        timer = self._exec_timers.pop(rec.seq, None)
        if timer is not None:
            timer.cancel()
        change_state(job, JobState.FINISHED)
        job.outcome = outcome
        job.end = self.engine.now
        rec.comment = comment
        self.metrics.job_left_unrun(job.queue, outcome)
        self._touch(rec)
        self._resolve_dependents(rec)

    def delete(self, caller: Caller, text: str) -> JobRecord:
        self.sync()
        rec = self.find(text)
        self._may_act_on(caller, rec, "delete")
        if rec.state is JobState.FINISHED:
            raise bad_request(f"job {self.job_id(rec.seq)} has already finished")
        if rec.state is JobState.RUNNING:
            self.engine.terminate(rec.job, "cancelled")
        else:
            self._finish_unrun(rec, "cancelled", f"Job deleted by {caller.user}")
        self.settle()
        log.info("job_deleted", job=self.job_id(rec.seq), by=caller.user)
        return rec

    def hold(self, caller: Caller, text: str, types: str) -> JobRecord:
        self.sync()
        rec = self.find(text)
        self._check_hold_rights(caller, rec, types, "hold")
        if rec.state in (JobState.RUNNING, JobState.EXITING, JobState.FINISHED):
            raise bad_request(
                f"job {self.job_id(rec.seq)} is {rec.state.name.lower()}; only queued, "
                "waiting or held jobs can be held"
            )
        if rec.state is JobState.QUEUED:
            self._from_queue(rec)
        if rec.state is not JobState.HELD:
            change_state(rec.job, JobState.HELD)
        rec.hold_types = merge_holds(rec.hold_types, types)
        rec.comment = f"Job held by {caller.user}"
        self._touch(rec)
        self.settle()
        log.info("job_held", job=self.job_id(rec.seq), types=types, by=caller.user)
        return rec

    def release(self, caller: Caller, text: str, types: str) -> JobRecord:
        self.sync()
        rec = self.find(text)
        self._check_hold_rights(caller, rec, types, "release")
        if rec.state is not JobState.HELD:
            raise bad_request(f"job {self.job_id(rec.seq)} is not held")
        self._release(rec, types)
        self.settle()
        log.info("job_released", job=self.job_id(rec.seq), types=types, by=caller.user)
        return rec

    def _release(self, rec: JobRecord, types: str) -> None:
        rec.hold_types = drop_holds(rec.hold_types, types)
        if "s" in types:
            rec.depend = []  # met, or a manager released the dependency hold
        self._touch(rec)
        if rec.hold_types:
            return
        if rec.exec_time is not None and rec.exec_time > self.engine.now:
            change_state(rec.job, JobState.WAITING)
            rec.comment = None
            self._arm_exec(rec)
            return
        change_state(rec.job, JobState.QUEUED)
        self._queue_again(rec)

    def _check_hold_rights(self, caller: Caller, rec: JobRecord, types: str, what: str) -> None:
        self._may_act_on(caller, rec, what)
        for t in types:
            need = HOLD_NEEDS[t]
            if not caller.at_least(need):
                raise forbidden(
                    f"{caller.user} may not {what} a hold of type {t} "
                    f"({'operators and managers' if need == 'operator' else 'managers'} only)"
                )

    def alter(self, caller: Caller, text: str, body: JobAlter) -> JobRecord:
        self.sync()
        rec = self.find(text)
        self._may_act_on(caller, rec, "alter")
        if rec.state not in (JobState.QUEUED, JobState.HELD, JobState.WAITING):
            raise bad_request(
                f"job {self.job_id(rec.seq)} is {rec.state.name.lower()}; qalter changes "
                "queued, held or waiting jobs only"
            )
        job = rec.job
        qname = body.queue if body.queue is not None else job.queue
        nodes = body.nodes if body.nodes is not None else job.width
        walltime = body.walltime if body.walltime is not None else job.estimate
        self._check_request(qname, nodes, walltime)
        queued = job.state is JobState.QUEUED
        if queued:
            self._from_queue(rec)
        job.queue = qname
        job.width = nodes
        if rec.runtime_given is None:
            job.runtime = walltime
        job.estimate = walltime
        if body.priority is not None:
            job.priority = body.priority
        if body.name is not None:
            job.name = body.name
        if queued:
            self._to_queue(rec, arriving=False)
        self._touch(rec)
        self.settle()
        log.info("job_altered", job=self.job_id(rec.seq), by=caller.user)
        return rec

    def jobs(
        self,
        *,
        user: str | None = None,
        states: str | None = None,
        queue: str | None = None,
        history: bool = False,
    ) -> list[JobRecord]:
        self.sync()
        if states is not None:
            bad = set(states) - set("QHWREF")
            if bad:
                raise bad_request(f"state: unknown letters {''.join(sorted(bad))}; use Q H W R E F")
        if queue is not None:
            self.queue(queue)
        out = []
        for rec in self.records.values():
            letter = rec.state.value
            if letter == "F" and not history and (states is None or "F" not in states):
                continue
            if states is not None and letter not in states:
                continue
            if user is not None and rec.owner != user:
                continue
            if queue is not None and rec.job.queue != queue:
                continue
            out.append(rec)
        return out

    def plan(self) -> list[tuple[Job, int]]:
        """Every waiting job in the policy's order with its planned start (cached until a change)."""
        cached = self._plan_cache
        if cached is not None and cached[0] == self._version:
            return cached[1]
        m = self.machine
        plan = m.policy.planned_starts(m)
        self._plan_cache = (self._version, plan)
        return plan

    def planned_starts(self) -> dict[int, int]:
        """Planned start of every waiting job that can start, by job id."""
        return {job.id: start for job, start in self.plan() if start != NEVER}

    # -- nodes --------------------------------------------------------------------
    def node(self, name: str) -> int:
        try:
            return self.node_index[name]
        except KeyError:
            raise not_found(f"Unknown node {name!r}") from None

    def holders(self) -> dict[int, Job | Reservation]:
        out: dict[int, Job | Reservation] = {}
        for h in self.machine.holders():
            for n in h.nodes:
                out[n] = h
        return out

    def set_node(self, caller: Caller, name: str, change: NodeChange) -> int:
        self.sync()
        index = self.node(name)
        if not caller.at_least("operator"):
            raise forbidden(f"{caller.user} may not change node states (operators and managers)")
        old = self.node_states.get(index)
        engine = self.engine
        if change.state == "online":
            if old is not None:
                del self.node_states[index]
                engine.node_in(0, index)
            if self.store is not None:
                self.store.put_node(0, index, None, None)
        else:
            if old is None:
                engine.node_out(0, index)
            self.node_states[index] = (change.state, change.comment)
            if self.store is not None:
                self.store.put_node(0, index, change.state, change.comment)
            if change.state == "down":
                holder = self.machine.holder_of(index)
                if isinstance(holder, Job):
                    self._node_failed(holder)
        self.settle()
        log.info("node_state", node=name, state=change.state, by=caller.user)
        return index

    def _prepare_policy(self, policy: Policy) -> None:
        """Metrics hooks, and the site's clock for a policy with a calendar."""
        self.metrics.watch_policy(policy)
        localize = getattr(policy, "localize", None)
        if localize is not None:
            localize(0, self.calendar.tz)  # the emulated clock counts from the epoch

    def _closed_what(self, job: Job) -> str:
        if job.queue in self.windows:
            return f"queue {job.queue} closed"
        return "non-prime time ended"

    def _overflow_requeued(self, job: Job) -> None:
        """The policy put a job back at the end of its window (primetime, overflow=requeue)."""
        self._requeued(job, "overflow", f"{self._closed_what(job)} while it ran (overflow)")

    def _node_failed(self, job: Job) -> None:
        if self.site.server.node_fail == "kill":
            self.engine.terminate(job, "node_fail")
            return
        self.engine.requeue(job)
        self._requeued(job, "node_fail", "a node it ran on went down")

    def _requeued(self, job: Job, reason: str, why: str) -> None:
        """After the engine put a running job back: counted, commented, saved."""
        self.metrics.job_requeued(job.queue, reason, self.engine.now, job.width)
        rec = self.records.get(job.id)
        if rec is not None:
            rec.comment = f"Requeued: {why}"
            rec.etime = self.engine.now
            self._touch(rec)
            self._check_requeued(rec)

    def _check_requeued(self, rec: JobRecord) -> None:
        """A requeued job of a stopped or windowed queue waits as a queued one would."""
        queue = self._queue_conf(rec.job.queue)
        if queue is not None and (not queue.started or queue.name in self.windows):
            self.engine.withdraw(rec.job)
            self._to_queue(rec, arriving=False)

    # -- reservations -------------------------------------------------------------
    def create_reservation(self, caller: Caller, body: ReservationCreate) -> Reservation:
        self.sync()
        if not caller.at_least("manager"):
            raise forbidden(f"{caller.user} may not create reservations (managers only)")
        m = self.machine
        now = self.engine.now
        if body.nodes > m.capacity:
            raise bad_request(
                f"nodes: {body.nodes} nodes requested; {m.capacity} of "
                f"{self.mconf.nodes} nodes are in service"
            )
        profile = running_profile(m, 0)
        if body.start == "asap":
            start = profile.earliest_start(body.nodes, body.duration, now)
        else:
            start = now if body.start == "now" else int(body.start)
            if start < now:
                raise bad_request(f"start: {_stamp(start)} is in the past (now {_stamp(now)})")
            if profile.earliest_start(body.nodes, body.duration, start) != start:
                raise conflict(
                    f"reservation of {body.nodes} nodes for {_hms(body.duration)} at "
                    f"{_stamp(start)} does not fit around running jobs and reservations; "
                    "try start=asap"
                )
        self.resv_seq += 1
        resv = Reservation(
            id=self.resv_seq,
            start=start,
            end=start + body.duration,
            width=body.nodes,
            owner=caller.user,
            name=body.name,
        )
        self.reservations[resv.id] = resv
        self.save_meta(resv_seq=self.resv_seq)
        self.engine.add_reservation(resv)
        if start == now:
            self.engine.instant(now)  # open it before anything else takes its nodes
        self._resv_saved.pop(resv.id, None)
        self.settle()
        log.info("reservation_created", resv=self.resv_id(resv.id), start=start, nodes=body.nodes)
        return resv

    def find_reservation(self, text: str) -> Reservation:
        raw = text.strip()
        body = raw[1:] if raw[:1] in ("R", "r") else raw
        seq_text, _, server = body.partition(".")
        if not seq_text.isdigit() or (server and server != self.server):
            raise bad_request(f"{text!r} is not a reservation id (R<seq>.{self.server})")
        resv = self.reservations.get(int(seq_text))
        if resv is None:
            raise not_found(f"Unknown reservation {text}")
        return resv

    def delete_reservation(self, caller: Caller, text: str) -> Reservation:
        self.sync()
        if not caller.at_least("manager"):
            raise forbidden(f"{caller.user} may not delete reservations (managers only)")
        resv = self.find_reservation(text)
        if resv.state is ResvState.FINISHED:
            raise bad_request(f"reservation {self.resv_id(resv.id)} has already finished")
        self.engine.remove_reservation(resv)
        self.settle()
        log.info("reservation_deleted", resv=self.resv_id(resv.id), by=caller.user)
        return resv

    # -- scheduler ----------------------------------------------------------------
    def set_scheduler(self, caller: Caller, change: SchedulerChange) -> None:
        self.sync()
        if not caller.at_least("manager"):
            raise forbidden(f"{caller.user} may not change the scheduler (managers only)")
        name = change.policy or self.policy_name
        if change.policy is not None and change.params is not None:
            params = dict(change.params)
        elif change.policy is not None and change.policy != self.policy_name:
            params = {}
        else:
            params = {**self.policy_params, **(change.params or {})}
        try:
            spec = get_spec(name)
            parse_params(spec, params)
            policy = make_policy(name, params)
        except PolicyError as exc:
            raise bad_request(str(exc)) from None
        old = (self.policy_name, dict(self.policy_params))
        self.engine.set_policy(0, policy)
        self._prepare_policy(policy)
        if name != old[0]:
            self.metrics.policy_switched(old[0], name)
        self.policy_name, self.policy_params = name, params
        entry = {
            "time": self.engine.now,
            "from": old[0],
            "to": name,
            "params": params,
            "by": caller.user,
        }
        self.switches.append(entry)
        self.switches = self.switches[-100:]
        self.save_meta(policy=name, params=params, switches=self.switches)
        self.settle()
        log.info("policy_set", **{k: v for k, v in entry.items() if k != "time"})

    def policies(self) -> list[dict[str, Any]]:
        out = []
        for name in policy_names():
            spec = get_spec(name)
            out.append(
                {
                    "name": name,
                    "description": spec.description,
                    "params": list(spec.params.model_fields),
                }
            )
        return out

    # -- configuration ------------------------------------------------------------
    def machine_identity(self, site: SiteConfig | None = None) -> dict[str, Any]:
        site = site or self.site
        return {
            "server": site.server_name,
            "machines": [[m.name, m.nodes, m.node_prefix] for m in site.machine],
        }

    def reload(self, site: SiteConfig) -> None:
        """Take a re-read configuration: queues, roles and limits; the machine cannot change."""
        if self.machine_identity(site) != self.machine_identity():
            raise ValueError(
                "the machine and the server name cannot change while the daemon runs; restart it"
            )
        self.sync()
        if site.server.max_body != self.site.server.max_body:
            log.warning("max_body_needs_restart", max_body=site.server.max_body)
        self.site = site
        self.calendar = site.calendar()
        for timer in self._wtimers.values():
            timer.cancel()
        self._wtimers.clear()
        self._deadlines.clear()
        self._wnext.clear()
        self._build_windows()
        for q in site.queues():
            self.metrics.add_queue(q.name)
        for rec in sorted(self.parked.values(), key=lambda r: (r.job.submit, r.seq)):
            queue = self._queue_conf(rec.job.queue)
            if queue is None or queue.started:
                del self.parked[rec.seq]
                rec.comment = None
                self._touch(rec)
                self._to_queue(rec, arriving=False)  # parks it again if its window is shut
        stopped = {q.name for q in site.queues() if not q.started}
        if stopped:
            for job in list(self.machine.policy.waiting()):
                rec = self.records.get(job.id)
                if rec is not None and job.queue in stopped:
                    self.engine.withdraw(job)
                    self._to_queue(rec, arriving=False)
                    self._touch(rec)
        self._window_all()
        self.settle()
        log.info(
            "config_reloaded",
            queues=[q.name for q in site.queues()],
            windows={name: w.text for name, w in self.windows.items()},
        )

    # -- queue windows ------------------------------------------------------------
    # A windowed queue's jobs go to the scheduler only while its window is open and,
    # with [server] window_must_fit, only if their walltime ends by the close; the
    # others wait in self.parked with a comment that says why. One engine timer per
    # windowed queue fires at its next change (opening: parked jobs that fit go to the
    # scheduler in submit order; close: running jobs overflow, queued ones are parked)
    # or earlier, at the first deadline (close - walltime + 1) of its jobs in the
    # scheduler, when a job that no longer fits is taken back. The window arithmetic
    # is in batchd.server.windows.

    def _build_windows(self) -> None:
        self.windows = {
            q.name: make_window(q.window, self.calendar) for q in self.site.queues() if q.windowed
        }

    def window_state(self, name: str) -> tuple[bool, int | None]:
        """Whether queue ``name`` is open now and when that changes (None: never)."""
        win = self.windows.get(name)
        if win is None:
            return True, None
        now = self.engine.now
        return win.is_open(now), win.next_change(now)

    def _wstamp(self, t: int) -> str:
        """A time as the windows are written: local time of the calendar's zone."""
        return dt.datetime.fromtimestamp(t, self.calendar.tz).strftime("%Y-%m-%d %H:%M:%S")

    def _closed_comment(self, name: str, win: QueueWindow, opens: int | None) -> str:
        if opens is None:
            return f"Not Running: queue {name} is closed ({win.text}) and does not open"
        return f"Not Running: queue {name} is closed ({win.text}), opens at {self._wstamp(opens)}"

    def _unfit_comment(self, name: str, job: Job, close: int) -> str:
        return (
            f"Not Running: walltime {_hms(job.estimate)} does not fit before queue {name} "
            f"closes at {self._wstamp(close)}"
        )

    def _window_reason(self, name: str, job: Job) -> str | None:
        """Why a queued job of a windowed queue cannot go to the scheduler now, or None."""
        win = self.windows[name]
        now = self.engine.now
        change = win.next_change(now)
        if not win.is_open(now):
            return self._closed_comment(name, win, change)
        if self.site.server.window_must_fit and change is not None and now + job.estimate > change:
            return self._unfit_comment(name, job, change)
        return None

    def _close_after_start(self, job: Job) -> int | None:
        """When the window a running job started in closes (None: no window, no close)."""
        win = self.windows.get(job.queue)
        if win is None or not win.is_open(job.start):
            return None
        return win.next_change(job.start)

    def _note_deadline(self, name: str, job: Job) -> None:
        """A job goes to the scheduler in an open window: take it back once it cannot fit."""
        if not self.site.server.window_must_fit:
            return
        close = self.windows[name].next_change(self.engine.now)
        if close is None:
            return
        deadline = close - job.estimate + 1
        heapq.heappush(self._deadlines.setdefault(name, []), (deadline, job.id))
        timer = self._wtimers.get(name)
        if timer is None or timer.when > deadline:
            self._rearm(name)

    def _in_scheduler(self, seq: int, name: str) -> bool:
        """Whether job ``seq`` still waits in the scheduler as a job of queue ``name``."""
        rec = self.records.get(seq)
        return (
            rec is not None
            and seq not in self.parked
            and rec.state is JobState.QUEUED
            and rec.job.queue == name
        )

    def _rearm(self, name: str) -> None:
        """Set queue ``name``'s timer at its next change or first live deadline."""
        heap = self._deadlines.get(name)
        while heap and not self._in_scheduler(heap[0][1], name):
            heapq.heappop(heap)  # started, left, parked or moved since
        times = [t for t in (self._wnext.get(name), heap[0][0] if heap else None) if t is not None]
        when = min(times) if times else None
        timer = self._wtimers.get(name)
        if timer is not None:
            if timer.when == when and not timer.cancelled:
                return
            timer.cancel()
            del self._wtimers[name]
        if when is not None:
            self._wtimers[name] = self.engine.call_at(when, lambda: self._window_tick(name))

    def _window_tick(self, name: str) -> None:
        self._wtimers.pop(name, None)
        self._window_check(name)

    def _window_all(self) -> None:
        """Bring every windowed queue in line with its window now, and arm its timer."""
        for name in self.windows:
            self._window_check(name, rescan=True)

    def _queued_in_scheduler(self, name: str) -> list[Job]:
        return [j for j in self.machine.policy.waiting() if j.queue == name]

    def _park(self, job: Job, comment: str) -> None:
        rec = self.records.get(job.id)
        if rec is None:
            return
        self.engine.withdraw(job)
        self.parked[rec.seq] = rec
        rec.comment = comment
        self._touch(rec)

    def _window_check(self, name: str, *, rescan: bool = False) -> None:
        """At a change or a deadline of queue ``name``'s window (``rescan``: at any time)."""
        win = self.windows.get(name)
        queue = self._queue_conf(name)
        if win is None or queue is None:
            return
        now = self.engine.now
        is_open = win.is_open(now)
        change = win.next_change(now)
        self._wnext[name] = change
        if not is_open:
            self._deadlines.pop(name, None)
            if win.is_open(now - 1):  # it closes now
                for job in self._running_in(name):
                    self._overflow(job)
            if queue.started:
                comment = self._closed_comment(name, win, change)
                for job in self._queued_in_scheduler(name):
                    self._park(job, comment)
                for rec in self.parked.values():
                    if rec.job.queue == name and rec.comment != comment:
                        rec.comment = comment
                        self._touch(rec)
            self._rearm(name)
            return
        close = change if self.site.server.window_must_fit else None  # jobs must end by it
        if queue.started:
            if rescan:
                self._deadlines.pop(name, None)
                for job in self._queued_in_scheduler(name):
                    if close is not None and now + job.estimate > close:
                        self._park(job, self._unfit_comment(name, job, close))
                    else:
                        self._note_deadline(name, job)
            else:
                heap = self._deadlines.get(name)
                while heap and heap[0][0] <= now:
                    seq = heapq.heappop(heap)[1]
                    if not self._in_scheduler(seq, name):
                        continue  # started, left, or moved since
                    job = self.records[seq].job
                    if close is not None and now + job.estimate > close:
                        self._park(job, self._unfit_comment(name, job, close))
            if rescan or not win.is_open(now - 1):  # it opens now: let in what fits
                mine = [r for r in self.parked.values() if r.job.queue == name]
                for rec in sorted(mine, key=lambda r: (r.job.submit, r.seq)):
                    reason = self._window_reason(name, rec.job)
                    if reason is None:
                        del self.parked[rec.seq]
                        rec.comment = None
                        self.engine.enqueue(rec.job)
                        self._note_deadline(name, rec.job)
                    else:
                        rec.comment = reason
                    self._touch(rec)
        self._rearm(name)

    def _running_in(self, name: str) -> list[Job]:
        jobs = [h for h in self.machine.holders() if isinstance(h, Job) and h.queue == name]
        return sorted(jobs, key=lambda j: (j.start, j.id))

    def _overflow(self, job: Job) -> None:
        """A job still running when its queue's window closes: killed or requeued."""
        action = self.site.server.overflow
        log.info("job_overflow", job=self.job_id(job.id), queue=job.queue, action=action)
        if action == "kill":
            self.engine.terminate(job, "overflow")  # counted and commented by _ended
            return
        self.engine.requeue(job)
        self._requeued(job, "overflow", f"{self._closed_what(job)} while it ran (overflow)")

    def counts(self) -> dict[str, int]:
        """Jobs by state letter, finished ones included."""
        self.flush_tally()
        tally = self.metrics.tally
        out = {letter: tally.total(letter) for letter in "QHWRE"}
        out["F"] = len(self.records) - sum(out.values())
        return out

    def counts_by_queue(self) -> dict[str, dict[str, int]]:
        """Unfinished jobs of each configured queue by state letter (Q R H W E)."""
        self.flush_tally()
        tally = self.metrics.tally
        return {
            q.name: {letter: tally.count(q.name, letter) for letter in "QRHWE"}
            for q in self.site.queues()
        }


def _dependency(kind: str, job: Job) -> bool:
    """Whether a finished job satisfies a dependency of this kind."""
    ok = job.outcome == "ok"
    if kind == "afterok":
        return ok
    if kind == "afternotok":
        return not ok
    return True


def _hms(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _stamp(t: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


__all__ = ["UNSET", "ApiError", "BatchService", "Caller"]
