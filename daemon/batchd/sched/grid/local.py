"""Grid structures over the machines' own policies: hierarchical, decentral, job pool.

Each machine keeps a local policy from the registry (built for that machine, as a
single machine's policy is); the grid layer decides which machine's queue a job
joins and moves jobs between machines, and every pass first runs each machine's
local pass, in config order.

- ``hierarchical`` (sec. 3.2): at arrival the meta-scheduler hands the job to one
  machine by a strategy over M_max (``bestfit-max``, ``equalutil-max``,
  ``random-max``, ``biggestfree-max``), counting the nodes of the jobs already
  waiting there; the machine's local policy (``local``, or ``local.MACHINE`` for
  one machine) schedules it from then on.
- ``decentral`` (sec. 3.3, direct communication): the job joins its home machine's
  queue (``home``). At its arrival second, after the local passes, a job the home
  did not start moves to the first machine (config order) that can start it at
  once, and starts there with its runtime and estimate multiplied by
  ``migration``; if none can, it waits at home. A waiting job is offered again at
  every later pass in which it is first in its home queue (the local policy's
  order) and the home did not start it: the head of a queue that cannot start at
  home moves when another machine has room for it, the jobs behind it stay.
- ``pool`` (sec. 3.3, central job pool): the job joins its home machine's queue;
  one the home does not start at its arrival second is pushed into the pool
  (``push=all``: every job goes to the pool at arrival). After the local passes
  every machine with free nodes, in config order, pulls from the pool (in
  submission order, jobs it is wide enough for) what its discipline lets start
  now: ``fcfs`` pulls in order while the next job fits and stops at the first
  that does not; ``easy`` also gives that first job a reservation on this machine
  and pulls later jobs that fit without delaying it. A job pulled by another
  machine than its home runs ``migration`` times longer.

  ``push=overflow`` is the pool of sec. 5.2 ("a job is only forwarded to the job
  pool, if it cannot be handled locally"): machines keep local backlogs. A job its
  home does not start at its arrival second stays in the home's queue while the
  nodes asked for by the jobs waiting there, its own included, are at most
  ``backlog`` times the home's nodes; past that it goes to the pool. Pulls come
  after the local passes as above, so an ``easy`` machine has backfilled from its
  own queue first, and its pulls must not delay the reservation of its own first
  waiting job (its shadow time and extra nodes); an ``fcfs`` machine pulls for the
  nodes its pass left idle, whether or not its own first job waits for more (FCFS
  reserves nothing).
"""

from __future__ import annotations

from collections.abc import Sequence

from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.sched.core.policy import Placement, Policy
from batchd.sched.grid.layer import GridLayer
from batchd.sched.grid.overhead import stretch
from batchd.sched.grid.params import GridParams
from batchd.sched.grid.select import choose


class LocalGrid(GridLayer):
    """A grid whose machines run policies of their own."""

    def __init__(
        self,
        params: GridParams,
        nodes: Sequence[int],
        names: Sequence[str],
        seed: int,
        local: Sequence[Policy],
    ) -> None:
        super().__init__(params, nodes, names, seed)
        self.local = list(local)
        self.queued = [0] * self.n  # nodes asked for by the jobs waiting in each local queue

    def local_policy(self, machine: int) -> Policy:
        return self.local[machine]

    def join(self, job: Job, machine: int) -> None:
        job.machine = machine
        self.queued[machine] += job.width
        self.local[machine].job_submitted(self.views[machine], job)

    def ended(self, machine: int, job: Job) -> None:
        self.local[machine].job_ended(self.views[machine], job)

    def withdraw(self, job: Job) -> None:
        self.leave(job)

    def leave(self, job: Job) -> None:
        m = job.machine
        self.local[m].withdraw(self.views[m], job)
        self.queued[m] -= job.width

    def invalidate(self, machine: int) -> None:
        self.local[machine].invalidate()

    def resumed(self, machine: int, job: Job) -> None:
        self.local[machine].job_resumed(self.views[machine], job)

    def assigned(self, job: Job) -> int | None:
        return job.machine

    def resume(self, job: Job, machine: int | None) -> None:
        if machine is None or machine not in self.wide_enough(job.width):
            self.submitted(job)
        else:
            self.join(job, machine)

    def waiting_on(self, machine: int) -> list[Job]:
        return self.local[machine].waiting()

    def local_passes(self) -> tuple[list[list[Placement]], list[int], set[int]]:
        """Every machine's own pass: (placements, free nodes after them, started ids)."""
        out: list[list[Placement]] = []
        free: list[int] = []
        started: set[int] = set()
        for i, view in enumerate(self.views):
            placed = list(self.local[i].schedule(view))
            f = view.free
            for p in placed:
                f -= p.width
                self.queued[i] -= p.width
                started.add(p.job.id)
            out.append(placed)
            free.append(f)
        return out, free, started

    def start_foreign(
        self, out: list[list[Placement]], free: list[int], job: Job, machine: int
    ) -> None:
        """Start a job on a machine whose local policy did not plan it."""
        out[machine].append(self.place(job, machine))
        free[machine] -= job.width
        self.local[machine].invalidate()


