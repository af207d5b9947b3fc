"""The first jobs of a queue that a depth-bounded compression re-plans (``depth``).

A compression made from the plan in force searches a job only where room opened
since the last re-plan (``KeptCompression``): that holds for a job the last re-plan
looked at, or placed since at its earliest start. A job that was behind the first
``depth`` then, held and never looked at, may have missed room that opened earlier:
at its turn it leaves its slot and takes its earliest start anywhere, and the slot
it leaves is room opened for the jobs after it.
"""

from __future__ import annotations

from bisect import bisect_left

import numpy as np

from batchd.model.job import Job
from batchd.model.times import NEVER
from batchd.sched.core.compression import Gains
from batchd.sched.core.order import OrderedQueue
from batchd.sched.core.profile import Profile


class Looked:
    """Which jobs the last re-plan looked at: every job before the first it held (by
    the queue's order key), and every job placed since."""

    __slots__ = ("behind", "placed")

    def __init__(self) -> None:
        self.behind: tuple[int, ...] | None = None  # the first held job's key; None: no job held
        self.placed: set[Job] = set()

    def add(self, job: Job) -> None:
        """``job`` was placed at its earliest start among all the others."""
        self.placed.add(job)

    def all(self) -> None:
        """The last re-plan looked at every job."""
        self.behind = None
        self.placed = set()

    def front(self, queue: OrderedQueue, k: int) -> None:
        """The last re-plan looked at the first ``k`` jobs of ``queue``."""
        self.behind = queue.keys[k] if k < len(queue) else None
        self.placed = set()

    def every(self) -> bool:
        """The last re-plan looked at every job."""
        return self.behind is None

    def entered(self, queue: OrderedQueue, k: int) -> list[int]:
        """Positions among the first ``k`` of the jobs not looked at."""
        if self.behind is None:
            return []
        jobs, placed = queue.jobs, self.placed
        return [i for i in range(bisect_left(queue.keys, self.behind), k) if jobs[i] not in placed]


def compress_front(
    profile: Profile,
    gains: Gains,
    arrays: tuple[np.ndarray, np.ndarray],
    starts: np.ndarray,
    entered: list[int],
    now: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``Profile.compress_again`` of the jobs in ``arrays`` (their starts moved in
    ``starts``), but the jobs at ``entered``: each, at its turn, leaves its slot and
    takes its earliest start anywhere. Returns the slots the movers left."""
    widths, durations = arrays
    ga, gb, ng = gains
    spans = list(zip(ga[:ng].tolist(), gb[:ng].tolist(), strict=True))
    left: list[tuple[int, int]] = []
    begin = 0
    for stop in [*entered, len(widths)]:
        if stop > begin:
            part = slice(begin, stop)
            moved_a, moved_b = _times(stop - begin), _times(stop - begin)
            moved = profile.compress_again(
                widths[part], durations[part], starts[part], _gains(spans, stop - begin),
                (moved_a, moved_b), now,
            )  # fmt: skip
            slots = list(zip(moved_a[:moved].tolist(), moved_b[:moved].tolist(), strict=True))
            spans += slots
            left += slots
        if stop < len(widths):
            width, duration, old = int(widths[stop]), int(durations[stop]), int(starts[stop])
            holds = width > 0 and duration > 0
            if holds and old != NEVER:
                profile.release(old, old + duration, width)
            start = profile.earliest_start(width, duration, now)
            if holds and start != NEVER:
                profile.reserve(start, start + duration, width)
            starts[stop] = start
            if holds and old != NEVER and start != old:
                spans.append((old, old + duration))
                left.append((old, old + duration))
        begin = stop + 1
    pairs = np.array(left, dtype=np.int64).reshape(len(left), 2)
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def _gains(spans: list[tuple[int, int]], room: int) -> Gains:
    """Sorted, disjoint gains of ``spans``, with room for ``room`` more."""
    spans.sort()
    ga, gb = _times(len(spans) + room), _times(len(spans) + room)
    count = 0
    for a, b in spans:
        if count and a <= gb[count - 1]:
            gb[count - 1] = max(int(gb[count - 1]), b)
        else:
            ga[count], gb[count] = a, b
            count += 1
    return ga, gb, count


def _times(count: int) -> np.ndarray:
    return np.empty(count, dtype=np.int64)
