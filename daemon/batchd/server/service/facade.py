"""The batch system behind the API: one facade over the parts that each do one job.

It owns the engine (the same one replays use, one policy per machine), the clock
and the store. Only unfinished jobs stay in memory (``records``): a finished one
goes to the history in the database once a commit has written it. A request first
finds the engine caught up with the clock and committed (``catch_up``, which the
app's middleware calls for every request), so what it reads has been saved. A
change runs inside ``change``: the part does
its work, then one scheduling pass, then one commit, before the answer is built.

When the state file takes no writes (a full disk, an I/O error), reads and the
scheduling loop go on and their records wait in the store for a retry; a change
is refused with 503 before it starts, and one whose own commit fails is undone:
the parts are built again from the state file, as at a restart, so that nothing
of it is kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

import structlog

from batchd.engine.clock import Clock
from batchd.engine.core import Engine
from batchd.execution.local import LocalExecutor
from batchd.metrics.exporter import PoolState
from batchd.metrics.live import LiveMetrics
from batchd.model.job import Job
from batchd.model.reservation import Reservation
from batchd.model.states import JobState
from batchd.sched.grid import widest_job
from batchd.server.errors import ApiError, bad_request, forbidden, unavailable
from batchd.server.jobview import finished_views
from batchd.server.node_schemas import NodeChange
from batchd.server.records import JobRecord
from batchd.server.schemas import (
    JobAlter,
    JobSubmit,
    ReservationCreate,
    SchedulerChange,
    ServerChange,
)
from batchd.server.service import job_requests
from batchd.server.service.access import Access, Caller, require
from batchd.server.service.admission import Admission
from batchd.server.service.arrays import ArrayJobs
from batchd.server.service.dependencies import Dependencies
from batchd.server.service.events import JobEvents
from batchd.server.service.history import History
from batchd.server.service.jobcontrol import JobControl
from batchd.server.service.journal import Journal
from batchd.server.service.kernels import KernelWarmer
from batchd.server.service.lifecycle import Lifecycle
from batchd.server.service.nodes import Nodes
from batchd.server.service.observers import DecisionLog, PoolObserver
from batchd.server.service.pool_states import pool_states
from batchd.server.service.queue_admin import QueueAdmin, effective_site
from batchd.server.service.reservations import Reservations
from batchd.server.service.resources import ResourceRules
from batchd.server.service.run_limits import SERVER_LIMITS, check_queued, run_limits
from batchd.server.service.runs import Runs
from batchd.server.service.saving import SaveStatus
from batchd.server.service.scheduler import Scheduler
from batchd.server.service.searches import SearchWorker
from batchd.server.store import Saved, SaveError, Store, StoreError
from batchd.site.config import SiteConfig

# PBS's words for a job that fits by count but not on any node (shared nodes).
UNPLACED = (
    "Insufficient amount of resource: ncpus (enough cores are free, but not on nodes "
    "that can hold its chunks)"
)
log = structlog.get_logger("batchd")


def not_saved(cause: str) -> ApiError:
    return unavailable(
        f"the state could not be saved: {cause}; nothing was changed, try again later"
    )


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
        executor: LocalExecutor | None = None,
    ) -> None:
        """``executor``: runs the jobs of the site's machines whose executor is local
        (needed when it has one)."""
        if site.executes() and executor is None:
            raise ValueError("a site with a machine whose executor is local needs an executor")
        self.file_site = site  # as the site file says; ``site`` adds what qmgr changed
        self.site = site
        self.clock = clock
        # Without a state file the history still needs a database: one in memory.
        self.store = store if store is not None else Store(":memory:")
        self.daemon_user = daemon_user
        self.speed = speed
        self.realtime = realtime
        self.server = site.server_name
        # The engine starts where the clock started: whatever the clock passed while the
        # daemon was being set up happens in order at the first catch-up.
        self.started = clock.start
        self.replay: Any = None  # a ReplayFeed when a trace is injected
        mconf = site.metrics
        self.metrics = LiveMetrics(
            pools=[m.name for m in site.machine],
            queues=[q.name for q in site.queues()],
            now=clock.start,
            window=mconf.utilization_window,
            per_user=mconf.per_user,
            max_users=mconf.max_users,
        )
        self.saving = SaveStatus(str(store.path) if store is not None else "")
        self.lost: str | None = None  # why the state file can be neither written nor read
        self.on_lost: list[Callable[[], None]] = []
        self._on_change: list[Callable[[], None]] = []
        # Each machine's latest self-tuning decisions (the web page's Queue view).
        self.decisions = [DecisionLog(lambda: self.engine.now) for _ in site.machine]
        self.searches = SearchWorker()  # kept across rebuilds: a stale search is ignored
        self.executor = executor  # kept across rebuilds: its jobs go on
        self.kernels: KernelWarmer | None = None  # the daemon's: policies' kernels off the loop
        self._build(clock.start)

    def _build(self, now: int) -> None:
        """The parts that hold the state, empty, with the engine at ``now``."""
        site = self.site
        self.records: dict[int, JobRecord] = {}
        self.arrays: dict[int, JobRecord] = {}  # unfinished job arrays (qsub -J)
        self.calendar = site.calendar()
        self.history = History(self.store, self._views, site.server.job_history_duration)
        self.journal = Journal(
            self.store, self.metrics.tally, self.saving, self._on_change, self.history
        )
        self.journal.on_retired.append(self._retire)
        self.journal.before_commit.append(self._note_assignments)
        self.access = Access(site.auth, self.daemon_user, self.query_other_jobs)
        self.scheduler = Scheduler(site, self.calendar, offload=self.searches)
        self.scheduler.observers = [
            PoolObserver(self.metrics, m.name, self.decisions[i], self._order_of(i))
            for i, m in enumerate(site.machine)
        ]
        grid = site.grid()
        self.engine = Engine(grid, self.scheduler.policies(), kill=True, keep_finished=False)
        self.engine.now = now
        for m in self.engine.machines:
            m.now = now
        self.scheduler.attach(self.engine)
        if self.scheduler.grid is not None:
            self.metrics.grid_structure(self.scheduler.grid.structure)
        self.admission = Admission(site, self.scheduler.windows)
        self.admission.grid_width = self.scheduler.grid_width
        self.dependencies = Dependencies(self.records, self.server, self.history.outcome)
        self.reservations = Reservations(
            self.server, self.journal, [m.slots_per_node for m in site.machine]
        )
        machine_names = [m.name for m in site.machine]
        self.admission.reserved = lambda q: self.reservations.queue_config(q, machine_names)
        self.admission.resv_owner = self.reservations.owner_of
        self.nodes = Nodes(site, self.journal)
        self.events = JobEvents(self.journal, self.server, self.nodes.unit_names, lambda: self.now)
        self.lifecycle = Lifecycle(
            site,
            self.engine,
            self.records,
            self.journal,
            self.metrics,
            self.admission,
            self.dependencies,
            self.calendar.tz,
            self.events,
            self.arrays,
        )
        self.array_jobs = ArrayJobs(self.lifecycle)
        self.control = JobControl(self.lifecycle)
        self.engine.reserved.on_close.append(self.array_jobs.reservation_closed)
        self.engine.reserved.on_close.append(self.control.reservation_closed)
        self.queue_admin = QueueAdmin()
        self.admission.set_live = lambda q: q in self.queue_admin.changes
        self.scheduler.limits = lambda: run_limits(self.site, self.journal.meta)
        self.admission.check_queued = lambda queue, owner, moving: check_queued(
            self.site, self.journal.meta, self.records.values(), queue, owner, moving
        )
        executor = self.executor  # jobs that run for real: their part of the service
        self.runs = Runs(self.lifecycle, self.journal, executor) if executor else None

    def _order_of(self, machine: int) -> Callable[[], str]:
        return lambda: self.engine.machines[machine].policy.order()

    # -- time and commits -------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.engine.now

    @property
    def seq(self) -> int:
        return self.lifecycle.seq

    @property
    def on_change(self) -> list[Callable[[], None]]:
        return self._on_change

    def sync(self) -> None:
        """Process every event up to the clock's now (each event second has its pass),
        then the ends of jobs that ran for real (and a pass), then the pass a finished
        search asks for."""
        now = self.clock.now()
        nxt = self.engine.next_event_time()
        if now > self.engine.now or (nxt is not None and nxt <= now):
            self.metrics.timed(lambda: self.engine.advance_to(now))
            self.scheduler.changed()
        if self.runs is not None and self.runs.apply_ends():
            self._pass()  # what ended for real gives its nodes to the queue now
        if self.searches.take_due():
            self._pass()

    def catch_up(self) -> None:
        """The engine at the clock's now, and everything that happened until then saved
        (or kept for the next try, while the state file takes no writes)."""
        if self.lost is not None:
            raise self._lost_answer()
        self.sync()
        self.save()

    def tick(self) -> None:
        """The scheduling loop's heartbeat: caught up, and the clock saved with the rest."""
        self.sync()
        self.save(clock=True)

    def save(self, *, clock: bool = False, force: bool = False) -> bool:
        """Commit what changed, unless saving fails and its retry is not due yet (or
        ``force``). A failure is logged once, and what could not be written waits for
        the next try: the clock and the jobs the loop started or ended are no request
        that could be refused. True if everything is saved."""
        write = force or self.saving.due()
        try:
            self.journal.commit(self.engine.now, clock=clock, write=write)
        except SaveError:
            return False
        if write:
            self._purge()
        return write and not self.saving.failing

    def save_clock(self) -> None:
        """Before an answer leaves: the emulated now it shows is saved, so that a restart
        after a crash never resumes the clock before a time a caller has seen. While the
        state file takes no writes it waits with the rest (a read is answered all the same)."""
        if self.journal.clock_moved(self.engine.now):
            self.save(clock=True)

    def commit(self, *, clock: bool = False) -> None:
        """Commit what changed (``SaveError`` if it could not be written); then the
        history forgets what ended over its duration ago (on the emulated clock)."""
        self.journal.commit(self.engine.now, clock=clock)
        self._purge()

    def _purge(self) -> None:
        with contextlib.suppress(SaveError):  # tried again at the next commit
            self.history.purge(self.engine.now)

    def _pass(self) -> None:
        """What a change queued arrives and one scheduling pass runs."""
        self.metrics.timed(lambda: self.engine.instant(self.engine.now))
        self.scheduler.changed()

    def settle(self) -> None:
        """After a change: one scheduling pass, then save (``SaveError`` if it failed)."""
        self._pass()
        self.commit()

    @contextlib.contextmanager
    def change(self) -> Iterator[None]:
        """A change of state: caught up and saved first, then the change, then one
        scheduling pass and one commit. It is refused with 503 (nothing changed) while
        the state cannot be saved, and undone if its own commit fails."""
        self.ready()
        yield
        try:
            self.settle()
        except SaveError as exc:
            raise self._undo(exc.cause) from None

    def ready(self) -> None:
        """Before a change: everything until now saved, else 503 before anything changes."""
        if self.lost is not None:
            raise self._lost_answer()
        self.sync()
        if not self.saving.due():
            raise not_saved(self.saving.cause or "")
        try:
            self.commit()
        except SaveError as exc:
            raise not_saved(exc.cause) from None

    def _undo(self, cause: str) -> ApiError:
        """A change whose commit failed: the state goes back to the state file, which holds
        everything until the change (``ready`` saved it), as a restart would find it.
        Counters of the events the change caused are not taken back."""
        store = self.store
        assert store is not None  # without a store nothing fails to save
        try:
            saved = store.load()
        except StoreError as exc:
            self._lose(f"{cause}; reading it back: {exc}")
            return self._lost_answer()
        store.discard()
        self.metrics.tally.clear()
        self._build(self.engine.now)
        self.restore(saved)
        if self.replay is not None:
            self.replay.resume()
        log.warning("change_undone", error=cause, now=self.now)
        return not_saved(cause)

    def _lose(self, why: str) -> None:
        """The state file can be neither written nor read: nothing more is saved, so that
        a change refused with 503 can never be; the daemon stops (``on_lost``)."""
        self.lost = why
        log.error("state_lost", error=why, state=self.saving.state)
        if self.store is not None:
            self.store.discard()
        self.journal.store = None
        for fn in self.on_lost:
            fn()

    def _lost_answer(self) -> ApiError:
        return unavailable(
            f"the state file can be neither written nor read ({self.lost}); the daemon stops"
        )

    def next_event_time(self) -> int | None:
        return self.engine.next_event_time()

    def save_meta(self, **values: Any) -> None:
        self.journal.save_meta(**values)

    @property
    def meta(self) -> dict[str, Any]:
        return self.journal.meta

    def _views(self, rec: JobRecord) -> tuple[str, str]:
        machine, prefix = self.job_machine(rec)
        return finished_views(
            rec,
            self.server,
            self.nodes.unit_names[rec.job.machine],
            machine,
            prefix,
            self.part_hosts(rec),
        )

    def job_machine(self, rec: JobRecord) -> tuple[str | None, str]:
        """The machine a job shows and its hosts' prefix: on a grid site the machine it runs
        on, ran on or was given (``MACHINE/`` before its hosts), else its queue's machine."""
        names = self.nodes.machine_names
        job = rec.job
        if self.scheduler.grid is None:
            return names[job.machine], ""
        if job.start >= 0:
            return names[job.machine], f"{names[job.machine]}/"
        if job.state is JobState.QUEUED:
            m = self.scheduler.assigned(job)
            return (names[m] if m is not None else None), ""
        return None, ""

    def widest_job(self) -> int:
        """The most nodes a job may ask for: the widest machine's, or under multisite the
        grid's in all."""
        nodes = [m.nodes for m in self.site.machine]
        grid = self.scheduler.grid
        return widest_job(grid.structure, nodes) if grid is not None else max(nodes)

    def part_hosts(self, rec: JobRecord) -> list[str] | None:
        """A multi-site job's hosts: every part's, ``MACHINE/NODE``, parts in the order they
        started (machine order); None for a job on one machine."""
        if not rec.parts:
            return None
        names, hosts = self.nodes.machine_names, self.nodes.names
        return [f"{names[p.machine]}/{hosts[p.machine][n]}" for p in rec.parts for n in p.nodes]

    def _note_assignments(self) -> None:
        """Before a commit, under a grid: each changed waiting job's machine, if it has one,
        goes into its row, so that a restart gives it back (``restore``)."""
        sched = self.scheduler
        if sched.layer is None:
            return
        for rec in self.journal.dirty():
            if rec.array is None:
                rec.assigned = sched.assigned(rec.job) if rec.state is JobState.QUEUED else None

    def _retire(self, rec: JobRecord) -> None:
        """A finished job is saved in the history: it leaves memory."""
        if self.records.get(rec.seq) is rec:
            del self.records[rec.seq]
            self.scheduler.forget(rec.job)
        elif self.arrays.get(rec.seq) is rec:
            del self.arrays[rec.seq]

    def restore(self, saved: Saved) -> None:
        """Rebuild the state saved before a stop or a crash; the clock goes on from there."""
        from batchd.server.service.restore import restore

        restore(self, saved)

    def machine_identity(self, site: SiteConfig | None = None) -> dict[str, Any]:
        """What a state file must have been saved for (SiteConfig.identity)."""
        return (site or self.site).identity()

    # -- names ------------------------------------------------------------------------
    def caller(self, user: str) -> Caller:
        return self.access.caller(user)

    def job_id(self, key: int) -> str:
        return self.lifecycle.job_id(key)

    def jid(self, rec: JobRecord) -> str:
        """``12.server``, ``12[].server`` or ``12[3].server``."""
        return self.lifecycle.jid(rec)

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
    def submit(self, caller: Caller, body: JobSubmit) -> JobRecord:
        return job_requests.submit(self, caller, body)

    def try_submit(self, caller: Caller, body: JobSubmit) -> dict[str, Any]:
        """A submission validated and planned, not made (POST /plan): nothing changes."""
        from batchd.server.service.trial import try_submit

        return try_submit(self, caller, body)

    def inject(self, job: Job, owner: str) -> JobRecord:
        """A trace job arrives (from a timer, inside the engine's current second)."""
        return self.lifecycle.inject(job, owner)

    def delete(self, caller: Caller, text: str) -> JobRecord:
        return job_requests.delete(self, caller, text)

    def hold(self, caller: Caller, text: str, types: str) -> JobRecord:
        return job_requests.hold(self, caller, text, types)

    def release(self, caller: Caller, text: str, types: str) -> JobRecord:
        return job_requests.release(self, caller, text, types)

    def alter(self, caller: Caller, text: str, body: JobAlter) -> JobRecord:
        return job_requests.alter(self, caller, text, body)

    def planned_starts(self) -> dict[int, int]:
        return self.scheduler.planned_starts()

    def explain(self, job: Job) -> str | None:
        """Why a queued job does not start now, for a reason of its policy's own, or
        because its chunks found no node with the cores they need (shared nodes)."""
        m = self.engine.machines[job.machine]
        if job.id in m.unplaced:
            return UNPLACED
        return m.policy.explain(job, self.now)

    # -- nodes ------------------------------------------------------------------------
    def set_node(self, caller: Caller, name: str, change: NodeChange) -> tuple[int, int]:
        with self.change():
            where = self.nodes.find(name)
            require(caller, "operator", "change node states")
            for down in self.nodes.set(self.engine, where, change.state, change.comment):
                self.lifecycle.node_failed(down)
        log.info("node_state", node=name, state=change.state, by=caller.user)
        return where

    def count_allocated(self) -> None:
        """Nodes allocated to running jobs, counted afresh on each machine (after a restart)."""
        for m in self.engine.machines:
            busy = sum(len(h.nodes) for h in m.holders() if isinstance(h, Job))
            self.metrics.set_allocated(m.index, self.now, busy)

    # -- reservations -----------------------------------------------------------------
    def create_reservation(self, caller: Caller, body: ReservationCreate) -> Reservation:
        """Any user reserves nodes, as with PBS's pbs_rsub; the reservation is theirs."""
        with self.change():
            machine = self.machine_named(body.machine)
            select = ""
            if body.select is not None:
                rules = ResourceRules(self.site)
                select = rules.reservation_select(body.select, body.nodes, machine)
            resv = self.reservations.create(
                self.engine, machine, self.site.machine[machine].nodes, caller.user, body
            )
            resv.select = select
        log.info(
            "reservation_created",
            resv=self.resv_id(resv.id),
            start=resv.start,
            nodes=body.nodes,
            owner=caller.user,
        )
        return resv

    def delete_reservation(self, caller: Caller, text: str) -> Reservation:
        """Its owner deletes a reservation, operators and managers any (pbs_rdel)."""
        with self.change():
            resv = self.reservations.find(text)
            if resv.owner != caller.user and not caller.at_least("operator"):
                raise forbidden(
                    f"{caller.user} may not delete reservation {self.resv_id(resv.id)}, "
                    f"owned by {resv.owner} (its owner, operators and managers may)"
                )
            self.reservations.delete(self.engine, resv)
        log.info("reservation_deleted", resv=self.resv_id(resv.id), by=caller.user)
        return resv

    # -- the scheduler ----------------------------------------------------------------
    def kernels_for(self, caller: Caller, change: SchedulerChange) -> list[Future[None]]:
        """The compiled kernels a change of the scheduler needs that are still being
        loaded (off the loop): the change waits for them, so that no pass compiles."""
        if self.kernels is None:
            return []
        from batchd.server.service.policy_change import kernel_units

        return self.kernels.ready(kernel_units(self, caller, change))

    def set_scheduler(self, caller: Caller, change: SchedulerChange) -> None:
        """A manager's change of policy (per machine), or of a grid site's structure."""
        from batchd.server.service.policy_change import set_grid, set_policies

        if self.scheduler.grid is not None:
            set_grid(self, caller, change)
        else:
            set_policies(self, caller, change)

    # -- server attributes ------------------------------------------------------------
    def history_duration(self, site: SiteConfig) -> int:
        """The job history's duration: as a manager set it (saved), else the config's."""
        saved = self.journal.meta.get("job_history_duration")
        return int(saved) if saved is not None else site.server.job_history_duration

    def query_other_jobs(self) -> bool:
        """Whether users see others' jobs: as a manager set it (saved), else the config's."""
        saved = self.journal.meta.get("query_other_jobs")
        return bool(saved) if saved is not None else self.site.server.query_other_jobs

    def set_server(self, caller: Caller, change: ServerChange) -> None:
        duration = change.job_history_duration
        others = change.query_other_jobs
        limits = {k: getattr(change, k) for k in SERVER_LIMITS if k in change.model_fields_set}
        with self.change():
            require(caller, "manager", "set server attributes")
            if duration is not None:
                self.history.duration = duration
                self.save_meta(job_history_duration=duration)
            if others is not None:
                self.save_meta(query_other_jobs=others)
            if change.scheduling is not None:
                self.save_meta(scheduling=change.scheduling)
            if limits:
                self.save_meta(server_limits={**(self.meta.get("server_limits") or {}), **limits})
        if change.scheduling is not None:
            log.info("server_set", scheduling=change.scheduling, by=caller.user)
        if limits:
            log.info("server_set", **limits, by=caller.user)
        if duration is not None:
            log.info("server_set", job_history_duration=duration, by=caller.user)
        if others is not None:
            log.info("server_set", query_other_jobs=others, by=caller.user)

    # -- configuration ----------------------------------------------------------------
    def reload(self, site: SiteConfig) -> None:
        """Take a re-read configuration: queues, roles and limits; the machines cannot change.

        A reload saves nothing of its own (the config file is its record): what its
        scheduling pass changes is saved, or kept for a retry, as the loop's records are."""
        from batchd.server.service.reload import check_reload

        self.sync()
        self.save()
        effective = effective_site(site, self.queue_admin.changes)
        check_reload(self, effective)
        self.file_site, site = site, effective
        self.use_site(site)
        self._pass()
        self.save()
        log.info(
            "config_reloaded",
            queues=[q.name for q in site.queues()],
            windows={name: w.text for name, w in self.scheduler.windows.items()},
        )

    def use_site(self, site: SiteConfig) -> None:
        """Queues, roles and limits from now on (the machines stay)."""
        self.site = site
        self.calendar = site.calendar()
        self.history.duration = self.history_duration(site)
        self.access.auth = site.auth
        self.admission.site = site
        self.lifecycle.site = site
        self.lifecycle.tz = self.calendar.tz
        self.scheduler.reconfigure(site, self.calendar)
        self.admission.windows = self.scheduler.windows
        for q in site.queues():
            self.metrics.add_queue(q.name)

    # -- figures (the exporter's MetricsSource) ---------------------------------------
    def queue_names(self) -> list[str]:
        return [q.name for q in self.site.queues()]

    def flush_tally(self) -> None:
        self.journal.flush_tally()

    def save_failing(self) -> bool:
        return self.saving.failing or self.lost is not None

    def pools(self) -> list[PoolState]:
        """Each machine now: nodes by state, the policy it runs and the order in force."""
        return pool_states(self.engine, self.site, self.nodes, self.scheduler)

    def refresh_plan_gauges(self) -> None:
        """Recompute the planned-schedule gauges (the scheduling loop calls this)."""
        self.sync()
        for m in self.engine.machines:
            self.metrics.plan_of(m.index).compute(
                self.now, self.scheduler.plan(m.index), m.running_ends()
            )

    def counts(self) -> dict[str, int]:
        """Jobs by state letter; F: the finished jobs in the history."""
        self.journal.flush_tally()
        tally = self.metrics.tally
        out = {letter: tally.total(letter) for letter in "QHWRE"}
        out["F"] = self.history.count
        return out

    def counts_by_queue(self) -> dict[str, dict[str, int]]:
        """Unfinished jobs of each configured queue by state letter (Q R H W E)."""
        self.journal.flush_tally()
        tally = self.metrics.tally
        return {
            q.name: {letter: tally.count(q.name, letter) for letter in "QRHWE"}
            for q in self.site.queues()
        }
