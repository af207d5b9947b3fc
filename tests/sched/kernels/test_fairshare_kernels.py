"""The compiled pass of the fair-share moldable policies against a plain reference: every
width of every job tried on the reference profile, the soonest end taken, and Fig. 1's
transfer one node at a time by scanning all jobs. Random queues, running jobs and
parameters; the compiled pass takes shortcuts (the limits' heaps, a start now found from
the fewest free nodes over time) that must not change a single decision."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import numpy as np
import pytest

from batchd.model.job import Job
from batchd.model.moldable import FIXED, Moldable, Speedup
from batchd.model.times import NEVER
from batchd.sched.core.profile import ListProfile
from batchd.sched.kernels.fairshare import DECIDED, efficiency_transfer, fairshare_pass
from batchd.sched.policies.moldable_fairshare import MoldRows

EPS = 1e-9
LINEAR = Speedup("downey", 100, 0)  # S(n) = n on every machine here


@dataclass
class Case:
    capacity: int
    now: int
    ends: list[int]
    busy: list[int]
    jobs: list[Job]
    decided: list[int]  # 0: not decided
    depth: int
    obf: float
    ef: float


def _speedup_in_range(job: Job, n: int) -> float:
    mold = job.mold
    if mold is None or mold.rigid:
        return 1.0
    return mold.speedup.at(min(max(n, mold.low), mold.high))


def _weight(job: Job) -> float:
    mold = job.mold
    if mold is None or mold.rigid:
        return float(job.width * job.duration)
    return max(mold.estimate, 1) * mold.speedup.at(mold.width)


def reference_limits(case: Case) -> list[int]:
    roots = [math.sqrt(_weight(j)) for j in case.jobs]
    total = sum(roots)
    limits = [
        max(1, math.floor(min(case.obf * r / total * case.capacity, case.capacity) + EPS))
        for r in roots
    ]
    movable = [
        d == 0 and j.mold is not None and not j.mold.rigid
        for j, d in zip(case.jobs, case.decided, strict=True)
    ]
    if case.ef > 0:
        reference_transfer(case.jobs, limits, movable, case.ef, case.capacity)
    return limits


def reference_transfer(
    jobs: list[Job], limits: list[int], movable: list[bool], ef: float, nodes: int
) -> int:
    """Fig. 1 by scanning: the cheapest loser gives a node to the best gainer while that
    raises the sum of speedups; a job moves one way only."""
    lo = [max(1, math.ceil((1 - ef) * x - EPS)) for x in limits]
    hi = [min(nodes, math.floor((1 + ef) * x + EPS)) for x in limits]
    way = [0] * len(jobs)

    def loss(k: int) -> float:
        return _speedup_in_range(jobs[k], limits[k]) - _speedup_in_range(jobs[k], limits[k] - 1)

    def gain(k: int) -> float:
        return _speedup_in_range(jobs[k], limits[k] + 1) - _speedup_in_range(jobs[k], limits[k])

    moved = 0
    while True:
        losers = sorted(
            (loss(k), k)
            for k in range(len(jobs))
            if movable[k] and way[k] <= 0 and limits[k] > lo[k]
        )
        gainers = sorted(
            (-gain(k), k)
            for k in range(len(jobs))
            if movable[k] and way[k] >= 0 and limits[k] < hi[k]
        )
        if not losers or not gainers:
            return moved
        (least, s), (most, g) = losers[0], gainers[0]
        if s == g:
            best, pick = 0.0, None
            if len(losers) > 1 and -most - losers[1][0] > best:
                best, pick = -most - losers[1][0], (losers[1][1], s)
            if len(gainers) > 1 and -gainers[1][0] - least > best:
                pick = (s, gainers[1][1])
            if pick is None:
                return moved
            s, g = pick
        elif -most <= least:
            return moved
        limits[s] -= 1
        limits[g] += 1
        way[s], way[g] = -1, 1
        moved += 1


def reference_pass(case: Case) -> list[tuple[int, int]]:
    """(width, start) of each job: started now, reserved, or (0, NEVER) passed over."""
    profile = ListProfile.of_running(case.capacity, case.now, case.ends, case.busy)
    reserved = 0
    out: list[tuple[int, int]] = []
    for job, limit, decided in zip(case.jobs, reference_limits(case), case.decided, strict=True):
        mold = job.mold
        if decided:
            lo = cap = decided
        elif mold is None or mold.rigid:
            lo = cap = job.width
        else:
            lo, cap = mold.low, min(mold.high, max(mold.low, limit))
        best: tuple[int, int, int, int] | None = None
        for w in range(lo, cap + 1):
            d = job.duration if mold is None else max(mold.estimate_on(w), 1)
            s = profile.earliest_start(w, d, case.now)
            if s != NEVER and (best is None or s + d < best[0]):
                best = (s + d, w, s, d)
        if best is None:
            out.append((0, NEVER))
            continue
        _, w, s, d = best
        if s == case.now or reserved < case.depth:
            reserved += s != case.now
            profile.reserve(s, s + d, w)
            out.append((w, s))
        else:
            out.append((0, NEVER))
    return out


def compiled_pass(case: Case) -> list[tuple[int, int]]:
    table = MoldRows(4)
    rows = np.array([table.add(j) for j in case.jobs], dtype=np.int64)
    for row, width in zip(rows.tolist(), case.decided, strict=True):
        table.ints[row, DECIDED] = width
    count = len(case.jobs)
    room = len(case.ends) + 2 * count + 8
    t, f = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
    limits, widths, starts, started = (np.empty(count, dtype=np.int64) for _ in range(4))
    fairshare_pass(
        t, f, case.capacity, case.now, np.array(case.ends, dtype=np.int64),
        np.array(case.busy, dtype=np.int64), np.zeros((0, 3), dtype=np.int64), case.depth,
        case.capacity, case.obf, case.ef, rows, table.ints, table.floats, limits, False,
        widths, starts, started,
    )  # fmt: skip
    return [
        (int(w), int(s)) if s != NEVER else (0, NEVER)
        for w, s in zip(widths.tolist(), starts.tolist(), strict=True)
    ]


def random_case(rng: random.Random) -> Case:
    capacity = rng.randint(1, 40)
    now = 1000
    ends, busy, used = [], [], 0
    for _ in range(rng.randint(0, 6)):
        w = rng.randint(1, capacity)
        if used + w > capacity:
            break
        used += w
        ends.append(now + rng.randint(1, 50) * 10)
        busy.append(w)
    order = sorted(range(len(ends)), key=lambda i: ends[i])
    ends, busy = [ends[i] for i in order], [busy[i] for i in order]
    jobs, decided = [], []
    for i in range(rng.randint(1, 12)):
        width = rng.randint(1, capacity)
        # Round figures and linear speedups make equal ends (ties) common.
        estimate = rng.choice([rng.randint(1, 400), rng.randint(1, 4000), 120 * rng.randint(1, 8)])
        if rng.random() < 0.2:
            jobs.append(Job(i, now, width, estimate, estimate))
            decided.append(0)
            continue
        low, high = rng.randint(1, width), rng.randint(width, capacity)
        speed = (
            FIXED
            if rng.random() < 0.15
            else LINEAR
            if rng.random() < 0.3
            else Speedup("downey", round(rng.uniform(1, 2 * capacity), 3), rng.choice(
                [0.0, 0.5, 1.0, round(rng.uniform(0, 2), 3)]))
        )  # fmt: skip
        mold = Moldable(low, high, speed, width, estimate, estimate)
        jobs.append(Job(i, now, width, estimate, estimate, mold=mold))
        decided.append(rng.randint(low, high) if rng.random() < 0.15 else 0)
    return Case(
        capacity, now, ends, busy, jobs, decided,
        depth=rng.choice([1, 1, 1, len(jobs)]),
        obf=rng.choice([1.0, 1.0, 2.0, 4.0, 0.5]),
        ef=rng.choice([0.0, 0.5, 1.0, 0.25]),
    )  # fmt: skip


@pytest.mark.parametrize("seed", range(8))
def test_the_compiled_pass_decides_as_the_reference(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        case = random_case(rng)
        assert compiled_pass(case) == reference_pass(case), case


@pytest.mark.parametrize("seed", range(4))
def test_the_transfer_moves_as_the_reference(seed: int) -> None:
    rng = random.Random(100 + seed)
    for _ in range(200):
        case = random_case(rng)
        case.ef = rng.choice([0.25, 0.5, 1.0])
        jobs = case.jobs
        limits = [rng.randint(1, case.capacity) for _ in jobs]
        movable = [j.mold is not None and not j.mold.rigid and rng.random() < 0.9 for j in jobs]
        table = MoldRows(4)
        rows = np.array([table.add(j) for j in jobs], dtype=np.int64)
        got = np.array(limits, dtype=np.int64)
        moved = efficiency_transfer(
            got, np.array(movable), rows, table.ints, table.floats, case.ef, case.capacity
        )
        want = list(limits)
        assert (moved, got.tolist()) == (
            reference_transfer(jobs, want, movable, case.ef, case.capacity),
            want,
        )
