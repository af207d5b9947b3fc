"""The waiting queue as it stands: dynP's FCFS candidate under ``fcfs_candidate=as-queued``.

Streit's dynP paper plans "FCFS" from the job queue as it is (``JobQueue.generateSchedule``).
If the scheduler it describes kept one list, sorted it only when a policy planned
it and appended every new job at its end, that list is in the order of the last
plan in force plus the jobs submitted since. While SJF is in force it is SJF's
order, so the "FCFS" plan equals the SJF plan whenever the newcomers happen to
come last in SJF order too: FCFS = SJF, case 6b of Table 1.

dynP keeps every waiting job in all three sorted queues, so the list needs no
copy of its own: it is one of those queues (``base``: the order it was last
sorted in) with the jobs ``appended`` since moved to its end in arrival order.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from batchd.model.job import Job
from batchd.sched.core.order import OrderedQueue
from batchd.sched.policies.decider import LJF, SJF


class StandingQueue:
    """The order of the last sort (a queue order's name) and the jobs appended since.

    ``ljf_as_sjf``: sorting for LJF leaves the list in SJF order, as a scheduler
    that runs LJF by walking an SJF-sorted list from its end would.
    """

    __slots__ = ("base", "appended", "ljf_as_sjf")

    def __init__(self, base: str, *, ljf_as_sjf: bool = False) -> None:
        self.ljf_as_sjf = ljf_as_sjf
        self.base = base
        self.appended: list[Job] = []
        self.sort_as(base)

    def sort_as(self, order: str) -> None:
        """The whole list was sorted for ``order`` (a plan in that order came into force)."""
        self.base = SJF if order == LJF and self.ljf_as_sjf else order
        self.appended = []

    def append(self, job: Job) -> None:
        """A new job joins the list at its end."""
        self.appended.append(job)

    def discard(self, jobs: Iterable[Job]) -> None:
        """Jobs left the queue (started, deleted, held); the sorted part loses them anyway."""
        if self.appended:
            gone = {id(j) for j in jobs}
            self.appended = [j for j in self.appended if id(j) not in gone]

    def permutation(self, queue: OrderedQueue) -> np.ndarray | None:
        """Indices into ``queue`` (the base order's queue) in the order the list stands in.

        None when the list is in ``queue``'s order: nothing appended, or the appended
        jobs sort to its end in arrival order anyway.
        """
        k = len(self.appended)
        if not k:
            return None
        n = len(queue)
        at = [queue.index(j) for j in self.appended]
        if at == list(range(n - k, n)):
            return None
        keep = np.ones(n, dtype=bool)
        keep[at] = False
        return np.concatenate([np.flatnonzero(keep), np.array(at, dtype=np.int64)])
