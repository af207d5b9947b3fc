"""The batch system behind the API: one facade over the parts that each do one job.

It owns the engine (the same one replays use, one policy per machine), the clock
and the store. Only unfinished jobs stay in memory (``records``): a finished one
goes to the history in the database once a commit has written it. It is the
``Changes`` that every change goes through (``service.changes``: caught up, the
change, one scheduling pass, one commit) and the ``Figures`` the metrics exporter
reads (``service.figures``); the changes themselves are ``service.operations``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from batchd.engine.clock import Clock
from batchd.engine.core import Engine
from batchd.execution.local import LocalExecutor
from batchd.metrics.live import LiveMetrics
from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.sched.grid import widest_job
from batchd.server.errors import bad_request
from batchd.server.jobresources import whole_nodes
from batchd.server.jobview import exec_hosts, finished_views
from batchd.server.records import JobRecord
from batchd.server.service.access import Access, Caller
from batchd.server.service.admission import Admission
from batchd.server.service.arrays import ArrayJobs
from batchd.server.service.changes import Changes
from batchd.server.service.dependencies import Dependencies
from batchd.server.service.events import JobEvents
from batchd.server.service.figures import Figures
from batchd.server.service.history import History
from batchd.server.service.jobcontrol import JobControl
from batchd.server.service.journal import Journal
from batchd.server.service.kernels import KernelWarmer
from batchd.server.service.lifecycle import Lifecycle
from batchd.server.service.nodes import Nodes
from batchd.server.service.observers import DecisionLog, PoolObserver
from batchd.server.service.queue_admin import QueueAdmin, effective_site
from batchd.server.service.reservations import Reservations
from batchd.server.service.run_limits import check_queued, run_limits
from batchd.server.service.runs import Runs
from batchd.server.service.saving import SaveStatus
from batchd.server.service.scheduler import Scheduler
from batchd.server.service.searches import SearchWorker
from batchd.server.store import Saved, Store
from batchd.site.config import SiteConfig

# PBS's words for a job that fits by count but not on any node (shared nodes).
UNPLACED = (
    "Insufficient amount of resource: ncpus (enough cores are free, but not on nodes "
    "that can hold its chunks)"
)
log = structlog.get_logger("batchd")


class BatchService(Changes, Figures):
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
        self.events = JobEvents(self.journal, self.server, self.exec_vnode, lambda: self.now)
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

    # -- time and saved meta (the commits are ``Changes``') -------------------------
    @property
    def now(self) -> int:
        return self.engine.now

    @property
    def seq(self) -> int:
        return self.lifecycle.seq

    @property
    def on_change(self) -> list[Callable[[], None]]:
        return self._on_change

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

    def exec_vnode(self, rec: JobRecord) -> str:
        """A started job's exec_vnode as its view shows it (a grid's ``MACHINE/`` before
        each host, every part of a multi-site job)."""
        _, prefix = self.job_machine(rec)
        hosts = self.part_hosts(rec) or exec_hosts(
            rec, self.nodes.unit_names[rec.job.machine], prefix
        )
        return (rec.resources or whole_nodes(rec.job.width)).exec_vnode(hosts)

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
        return [f"{names[p.machine]}/{hosts[p.machine][n]}" for p in rec.parts for n in p.units]

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
    def inject(self, job: Job, owner: str) -> JobRecord:
        """A trace job arrives (from a timer, inside the engine's current second)."""
        return self.lifecycle.inject(job, owner)

    def job_events(self, text: str) -> tuple[JobRecord, list[tuple[int, str, str]]]:
        """A job and its history (``tracejob``), oldest first."""
        rec = self.find(text)
        return rec, self.store.events_of(rec.seq)

    def queue_jobs(self, name: str) -> int:
        """The unfinished jobs, arrays and subjobs in queue ``name``."""
        return sum(rec.job.queue == name for rec in [*self.records.values(), *self.arrays.values()])

    def planned_starts(self) -> dict[int, int]:
        return self.scheduler.planned_starts()

    def plan_of(self, rec: JobRecord) -> dict[int, int]:
        """Of the plan, what one job's view needs: its planned start, if it waits and has one."""
        job = rec.job
        if job.state is not JobState.QUEUED:
            return {}
        start = self.scheduler.planned_start(job)
        return {} if start is None else {job.id: start}

    def explain(self, job: Job) -> str | None:
        """Why a queued job does not start now, for a reason of its policy's own, or
        because its chunks found no node with the cores they need (shared nodes)."""
        m = self.engine.machines[job.machine]
        if job.id in m.unplaced:
            return UNPLACED
        return m.policy.explain(job, self.now)

    # -- nodes ------------------------------------------------------------------------
    def count_allocated(self) -> None:
        """Nodes allocated to running jobs, counted afresh on each machine (after a restart)."""
        for m in self.engine.machines:
            busy = sum(len(h.units) for h in m.holders() if isinstance(h, Job))
            self.metrics.set_allocated(m.index, self.now, busy)

    # -- server attributes ------------------------------------------------------------
    def history_duration(self, site: SiteConfig) -> int:
        """The job history's duration: as a manager set it (saved), else the config's."""
        saved = self.journal.meta.get("job_history_duration")
        return int(saved) if saved is not None else site.server.job_history_duration

    def query_other_jobs(self) -> bool:
        """Whether users see others' jobs: as a manager set it (saved), else the config's."""
        saved = self.journal.meta.get("query_other_jobs")
        return bool(saved) if saved is not None else self.site.server.query_other_jobs

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
