"""The availability profile: free nodes over future time.

``Profile`` keeps the step function in numpy arrays and runs the compiled loops
of ``kernels.profile``; ``ListProfile`` is the same interface on two Python lists with
``bisect``, kept as the readable reference the compiled one is tested against.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

import numpy as np

from batchd.model.times import NEVER
from batchd.sched.kernels import blocked_compression, blocked_plan, blocks, plan_change
from batchd.sched.kernels import compression as compression_kernels
from batchd.sched.kernels import profile as kernels

__all__ = ["NEVER", "ListProfile", "Profile", "room_for"]


def room_for(jobs: int) -> int:
    """The steps that placing, reserving or releasing ``jobs`` jobs may add: a copy
    made with this room (``Profile.copy``) is not enlarged by that."""
    return 2 * jobs + 2


class Profile:
    """Free nodes as a step function of time, from ``origin`` on."""

    BLOCKED_FROM = blocks.BLOCKED_FROM  # steps from which plans are made on blocks

    __slots__ = ("capacity", "t", "f", "n")

    def __init__(self, capacity: int, origin: int = 0, *, room: int = 64) -> None:
        self.capacity = capacity
        self.t = np.empty(max(room, 4), dtype=np.int64)
        self.f = np.empty(max(room, 4), dtype=np.int64)
        self.t[0] = origin
        self.f[0] = capacity
        self.n = 1

    @classmethod
    def of_running(
        cls,
        capacity: int,
        now: int,
        ends: Sequence[int] | np.ndarray,
        widths: Sequence[int] | np.ndarray,
        *,
        room: int = 0,
    ) -> Profile:
        """The profile of running jobs, ``widths[k]`` nodes until ``ends[k]`` (ascending)."""
        e = np.asarray(ends, dtype=np.int64)
        w = np.asarray(widths, dtype=np.int64)
        prof = cls(capacity, now, room=len(e) + 2 * room + 8)
        prof.n = kernels.build(prof.t, prof.f, now, capacity, e, w)
        return prof

    def copy(self, extra: int | None = None) -> Profile:
        """A copy with room for ``extra`` more steps (None: as much room as this one)."""
        other = Profile.__new__(Profile)
        other.capacity = self.capacity
        if extra is None:
            other.t = self.t.copy()
            other.f = self.f.copy()
        else:
            size = max(self.n + extra, 4)
            other.t = np.empty(size, dtype=np.int64)
            other.f = np.empty(size, dtype=np.int64)
            other.t[: self.n] = self.t[: self.n]
            other.f[: self.n] = self.f[: self.n]
        other.n = self.n
        return other

    def _room(self, extra: int) -> None:
        need = self.n + extra
        if need > len(self.t):
            size = max(need, 2 * len(self.t))
            t = np.empty(size, dtype=np.int64)
            f = np.empty(size, dtype=np.int64)
            t[: self.n] = self.t[: self.n]
            f[: self.n] = self.f[: self.n]
            self.t, self.f = t, f

    @property
    def origin(self) -> int:
        return int(self.t[0])

    def free_at(self, time: int) -> int:
        return int(self.f[kernels.locate(self.t, self.n, time)])

    def earliest_start(self, width: int, duration: int, not_before: int) -> int:
        return int(kernels.earliest_start(self.t, self.f, self.n, width, duration, not_before))

    def reserve(self, start: int, end: int, width: int) -> None:
        self._room(2)
        self.n = kernels.add(self.t, self.f, self.n, start, end, -width)

    def release(self, start: int, end: int, width: int) -> None:
        self._room(2)
        self.n = kernels.add(self.t, self.f, self.n, start, end, width)

    def advance(self, now: int) -> None:
        self.n = kernels.advance(self.t, self.f, self.n, now)

    def place(self, width: int, duration: int, not_before: int) -> int:
        """Reserve the earliest slot that fits and return its start (NEVER if none)."""
        self._room(2)
        start, self.n = kernels.place(self.t, self.f, self.n, width, duration, not_before)
        return int(start)

    def plan(
        self,
        widths: np.ndarray,
        durations: np.ndarray,
        not_before: int,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Place jobs in the given order, each at its earliest start; returns the starts
        (written to ``out`` if given)."""
        starts = self._plan(widths, durations, not_before, None, out)
        assert starts is not None  # only held starts stop a plan
        return starts

    def plan_within(
        self, widths: np.ndarray, durations: np.ndarray, not_before: int, held: np.ndarray
    ) -> np.ndarray | None:
        """``plan``, if it starts no job later than its ``held`` start; else None, as
        soon as one would be, and the profile is no longer of use."""
        return self._plan(widths, durations, not_before, held)

    def _plan(
        self,
        widths: np.ndarray,
        durations: np.ndarray,
        not_before: int,
        held: np.ndarray | None,
        out: np.ndarray | None = None,
    ) -> np.ndarray | None:
        self._room(room_for(len(widths)))
        starts = np.empty(len(widths), dtype=np.int64) if out is None else out
        t, f, n = self.t, self.f, self.n
        if n >= self.BLOCKED_FROM:
            n = blocked_plan.plan_all(
                t, f, n, widths, durations, not_before, starts, blocks.BLOCK, held
            )
        else:
            n = kernels.plan_all(t, f, n, widths, durations, not_before, starts, held)
        if n < 0:
            self.n = 0
            return None
        self.n = n
        return starts

    def compress_again(
        self,
        widths: np.ndarray,
        durations: np.ndarray,
        starts: np.ndarray,
        gains: tuple[np.ndarray, np.ndarray, int],
        left: tuple[np.ndarray, np.ndarray],
        not_before: int,
    ) -> int:
        """``compress`` in place on ``starts``, where room opened in ``gains`` only
        (starts, ends, count: sorted, disjoint, with room for one more per job); the
        slots the movers left are written to ``left`` (starts, ends), their count
        returned (``kernels.compression.compress_again``)."""
        self._room(4 * len(widths) + 2)  # as compress
        args = (self.t, self.f, self.n, widths, durations, not_before, starts, *gains)
        if self.n >= self.BLOCKED_FROM:
            self.n, moved = blocked_compression.compress_again(*args, *left, blocks.BLOCK)
        else:
            self.n, moved = compression_kernels.compress_again(*args, *left)
        return int(moved)

    def changed_since(
        self,
        old: Profile,
        base: Profile,
        gone: np.ndarray,
        left: tuple[np.ndarray, np.ndarray],
        now: int,
        room: int,
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """This profile, a plan made on ``old``, made the same plan on ``base`` from
        ``now`` on, with the slots of the jobs that left it (``gone``: rows of start,
        duration, width) freed. Returns where it gained room, with the slots ``left``
        (starts, ends), as gains (starts, ends, count) with room for ``room`` more
        (``kernels.plan_change.changes_since``)."""
        self.advance(now)
        changes = old.n + base.n + 2 * len(gone) + 1
        self._room(changes)
        ga = np.empty(changes + len(left[0]) + room, dtype=np.int64)
        gb = np.empty(len(ga), dtype=np.int64)
        self.n, ng = plan_change.changes_since(
            self.t, self.f, self.n, old.t, old.f, old.n, base.t, base.f, base.n,
            gone, *left, now, ga, gb,
        )  # fmt: skip
        self.capacity = base.capacity
        return ga, gb, int(ng)

    def reserve_all(self, widths: np.ndarray, durations: np.ndarray, starts: np.ndarray) -> None:
        self._room(room_for(len(widths)))
        self.n = kernels.reserve_all(self.t, self.f, self.n, widths, durations, starts)

    # From this many reservations a release sums them with the profile's steps in time
    # order (``reserve_all`` with the widths negated) instead of taking them out one by
    # one, each a pass over the steps.
    RELEASED_TOGETHER_FROM = 32

    def release_all(self, widths: np.ndarray, durations: np.ndarray, starts: np.ndarray) -> None:
        self._room(room_for(len(widths)))
        if len(widths) >= self.RELEASED_TOGETHER_FROM:
            self.n = kernels.reserve_all(self.t, self.f, self.n, -widths, durations, starts)
        else:
            self.n = kernels.release_all(self.t, self.f, self.n, widths, durations, starts)

    def same_steps(self, other: Profile) -> bool:
        """The same step function (profiles keep equal neighbours merged)."""
        n = self.n
        return (
            n == other.n
            and bool(np.array_equal(self.t[:n], other.t[:n]))
            and bool(np.array_equal(self.f[:n], other.f[:n]))
        )

    def compress(
        self, widths: np.ndarray, durations: np.ndarray, starts: np.ndarray, not_before: int
    ) -> np.ndarray:
        """Move reserved jobs (already in the profile) earlier, in order; returns new starts."""
        # The reservations held may have merged up to two of the base's steps each, and
        # may split them again as they move: up to four new steps per job.
        self._room(4 * len(widths) + 2)
        out = starts.copy()
        self.n = kernels.compress(self.t, self.f, self.n, widths, durations, not_before, out)
        return out

    def steps(self) -> list[tuple[int, int]]:
        return list(zip(self.t[: self.n].tolist(), self.f[: self.n].tolist(), strict=True))


class ListProfile:
    """The reference profile: two parallel lists searched with ``bisect``."""

    __slots__ = ("capacity", "times", "free")

    def __init__(self, capacity: int, origin: int = 0) -> None:
        self.capacity = capacity
        self.times = [origin]
        self.free = [capacity]

    @classmethod
    def of_running(
        cls, capacity: int, now: int, ends: Sequence[int], widths: Sequence[int]
    ) -> ListProfile:
        prof = cls(capacity, now)
        prof.free[0] = capacity - sum(w for e, w in zip(ends, widths, strict=True) if e > now)
        for e, w in sorted(zip(ends, widths, strict=True)):
            if e > now:
                prof._add(e, None, w)
        prof._merge()
        return prof

    def copy(self) -> ListProfile:
        other = ListProfile(self.capacity)
        other.times = list(self.times)
        other.free = list(self.free)
        return other

    def _index(self, time: int) -> int:
        return max(bisect_right(self.times, time) - 1, 0)

    def _split(self, time: int) -> int:
        i = self._index(time)
        if self.times[i] < time:
            self.times.insert(i + 1, time)
            self.free.insert(i + 1, self.free[i])
            return i + 1
        return i

    def _add(self, start: int, end: int | None, delta: int) -> None:
        i = self._split(start)
        k = len(self.times) if end is None else self._split(end)
        for m in range(i, k):
            self.free[m] += delta

    def _merge(self) -> None:
        times, free = [self.times[0]], [self.free[0]]
        for t, f in zip(self.times[1:], self.free[1:], strict=True):
            if f != free[-1]:
                times.append(t)
                free.append(f)
        self.times, self.free = times, free

    @property
    def origin(self) -> int:
        return self.times[0]

    def free_at(self, time: int) -> int:
        return self.free[self._index(time)]

    def earliest_start(self, width: int, duration: int, not_before: int) -> int:
        i = self._index(not_before)
        n = len(self.times)
        while True:
            while self.free[i] < width:
                i += 1
                if i == n:
                    return NEVER
            start = max(self.times[i], not_before)
            j = i + 1
            while j < n and self.times[j] < start + duration:
                if self.free[j] < width:
                    break
                j += 1
            else:
                return start
            i = j

    def reserve(self, start: int, end: int, width: int) -> None:
        if end > start:
            self._add(start, end, -width)
            self._merge()

    def release(self, start: int, end: int, width: int) -> None:
        if end > start:
            self._add(start, end, width)
            self._merge()

    def advance(self, now: int) -> None:
        i = self._index(now)
        del self.times[:i], self.free[:i]
        self.times[0] = max(self.times[0], now)

    def place(self, width: int, duration: int, not_before: int) -> int:
        start = self.earliest_start(width, duration, not_before)
        if start != NEVER:
            self.reserve(start, start + duration, width)
        return start

    def plan(self, widths: Sequence[int], durations: Sequence[int], not_before: int) -> list[int]:
        return [self.place(w, d, not_before) for w, d in zip(widths, durations, strict=True)]

    def steps(self) -> list[tuple[int, int]]:
        return list(zip(self.times, self.free, strict=True))
