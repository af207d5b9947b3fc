"""The grid layer: one meta-scheduler over the machines of a grid, in one engine.

The engine runs one policy per machine. Under a grid structure each machine's
policy is a ``GridPort``: a thin policy that hands every event to the one
``GridLayer`` of the grid. At a scheduling pass the engine asks the ports in
machine order; the first port asked makes the layer decide the whole pass at
once (``plan_pass``: every machine's placements, from every machine's view), and
each port then answers with its machine's share. So the layer decides
placements (job, machine, width) across machines, and the engine checks and
starts them as it does any policy's: one engine, one set of transitions, for
replay and (later) the daemon.

A job arrives at the port of the machine it names; the layer may send it
elsewhere by setting ``job.machine`` before it places it. A job stretched by an
overhead (a migration, a multi-site split) keeps its requested runtime and
estimate in ``original``.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from batchd.model.job import Job
from batchd.sched.core.policy import MachineView, Placement, Policy
from batchd.sched.grid.overhead import stretch
from batchd.sched.grid.params import GridParams
from batchd.sched.kernels.backfill import shadow, with_ends


@dataclass
class GridStats:
    """What the grid layer did, for the summary."""

    migrations: int = 0  # jobs that ran on another machine than their home
    pool_pushes: int = 0
    pool_pulls: int = 0
    multisite_jobs: int = 0
    multisite_added_node_seconds: int = 0  # sum over parts: nodes * (stretched - runtime)


class GridPort(Policy):
    """The policy of one machine of a grid: every event goes to the grid's layer."""

    grid_wide = True

    def __init__(self, layer: GridLayer, machine: int) -> None:
        self.layer = layer
        self.machine = machine
        self.name = f"grid-{layer.params.structure}"

    def job_submitted(self, view: MachineView, job: Job) -> None:
        self.layer.submitted(job)

    def job_ended(self, view: MachineView, job: Job) -> None:
        self.layer.ended(self.machine, job)

    def withdraw(self, view: MachineView, job: Job) -> None:
        self.layer.withdraw(job)

    def job_resumed(self, view: MachineView, job: Job) -> None:
        self.layer.resumed(self.machine, job)

    def invalidate(self) -> None:
        self.layer.invalidate(self.machine)

    def schedule(self, view: MachineView) -> list[Placement]:
        return self.layer.placements(self.machine)

    def waiting(self) -> list[Job]:
        return self.layer.waiting_on(self.machine)

    def order(self) -> str:
        return "FCFS"


