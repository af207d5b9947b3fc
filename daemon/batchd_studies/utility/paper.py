"""Lee's utility paper's numbers (Tables 1 and 2), as printed, from paper.json.

Percentiles of wait time and expansion factor ascend; those of % of start value
earned descend (q % of the jobs earned at least that); see ``measures``. Its
figures (5, 7-10) give no numbers in the text, so only their shapes are compared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from batchd_studies.framework import StudyError
from batchd_studies.framework.paper import PAPER_FILE, paper_data, section


@dataclass(frozen=True)
class SeedRow:
    wait: tuple[float, ...]  # 25, 50, 75, 98, 100 %ile, seconds
    expansion: tuple[float, ...]
    bsld: float
    utilization: float
    makespan: float
    earned: tuple[float, ...]  # %, the seed's direction
    aggregate: float


PACKAGE = "batchd_studies.utility"
_FIELDS = ("wait", "expansion", "bsld", "utilization", "makespan", "earned", "aggregate")


def _row(table: str, scheduler: str, numbers: dict[str, Any]) -> SeedRow:
    missing = [f for f in _FIELDS if f not in numbers]
    if missing:
        raise StudyError(f"{PACKAGE}/{PAPER_FILE}: {table}.{scheduler} lacks {missing[0]!r}")
    return SeedRow(
        wait=tuple(numbers["wait"]),
        expansion=tuple(numbers["expansion"]),
        bsld=numbers["bsld"],
        utilization=numbers["utilization"],
        makespan=numbers["makespan"],
        earned=tuple(numbers["earned"]),
        aggregate=numbers["aggregate"],
    )


def _table(key: str) -> dict[str, SeedRow]:
    rows = section(_DATA, key, PACKAGE)
    return {scheduler: _row(key, scheduler, numbers) for scheduler, numbers in rows.items()}


_DATA = paper_data(PACKAGE)
TABLE1 = _table("table1")  # users' requested runtimes, the default workload
TABLE2 = _table("table2")  # 100 % accurate requested runtimes