class HierarchicalGrid(LocalGrid):
    def submitted(self, job: Job) -> None:
        name, _ = self.params.strategy
        free = [v.free - q for v, q in zip(self.views, self.queued, strict=True)]
        m = choose(name, job.width, self.wide_enough(job.width), free, self.nodes, self.rng)
        self.join(job, m)

    def plan_pass(self) -> list[list[Placement]]:
        return self.local_passes()[0]


class DecentralGrid(LocalGrid):
    def __init__(
        self,
        params: GridParams,
        nodes: Sequence[int],
        names: Sequence[str],
        seed: int,
        local: Sequence[Policy],
    ) -> None:
        super().__init__(params, nodes, names, seed, local)
        self.fresh: list[Job] = []  # arrived since the last pass
        self.home: dict[int, int] = {}

    def submitted(self, job: Job) -> None:
        h = self.home_of(job)
        self.home[job.id] = h
        self.join(job, h)
        self.fresh.append(job)

    def ended(self, machine: int, job: Job) -> None:
        super().ended(machine, job)
        self.home.pop(job.id, None)

    def withdraw(self, job: Job) -> None:
        super().withdraw(job)
        self.home.pop(job.id, None)

    def resume(self, job: Job, machine: int | None) -> None:
        if machine is None or machine not in self.wide_enough(job.width):
            self.submitted(job)
            return
        self.home[job.id] = machine
        self.join(job, machine)

    def plan_pass(self) -> list[list[Placement]]:
        out, free, started = self.local_passes()
        fresh, self.fresh = self.fresh, []
        offers = {j.id: j for j in fresh if j.id not in started and j.state is JobState.QUEUED}
        for i in range(self.n):
            waiting = self.local[i].waiting()
            if waiting:
                offers.setdefault(waiting[0].id, waiting[0])
        if not offers or max(free) <= 0:
            return out
        for job in sorted(offers.values(), key=lambda j: (j.submit, j.id)):
            h, w = job.machine, job.width
            for m in range(self.n):
                if m != h and free[m] >= w:
                    self.leave(job)
                    self.stretch_job(job, self.params.migration)
                    self.start_foreign(out, free, job, m)
                    self.stats.migrations += 1
                    break
        return out