class GridLayer(ABC):
    """A grid structure: decides, for every machine of the grid, which jobs start now."""

    def __init__(
        self, params: GridParams, nodes: Sequence[int], names: Sequence[str], seed: int
    ) -> None:
        self.params = params
        self.nodes = list(nodes)
        self.names = list(names)
        self.n = len(self.nodes)
        self.rng = random.Random(seed)
        self.ports = [GridPort(self, i) for i in range(self.n)]
        self.views: list[MachineView] = []
        self._pending: list[list[Placement] | None] = [None] * self.n
        self.stats = GridStats()
        self.original: dict[int, tuple[int, int]] = {}  # job id -> (runtime, estimate)
        self._wide: dict[int, list[int]] = {}

    def attach(self, views: Sequence[MachineView]) -> None:
        """The engine's views of the machines, in config order (after the engine is built)."""
        if len(views) != self.n:
            raise ValueError(f"the grid layer has {self.n} machines, the engine {len(views)}")
        self.views = list(views)

    # -- the pass ---------------------------------------------------------------
    def placements(self, machine: int) -> list[Placement]:
        """Machine ``machine``'s share of this pass: the first port asked decides it all."""
        pending = self._pending
        out = pending[machine]
        if out is None:
            pending = self._pending = list(self.plan_pass())
            out = pending[machine]
        pending[machine] = None
        assert out is not None
        return out

    @abstractmethod
    def plan_pass(self) -> list[list[Placement]]:
        """Every machine's placements at this second."""

    # -- events -------------------------------------------------------------------
    @abstractmethod
    def submitted(self, job: Job) -> None: ...

    def ended(self, machine: int, job: Job) -> None:  # noqa: B027
        pass

    @abstractmethod
    def withdraw(self, job: Job) -> None: ...

    def invalidate(self, machine: int) -> None:  # noqa: B027
        pass

    def resumed(self, machine: int, job: Job) -> None:  # noqa: B027
        """A job that ran before a restart runs on on ``machine`` (same nodes, same start)."""

    # -- what a daemon keeps across a restart ----------------------------------------
    def assigned(self, job: Job) -> int | None:
        """The machine a waiting job was given at submission (a hierarchical machine, a
        decentral or pool home, a central M_max target), or None (it waits for any)."""
        return None

    def resume(self, job: Job, machine: int | None) -> None:
        """A job that waited before a restart waits again, keeping the machine it had
        been given (``assigned``); None, or a machine the job no longer fits: as new."""
        self.submitted(job)

    @abstractmethod
    def waiting_on(self, machine: int) -> list[Job]:
        """The jobs waiting that this machine's port reports (central queues: machine 0)."""

    def planned(self) -> list[tuple[Job, int, int]]:
        """Planned starts of jobs waiting for any machine (a central queue, the pool):
        (job, start, machine). By default none: a structure that plans says so (central
        FCFS and EASY the head job, conservative every job)."""
        return []

    # -- helpers ----------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.views[0].now

    def place(self, job: Job, machine: int) -> Placement:
        job.machine = machine
        return Placement(job, machine, job.width)

    def stretch_job(self, job: Job, factor: Fraction) -> None:
        """Multiply a job's runtime and estimate by ``factor`` (a migration's overhead)."""
        if factor == 1:
            return
        self.original.setdefault(job.id, (job.runtime, job.estimate))
        job.runtime = stretch(job.runtime, factor)
        job.estimate = stretch(job.estimate, factor)

    def wide_enough(self, width: int) -> list[int]:
        """M_max: the machines with at least ``width`` nodes, in config order (do not change)."""
        found = self._wide.get(width)
        if found is None:
            found = self._wide[width] = [i for i in range(self.n) if self.nodes[i] >= width]
        return found

    def shadow(
        self, machine: int, width: int, free: int, added: Sequence[tuple[int, int]]
    ) -> tuple[int, int] | None:
        """EASY's reservation for a job of ``width`` on ``machine``: (shadow time, extra nodes).

        ``free`` (fewer than ``width``) nodes are idle now; the running jobs (and ``added``: (end, width) of
        jobs started in this pass) give their nodes back at their estimated ends.
        None: it never fits (nodes out of service).
        """
        view = self.views[machine]
        ends, widths = view.running_ends(), view.running_widths()
        if added:
            ends, widths = with_ends(ends, widths, added)
        if free + sum(widths) < width:
            return None
        return shadow(free, width, ends, widths, 0, len(ends), self.now)

    def home_of(self, job: Job) -> int:
        """Decentral and pool: the machine a job is submitted to.

        With ``home=partition``, the SWF partition field (16) when it names a machine
        of the grid (1-based, config order) wide enough for the job; otherwise, and
        with ``home=random``, uniformly among the machines wide enough, from the seeded
        generator; with ``home=weighted``, among those with probability proportional
        to their nodes.
        """
        cands = self.wide_enough(job.width)
        mode = self.params.home
        if mode == "partition" and job.trace is not None and len(job.trace.fields) > 15:
            part = int(job.trace.fields[15])
            if 1 <= part <= self.n and self.nodes[part - 1] >= job.width:
                return part - 1
        if mode == "weighted":
            total = sum(self.nodes[i] for i in cands)
            r = self.rng.randrange(total)
            for i in cands:
                r -= self.nodes[i]
                if r < 0:
                    return i
        return cands[self.rng.randrange(len(cands))]

    def merge_parts(self, finished: Sequence[Job]) -> list[Job]:
        """The finished jobs one per job (multi-site parts merged); others as they are."""
        return list(finished)

    def width_refusal(self, width: int) -> str | None:
        """Why a job of ``width`` nodes can never run on this grid (it is then rejected),
        or None."""
        widest = max(range(self.n), key=lambda i: (self.nodes[i], -i))  # ties: listed first
        if width <= self.nodes[widest]:
            return None
        return f"the widest machine of the grid, {self.names[widest]}, has {self.nodes[widest]}"

    def local_policy(self, machine: int) -> Policy | None:
        """The policy that runs ``machine``'s own queue (hierarchical, decentral, pool), or
        None where the layer alone decides (central, multisite)."""
        return None

    def forget(self, job_id: int) -> None:
        """A finished job has left for good (the daemon's history has it): drop what the
        layer kept of it, so a daemon that runs for months does not grow. A replay never
        calls it: merge_parts needs it all at the end."""
        self.original.pop(job_id, None)
