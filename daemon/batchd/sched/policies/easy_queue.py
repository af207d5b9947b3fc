"""EASY's waiting queue, with its jobs also filed by width, so that a backfilling pass
looks only at the jobs narrow enough to fit, not at the whole queue.

A pass on a full machine has few free nodes; in a deep queue of wide jobs, most jobs
cannot fit and the pass used to test each one. Here each job is also filed in the
class of its width (``width.bit_length()``: 1, 2-3, 4-7, ...), each class sorted by
the queue's order key. The pass merges the classes that can hold a job of at most
the free nodes, in key order: the jobs it meets are those the whole-queue walk would
have taken, in the same order, and the walk skips only jobs wider than the free nodes.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from heapq import heapify, heappop, heapreplace

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.order import OrderedQueue, OrderKey

Entry = tuple[tuple[int, ...], int, int, Job]  # key, width, duration, job
_AFTER = (float("inf"),)  # an entry's tail: sorts after every entry of the same key


class WidthFiledQueue(OrderedQueue):
    """An ``OrderedQueue`` whose jobs are also filed by width class."""

    __slots__ = ("classes",)

    def __init__(self, key: OrderKey) -> None:
        super().__init__(key)
        self.classes: dict[int, list[Entry]] = {}  # width.bit_length() -> entries by key

    def insert(self, job: Job, start: int = NEVER, shape: tuple[int, int] | None = None) -> int:
        i = super().insert(job, start, shape)
        width = self.widths[i]
        entry = (self.keys[i], width, self.durations[i], job)
        filed = self.classes.setdefault(width.bit_length(), [])
        if not filed or filed[-1][0] < entry[0]:
            filed.append(entry)
        else:
            insort(filed, entry)
        return i

    def _unfile(self, key: tuple[int, ...], width: int) -> None:
        filed = self.classes[width.bit_length()]
        del filed[bisect_left(filed, (key,))]

    def remove(self, job: Job) -> None:
        i = self.index(job)
        self._unfile(self.keys[i], self.widths[i])
        super().remove(job)

    def pop_front(self, k: int) -> list[Job]:
        for key, width in zip(self.keys[:k], self.widths[:k], strict=True):
            self._unfile(key, width)
        return super().pop_front(k)

    def remove_many(self, jobs: list[Job]) -> None:
        for job in jobs:
            key = self.key(job)
            i = bisect_left(self.keys, key)
            if i < len(self.jobs) and self.jobs[i] is job:
                self._unfile(key, self.widths[i])
        super().remove_many(jobs)

    def narrow_after(self, key: tuple[int, ...], free: int) -> int:
        """How many jobs after ``key`` in order are filed in a class that holds widths
        of at most ``free``: what a merge of those classes would meet at most."""
        count = 0
        for cls, filed in self.classes.items():
            if filed and 1 << (cls - 1) <= free:
                count += len(filed) - bisect_right(filed, (key, *_AFTER))
        return count

    def backfill(
        self, key: tuple[int, ...], free: int, now: int, shadow: int, extra: int
    ) -> list[Job]:
        """EASY's backfilling over the jobs after ``key``: in order, each that fits in
        ``free`` nodes and ends by ``shadow``, or fits in the ``extra`` nodes (which it
        then takes), until no node is free. Only classes that can hold a job of at most
        the free nodes are merged, and a class is left once its narrowest width no
        longer fits: the jobs met are those a walk of the whole queue would take."""
        classes = self.classes
        heads: list[tuple[tuple[int, ...], int, int]] = []  # (key, class, index)
        after = (key, *_AFTER)
        for cls, filed in classes.items():
            if filed and 1 << (cls - 1) <= free:
                i = bisect_right(filed, after)
                if i < len(filed):
                    heads.append((filed[i][0], cls, i))
        heapify(heads)
        taken: list[Job] = []
        while heads:
            _, cls, i = heads[0]
            if 1 << (cls - 1) > free:  # no job of this class fits any more
                heappop(heads)
                continue
            filed = classes[cls]
            _, w, duration, job = filed[i]
            if w <= free and (now + duration <= shadow or w <= extra):
                if now + duration > shadow:
                    extra -= w
                free -= w
                taken.append(job)
                if free == 0:
                    break
            if i + 1 < len(filed):
                heapreplace(heads, (filed[i + 1][0], cls, i + 1))
            else:
                heappop(heads)
        return taken
