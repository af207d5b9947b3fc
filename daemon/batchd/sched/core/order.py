"""Queue orders and the waiting queue that keeps jobs sorted by one of them."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from batchd.model.job import Job
from batchd.model.times import NEVER

if TYPE_CHECKING:
    import numpy as np

    from batchd.sched.core.columns import IntColumns

OrderKey = Callable[[Job], tuple[int, ...]]

# Up to this many jobs leave a queue one by one; more, and its lists are rebuilt once.
_FEW = 16
_WIDTHS, _DURATIONS, _STARTS = 0, 1, 2  # the columns of its arrays


# Job priority (qsub -p) comes first: all jobs of a trace have priority 0.


def fcfs_key(job: Job) -> tuple[int, ...]:
    return (-job.priority, job.submit, job.id)


def sjf_key(job: Job) -> tuple[int, ...]:
    return (-job.priority, job.estimate, job.submit, job.id)


def ljf_key(job: Job) -> tuple[int, ...]:
    return (-job.priority, -job.estimate, job.submit, job.id)


ORDERS: dict[str, OrderKey] = {"fcfs": fcfs_key, "sjf": sjf_key, "ljf": ljf_key}


def prio_key(job: Job) -> tuple[int, ...]:
    """prio-fifo: strict priority classes (0 first, after the PBS priority), FCFS within."""
    return (-job.priority, job.priority_class, job.submit, job.id)


class OrderedQueue:
    """Waiting jobs sorted by an order key, with their widths and durations alongside.

    The parallel lists let the planners hand whole queues to the compiled loops
    without walking Job objects. ``starts`` holds planned starts for planners that
    plan; a job not planned yet holds NEVER. ``changes`` counts every change other
    than a job appended at the end: while it stands, the first jobs are the same.

    A deep queue asked for ``arrays`` keeps its widths, durations and starts as
    arrays (``IntColumns``) until it is short again (``KEEP_ARRAYS_FROM``: below it,
    keeping them costs more than making them). A plan's starts are handed over as an
    array (``set_starts``); the list of starts is made from it only when something
    reads it, so a re-plan of a deep queue turns no array into a list.
    """

    __slots__ = ("key", "keys", "jobs", "widths", "durations", "_starts", "changes", "arrays_kept")

    KEEP_ARRAYS_FROM = 1024  # jobs; kept until fewer than half as many wait

    def __init__(self, key: OrderKey) -> None:
        self.key = key
        self.keys: list[tuple[int, ...]] = []
        self.jobs: list[Job] = []
        self.widths: list[int] = []
        self.durations: list[int] = []
        # The starts as a list; None while only the arrays hold them (never both None).
        self._starts: list[int] | None = []
        self.changes = 0
        # Widths, durations and starts as arrays, made by ``arrays`` on a deep queue.
        self.arrays_kept: IntColumns | None = None

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            kept = self.arrays_kept
            assert kept is not None
            self._starts = kept.live(_STARTS).tolist()
        return self._starts

    def set_starts(self, starts: np.ndarray) -> None:
        """A plan's starts, in queue order (the array is not kept)."""
        kept = self._kept()
        if kept is None:
            self._starts = starts.tolist()
            return
        kept.live(_STARTS)[:] = starts
        self._starts = None

    def set_front_starts(self, starts: np.ndarray) -> None:
        """New starts of the first ``len(starts)`` jobs; the others keep theirs."""
        kept = self._kept()
        if kept is None:
            self.starts[: len(starts)] = starts.tolist()
            return
        kept.live(_STARTS)[: len(starts)] = starts
        self._starts = None

    def start_at(self, i: int) -> int:
        """The planned start of the job at ``i``."""
        if self._starts is not None:
            return self._starts[i]
        assert self.arrays_kept is not None
        return self.arrays_kept.at(_STARTS, i)

    def __len__(self) -> int:
        return len(self.jobs)

    def __iter__(self) -> Iterator[Job]:
        return iter(self.jobs)

    def __contains__(self, job: Job) -> bool:
        k = self.key(job)
        i = bisect_left(self.keys, k)
        return i < len(self.keys) and self.jobs[i] is job

    def index(self, job: Job) -> int:
        i = bisect_left(self.keys, self.key(job))
        if i == len(self.jobs) or self.jobs[i] is not job:
            raise KeyError(f"job {job.id} is not waiting in this queue")
        return i

    def insert(self, job: Job, start: int = NEVER, shape: tuple[int, int] | None = None) -> int:
        """Queue ``job`` planned at ``start``, at its own width and duration, or at
        ``shape`` (width, duration): the one a moldable policy chose for it."""
        k = self.key(job)
        keys = self.keys
        if shape is None:
            width = job.width
            estimate = job.estimate
            duration = estimate if estimate > 0 else 1  # Job.duration
        else:
            width, duration = shape
        # Most jobs of a trace arrive behind all the others in FCFS order: no search then.
        if not keys or keys[-1] < k:
            i = len(keys)
            keys.append(k)
            self.jobs.append(job)
            self.widths.append(width)
            self.durations.append(duration)
            if self._starts is not None:
                self._starts.append(start)
        else:
            i = bisect_left(keys, k)
            self.changes += 1
            keys.insert(i, k)
            self.jobs.insert(i, job)
            self.widths.insert(i, width)
            self.durations.insert(i, duration)
            if self._starts is not None:
                self._starts.insert(i, start)
        if self.arrays_kept is not None:
            self.arrays_kept.insert(i, width, duration, start)
        return i

    def remove(self, job: Job) -> None:
        i = self.index(job)
        self.changes += 1
        self._delete(i)

    def _delete(self, i: int) -> None:
        del self.keys[i], self.jobs[i], self.widths[i], self.durations[i]
        if self._starts is not None:
            del self._starts[i]
        if self.arrays_kept is not None:
            self.arrays_kept.delete(i)
            self._keep_arrays_while_deep()

    def _keep_arrays_while_deep(self) -> None:
        if 2 * len(self.jobs) < self.KEEP_ARRAYS_FROM:
            self._starts = self.starts
            self.arrays_kept = None

    def pop_front(self, k: int) -> list[Job]:
        out = self.jobs[:k]
        self.changes += 1
        del self.keys[:k], self.jobs[:k], self.widths[:k], self.durations[:k]
        if self._starts is not None:
            del self._starts[:k]
        if self.arrays_kept is not None:
            self.arrays_kept.drop_front(k)
            self._keep_arrays_while_deep()
        return out

    def remove_many(self, jobs: list[Job]) -> None:
        """Remove these jobs, each found by bisection (one not waiting is ignored)."""
        keys, key, queued = self.keys, self.key, self.jobs
        at = set()
        for job in jobs:
            i = bisect_left(keys, key(job))
            if i < len(queued) and queued[i] is job:
                at.add(i)
        self.remove_at(sorted(at))

    def remove_at(self, at: list[int]) -> None:
        """Remove the jobs at these ascending positions: few one by one, more by
        joining the runs between them (no walk over the whole queue)."""
        self.changes += 1
        if len(at) <= _FEW:
            for i in reversed(at):
                self._delete(i)
            return
        runs = list(zip([-1, *at], [*at, len(self.jobs)], strict=True))

        def cut(values: list[Any]) -> list[Any]:
            out: list[Any] = []
            for after, before in runs:
                out += values[after + 1 : before]
            return out

        self.keys, self.jobs = cut(self.keys), cut(self.jobs)
        self.widths, self.durations = cut(self.widths), cut(self.durations)
        if self._starts is not None:
            self._starts = cut(self._starts)
        if self.arrays_kept is not None:
            self.arrays_kept.remove(at)
            self._keep_arrays_while_deep()

    # numpy loads with the planners that need arrays, not with the counting passes.
    def _kept(self) -> IntColumns | None:
        """The arrays kept, made now if the queue is deep; None while it is short."""
        if self.arrays_kept is None and len(self.jobs) >= self.KEEP_ARRAYS_FROM:
            from batchd.sched.core.columns import IntColumns

            self.arrays_kept = IntColumns(self.widths, self.durations, self.starts)
        return self.arrays_kept

    def starts_array(self) -> np.ndarray:
        """The planned starts as an array of its own (the caller may keep it)."""
        import numpy as np

        kept = self._kept()
        if kept is None:
            return np.array(self.starts, dtype=np.int64)
        return kept.live(_STARTS).copy()

    def views(self) -> tuple[np.ndarray, np.ndarray]:
        """The widths and durations as arrays to be read before the queue changes
        (on a deep queue, the arrays it keeps: no copy is made)."""
        kept = self._kept()
        if kept is None:
            return self.arrays()
        return kept.live(_WIDTHS), kept.live(_DURATIONS)

    def starts_out(self) -> np.ndarray | None:
        """On a deep queue, the array of its planned starts for a plan to be written
        into (what it holds is no longer the plan); None on a short one."""
        kept = self._kept()
        if kept is None:
            return None
        self._starts = None
        return kept.live(_STARTS)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The widths and durations as arrays of their own (the caller may keep them)."""
        import numpy as np

        kept = self._kept()
        if kept is None:
            return np.array(self.widths, dtype=np.int64), np.array(self.durations, dtype=np.int64)
        return kept.live(_WIDTHS).copy(), kept.live(_DURATIONS).copy()
