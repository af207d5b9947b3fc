"""The event core: job ends, submissions and scheduling passes on integer time.

Events at the same second are handled in a fixed order: all job ends first,
then timers (reservations opening and closing, jobs becoming eligible), then
all submissions, then one scheduling pass per machine. A zero-length job
started in that pass ends at the same second, which makes another round.

A policy answers a pass with placements (job, machine, width); the engine
checks each one and allocates the nodes. The engine is the one writer of job
state: besides replay, it offers what a live batch system needs, each as one
transition: jobs are held, released, deferred and cancelled, leave and rejoin
the queue, running jobs are killed or requeued, jobs come back after a
restart, nodes leave and rejoin service, reservations hold nodes for a fixed
window, and the policy of a machine can be replaced while jobs run.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter

from batchd.engine import external, restored
from batchd.engine.control import MachineControl, check_machine
from batchd.engine.machine import MachineState, Timer
from batchd.engine.placement import PlacementError, moldable_to, reshape, widths_text
from batchd.engine.reservations import ReservationRunner, ResvRun
from batchd.engine.shared import start_shared
from batchd.engine.transitions import JobTransitions
from batchd.model.job import UNSET, Job
from batchd.model.machine import FOLD_FROM, Grid, node_runs, spans_as_runs
from batchd.model.states import JobState, change_state
from batchd.sched.core.policy import Placement, Policy

__all__ = ["Engine", "PlacementError", "StuckJobsError", "STUCK_AFTER"]

JobHook = Callable[[Job], None]

_by_submit = attrgetter("submit")
_heappush = heapq.heappush
# A job starts from QUEUED, the one state that may change to RUNNING, and ends from
# RUNNING, which may change to FINISHED: the engine checks those by identity and calls
# change_state (which raises) only for a job in any other state.
_QUEUED, _RUNNING, _FINISHED = JobState.QUEUED, JobState.RUNNING, JobState.FINISHED


class StuckJobsError(ValueError):
    """Jobs wait that nothing will ever start: the workload and the machine do not fit."""


STUCK_AFTER = 366 * 86_400  # a year without a start, an end or an arrival


class Engine(MachineControl, JobTransitions):
    """Runs jobs on the machines of a grid under one policy per machine."""

    def __init__(
        self,
        grid: Grid,
        policies: Sequence[Policy],
        *,
        kill: bool = True,
        keep_finished: bool = True,
        keep_units: bool = True,
        fold_units: bool = False,
    ) -> None:
        """``keep_finished``: collect finished jobs in ``finished`` (a replay's summary
        reads them); a daemon that runs for months passes False and hands each one on
        through ``on_end`` instead. ``ended`` counts them either way. ``keep_units``:
        jobs get and keep their unit ids (qstat -x shows them); a replay that reads none
        passes False: jobs then hold nodes by count (on a machine whose nodes are
        shared, by ids dropped once each end is handled), which is what the policies
        see either way, and no id is ever made. Nodes cannot leave service then.
        ``fold_units`` (with ``keep_units``): a finished job's ids are folded into runs
        (``result.ran_on``) and let go, from ``FOLD_FROM`` ids, so that a replay that
        writes every job's nodes holds a few numbers per job where it held an id per
        node (a machine of 93,312 cores: 218 million ids)."""
        if len(policies) != len(grid.machines):
            raise ValueError(
                f"{len(grid.machines)} machines need as many policies, got {len(policies)}"
            )
        for i, policy in enumerate(policies):
            check_machine(policy, i)
        self.grid = grid
        self.kill = kill
        self.machines = [
            MachineState(i, m, p, kill)
            for i, (m, p) in enumerate(zip(grid.machines, policies, strict=True))
        ]
        self.now = 0
        self.keep_finished = keep_finished
        self.keep_units = keep_units
        self.fold_units = fold_units and keep_units
        # Nodes held by count, without ids: nothing reads them, and no node is shared.
        self._counting = not keep_units and all(m.slots_per_node == 1 for m in grid.machines)
        self.finished: list[Job] = []
        self.ended = 0
        self.submitted = 0
        self._trace: list[Job] = []
        self._next = 0  # index of the next trace submission
        self._arrivals: list[tuple[int, int, Job]] = []  # live submissions
        self._ends: list[tuple[int, int, Job]] = []
        self._dead: set[int] = set()  # seqs of end events of killed or requeued jobs
        self._timers: list[tuple[int, int, Timer]] = []
        self._seq = 0
        self._progress_at = 0  # when a job last arrived, started or ended
        self.on_submit: list[JobHook] = []
        self.on_start: list[JobHook] = []
        self.on_end: list[JobHook] = []
        self.on_requeue: list[JobHook] = []  # requeued by a policy at a wake-up
        # An external job must stop (engine/external.py): its ``result.stopping`` says what next.
        self.on_stop: list[JobHook] = []
        self.stop_runs: dict[int, ResvRun] = {}  # stopping jobs of a reservation: its run
        self._wakeups: list[Timer | None] = [None] * len(self.machines)
        self.reserved = ReservationRunner(self)  # advance reservations and their jobs

    # -- input ------------------------------------------------------------------
    def load(self, jobs: Iterable[Job]) -> None:
        """Queue a workload; jobs are submitted at their submit times."""
        jobs = sorted(jobs, key=_by_submit)
        if jobs and jobs[0].submit < self.now:
            raise ValueError(f"job {jobs[0].id} is submitted at {jobs[0].submit}, before now")
        self._check(jobs)
        rest = self._trace[self._next :]
        self._trace = sorted(rest + jobs, key=_by_submit) if rest else jobs
        self._next = 0

    def submit(self, job: Job) -> None:
        """Submit one job at its submit time (now or later)."""
        if job.submit < self.now:
            raise ValueError(f"job {job.id} is submitted at {job.submit}, before now ({self.now})")
        self._check([job])
        self._seq += 1
        heapq.heappush(self._arrivals, (job.submit, self._seq, job))

    def _check(self, jobs: Sequence[Job]) -> None:
        sizes = [m.machine.nodes for m in self.machines]
        wide = [m.policy.grid_wide for m in self.machines]  # a grid's port takes any width
        count = len(sizes)
        for job in jobs:
            machine = job.machine
            if not 0 <= machine < count:
                raise ValueError(f"job {job.id} names machine {machine}, which does not exist")
            if not 0 < job.width <= sizes[machine] and not (job.width > 0 and wide[machine]):
                raise ValueError(
                    f"job {job.id} asks for {job.width} nodes; the machine has {sizes[machine]}"
                )

    # -- time -------------------------------------------------------------------
    def next_event_time(self) -> int | None:
        """When the next event is due: a submission, an end or a timer (None: none left)."""
        return self._seconds(-1, None)  # every event is after second -1: none is handled

    def instant(self, t: int) -> None:
        """Handle everything that happens at second ``t``, then one scheduling pass."""
        self._seconds(None, None, t)

    def run(self, until: int | None = None, progress: Callable[[int], None] | None = None) -> None:
        """Process every event (up to ``until``) as fast as possible: the virtual clock."""
        self._seconds(until, progress)
        if until is None:
            stuck = sum(len(m.policy.waiting()) for m in self.machines)
            if stuck:
                raise StuckJobsError(f"{stuck} jobs were still waiting when no event was left")
        if progress is not None:
            progress(self.ended)

    def _seconds(
        self, until: int | None, progress: Callable[[int], None] | None, at: int | None = None
    ) -> int | None:
        """The one loop over seconds: find the next event's second, then handle it.

        It goes round until no event is left or the next is after ``until``, and answers
        that event's second (None: none is left): ``run`` goes round to the end,
        ``next_event_time`` only asks. ``instant`` (``at``) handles that one second,
        even without an event. One loop with its lookups made once: a replay makes a
        round per second with events, and calls and attribute reads per round were a
        tenth of a whole replay.
        """
        # Rounds left before progress is reported and stuck jobs are looked for; in
        # ``instant`` the one round: the loop then returns instead.
        rounds = 1 if at is not None else 1024
        heappop = heapq.heappop
        ends, dead, timers, arrivals = self._ends, self._dead, self._timers, self._arrivals
        machines = self.machines
        reserved = self.reserved
        finish, start, arm = self._finish, self._start, self._arm_wakeup
        on_submit = self.on_submit
        while True:
            # -- the next event's second ------------------------------------------------
            if at is None:
                trace = self._trace
                t = trace[self._next].submit if self._next < len(trace) else None
                if arrivals and (t is None or arrivals[0][0] < t):
                    t = arrivals[0][0]
                while dead and ends and ends[0][1] in dead:
                    dead.discard(heappop(ends)[1])  # killed or requeued before this end
                if ends and (t is None or ends[0][0] < t):
                    t = ends[0][0]
                while timers and timers[0][2].cancelled:
                    heappop(timers)
                if timers and (t is None or timers[0][0] < t):
                    t = timers[0][0]
                if t is None or (until is not None and t > until):
                    return t
            else:
                t = at
            # -- everything at second t: ends, timers, arrivals, one pass -----------------
            if t < self.now:
                raise RuntimeError(f"time cannot go back from {self.now} to {t}")
            self.now = t
            for m in machines:
                m.now = t
            while ends and ends[0][0] == t:
                _, seq, job = heappop(ends)
                if dead and seq in dead:
                    dead.discard(seq)
                    continue
                finish(job)
            while timers and timers[0][0] == t:
                timer = heappop(timers)[2]
                if not timer.cancelled:
                    timer.fn()
            trace = self._trace
            while True:  # arrivals: the trace's at t, then those submitted live
                k = self._next
                if k < len(trace) and trace[k].submit == t:
                    self._next = k + 1
                    job = trace[k]
                elif arrivals and arrivals[0][0] == t:
                    job = heappop(arrivals)[2]
                else:
                    break
                m = machines[job.machine]
                self.submitted += 1
                self._progress_at = t
                if reserved.runs and (run := reserved.run_of(job)) is not None:
                    run.queue.add(job)
                else:
                    m.policy.job_submitted(m, job)
                for hook in on_submit:
                    hook(job)
            for m in machines:  # the pass
                policy = m.policy
                placements = policy.schedule(m)
                if placements:
                    if m.shared:
                        start_shared(self, m, placements)
                    else:
                        for placement in placements:
                            start(m, placement)
                if policy.wakes:
                    arm(m)
            if reserved.runs:
                reserved.schedule()
            rounds -= 1
            if not rounds:
                if at is not None:
                    return None
                rounds = 1024
                if progress is not None:
                    progress(self.ended)
                if until is None:
                    self._check_stuck()

    def _check_stuck(self) -> None:
        """Jobs that wait while nothing runs or arrives for a year wait for a window that
        never lets them run (a gate inside a gate, both must fit): say so, do not loop."""
        if self.now - self._progress_at < STUCK_AFTER:
            return
        if self._next < len(self._trace) or self._arrivals:
            return
        if any(m.running_count for m in self.machines):
            return
        waiting = [(m, j) for m in self.machines for j in m.policy.waiting()]
        if not waiting:
            return
        m, job = waiting[0]
        why = m.policy.explain(job, self.now) or "it does not fit"
        raise StuckJobsError(
            f"{len(waiting)} jobs have waited since {self._progress_at} with nothing running "
            f"and nothing left to arrive: no window lets them run (job {job.id}: {why})"
        )

    def advance_to(self, when: int) -> None:
        """Process every event up to ``when`` and set the time there: for live clocks."""
        self.run(until=when)
        if when > self.now:
            self.now = when
            for m in self.machines:
                m.now = when

    def _arm_wakeup(self, m: MachineState) -> None:
        """Keep one timer per machine at the time its policy asked to be woken."""
        when = m.policy.next_wakeup(self.now)
        current = self._wakeups[m.index]
        if current is not None and not current.cancelled:
            if current.when == when:
                return
            current.cancel()
        self._wakeups[m.index] = None if when is None else self.call_at(when, lambda: self._wake(m))

    def _wake(self, m: MachineState) -> None:
        """The policy's own time: end the jobs it names; the pass of this second follows."""
        self._wakeups[m.index] = None
        for job, action in m.policy.expired(m):
            if action == "requeue":
                self.requeue(job)
                for hook in self.on_requeue:
                    hook(job)
            else:
                self.terminate(job, "overflow")

    # -- transitions --------------------------------------------------------------
    def _start(self, m: MachineState, placement: Placement) -> None:
        job, machine, width = placement
        pool = m.pool
        if machine != m.index or width != job.width or width > pool._nfree:
            if machine == m.index and width <= pool._nfree and moldable_to(job, width):
                reshape(job, width)
            else:
                raise PlacementError(
                    f"policy {m.policy.name} placed job {job.id} on machine {machine} with "
                    f"{width} nodes; it waits on machine {m.index} for {widths_text(job)}, "
                    f"{pool.free} are free"
                )
        if self._counting:
            pool.take_count(width)
        elif job.pieces is None:
            job.units = pool.allocate(width)
        else:  # shared nodes: none when its pieces fit no node now (engine/shared.py)
            if (units := pool.allocate_pieces(job.pieces, job.spread)) is None:
                m.unplaced.add(job.id)
                return
            job.units = units
        if job.state is not _QUEUED:  # change_state(job, RUNNING), once per job
            change_state(job, _RUNNING)
        job.state = _RUNNING
        now = self.now
        self._progress_at = now
        job.start = now
        if not job.result.started_by:
            job.result.started_by = m.policy.name
        estimate = job.estimate
        m.add_running(now + (estimate if estimate > 0 else 1), job, width if self._counting else -1)
        if not job.external:  # push_end, inline: once per job
            runtime = job.runtime
            if self.kill and runtime > estimate:
                end = now + estimate
                job.result.killed = True
            else:
                end = now + (runtime if runtime > 0 else 0)
            self._seq = seq = self._seq + 1
            _heappush(self._ends, (end, seq, job))
        for hook in self.on_start:
            hook(job)

    def push_end(self, job: Job) -> None:
        """The end event of a job that starts now, or started before a restart (none for a
        job that really runs: its end is reported)."""
        if job.external:
            return
        runtime, estimate = job.runtime, job.estimate
        if self.kill and runtime > estimate:
            end = job.start + estimate
            job.result.killed = True
        else:
            end = job.start + (runtime if runtime > 0 else 0)
        self._seq = seq = self._seq + 1
        _heappush(self._ends, (end, seq, job))

    def finish(self, job: Job, outcome: str, run: ResvRun | None, end: int) -> None:
        """A job ends now, recorded as ended at ``end`` (an external job's reported end)."""
        self._finish(job, outcome, run)
        job.end = end

    def _finish(self, job: Job, outcome: str = "", run: ResvRun | None = None) -> None:
        m = self.machines[job.machine]
        job.end = self._progress_at = self.now
        job.result.outcome = outcome or ("walltime" if job.result.killed else "ok")
        if job.state is not _RUNNING:  # change_state(job, FINISHED), once per job
            change_state(job, _FINISHED)
        job.state = _FINISHED
        if run is None and self.reserved.runs:
            run = self.reserved.run_of(job)
        freed = None  # the runs of the nodes the pool took back, as it found them
        if run is not None:  # a job of a reservation: its nodes go back to the reservation
            run.give_back(job)
        elif self._counting:
            m.pool.give_back_count(job.width)
            estimate = job.estimate
            m.remove_running(job.start + (estimate if estimate > 0 else 1), job)  # duration
        else:
            freed = m.pool.release(job.units)
            estimate = job.estimate
            m.remove_running(job.start + (estimate if estimate > 0 else 1), job)  # duration
        self.ended += 1  # _ended, inline: once per job
        if self.keep_finished:
            self.finished.append(job)
        if run is None:
            m.policy.job_ended(m, job)
        for hook in self.on_end:
            hook(job)
        if job.units and not self.keep_units:
            job.units = []
        elif self.fold_units and len(job.units) >= FOLD_FROM:
            job.result.ran_on = node_runs(job.units) if freed is None else spans_as_runs(freed)
            job.units = []

    # -- live control ---------------------------------------------------------------
    def call_at(self, when: int, fn: Callable[[], None]) -> Timer:
        """Run ``fn`` at emulated time ``when`` (after that second's job ends)."""
        if when < self.now:
            raise ValueError(f"cannot set a timer at {when}, before now ({self.now})")
        timer = Timer(when, fn)
        self._seq += 1
        heapq.heappush(self._timers, (when, self._seq, timer))
        return timer

    def enqueue(self, job: Job) -> None:
        """Put a job into its queue now: released, altered or restored jobs."""
        self._check([job])
        run = self.reserved.run_of(job)
        if run is not None:
            run.queue.add(job)
            return
        m = self.machines[job.machine]
        m.policy.job_submitted(m, job)

    def withdraw(self, job: Job) -> None:
        """Take a waiting job out of its queue (held, deleted, altered, moved)."""
        run = self.reserved.run_of(job)
        if run is not None:
            run.queue.remove(job)
            return
        m = self.machines[job.machine]
        m.policy.withdraw(m, job)

    def terminate(self, job: Job, outcome: str, run: ResvRun | None = None) -> None:
        """End a running job now (deleted, signalled, its node failed, its reservation
        ended: ``run`` is that reservation's); a job that really runs ends once its
        processes have stopped (``exited``)."""
        if job.external:
            external.stop(self, job, external.END, outcome, run)
            return
        if job.state is not JobState.RUNNING:
            raise ValueError(f"job {job.id} is not running")
        self._cancel_end(job)
        self._finish(job, outcome, run)

    def exited(self, job: Job, outcome: str, end: int | None = None) -> None:
        """The processes of a job that really runs ended at ``end`` (default now): it
        finishes with ``outcome``, or as its stop asked (engine/external.py)."""
        external.exited(self, job, outcome, end)

    def _cancel_end(self, job: Job) -> None:
        """Forget a running job's end event (a rare path: the heap is searched)."""
        for _, seq, other in self._ends:
            if other is job and seq not in self._dead:
                self._dead.add(seq)
                return

    def requeue(self, job: Job) -> None:
        """Stop a running job and put it back in the queue, to run again from the start
        (a job that really runs: once its processes have stopped)."""
        if job.external:
            external.stop(self, job, external.REQUEUE, "", None)
            return
        if job.state is not JobState.RUNNING:
            raise ValueError(f"job {job.id} is not running")
        self.requeue_now(job)

    def requeue_now(self, job: Job) -> None:
        """Put a running or exiting job back in its queue now."""
        m = self.machines[job.machine]
        self._cancel_end(job)
        run = self.reserved.run_of(job)
        if run is not None:
            self.reserved.requeue(run, job)
            self._reset_run(job)
            return
        if self._counting:
            m.pool.give_back_count(job.width)
        else:
            m.pool.release(job.units)
        m.remove_running(job.start + job.duration, job)
        change_state(job, JobState.QUEUED)
        self._reset_run(job)
        m.policy.job_ended(m, job)
        m.policy.job_submitted(m, job)

    @staticmethod
    def _reset_run(job: Job) -> None:
        if job.mold is not None:
            reshape(job, job.mold.width)  # it waits again as submitted
        job.start = job.end = UNSET
        job.units = []
        job.result.killed = False
        job.result.started_by = ""

    def restore_running(self, job: Job) -> None:
        """A job that was running before a restart: same nodes, same start."""
        restored.running(self, job)

    def restore_finished(self, job: Job, end: int, outcome: str) -> None:
        """A job that was running before a restart ended at ``end`` while nobody watched."""
        restored.finished(self, job, end, outcome)

    def restore_requeued(self, job: Job) -> None:
        """A job that was running before a restart went back to its queue while nobody watched.

        It is not in any queue yet: ``enqueue`` puts it there with the other waiting jobs.
        """
        change_state(job, JobState.QUEUED)
        self._reset_run(job)
