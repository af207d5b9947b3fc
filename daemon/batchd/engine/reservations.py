"""Advance reservations in the engine: their windows, and the jobs that run inside them.

A reservation holds ``width`` nodes of its machine from ``start`` to ``end``: before
it opens the planners keep the nodes free (``MachineState.future``), while it is open
it holds them like a running job. A reservation with a queue also runs that queue's
jobs: they never reach the machine's policy, they start only while the window is
open, on the reserved nodes (``sched.reserved`` picks which), and those still running
when it closes are killed (outcome ``resv_end``); the ``on_close`` listeners then learn
which of its jobs were still waiting, for the server to delete them, as PBS does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from batchd.model.cores import place_pieces
from batchd.model.job import Job
from batchd.model.machine import NodePool
from batchd.model.reservation import Reservation, ResvState
from batchd.model.states import JobState, change_state
from batchd.sched.policies.reserved import ReservationQueue

if TYPE_CHECKING:
    from batchd.engine.core import Engine

RESV_END = "resv_end"  # the outcome of a job killed when its reservation's window closed


class ResvRun:
    """One reservation's queue, free reserved nodes and running jobs."""

    __slots__ = ("resv", "queue", "free", "running")

    def __init__(self, resv: Reservation) -> None:
        self.resv = resv
        self.queue = ReservationQueue()
        self.free: list[int] = []
        self.running: dict[int, Job] = {}

    def take(self, job: Job) -> None:
        taken = set(job.units)
        self.free = [n for n in self.free if n not in taken]
        self.running[job.id] = job

    def give_back(self, job: Job) -> None:
        self.running.pop(job.id, None)
        self.free = sorted(self.free + job.units)


class ReservationRunner:
    """The engine's reservations: windows opened and closed by timers, and their jobs."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.runs: dict[str, ResvRun] = {}  # by queue name
        self.on_close: list[Callable[[Reservation, list[Job]], None]] = []  # its waiting jobs

    def run_of(self, job: Job) -> ResvRun | None:
        return self.runs.get(job.queue) if self.runs else None

    def waiting(self) -> list[Job]:
        return [j for run in self.runs.values() for j in run.queue.waiting()]

    # -- windows --------------------------------------------------------------------
    def add(self, resv: Reservation) -> None:
        """Hold ``resv.width`` nodes from ``resv.start`` to ``resv.end``; the caller checked
        the fit."""
        engine = self.engine
        m = engine.machines[resv.machine]
        if resv.end <= max(resv.start, engine.now) or (
            resv.state is ResvState.CONFIRMED and resv.start < engine.now
        ):
            raise ValueError(f"reservation {resv.id}: bad window {resv.start}..{resv.end}")
        run = ResvRun(resv) if resv.queue else None
        if run is not None:
            self.runs[resv.queue] = run
        if resv.state is ResvState.RUNNING:
            # Restored after a restart: it holds its nodes already.
            m.pool.take(resv.units)
            m.add_running(resv.end, resv)
            if run is not None:
                run.free = sorted(resv.units)
        else:
            m.add_future(resv)
            engine.call_at(resv.start, lambda: self._open(resv))
        engine.call_at(resv.end, lambda: self._close(resv))
        m.policy.invalidate()

    def remove(self, resv: Reservation) -> None:
        """Delete a reservation now: its jobs end and its nodes go back at once."""
        if resv.state is not ResvState.FINISHED:
            self._close(resv)

    def _open(self, resv: Reservation) -> None:
        if resv.state is not ResvState.CONFIRMED:
            return
        m = self.engine.machines[resv.machine]
        m.drop_future(resv)
        # Planners kept these nodes free; only a job past its estimate (no kill)
        # or nodes out of service can leave it short.
        resv.units = self._hold(m.pool, resv.width)
        resv.state = ResvState.RUNNING
        m.add_running(resv.end, resv)
        run = self.runs.get(resv.queue)
        if run is not None:
            run.free = sorted(resv.units)
        m.policy.invalidate()

    @staticmethod
    def _hold(pool: NodePool, width: int) -> list[int]:
        """The reservation's units: whole nodes when they are shared and free whole."""
        per = pool.per_node
        if per > 1 and width % per == 0:
            units = pool.allocate_pieces((per,) * (width // per), True)
            if units is not None:
                return units
        return pool.allocate(min(width, pool.free))

    def _close(self, resv: Reservation) -> None:
        m = self.engine.machines[resv.machine]
        if resv.state is ResvState.FINISHED:
            return
        run = self.runs.get(resv.queue)
        if run is not None:
            for job in list(run.running.values()):
                self.engine.terminate(job, RESV_END, run=run)
            # Its waiting jobs are told while the queue is still known: taking one out
            # (engine.cancel) finds it there.
            for hook in self.on_close:
                hook(resv, run.queue.waiting())
            del self.runs[resv.queue]
        if resv.state is ResvState.CONFIRMED:
            m.drop_future(resv)
        else:
            m.pool.release(resv.units)
            m.remove_running(resv.end, resv)
        resv.state = ResvState.FINISHED
        m.policy.invalidate()

    # -- jobs -------------------------------------------------------------------------
    def schedule(self) -> None:
        """Start the jobs of open reservations that fit on their free nodes."""
        for run in list(self.runs.values()):
            if run.resv.state is not ResvState.RUNNING or not len(run.queue):
                continue
            pool = self.engine.machines[run.resv.machine].pool
            usable = [n for n in run.free if pool.in_service(n)]
            for job in run.queue.select(len(usable)):
                if job.pieces is None:
                    nodes, usable = usable[: job.width], usable[job.width :]
                else:
                    units = place_pieces(usable, pool.per_node, job.pieces, job.spread)
                    if units is None:  # its pieces fit no node of the reservation now
                        run.queue.add(job)
                        continue
                    nodes = units
                    taken = set(units)
                    usable = [n for n in usable if n not in taken]
                self._start(run, job, nodes)

    def _start(self, run: ResvRun, job: Job, units: list[int]) -> None:
        engine = self.engine
        change_state(job, JobState.RUNNING)
        job.start = engine.now
        job.units = units
        job.result.started_by = job.result.started_by or "reservation"
        run.take(job)
        engine.push_end(job)
        for hook in engine.on_start:
            hook(job)

    def requeue(self, run: ResvRun, job: Job) -> None:
        """A running job of a reservation goes back to its queue (qrerun, a node failed)."""
        run.give_back(job)
        change_state(job, JobState.QUEUED)
        run.queue.add(job)

    def restore_running(self, run: ResvRun, job: Job) -> None:
        """A job that ran in an open reservation before a restart: same nodes, same start."""
        run.take(job)
        self.engine.push_end(job)
