"""Invariants of every grid structure on random workloads and grids.

No node of any machine is used twice at once; no job runs on a machine narrower
than it (or, for a multi-site part, narrower than the part); the parts of a
multi-site job start together; no job is lost or run twice; none starts before
it was submitted.
"""

from __future__ import annotations

import random

import pytest
from gridutil import job, run_grid

from batchd.model.job import Job

CASES = [
    ("central", {"scheduler": s, "select": sel})
    for s in ("fcfs", "random", "easy", "cons")
    for sel in ("bestfit-free", "biggestfree-free", "random-free", "equalutil-max", "earliest")
]
CASES += [("multisite", {"min_part": "2", "overhead": o, "p": "0.05"}) for o in "1234"]
CASES += [("multisite", {"overhead": o, "p": "0.05", "part_unit": "mean-part"}) for o in "24"]
CASES += [
    ("hierarchical", {"select": s, "local": loc})
    for s in ("bestfit-max", "equalutil-max", "random-max")
    for loc in ("fcfs", "fcfs-easy", "sjf-cons")
]
CASES += [
    ("decentral", {"local": loc, "home": h, "migration": "1.2"})
    for loc in ("fcfs", "fcfs-easy", "fcfs-cons")
    for h in ("partition", "random", "weighted")
]
CASES += [
    ("pool", {"discipline": d, "push": p, "migration": "1.1"})
    for d in ("fcfs", "easy")
    for p in ("blocked", "all")
]
CASES += [
    ("pool", {"discipline": d, "push": "overflow", "backlog": b, "migration": "1.1"})
    for d in ("fcfs", "easy")
    for b in ("0.5", "2")
]
GRIDS = [[2, 4, 8], [4, 4, 4, 4], [3, 16]]


def workload(seed: int, sizes: list[int], multisite: bool) -> list[Job]:
    rng = random.Random(seed)
    widest = sum(sizes) if multisite else max(sizes)
    jobs = []
    t = 0
    for i in range(1, 121):
        t += rng.randrange(0, 60)
        runtime = rng.randrange(0, 400)
        estimate = runtime + rng.randrange(-50, 200)  # some are killed at the estimate
        width = min(widest, int(rng.paretovariate(1.2)))
        home = rng.randrange(0, len(sizes) + 2)  # 0 or past the end: no usable partition
        jobs.append(job(i, t, width, runtime, max(estimate, 1), home=home))
    return jobs


def check(sizes: list[int], jobs: list[Job], runs: list[Job], merged: list[Job]) -> None:
    assert sorted(j.id for j in merged) == [j.id for j in jobs]  # none lost, none twice
    by_id = {j.id: j for j in jobs}
    for run in runs:
        assert run.start >= by_id[run.id].submit
        assert 0 < run.width <= sizes[run.machine]
        assert len(run.units) == run.width
        assert all(0 <= n < sizes[run.machine] for n in run.units)
    parts: dict[int, set[int]] = {}
    for run in runs:
        parts.setdefault(run.id, set()).add(run.start)
    assert all(len(starts) == 1 for starts in parts.values())
    for m in range(len(sizes)):
        events = []
        for run in runs:
            if run.machine == m and run.end > run.start:
                events.append((run.start, 1, run))
                events.append((run.end, 0, run))
        held: set[int] = set()
        for _, kind, run in sorted(events, key=lambda e: (e[0], e[1])):
            if kind == 0:
                held -= set(run.units)
            else:
                assert not held & set(run.units), f"machine {m}: node used twice"
                held |= set(run.units)


@pytest.mark.parametrize("sizes", GRIDS, ids=lambda s: "-".join(map(str, s)))
@pytest.mark.parametrize(
    ("structure", "params"), CASES, ids=[f"{s}-{'-'.join(p.values())}" for s, p in CASES]
)
def test_invariants(structure: str, params: dict[str, str], sizes: list[int]) -> None:
    for seed in (1, 2):
        jobs = workload(seed, sizes, structure == "multisite")
        _, runs, merged = run_grid(structure, sizes, jobs, seed=seed, **params)
        check(sizes, jobs, runs, merged)


def test_same_seed_same_schedule() -> None:
    def schedule(seed: int) -> list[tuple[int, int, int, int]]:
        jobs = workload(7, [2, 4, 8], False)
        runs = run_grid("central", [2, 4, 8], jobs, seed=seed, scheduler="random")[1]
        return [(j.id, j.machine, j.start, j.end) for j in runs]

    assert schedule(3) == schedule(3)
