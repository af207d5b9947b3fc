"""Central single-site scheduling (Hamscher et al.'s grid paper, sec. 3.1): one queue for the whole grid.

The central scheduler orders the queue and decides at every pass which jobs start
and where; each job runs on one machine, chosen by a selection strategy:

- ``fcfs``: in submission order; when the first waiting job cannot start, nothing
  behind it starts (with an M_free strategy: until some machine can start it).
- ``random``: at every pass the waiting jobs are drawn in a random order (the
  seeded generator) and every one that can start now starts.
- ``easy``: EASY backfilling across the grid: jobs start in order while they can;
  the first that cannot gets a reservation on the machine (among those it may use)
  where enough nodes come back earliest (ties: first listed); later jobs start now
  when they can without delaying that reservation.
- ``cons``: conservative backfilling: each waiting job in order is planned at its
  earliest start on the machines it may use, around the jobs planned before it; a
  job that can start now somewhere starts (on the machine the strategy picks among
  those), one that cannot is planned on the machine where it starts earliest.

Strategies over M_free decide when the job starts, among the machines that can
start it then. Strategies over M_max decide when the job arrives, among the
machines wide enough (counting the nodes the jobs already waiting for a machine
ask for), and the job then waits for that machine. ``earliest`` takes, at every
pass, the machine where the job can start earliest (now, if any can; ties: first
listed), as Slurm's ``sbatch -M`` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.policy import Placement
from batchd.sched.grid.layer import GridLayer
from batchd.sched.grid.params import GridParams
from batchd.sched.grid.select import EARLIEST, choose


class CentralGrid(GridLayer):
    def __init__(
        self, params: GridParams, nodes: Sequence[int], names: Sequence[str], seed: int
    ) -> None:
        super().__init__(params, nodes, names, seed)
        self.queue: list[Job] = []
        self.strategy, self.over = params.strategy
        self.target: dict[int, int] = {}  # M_max: job id -> its machine, chosen at arrival
        self.queued = [0] * self.n  # M_max: nodes asked for by jobs waiting for each machine

    # -- events -------------------------------------------------------------------
    def submitted(self, job: Job) -> None:
        self.queue.append(job)
        if self.over == "max" and self.strategy != EARLIEST:
            free = [v.free - q for v, q in zip(self.views, self.queued, strict=True)]
            t = choose(
                self.strategy, job.width, self.wide_enough(job.width), free, self.nodes, self.rng
            )
            self.target[job.id] = t
            self.queued[t] += job.width

    def assigned(self, job: Job) -> int | None:
        return self.target.get(job.id)

    def resume(self, job: Job, machine: int | None) -> None:
        if machine is None or self.over != "max" or machine not in self.wide_enough(job.width):
            self.submitted(job)
            return
        self.queue.append(job)
        self.target[job.id] = machine
        self.queued[machine] += job.width

    def withdraw(self, job: Job) -> None:
        self.queue.remove(job)
        self._forget(job)

    def _forget(self, job: Job) -> None:
        t = self.target.pop(job.id, None)
        if t is not None:
            self.queued[t] -= job.width

    def waiting_on(self, machine: int) -> list[Job]:
        return list(self.queue) if machine == 0 else []

    # -- the pass -----------------------------------------------------------------
    def allowed(self, job: Job) -> list[int]:
        """The machines a job may run on: its chosen one (M_max), else every wide enough."""
        t = self.target.get(job.id)
        return [t] if t is not None else self.wide_enough(job.width)

    def pick(self, job: Job, cands: list[int], free: Sequence[int]) -> int:
        if len(cands) == 1 or self.strategy == EARLIEST or self.over == "max":
            return cands[0]
        return choose(self.strategy, job.width, cands, free, self.nodes, self.rng)

    def plan_pass(self) -> list[list[Placement]]:
        out: list[list[Placement]] = [[] for _ in range(self.n)]
        if not self.queue:
            return out
        sched = self.params.scheduler
        started = self._conservative(out) if sched == "cons" else self._list(out, sched)
        if started:
            self.queue = [j for j in self.queue if j.id not in started]
        return out

    def _list(self, out: list[list[Placement]], sched: str) -> set[int]:
        now = self.now
        free = [v.free for v in self.views]
        added: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        started: set[int] = set()
        order = self.queue
        if sched == "random":
            order = list(order)
            self.rng.shuffle(order)
        top = max(free)  # the most free nodes of any machine: no wider job starts now
        if top <= 0:
            return started
        resv: tuple[int, int, int] | None = None  # EASY: machine, shadow time, extra nodes
        for job in order:
            w = job.width
            if w > top and (resv is not None or sched == "random"):
                continue  # starts nowhere now, and the reservation is made: skip cheaply
            end = now + job.duration
            cands = [i for i in self.allowed(job) if free[i] >= w]
            if resv is not None:
                r, shadow, extra = resv
                cands = [i for i in cands if i != r or end <= shadow or w <= extra]
            if not cands:
                if sched == "fcfs":
                    break
                if sched == "easy" and resv is None:
                    best: tuple[int, int, int] | None = None
                    for i in self.allowed(job):
                        s = self.shadow(i, w, free[i], added[i])
                        if s is not None and (best is None or s[0] < best[1]):
                            best = (i, s[0], s[1])
                    resv = best
                continue
            m = self.pick(job, cands, free)
            out[m].append(self.place(job, m))
            free[m] -= w
            added[m].append((end, w))
            started.add(job.id)
            self._forget(job)
            if resv is not None and m == resv[0] and end > resv[1]:
                resv = (resv[0], resv[1], resv[2] - w)
            if free[m] + w == top:
                top = max(free)
                if top <= 0:
                    break  # every machine is full: nothing further starts in this pass
        return started

    # -- planned starts (qstat -T) -----------------------------------------------------
    def planned(self) -> list[tuple[Job, int, int]]:
        """FCFS and EASY: the jobs at the head of the queue that can start now (now, on the
        first machine listed that can), then the first that cannot: its reservation (the
        machine among those it may use where enough nodes come back earliest, ties: first
        listed, at that time); the jobs behind it have no planned start (EASY backfills
        them when they fit, which nothing plans). Conservative: every job at its earliest
        start around the jobs planned before it, as ``_conservative`` plans them. Random:
        none. A job that never fits (nodes out of service) has no planned start."""
        sched = self.params.scheduler
        if not self.queue or not self.views:
            return []
        if sched == "cons":
            return self._planned_conservative()
        if sched not in ("fcfs", "easy"):
            return []
        now = self.now
        free = [v.free for v in self.views]
        added: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        out: list[tuple[Job, int, int]] = []
        for job in self.queue:
            w = job.width
            allowed = self.allowed(job)
            cands = [i for i in allowed if free[i] >= w]
            if cands:
                m = cands[0]
                out.append((job, now, m))
                free[m] -= w
                added[m].append((now + job.duration, w))
                continue
            best: tuple[int, int] | None = None
            for i in allowed:
                s = self.shadow(i, w, free[i], added[i])
                if s is not None and (best is None or s[0] < best[0]):
                    best = (s[0], i)
            if best is not None:
                out.append((job, best[0], best[1]))
            break
        return out

    def _planned_conservative(self) -> list[tuple[Job, int, int]]:
        from batchd.sched.core.plans import base_profile

        now = self.now
        profiles = [base_profile(v, len(self.queue)) for v in self.views]
        out: list[tuple[Job, int, int]] = []
        for job in self.queue:
            w, d = job.width, job.duration
            allowed = self.allowed(job)
            starts = [profiles[i].earliest_start(w, d, now) for i in allowed]
            s, m = min(zip(starts, allowed, strict=True))
            if s < NEVER:
                profiles[m].reserve(s, s + d, w)
                out.append((job, s, m))
        return out

    def _conservative(self, out: list[list[Placement]]) -> set[int]:
        from batchd.sched.core.plans import base_profile

        now = self.now
        free = [v.free for v in self.views]
        room = len(self.queue)
        profiles = [base_profile(v, room) for v in self.views]
        started: set[int] = set()
        for job in self.queue:
            w, d = job.width, job.duration
            allowed = self.allowed(job)
            starts = [profiles[i].earliest_start(w, d, now) for i in allowed]
            cands = [i for i, s in zip(allowed, starts, strict=True) if s == now]
            if cands:
                m = self.pick(job, cands, free)
                profiles[m].reserve(now, now + d, w)
                out[m].append(self.place(job, m))
                free[m] -= w
                started.add(job.id)
                self._forget(job)
                continue
            s, m = min(zip(starts, allowed, strict=True))
            if s < NEVER:
                profiles[m].reserve(s, s + d, w)
        return started
