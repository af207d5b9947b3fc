"""Schedule-time fair-share moldable scheduling (Sabin et al.'s moldable paper, sec. 4.1 and 5.1, Fig. 1).

Aggressive (EASY) backfilling in FCFS order, one reservation. A moldable job's width
is decided when it starts or gets the reservation: the width of its range, up to its
fair-share limit, that ends it soonest. The limit is ``obf`` x its square-root weight
fraction x the system size; with ``ef`` > 0 the efficiency factor then moves limit
nodes from jobs whose speedup is flat at their limit to jobs whose speedup is steep
(Fig. 1). A job reserved at a width keeps it; a rigid job takes its requested width.
docs/scheduling.md says what the seed leaves open and how batchd settles it.
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from batchd.model.job import Job
from batchd.sched.core.columns import IntColumns
from batchd.sched.core.order import fcfs_key
from batchd.sched.core.policy import MachineView, Placement, Policy
from batchd.sched.kernels.fairshare import DECIDED, fairshare_pass

_INT = np.int64
_NONE = np.zeros((0, 3), dtype=_INT)  # no advance reservations


class FairshareParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Sec. 4.2: 1 is no overbooking, the limits of the waiting jobs add up to the system.
    obf: float = Field(1.0, gt=0, allow_inf_nan=False)


class EfficiencyParams(FairshareParams):
    # Fig. 1's EF: how far (as a fraction of its fair share) a job's limit may move.
    ef: float = Field(0.5, ge=0, le=1, allow_inf_nan=False)


class MoldRows:
    """What the compiled pass needs of each waiting job: one row of ``ints`` and one of
    ``floats`` per job (columns in ``kernels.fairshare``); rows of jobs that left are
    used again."""

    def __init__(self, size: int = 64) -> None:
        self.ints = np.zeros((size, 6), dtype=_INT)
        self.floats = np.zeros((size, 3), dtype=np.float64)
        self.spare: list[int] = list(range(size - 1, -1, -1))

    def add(self, job: Job) -> int:
        if not self.spare:
            size = len(self.ints)
            self.ints = np.concatenate([self.ints, np.zeros_like(self.ints)])
            self.floats = np.concatenate([self.floats, np.zeros_like(self.floats)])
            self.spare = list(range(2 * size - 1, size - 1, -1))
        row = self.spare.pop()
        mold = job.mold
        if mold is None or mold.rigid:
            # The weight (sec. 4.1) is processor-seconds: width x estimate.
            self.ints[row] = (job.width, job.width, job.width, job.estimate, 1, 0)
            self.floats[row] = (1.0, 0.0, math.sqrt(job.width * job.duration))
            return row
        speed = mold.speedup
        flat = speed.kind == "fixed"
        self.ints[row] = (mold.low, mold.high, mold.width, mold.estimate, flat, 0)
        # A moldable job's weight is its estimated work: the estimate on its requested
        # width times the speedup there, its processor-seconds at ideal efficiency.
        work = (mold.estimate if mold.estimate > 0 else 1) * speed.at(mold.width)
        self.floats[row] = (speed.a, speed.sigma, math.sqrt(work))
        return row

    def decide(self, row: int, width: int) -> None:
        self.ints[row, DECIDED] = width

    def decided(self, row: int) -> int:
        return int(self.ints[row, DECIDED])

    def free(self, row: int) -> None:
        self.spare.append(row)


class MoldableFairshare(Policy):
    """EASY backfilling in FCFS order; a moldable job's width decided at its start or
    reservation, up to its fair-share limit (``ef`` = 0) or its efficiency limit."""

    def __init__(self, name: str, obf: float, ef: float, nodes: int | None) -> None:
        self.name = name
        self.obf = obf
        self.ef = ef
        self.nodes = nodes  # the system size of sec. 4.1 (None: the capacity first seen)
        self.keys: list[tuple[int, ...]] = []
        self.jobs: list[Job] = []
        self.rows = IntColumns([])  # each waiting job's row of ``table``, in queue order
        self.table = MoldRows()
        self.reservation: tuple[Job, int] | None = None  # the last pass's, and its start
        self._planned: dict[Job, int] = {}  # widths of the last plan (qstat)
        # The limits depend on the queue alone (its jobs, their order and decided widths):
        # kept from pass to pass while ``_queue_version`` stays where they were computed.
        self._queue_version = 0
        self._limits_version = -1
        # Scratch arrays of the compiled pass: the profile, and per job in queue order.
        self._t = self._f = np.empty(0, dtype=_INT)
        self._limit = self._width = self._start = self._started = np.empty(0, dtype=_INT)

    # -- the queue ----------------------------------------------------------------
    def job_submitted(self, view: MachineView, job: Job) -> None:
        key = fcfs_key(job)
        row = self.table.add(job)
        self._queue_version += 1
        if not self.keys or self.keys[-1] < key:
            self.keys.append(key)
            self.jobs.append(job)
            self.rows.insert(len(self.jobs) - 1, row)
            return
        i = bisect_left(self.keys, key)
        self.keys.insert(i, key)
        self.jobs.insert(i, job)
        self.rows.insert(i, row)

    def withdraw(self, view: MachineView, job: Job) -> None:
        i = bisect_left(self.keys, fcfs_key(job))
        if i == len(self.jobs) or self.jobs[i] is not job:
            raise KeyError(f"job {job.id} is not waiting in this queue")
        self.table.free(self.rows.at(0, i))
        del self.keys[i], self.jobs[i]
        self.rows.delete(i)
        self._planned.pop(job, None)
        self._queue_version += 1

    def waiting(self) -> list[Job]:
        return list(self.jobs)

    def order(self) -> str:
        return "FCFS"

    # -- the pass -------------------------------------------------------------------
    def _run(self, view: MachineView, depth: int) -> tuple[int, int]:
        """The compiled pass over the queue: (how many start, position of the reserved
        job or -1); widths and starts are left in the scratch arrays."""
        if self.nodes is None:
            self.nodes = view.capacity
        count = len(self.jobs)
        ends, busy = view.running_arrays()
        pending = view.reservations()
        room = len(ends) + 2 * (count + len(pending)) + 8
        if room > len(self._t):
            self._t = np.empty(2 * room, dtype=_INT)
            self._f = np.empty(2 * room, dtype=_INT)
        if count > len(self._width):
            size = 2 * count
            self._limit, self._width, self._start, self._started = (
                np.empty(size, dtype=_INT) for _ in range(4)
            )
            self._limits_version = -1
        known = self._limits_version == self._queue_version
        started, reserved = fairshare_pass(
            self._t, self._f, view.capacity, view.now,
            ends, busy,
            np.array(pending, dtype=_INT).reshape(len(pending), 3) if pending else _NONE,
            depth, self.nodes, self.obf, self.ef, self.rows.live(0),
            self.table.ints, self.table.floats,
            self._limit, known, self._width, self._start, self._started,
        )  # fmt: skip
        self._limits_version = self._queue_version
        return int(started), int(reserved)

    def schedule(self, view: MachineView) -> list[Placement]:
        if not self.jobs or view.free == 0:
            # Nothing can start, so no reservation can matter yet: the head's width is
            # decided in the first pass that has free nodes to backfill.
            return []
        started, reserved = self._run(view, 1)
        self.reservation = None
        if reserved >= 0:
            row = self.rows.at(0, reserved)
            if not self.table.decided(row):
                self.table.decide(row, int(self._width[reserved]))
                self._queue_version += 1  # a decided job's limit no longer moves
            self.reservation = (self.jobs[reserved], int(self._start[reserved]))
        if not started:
            return []
        machine = self.machine
        jobs, widths = self.jobs, self._width
        at: list[int] = self._started[:started].tolist()
        out = [Placement(jobs[k], machine, int(widths[k])) for k in at]
        for k in reversed(at):
            self.table.free(self.rows.at(0, k))
            del self.keys[k], self.jobs[k]
            self.rows.delete(k)
        self._queue_version += 1
        return out

    # -- what it tells ----------------------------------------------------------------
    def planned_starts(self, view: MachineView) -> list[tuple[Job, int]]:
        """Every waiting job planned in order at the width that ends it soonest on the
        plan so far, up to its limit (its decided width once reserved)."""
        if not self.jobs:
            self._planned = {}
            return []
        count = len(self.jobs)
        self._run(view, count)
        widths: list[int] = self._width[:count].tolist()
        self._planned = {job: w for job, w in zip(self.jobs, widths, strict=True) if w > 0}
        return list(zip(self.jobs, self._start[:count].tolist(), strict=True))

    def planned_width(self, job: Job) -> int:
        width = self._planned.get(job)
        if width is not None:
            return width
        try:
            i = self.jobs.index(job)
        except ValueError:
            return job.width
        decided = self.table.decided(self.rows.at(0, i))
        return decided if decided > 0 else job.width
