"""The study's results by scenario and scheduler, each figure the mean over its trials.

A cell is the mean over every run of a scheduler in a scenario: two augmentations
for the deterministic schedulers, two GA seeds on each for ``ga`` (the seed's four
trials), as the seed averages them. Percentiles are averaged percentile by
percentile. A missing run leaves the cell out (None), never zero.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from batchd_studies.utility.measures import from_log_start
from batchd_studies.utility.plan import Scenario, scenario_of

Entry = Mapping[str, Any]
Getter = Callable[[Entry], float | None]


class Index:
    """Entries by (scenario, policy)."""

    def __init__(self, results: Iterable[Entry]) -> None:
        self.cells: dict[tuple[Scenario, str], list[Entry]] = {}
        for entry in results:
            self.cells.setdefault((scenario_of(entry), entry["policy"]), []).append(entry)

    def trials(self, scenario: Scenario, policy: str) -> list[Entry]:
        return self.cells.get((scenario, policy), [])

    def values(self, scenario: Scenario, policy: str, get: Getter) -> list[float]:
        found = (get(e) for e in self.trials(scenario, policy))
        return [v for v in found if v is not None]

    def mean(self, scenario: Scenario, policy: str, get: Getter) -> float | None:
        values = self.values(scenario, policy, get)
        return statistics.fmean(values) if values else None


def _dig(entry: Entry, *keys: str) -> float | None:
    node: Any = entry
    for key in keys:
        if not isinstance(node, Mapping) or node.get(key) is None:
            return None
        node = node[key]
    return float(node)


def wait(q: int) -> Getter:
    return lambda e: _dig(e, "summary", "utility", "wait", f"p{q}")


def expansion(q: int) -> Getter:
    return lambda e: _dig(e, "summary", "utility", "expansion", f"p{q}")


def earned(q: int) -> Getter:
    """% of start value earned at the seed's q-th percentile (its direction)."""
    return lambda e: _dig(e, "columns", "earned_like_seed", f"p{q}")


def aggregate(e: Entry) -> float | None:
    return _dig(e, "summary", "utility", "aggregate")


def earned_share(e: Entry) -> float | None:
    """Aggregate utility as a percentage of the start values (what ending at once earns)."""
    total, possible = aggregate(e), _dig(e, "summary", "utility", "start_values")
    return None if total is None or not possible else 100.0 * total / possible


def by_decay(kind: str) -> Getter:
    return lambda e: _dig(e, "summary", "utility", "by_decay", kind, "aggregate")


def by_decay_share(kind: str) -> Getter:
    """What the jobs of a decay type earned, as a percentage of their start values."""

    def get(e: Entry) -> float | None:
        total = _dig(e, "summary", "utility", "by_decay", kind, "aggregate")
        possible = _dig(e, "summary", "utility", "by_decay", kind, "start_values")
        return None if total is None or not possible else 100.0 * total / possible

    return get


def bsld_all(e: Entry) -> float | None:
    return _dig(e, "summary", "utility", "bsld10")


def bsld_trimmed(e: Entry) -> float | None:
    return _dig(e, "columns", "bsld10_trimmed")


def utilization(e: Entry) -> float | None:
    return _dig(e, "summary", "utilization")


def makespan(e: Entry) -> float | None:
    return _dig(e, "summary", "makespan")


def _log_start(e: Entry) -> tuple[float, float] | None:
    span, util = makespan(e), utilization(e)
    first = _dig(e, "columns", "first_submit")
    if span is None or util is None or first is None:
        return None
    return from_log_start(span, util, first, float(e["factor"]))


def makespan_log(e: Entry) -> float | None:
    found = _log_start(e)
    return None if found is None else found[0]


def utilization_log(e: Entry) -> float | None:
    found = _log_start(e)
    return None if found is None else found[1]


def seconds(e: Entry) -> float | None:
    return _dig(e, "seconds")


def gain(better: float | None, worse: float | None) -> float | None:
    """``better`` over ``worse`` as a fraction (0.53 for +53 %)."""
    if better is None or worse is None or worse == 0:
        return None
    return better / worse - 1.0