class PoolGrid(LocalGrid):
    def __init__(
        self,
        params: GridParams,
        nodes: Sequence[int],
        names: Sequence[str],
        seed: int,
        local: Sequence[Policy],
    ) -> None:
        super().__init__(params, nodes, names, seed, local)
        self.fresh: list[Job] = []
        self.pool: list[Job] = []  # in submission order
        self.home: dict[int, int] = {}

    def submitted(self, job: Job) -> None:
        h = self.home_of(job)
        self.home[job.id] = h
        if self.params.push == "all":
            job.machine = h
            self.pool.append(job)
            self.stats.pool_pushes += 1
        else:
            self.join(job, h)
            self.fresh.append(job)

    def assigned(self, job: Job) -> int | None:
        return self.home.get(job.id)

    def resume(self, job: Job, machine: int | None) -> None:
        """A job waits in the pool once its arrival second is over: it goes back there
        (push=overflow: to its home's queue if the backlog rule keeps it there)."""
        if machine is None or machine not in self.wide_enough(job.width):
            self.submitted(job)
            return
        self.home[job.id] = machine
        job.machine = machine
        if self.params.push == "overflow":
            self.join(job, machine)
            if self.handled_locally(job):
                return
            self.leave(job)
        self.pool.append(job)

    def withdraw(self, job: Job) -> None:
        if job in self.pool:
            self.pool.remove(job)
        else:
            self.leave(job)
        self.home.pop(job.id, None)

    def ended(self, machine: int, job: Job) -> None:
        super().ended(machine, job)
        self.home.pop(job.id, None)

    def waiting_on(self, machine: int) -> list[Job]:
        jobs = self.local[machine].waiting()
        return jobs + self.pool if machine == 0 else jobs

    def handled_locally(self, job: Job, ahead: int | None = None) -> bool:
        """push=overflow: whether a job its home did not start stays in the home's queue.

        ``ahead``: the nodes asked for by the jobs waiting there before it (default:
        every job waiting there but itself).
        """
        if self.params.push != "overflow":
            return False
        h = job.machine
        if ahead is None:
            ahead = self.queued[h] - job.width
        return ahead + job.width <= self.params.backlog * self.nodes[h]

    def push_fresh(self, fresh: Sequence[Job], started: set[int]) -> None:
        """Arrivals their home did not start: to the pool, or (push=overflow) kept at home
        in submission order while the home's backlog allows."""
        blocked = [j for j in fresh if j.id not in started and j.state is JobState.QUEUED]
        ahead = list(self.queued)
        for job in blocked:
            ahead[job.machine] -= job.width
        for job in blocked:
            if self.handled_locally(job, ahead[job.machine]):
                ahead[job.machine] += job.width
                continue
            self.leave(job)
            self.pool.append(job)
            self.stats.pool_pushes += 1

    def local_reservation(
        self, machine: int, free: int, added: Sequence[tuple[int, int]]
    ) -> tuple[int, int] | None:
        """An easy machine's reservation for the first job waiting in its own queue."""
        if self.params.push != "overflow":
            return None  # the own queues are empty once the arrival second is over
        waiting = self.local[machine].waiting()
        if not waiting:
            return None
        width = waiting[0].width
        if width <= free:  # not started by its own pass all the same: hold its nodes now
            return self.now, free - width
        return self.shadow(machine, width, free, added)

    def plan_pass(self) -> list[list[Placement]]:
        out, free, started = self.local_passes()
        fresh, self.fresh = self.fresh, []
        if fresh:
            self.push_fresh(fresh, started)
        if not self.pool:
            return out
        now = self.now
        easy = self.params.discipline == "easy"
        pulled: set[int] = set()
        for i in range(self.n):
            if free[i] <= 0:
                continue
            added = [(now + p.job.duration, p.width) for p in out[i]]
            # shadow time, extra nodes: the own queue's first job's, else the pool's
            resv = self.local_reservation(i, free[i], added) if easy else None
            for job in self.pool:
                w = job.width
                if job.id in pulled or w > self.nodes[i]:
                    continue
                if w > free[i] and (resv is not None or not easy):
                    if not easy:
                        break
                    continue  # does not fit, and the reservation is made: skip cheaply
                est = job.estimate
                if i != self.home[job.id]:
                    est = stretch(est, self.params.migration)
                end = now + (est if est > 0 else 1)
                fits = w <= free[i] and (resv is None or end <= resv[0] or w <= resv[1])
                if not fits:
                    if not easy:
                        break
                    if resv is None:
                        resv = self.shadow(i, w, free[i], added)
                    continue
                pulled.add(job.id)
                if i != self.home[job.id]:
                    self.stretch_job(job, self.params.migration)
                    self.stats.migrations += 1
                self.start_foreign(out, free, job, i)
                added.append((now + job.duration, w))
                self.stats.pool_pulls += 1
                if resv is not None and end > resv[0]:
                    resv = (resv[0], resv[1] - w)
                if free[i] <= 0:
                    break
        if pulled:
            self.pool = [j for j in self.pool if j.id not in pulled]
        return out
