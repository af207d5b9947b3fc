"""The study's schedulers, workloads and runs.

A scheduler is a policy with its parameters under a short key for the tables: the
fair-share scheme at one overbooking factor (ObF) and efficiency factor (EF)
(``moldable-fairshare``; with EF > 0 the efficiency-limited ``moldable-efficiency``),
the iterative scheme, the submit-time greedy scheme, and EASY and conservative
backfilling, which run every job rigid at its requested width.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from batchd.model.utility import format_number

ITERATIVE = "iterative"
GREEDY = "greedy"
RIGID_EASY = "rigid-easy"
RIGID_CONS = "rigid-cons"


@dataclass(frozen=True)
class Scheduler:
    key: str  # the column of the tables
    label: str  # the legend of the figures
    policy: str
    params: tuple[tuple[str, str], ...] = ()
    obf: float | None = None  # fair-share settings only
    ef: float | None = None

    @property
    def fairshare(self) -> bool:
        return self.obf is not None


def fairshare(obf: float, ef: float) -> Scheduler:
    o, e = format_number(obf), format_number(ef)
    if ef > 0:
        return Scheduler(
            f"fs-o{o}-e{e}",
            f"ObF {o}, EF {e}",
            "moldable-efficiency",
            (("obf", o), ("ef", e)),
            obf,
            ef,
        )
    return Scheduler(
        f"fs-o{o}-e{e}", f"ObF {o}, EF {e}", "moldable-fairshare", (("obf", o),), obf, ef
    )


OTHERS: dict[str, Scheduler] = {
    ITERATIVE: Scheduler(ITERATIVE, "iterative", "moldable-iterative"),
    GREEDY: Scheduler(GREEDY, "submit-time greedy", "moldable-greedy"),
    RIGID_EASY: Scheduler(RIGID_EASY, "rigid EASY", "fcfs-easy"),
    RIGID_CONS: Scheduler(RIGID_CONS, "rigid conservative", "fcfs-cons"),
}


def schedulers(
    obfs: Sequence[float], efs: Sequence[float], others: Sequence[str]
) -> list[Scheduler]:
    """The fair-share grid (ObF outer, EF inner), then the others in OTHERS' order."""
    grid = [fairshare(o, e) for o in obfs for e in efs]
    return [*grid, *(OTHERS[k] for k in OTHERS if k in others)]


@dataclass(frozen=True)
class Workload:
    """The trace made moldable for one speedup scenario at one offered load."""

    a: str  # "system" or "random"
    load: float  # the offered load asked for
    seed: int
    path: str
    digest: str


@dataclass(frozen=True)
class Run:
    trace: str  # short name
    jobs: tuple[int, int] | None  # the job numbers replayed; None: all
    nodes: int
    workload: Workload
    scheduler: Scheduler
    cost: float = 1.0

    def identity(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "jobs": None if self.jobs is None else list(self.jobs),
            "nodes": self.nodes,
            "a": self.workload.a,
            "load": self.workload.load,
            "seed": self.workload.seed,
            "workload_sha256": self.workload.digest,
            "policy": self.scheduler.policy,
            "params": dict(self.scheduler.params),
        }

    def label(self) -> str:
        w = self.workload
        return f"A {w.a} load {w.load:g} {self.scheduler.label}"


def entry_identity(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of the run that made ``entry``."""
    keys = ("trace", "jobs", "nodes", "a", "load", "seed", "workload_sha256", "policy", "params")
    return {k: entry[k] for k in keys}


def plan_runs(
    trace: str,
    jobs: tuple[int, int] | None,
    nodes: int,
    workloads: Sequence[Workload],
    wanted: Sequence[Scheduler],
) -> list[Run]:
    """Every scheduler on every workload, the costliest first (iterative, heavy loads),
    so that a pool ends with short runs."""
    runs = []
    for workload in workloads:
        for sched in wanted:
            weight = 20.0 if sched.key == ITERATIVE else 1.0
            runs.append(Run(trace, jobs, nodes, workload, sched, weight * workload.load**4))
    return sorted(runs, key=lambda r: r.cost, reverse=True)
