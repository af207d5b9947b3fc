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
_SHORT = 32  # a queue shorter than this keeps no classes
_DEEP = 64  # a pass that would test fewer jobs than this walks them


class WidthFiledQueue(OrderedQueue):
    """An ``OrderedQueue`` whose jobs are also filed by width class while it is deep.

    Only the number of jobs in each class is always kept (``counts``). The classes
    themselves are built when a pass merges them (``filed``) and kept up to date while
    passes do; a pass that walks the queue, or a short queue, drops them, so a queue
    whose jobs are mostly narrow pays little for them."""

    __slots__ = ("classes", "counts")

    def __init__(self, key: OrderKey) -> None:
        super().__init__(key)
        self.classes: dict[int, list[Entry]] | None = None  # width.bit_length() -> by key
        self.counts = [0] * 64  # jobs by width.bit_length()

    def filed(self) -> dict[int, list[Entry]]:
        """The width classes, built now if they were not kept."""
        if self.classes is None:
            classes: dict[int, list[Entry]] = {}
            for entry in zip(self.keys, self.widths, self.durations, self.jobs, strict=True):
                classes.setdefault(entry[1].bit_length(), []).append(entry)  # keys ascend
            self.classes = classes
        return self.classes

    def insert(self, job: Job, start: int = NEVER, shape: tuple[int, int] | None = None) -> int:
        i = OrderedQueue.insert(self, job, start, shape)
        width = self.widths[i]
        self.counts[width.bit_length()] += 1
        if self.classes is not None:
            entry = (self.keys[i], width, self.durations[i], job)
            filed = self.classes.setdefault(width.bit_length(), [])
            if not filed or filed[-1][0] < entry[0]:
                filed.append(entry)
            else:
                insort(filed, entry)
        return i

    def _unfile(self, classes: dict[int, list[Entry]], key: tuple[int, ...], width: int) -> None:
        filed = classes[width.bit_length()]
        del filed[bisect_left(filed, (key,))]

    def _short(self) -> None:
        if len(self.jobs) < _SHORT:
            self.classes = None

    def remove(self, job: Job) -> None:
        i = self.index(job)
        self.counts[self.widths[i].bit_length()] -= 1
        if self.classes is not None:
            self._unfile(self.classes, self.keys[i], self.widths[i])
        OrderedQueue.remove(self, job)

    def pop_front(self, k: int) -> list[Job]:
        counts, classes = self.counts, self.classes
        if classes is None:  # the usual case on a short queue: only the counts
            for width in self.widths[:k]:
                counts[width.bit_length()] -= 1
        else:
            for key, width in zip(self.keys[:k], self.widths[:k], strict=True):
                counts[width.bit_length()] -= 1
                self._unfile(classes, key, width)
        out = OrderedQueue.pop_front(self, k)
        self._short()
        return out

    def remove_many(self, jobs: list[Job]) -> None:
        counts, classes = self.counts, self.classes
        for job in jobs:
            key = self.key(job)
            i = bisect_left(self.keys, key)
            if i < len(self.jobs) and self.jobs[i] is job:
                counts[self.widths[i].bit_length()] -= 1
                if classes is not None:
                    self._unfile(classes, key, self.widths[i])
        OrderedQueue.remove_many(self, jobs)
        self._short()

    def worth_merging(self, after: int, free: int) -> bool:
        """Whether a pass after position ``after`` should merge the classes that can
        hold ``free`` nodes rather than walk the queue: the jobs in them (counted over
        the whole queue, an upper bound) are few against the jobs a walk would test.
        A walk drops the classes, so that passes that walk pay nothing to keep them."""
        rest = len(self.jobs) - after - 1
        if rest > _DEEP and sum(self.counts[1 : free.bit_length() + 1]) * 16 < rest:
            return True
        self.classes = None
        return False

    def backfill(
        self, key: tuple[int, ...], free: int, now: int, shadow: int, extra: int
    ) -> list[Job]:
        """EASY's backfilling over the jobs after ``key``: in order, each that fits in
        ``free`` nodes and ends by ``shadow``, or fits in the ``extra`` nodes (which it
        then takes), until no node is free. Only classes that can hold a job of at most
        the free nodes are merged, and a class is left once its narrowest width no
        longer fits: the jobs met are those a walk of the whole queue would take."""
        classes = self.filed()
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
