"""The study's results by (scenario, load, scheduler), and the measures read from them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from statistics import fmean
from typing import Any

from batchd_studies.framework.results import Entry
from batchd_studies.moldable.plan import Scheduler

SMALL_CATEGORIES = ("200-3200", "3200-100000")  # the seed's small jobs (Figs. 3, 8, 10)
LARGEST_CATEGORY = ">2000000"


class Index:
    """Entries by (A scenario, offered load, scheduler key)."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.by_cell: dict[tuple[str, float, str], Entry] = {}
        for entry in entries:
            self.by_cell[(entry["a"], float(entry["load"]), entry["scheduler"])] = entry

    def entry(self, a: str, load: float, key: str) -> Entry | None:
        return self.by_cell.get((a, load, key))

    def turnaround(
        self, a: str, load: float, key: str, category: str | None = None
    ) -> float | None:
        """Average turnaround in seconds, overall or in one size category."""
        entry = self.entry(a, load, key)
        mold = None if entry is None else entry["summary"].get("moldable")
        if mold is None:
            return None
        if category is None:
            return float(mold["turnaround"])
        value = mold["turnaround_by_size"].get(category, {}).get("turnaround")
        return None if value is None else float(value)

    def moldable(self, a: str, load: float, key: str) -> dict[str, Any] | None:
        entry = self.entry(a, load, key)
        return None if entry is None else entry["summary"].get("moldable")

    def mean_turnaround(self, a: str, loads: Sequence[float], key: str) -> float | None:
        """The mean over the loads of the average turnaround; None if a load is missing."""
        values = [self.turnaround(a, load, key) for load in loads]
        if not values or any(v is None for v in values):
            return None
        return fmean(v for v in values if v is not None)

    def best(self, a: str, loads: Sequence[float], among: Sequence[Scheduler]) -> Scheduler | None:
        """The scheduler of ``among`` with the lowest mean turnaround over the loads."""
        scored = [(self.mean_turnaround(a, loads, s.key), s) for s in among]
        known = [(v, s) for v, s in scored if v is not None]
        return min(known, key=lambda vs: vs[0])[1] if known else None
