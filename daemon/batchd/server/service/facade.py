"""The batch system behind the API: one facade over the parts that each do one job.

It owns the engine (the same one replays use, one policy per machine), the clock
and the store. A request first finds the engine caught up with the clock and
committed (``catch_up``, which the app's middleware calls for every request), so
what it reads has been saved. A change runs inside ``changes``: the part does
its work, then one scheduling pass, then one commit, before the answer is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

import structlog

from batchd.engine.clock import Clock
from batchd.engine.core import Engine
from batchd.metrics.catalog import NODE_STATES
from batchd.metrics.exporter import PoolState
from batchd.metrics.live import LiveMetrics
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.reservation import Reservation
from batchd.server.errors import bad_request
from batchd.server.records import JobRecord
from batchd.server.schemas import (
    JobAlter,
    JobSubmit,
    NodeChange,
    ReservationCreate,
    SchedulerChange,
)
from batchd.server.service.access import Access, Caller, require
from batchd.server.service.admission import Admission
from batchd.server.service.dependencies import Dependencies
from batchd.server.service.journal import Journal
from batchd.server.service.lifecycle import Lifecycle
from batchd.server.service.nodes import Nodes
from batchd.server.service.reservations import Reservations
from batchd.server.service.scheduler import Scheduler
from batchd.server.store import Saved, Store
from batchd.site.config import SiteConfig

P = ParamSpec("P")
R = TypeVar("R")
log = structlog.get_logger("batchd")


def changes(
    fn: Callable[Concatenate[BatchService, P], R],
) -> Callable[Concatenate[BatchService, P], R]:
    """A change of state: caught up first; after it, one scheduling pass and one commit."""

    def run(svc: BatchService, /, *args: P.args, **kwargs: P.kwargs) -> R:
        svc.catch_up()
        result = fn(svc, *args, **kwargs)
        svc.settle()
        return result

    run.__doc__ = fn.__doc__
    run.__name__ = fn.__name__
    return run


class PoolObserver:
    """A machine's self-tuning policy reports to the live metrics under its pool."""

    def __init__(self, metrics: LiveMetrics, pool: str) -> None:
        self.metrics = metrics
        self.pool = pool

    def switched(self, old: str, new: str) -> None:
        self.metrics.policy_switched(self.pool, old, new)

    def tuned(self, case: str, seconds: float) -> None:
        self.metrics.tuned(self.pool, case, seconds)


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
        self.site = site
        self.clock = clock
        self.store = store
        self.speed = speed
        self.realtime = realtime
        self.server = site.server_name
        # The engine starts where the clock started: whatever the clock passed while the
        # daemon was being set up happens in order at the first catch-up.
        self.started = clock.start
        self.replay: Any = None  # a ReplayFeed when a trace is injected
        self.records: dict[int, JobRecord] = {}
        self.calendar = site.calendar()
        mconf = site.metrics
        self.metrics = LiveMetrics(
            pools=[m.name for m in site.machine],
            queues=[q.name for q in site.queues()],
            now=clock.start,
            window=mconf.utilization_window,
            per_user=mconf.per_user,
            max_users=mconf.max_users,
        )
        self.journal = Journal(store, self.metrics.tally)
        self.access = Access(site.auth, daemon_user)
        self.scheduler = Scheduler(site, self.calendar)
        self.scheduler.observers = [PoolObserver(self.metrics, m.name) for m in site.machine]
        grid = Grid([Machine(m.name, m.nodes, m.description) for m in site.machine])
        self.engine = Engine(grid, self.scheduler.policies(), kill=True)
        self.engine.now = clock.start
        for m in self.engine.machines:
            m.now = self.engine.now
        self.scheduler.engine = self.engine
        self.admission = Admission(site, self.scheduler.windows)
        self.dependencies = Dependencies(self.records, self.server)
        self.lifecycle = Lifecycle(
            site,
            self.engine,
            self.records,
            self.journal,
            self.metrics,
            self.admission,
            self.dependencies,
            self.calendar.tz,
        )
        self.nodes = Nodes(site, self.journal)
        self.reservations = Reservations(self.server, self.journal)

    # -- time and commits -------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.engine.now

    @property
    def seq(self) -> int:
        return self.lifecycle.seq

    @property
    def on_change(self) -> list[Callable[[], None]]:
        return self.journal.on_change

    def sync(self) -> None:
        """Process every event up to the clock's now (each event second has its pass)."""
        now = self.clock.now()
        nxt = self.engine.next_event_time()
        if now > self.engine.now or (nxt is not None and nxt <= now):
            self.metrics.timed(lambda: self.engine.advance_to(now))
            self.scheduler.changed()

    def catch_up(self) -> None:
        """The engine at the clock's now, and everything that happened until then saved."""
        self.sync()
        self.commit()

    def tick(self) -> None:
        """The scheduling loop's heartbeat: caught up, and the clock saved with the rest."""
        self.sync()
        self.journal.commit(self.engine.now, clock=True)

    def save_clock(self) -> None:
        """Before an answer leaves: the emulated now it shows is saved, so that a restart
        after a crash never resumes the clock before a time a caller has seen."""
        self.journal.save_clock(self.engine.now)

    def settle(self) -> None:
        """After a change: what it queued arrives and one scheduling pass runs; then save."""
        self.metrics.timed(lambda: self.engine.instant(self.engine.now))
        self.scheduler.changed()
        self.commit()

    def commit(self) -> None:
        self.journal.commit(self.engine.now)

    def next_event_time(self) -> int | None:
        return self.engine.next_event_time()

    def save_meta(self, **values: Any) -> None:
        self.journal.save_meta(**values)

    @property
    def meta(self) -> dict[str, Any]:
        return self.journal.meta

    def restore(self, saved: Saved) -> None:
        """Rebuild the state saved before a stop or a crash; the clock goes on from there."""
        from batchd.server.service.restore import restore

        restore(self, saved)

    def machine_identity(self, site: SiteConfig | None = None) -> dict[str, Any]:
        site = site or self.site
        return {
            "server": site.server_name,
            "machines": [[m.name, m.nodes, m.node_prefix] for m in site.machine],
        }

    # -- names ------------------------------------------------------------------------
    def caller(self, user: str) -> Caller:
        return self.access.caller(user)

    def job_id(self, seq: int) -> str:
        return f"{seq}.{self.server}"

    def resv_id(self, seq: int) -> str:
        return self.reservations.resv_id(seq)

    def find(self, text: str) -> JobRecord:
        return self.lifecycle.find(text)

    def machine_named(self, name: str | None) -> int:
        try:
            return self.site.machine_index(name)
        except KeyError:
            names = ", ".join(m.name for m in self.site.machine)
            raise bad_request(f"machine: unknown machine {name!r}; machines: {names}") from None

    # -- jobs -------------------------------------------------------------------------
    @changes
    def submit(self, caller: Caller, body: JobSubmit) -> JobRecord:
        rec = self.lifecycle.submit(caller, body)
        self.journal.log(
            "job_submitted",
            job=self.job_id(rec.seq),
            owner=rec.owner,
            queue=rec.job.queue,
            nodes=rec.job.width,
            walltime=rec.job.estimate,
            state=rec.state.value,
        )
        return rec

    def inject(self, job: Job, owner: str) -> JobRecord:
        """A trace job arrives (from a timer, inside the engine's current second)."""
        return self.lifecycle.inject(job, owner)

    @changes
    def delete(self, caller: Caller, text: str) -> JobRecord:
        rec = self.lifecycle.delete(caller, text)
        self.journal.log("job_deleted", job=self.job_id(rec.seq), by=caller.user)
        return rec

    @changes
    def hold(self, caller: Caller, text: str, types: str) -> JobRecord:
        rec = self.lifecycle.hold(caller, text, types)
        self.journal.log("job_held", job=self.job_id(rec.seq), types=types, by=caller.user)
        return rec

    @changes
    def release(self, caller: Caller, text: str, types: str) -> JobRecord:
        rec = self.lifecycle.release(caller, text, types)
        self.journal.log("job_released", job=self.job_id(rec.seq), types=types, by=caller.user)
        return rec

    @changes
    def alter(self, caller: Caller, text: str, body: JobAlter) -> JobRecord:
        rec = self.lifecycle.alter(caller, text, body)
        self.journal.log("job_altered", job=self.job_id(rec.seq), by=caller.user)
        return rec

    def jobs(
        self,
        *,
        user: str | None = None,
        states: str | None = None,
        queue: str | None = None,
        history: bool = False,
    ) -> list[JobRecord]:
        if states is not None:
            bad = set(states) - set("QHWREF")
            if bad:
                raise bad_request(f"state: unknown letters {''.join(sorted(bad))}; use Q H W R E F")
        if queue is not None:
            self.admission.queue(queue)
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

    def planned_starts(self) -> dict[int, int]:
        return self.scheduler.planned_starts()

    def explain(self, job: Job) -> str | None:
        """Why a queued job does not start now, for a reason of its policy's own."""
        return self.engine.machines[job.machine].policy.explain(job, self.now)

    # -- nodes ------------------------------------------------------------------------
    @changes
    def set_node(self, caller: Caller, name: str, change: NodeChange) -> tuple[int, int]:
        where = self.nodes.find(name)
        require(caller, "operator", "change node states")
        down = self.nodes.set(self.engine, where, change.state, change.comment)
        if down is not None:
            self.lifecycle.node_failed(down)
        self.journal.log("node_state", node=name, state=change.state, by=caller.user)
        return where

    def count_allocated(self) -> None:
        """Nodes allocated to running jobs, counted afresh on each machine (after a restart)."""
        for m in self.engine.machines:
            busy = sum(len(h.nodes) for h in m.holders() if isinstance(h, Job))
            self.metrics.set_allocated(m.index, self.now, busy)

    # -- reservations -----------------------------------------------------------------
    @changes
    def create_reservation(self, caller: Caller, body: ReservationCreate) -> Reservation:
        require(caller, "manager", "create reservations")
        machine = self.machine_named(body.machine)
        resv = self.reservations.create(
            self.engine, machine, self.site.machine[machine].nodes, caller.user, body
        )
        self.journal.log(
            "reservation_created", resv=self.resv_id(resv.id), start=resv.start, nodes=body.nodes
        )
        return resv

    @changes
    def delete_reservation(self, caller: Caller, text: str) -> Reservation:
        require(caller, "manager", "delete reservations")
        resv = self.reservations.find(text)
        self.reservations.delete(self.engine, resv)
        self.journal.log("reservation_deleted", resv=self.resv_id(resv.id), by=caller.user)
        return resv

    # -- the scheduler ----------------------------------------------------------------
    @changes
    def set_scheduler(self, caller: Caller, change: SchedulerChange) -> None:
        require(caller, "manager", "change the scheduler")
        sched = self.scheduler
        targets = (
            range(len(self.site.machine))
            if change.machine is None
            else [self.machine_named(change.machine)]
        )
        chosen = {i: sched.choose(i, change.policy, change.params) for i in targets}
        for i, choice in chosen.items():
            old = sched.use(i, choice)
            pool = self.site.machine[i].name
            if choice.name != old.name:
                self.metrics.policy_switched(pool, old.name, choice.name)
            entry = {
                "time": self.now,
                "machine": pool,
                "from": old.name,
                "to": choice.name,
                "params": choice.params,
                "by": caller.user,
            }
            sched.switches.append(entry)
            self.journal.log("policy_set", **{k: v for k, v in entry.items() if k != "time"})
        sched.switches = sched.switches[-100:]
        self.save_meta(
            policies={
                m.name: {"policy": c.name, "params": c.params}
                for m, c in zip(self.site.machine, sched.choices, strict=True)
            },
            switches=sched.switches,
        )

    # -- configuration ----------------------------------------------------------------
    @changes
    def reload(self, site: SiteConfig) -> None:
        """Take a re-read configuration: queues, roles and limits; the machines cannot change."""
        if self.machine_identity(site) != self.machine_identity():
            raise ValueError(
                "the machine and the server name cannot change while the daemon runs; restart it"
            )
        for q in site.queues():
            old = next((o for o in self.site.queues() if o.name == q.name), None)
            if old is not None and site.machine_index(q.machine) != self.site.machine_index(
                old.machine
            ):
                raise ValueError(
                    f"queue {q.name}: its machine cannot change while the daemon runs "
                    "(its jobs wait there); add a queue for the other machine"
                )
        if site.server.max_body != self.site.server.max_body:
            log.warning("max_body_needs_restart", max_body=site.server.max_body)
        self.site = site
        self.calendar = site.calendar()
        self.access.auth = site.auth
        self.admission.site = site
        self.lifecycle.site = site
        self.lifecycle.tz = self.calendar.tz
        self.scheduler.reconfigure(site, self.calendar)
        self.admission.windows = self.scheduler.windows
        for q in site.queues():
            self.metrics.add_queue(q.name)
        log.info(
            "config_reloaded",
            queues=[q.name for q in site.queues()],
            windows={name: w.text for name, w in self.scheduler.windows.items()},
        )

    # -- figures (the exporter's MetricsSource) ---------------------------------------
    def queue_names(self) -> list[str]:
        return [q.name for q in self.site.queues()]

    def flush_tally(self) -> None:
        self.journal.flush_tally()

    def pools(self) -> list[PoolState]:
        """Each machine now: nodes by state, the policy it runs and the order in force."""
        out = []
        for m, conf in zip(self.engine.machines, self.site.machine, strict=True):
            by_state = dict.fromkeys(NODE_STATES, 0)
            holders = self.nodes.holders(self.engine, m.index)
            for i in range(conf.nodes):
                state = self.nodes.states.get((m.index, i))
                if state is not None:
                    by_state[state[0]] += 1
                elif i in holders:
                    by_state["allocated" if isinstance(holders[i], Job) else "reserved"] += 1
                else:
                    by_state["idle"] += 1
            out.append(
                PoolState(
                    name=conf.name,
                    nodes=conf.nodes,
                    by_state=by_state,
                    cores_per_node=conf.cores_per_node,
                    policy=self.scheduler.choices[m.index].name,
                    order=m.policy.order(),
                )
            )
        return out

    def refresh_plan_gauges(self) -> None:
        """Recompute the planned-schedule gauges (the scheduling loop calls this)."""
        self.sync()
        for m in self.engine.machines:
            self.metrics.plan_of(m.index).compute(
                self.now, self.scheduler.plan(m.index), m.running_ends()
            )

    def counts(self) -> dict[str, int]:
        """Jobs by state letter, finished ones included."""
        self.journal.flush_tally()
        tally = self.metrics.tally
        out = {letter: tally.total(letter) for letter in "QHWRE"}
        out["F"] = len(self.records) - sum(out.values())
        return out

    def counts_by_queue(self) -> dict[str, dict[str, int]]:
        """Unfinished jobs of each configured queue by state letter (Q R H W E)."""
        self.journal.flush_tally()
        tally = self.metrics.tally
        return {
            q.name: {letter: tally.count(q.name, letter) for letter in "QRHWE"}
            for q in self.site.queues()
        }
