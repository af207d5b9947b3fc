"""One machine as the engine runs it, which is also the view its policy sees, and timers."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING

from batchd.model.job import Job
from batchd.model.machine import Machine
from batchd.model.reservation import Reservation
from batchd.sched.core.policy import Policy

if TYPE_CHECKING:
    import numpy as np

    from batchd.sched.core.columns import IntColumns


class MachineState:
    """One machine as the engine runs it; also the view its policy sees.

    Running jobs and open reservations are kept by estimated end. Each holds
    the units (``units``: node ids, core ids on a machine whose nodes are shared)
    it gives back when it ends: a unit taken out of service while busy does not
    come back, so the policy's picture stays exact.
    """

    __slots__ = (
        "index",
        "machine",
        "policy",
        "pool",
        "now",
        "kill",
        "_ends",
        "_widths",
        "_holders",
        "_arrays",
        "future",
        "_pending",
        "shared",
        "unplaced",
    )

    # Running jobs from which their ends and widths are kept as arrays too, until
    # fewer than half as many run: below it, making the arrays costs less.
    KEEP_ARRAYS_FROM = 256

    def __init__(self, index: int, machine: Machine, policy: Policy, kill: bool) -> None:
        self.index = index
        self.machine = machine
        self.policy = policy
        self.pool = machine.pool
        self.now = 0
        self.kill = kill
        self._ends: list[int] = []  # estimated ends, ascending (equal ends: oldest first)
        self._widths: list[int] = []
        self._holders: list[Job | Reservation] = []
        # _ends and _widths as arrays, kept from the first call of running_arrays on.
        self._arrays: IntColumns | None = None
        self.future: list[Reservation] = []  # confirmed reservations, by start
        self._pending: list[tuple[int, int, int]] = []  # their windows, for the planners
        # Shared nodes (a unit is a core): the jobs whose pieces found no node in the
        # last pass that placed any.
        self.shared = machine.slots_per_node > 1
        self.unplaced: set[int] = set()

    # -- the policy's view ------------------------------------------------------
    @property
    def capacity(self) -> int:
        pool = self.pool
        return pool.size - len(pool._out)  # NodePool.available, read once per EASY pass

    @property
    def free(self) -> int:
        return self.pool._nfree  # NodePool.free, without a second property call per pass

    @property
    def overrun(self) -> bool:
        return bool(self._ends) and self._ends[0] <= self.now

    def running_ends(self) -> list[int]:
        if self._ends and self._ends[0] <= self.now:
            # Past its estimate and still running: nobody knows when it ends.
            soon = self.now + 1
            return [e if e > soon else soon for e in self._ends]
        return self._ends

    def running_widths(self) -> list[int]:
        return self._widths

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        if self._arrays is None:
            if len(self._ends) < self.KEEP_ARRAYS_FROM:
                ends = np.array(self._ends, dtype=np.int64)
                widths = np.array(self._widths, dtype=np.int64)
                return np.maximum(ends, self.now + 1) if self.overrun else ends, widths
            from batchd.sched.core.columns import IntColumns

            self._arrays = IntColumns(self._ends, self._widths)
        ends = self._arrays.live(0)
        if self.overrun:
            return np.maximum(ends, self.now + 1), self._arrays.live(1)
        return ends, self._arrays.live(1)

    def reservations(self) -> list[tuple[int, int, int]]:
        return self._pending

    def add_future(self, resv: Reservation) -> None:
        self.future.append(resv)
        self.future.sort(key=lambda r: (r.start, r.id))
        self._pending = [(r.start, r.end, r.width) for r in self.future]

    def drop_future(self, resv: Reservation) -> None:
        self.future.remove(resv)
        self._pending = [(r.start, r.end, r.width) for r in self.future]

    # -- bookkeeping ------------------------------------------------------------
    def add_running(self, end: int, holder: Job | Reservation, count: int = -1) -> None:
        """Keep ``holder`` until ``end``; it gives back its nodes, or ``count`` nodes when
        it holds them by count (NodePool.take_count)."""
        i = bisect_right(self._ends, end)
        self._ends.insert(i, end)
        if count < 0:
            units = holder.units
            count = len(units) if not self.pool._out else self._returning(units)
        self._widths.insert(i, count)
        self._holders.insert(i, holder)
        if self._arrays is not None:
            self._arrays.insert(i, end, count)

    def remove_running(self, end: int, holder: Job | Reservation) -> None:
        """Forget ``holder``, added with estimated end ``end``."""
        i = bisect_left(self._ends, end)
        holders = self._holders
        while holders[i] is not holder:  # among the holders that end at the same second
            i += 1
        del self._ends[i], self._widths[i], holders[i]
        if self._arrays is not None:
            self._arrays.delete(i)
            if 2 * len(self._ends) < self.KEEP_ARRAYS_FROM:
                self._arrays = None

    def _returning(self, units: list[int]) -> int:
        pool = self.pool
        if pool.all_in_service:
            return len(units)
        return sum(1 for n in units if pool.in_service(n))

    def refresh_widths(self) -> None:
        """Recount what each holder gives back, after nodes left or rejoined service."""
        self._widths = [self._returning(h.units) for h in self._holders]
        self._arrays = None

    def holder_of(self, unit: int) -> Job | Reservation | None:
        for h in self._holders:
            if unit in h.units:
                return h
        return None

    def holders(self) -> list[Job | Reservation]:
        return list(self._holders)

    @property
    def running_count(self) -> int:
        return len(self._ends)


class Timer:
    """A callback at an emulated time; cancelling it leaves a tombstone in the heap."""

    __slots__ = ("when", "fn", "cancelled")

    def __init__(self, when: int, fn: Callable[[], None]) -> None:
        self.when = when
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
