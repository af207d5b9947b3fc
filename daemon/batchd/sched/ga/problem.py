"""One scheduling step's search problem as arrays, built once and indexed by every order.

The waiting jobs come in arrival order (the FCFS order: PBS priority, submit time, id);
job ``j`` of the step is row ``j`` of every array. The first ``k`` of them are searched
and the rest follow in arrival order. The utility functions are padded to one width:
``times[j, :counts[j]]`` and ``values[j, :counts[j]]`` are job j's points (count 0: no
function, worth 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from batchd.model.job import Job
from batchd.sched.ga import kernels

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]

SEEDS = ("arrival", "priority", "utility_per_node_hour", "utility")


def worth_searching(free: int, capacity: int, jobs: Sequence[Job]) -> bool:
    """Whether the order of ``jobs`` can change what starts now or what they earn.

    Not when fewer than two jobs could ever run, when none has a utility function (every
    order earns 0), when none fits the free nodes (EASY starts nothing, whatever the
    order) or when all fit at once (EASY starts them all, whatever the order).
    """
    widths = [j.width for j in jobs if j.width <= capacity]
    if len(widths) < 2 or min(widths) > free or sum(widths) <= free:
        return False
    return any(j.utility is not None for j in jobs)


@dataclass(frozen=True)
class Problem:
    """What one step's fitness needs: the machine now and the waiting jobs, as arrays."""

    now: int
    capacity: int
    running_ends: Ints
    running_widths: Ints
    widths: Ints
    estimates: Ints
    submits: Ints
    priorities: Ints  # the PBS priority (qsub -p), higher first
    classes: Ints  # the priority class, 0 first
    times: Floats
    values: Floats
    counts: Ints
    k: int  # the first k jobs are searched

    @property
    def n(self) -> int:
        return len(self.widths)

    @classmethod
    def build(
        cls,
        now: int,
        capacity: int,
        running_ends: Sequence[int],
        running_widths: Sequence[int],
        jobs: Sequence[Job],
        searched: int,
    ) -> Problem:
        """The step of ``jobs`` (in arrival order) on a machine with these running jobs."""
        n = len(jobs)
        width = max((len(j.utility.points) for j in jobs if j.utility is not None), default=0)
        times = np.zeros((n, width), dtype=np.float64)
        values = np.zeros((n, width), dtype=np.float64)
        counts = np.zeros(n, dtype=np.int64)
        for row, job in enumerate(jobs):
            if job.utility is not None:
                points = job.utility.points
                counts[row] = len(points)
                times[row, : len(points)], values[row, : len(points)] = zip(*points, strict=True)

        def column(values: Sequence[int]) -> Ints:
            return np.array(values, dtype=np.int64)

        return cls(
            now=now,
            capacity=capacity,
            running_ends=column(running_ends),
            running_widths=column(running_widths),
            widths=column([j.width for j in jobs]),
            estimates=column([j.estimate for j in jobs]),
            submits=column([j.submit for j in jobs]),
            priorities=column([j.priority for j in jobs]),
            classes=column([j.priority_class for j in jobs]),
            times=times,
            values=values,
            counts=counts,
            k=min(searched, n),
        )

    def current_utility(self) -> Floats:
        """What each job earns if it starts now and runs its estimate."""
        durations = np.maximum(self.estimates, 1)
        return kernels.values_at(
            self.times, self.values, self.counts, self.now + durations - self.submits
        )

    def seed_orders(self) -> Ints:
        """The seed's special individuals, one row each (``SEEDS``): the first k jobs by
        arrival; by priority class, then arrival (prio-fifo's order); by current utility
        per node-hour and by absolute current utility, highest first, then arrival
        (the first is utility-easy's order). The PBS priority comes first in each, as in
        every order batchd serves."""
        k = self.k
        arrival = np.arange(k, dtype=np.int64)
        prio = -self.priorities[:k]
        now = self.current_utility()[:k]
        rate = now * 3600.0 / (self.widths[:k] * np.maximum(self.estimates[:k], 1))
        heads = np.stack(
            [
                arrival,
                np.lexsort((arrival, self.classes[:k], prio)),
                np.lexsort((arrival, -rate, prio)),
                np.lexsort((arrival, -now, prio)),
            ]
        )
        tail = np.broadcast_to(np.arange(k, self.n, dtype=np.int64), (len(SEEDS), self.n - k))
        return np.ascontiguousarray(np.concatenate([heads, tail], axis=1), dtype=np.int64)

    def fitness(self, population: Ints, out: Floats, first: int = 0) -> None:
        """``out[i]``: the aggregate utility of individual i's EASY schedule (i >= first)."""
        kernels.fitness(
            population,
            first,
            self.now,
            self.capacity,
            self.running_ends,
            self.running_widths,
            self.widths,
            self.estimates,
            self.submits,
            self.times,
            self.values,
            self.counts,
            out,
        )
