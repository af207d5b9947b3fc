"""The event core: job ends, submissions and scheduling passes on integer time.

Events at the same second are handled in a fixed order: all job ends first,
then all submissions, then one scheduling pass per machine. A zero-length job
started in that pass ends at the same second, which makes another round.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence

from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.states import JobState, change_state
from batchd.sched.policy import Policy

JobHook = Callable[[Job], None]


class StuckJobsError(RuntimeError):
    """The event queue ran dry while jobs were still waiting."""


class MachineState:
    """One machine as the engine runs it; also the view its policy sees."""

    __slots__ = ("index", "machine", "policy", "pool", "now", "kill", "_keys", "_ends", "_widths")

    def __init__(self, index: int, machine: Machine, policy: Policy, kill: bool) -> None:
        self.index = index
        self.machine = machine
        self.policy = policy
        self.pool = machine.pool
        self.now = 0
        self.kill = kill
        self._keys: list[tuple[int, int]] = []  # (estimated end, job id), ascending
        self._ends: list[int] = []
        self._widths: list[int] = []

    # -- the policy's view ------------------------------------------------------
    @property
    def capacity(self) -> int:
        return self.machine.nodes

    @property
    def free(self) -> int:
        return self.pool.free

    @property
    def overrun(self) -> bool:
        return bool(self._ends) and self._ends[0] <= self.now

    def running_ends(self) -> list[int]:
        if self._ends and self._ends[0] <= self.now:
            # Past its estimate and still running: nobody knows when it ends.
            soon = self.now + 1
            return [e if e > soon else soon for e in self._ends]
        return self._ends

    def running_widths(self) -> list[int]:
        return self._widths

    # -- bookkeeping ------------------------------------------------------------
    def add_running(self, job: Job) -> None:
        key = (job.start + job.duration, job.id)
        i = bisect_left(self._keys, key)
        self._keys.insert(i, key)
        self._ends.insert(i, key[0])
        self._widths.insert(i, job.width)

    def remove_running(self, job: Job) -> None:
        i = bisect_left(self._keys, (job.start + job.duration, job.id))
        del self._keys[i], self._ends[i], self._widths[i]

    @property
    def running_count(self) -> int:
        return len(self._keys)


class Engine:
    """Runs jobs on the machines of a grid under one policy per machine."""

    def __init__(self, grid: Grid, policies: Sequence[Policy], *, kill: bool = True) -> None:
        if len(policies) != len(grid.machines):
            raise ValueError(
                f"{len(grid.machines)} machines need as many policies, got {len(policies)}"
            )
        self.grid = grid
        self.kill = kill
        self.machines = [
            MachineState(i, m, p, kill)
            for i, (m, p) in enumerate(zip(grid.machines, policies, strict=True))
        ]
        self.now = 0
        self.finished: list[Job] = []
        self.submitted = 0
        self._trace: list[Job] = []
        self._next = 0  # index of the next trace submission
        self._arrivals: list[tuple[int, int, Job]] = []  # live submissions
        self._ends: list[tuple[int, int, Job]] = []
        self._seq = 0
        self.on_submit: list[JobHook] = []
        self.on_start: list[JobHook] = []
        self.on_end: list[JobHook] = []

    # -- input ------------------------------------------------------------------
    def load(self, jobs: Iterable[Job]) -> None:
        """Queue a workload; jobs are submitted at their submit times."""
        jobs = sorted(jobs, key=lambda j: j.submit)
        if jobs and jobs[0].submit < self.now:
            raise ValueError(f"job {jobs[0].id} is submitted at {jobs[0].submit}, before now")
        self._check(jobs)
        rest = self._trace[self._next :]
        self._trace = sorted(rest + jobs, key=lambda j: j.submit) if rest else jobs
        self._next = 0

    def submit(self, job: Job) -> None:
        """Submit one job at its submit time (now or later)."""
        if job.submit < self.now:
            raise ValueError(f"job {job.id} is submitted at {job.submit}, before now ({self.now})")
        self._check([job])
        self._seq += 1
        heapq.heappush(self._arrivals, (job.submit, self._seq, job))

    def _check(self, jobs: Sequence[Job]) -> None:
        for job in jobs:
            if not 0 <= job.machine < len(self.machines):
                raise ValueError(f"job {job.id} names machine {job.machine}, which does not exist")
            nodes = self.machines[job.machine].capacity
            if not 0 < job.width <= nodes:
                raise ValueError(
                    f"job {job.id} asks for {job.width} nodes; the machine has {nodes}"
                )

    # -- time -------------------------------------------------------------------
    def next_event_time(self) -> int | None:
        t: int | None = None
        if self._next < len(self._trace):
            t = self._trace[self._next].submit
        if self._arrivals and (t is None or self._arrivals[0][0] < t):
            t = self._arrivals[0][0]
        if self._ends and (t is None or self._ends[0][0] < t):
            t = self._ends[0][0]
        return t

    def run(self, until: int | None = None, progress: Callable[[int], None] | None = None) -> None:
        """Process every event (up to ``until``) as fast as possible: the virtual clock."""
        rounds = 0
        while True:
            t = self.next_event_time()
            if t is None or (until is not None and t > until):
                break
            self.instant(t)
            rounds += 1
            if progress is not None and rounds & 1023 == 0:
                progress(len(self.finished))
        if until is None:
            stuck = sum(len(m.policy.waiting()) for m in self.machines)
            if stuck:
                raise StuckJobsError(f"{stuck} jobs were still waiting when no event was left")
        if progress is not None:
            progress(len(self.finished))

    def advance_to(self, when: int) -> None:
        """Process every event up to ``when`` and set the time there: for live clocks."""
        self.run(until=when)
        if when > self.now:
            self.now = when
            for m in self.machines:
                m.now = when

    def instant(self, t: int) -> None:
        """Handle everything that happens at second ``t``."""
        self.now = t
        machines = self.machines
        for m in machines:
            m.now = t
        ends = self._ends
        while ends and ends[0][0] == t:
            self._finish(heapq.heappop(ends)[2])
        trace = self._trace
        while self._next < len(trace) and trace[self._next].submit == t:
            self._arrive(trace[self._next])
            self._next += 1
        arrivals = self._arrivals
        while arrivals and arrivals[0][0] == t:
            self._arrive(heapq.heappop(arrivals)[2])
        for m in machines:
            for job in m.policy.schedule(m):
                self._start(m, job)

    # -- transitions --------------------------------------------------------------
    def _arrive(self, job: Job) -> None:
        m = self.machines[job.machine]
        self.submitted += 1
        m.policy.job_submitted(m, job)
        for hook in self.on_submit:
            hook(job)

    def _start(self, m: MachineState, job: Job) -> None:
        change_state(job, JobState.RUNNING)
        job.start = self.now
        job.nodes = m.pool.allocate(job.width)
        if not job.started_by:
            job.started_by = m.policy.name
        if self.kill and job.runtime > job.estimate:
            end = self.now + job.estimate
            job.killed = True
        else:
            end = self.now + max(job.runtime, 0)
        m.add_running(job)
        self._seq += 1
        heapq.heappush(self._ends, (end, self._seq, job))
        for hook in self.on_start:
            hook(job)

    def _finish(self, job: Job) -> None:
        m = self.machines[job.machine]
        job.end = self.now
        change_state(job, JobState.FINISHED)
        m.pool.release(job.nodes)
        m.remove_running(job)
        self.finished.append(job)
        m.policy.job_ended(m, job)
        for hook in self.on_end:
            hook(job)

    def waiting(self) -> list[Job]:
        return [j for m in self.machines for j in m.policy.waiting()]

    def running(self) -> list[Job]:
        return [j for _, _, j in sorted(self._ends, key=lambda e: (e[2].start, e[2].id))]
