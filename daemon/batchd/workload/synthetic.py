"""A small built-in seeded workload for the demo and the tests.

Arrivals are a Poisson process whose rate is three times higher from 8:00 to 18:00 than at
night, widths are mostly powers of two, runtimes log-uniform between 30 s and 12 h, and
estimates are generous round values; about 3% of the jobs outrun their estimate. The
arrival span is chosen so that the offered load is about 0.8 of the machine.
"""

from __future__ import annotations

import bisect
import math
import random

from batchd.model.job import Job
from batchd.workload.swf import SWFHeader

__all__ = ["OFFERED_LOAD", "ROUND_ESTIMATES", "synthetic_header", "synthetic_jobs"]

OFFERED_LOAD = 0.8
MIN_RUNTIME = 30
MAX_RUNTIME = 12 * 3600
OVERRUN_SHARE = 0.03
SERIAL_SHARE = 0.2
ODD_WIDTH_SHARE = 0.1
USERS = 16

# Estimates are rounded up to one of these (10 min .. 24 h).
ROUND_ESTIMATES: tuple[int, ...] = (600, 1800, 3600, 7200, 14400, 28800, 43200, 86400)

DAY = 86400
_DAY_START = 8 * 3600
_DAY_END = 18 * 3600
_DAY_RATE = 3  # arrival rate in working hours, relative to the night


def _weighted_day() -> int:
    """Weighted seconds in one day: night seconds count 1, working-hour seconds 3."""
    return DAY + (_DAY_RATE - 1) * (_DAY_END - _DAY_START)


def _real_time(u: float) -> float:
    """Invert the cumulative arrival intensity: weighted time ``u`` to clock seconds."""
    per_day = _weighted_day()
    days, r = divmod(u, per_day)
    if r < _DAY_START:
        t = r
    elif r < _DAY_START + _DAY_RATE * (_DAY_END - _DAY_START):
        t = _DAY_START + (r - _DAY_START) / _DAY_RATE
    else:
        t = _DAY_END + (r - _DAY_START - _DAY_RATE * (_DAY_END - _DAY_START))
    return days * DAY + t


def _width(rng: random.Random, nodes: int) -> int:
    x = rng.random()
    if x < SERIAL_SHARE or nodes == 1:
        return 1
    if x < SERIAL_SHARE + ODD_WIDTH_SHARE:
        return rng.randint(1, nodes)
    # Powers of two 2 .. 2**k with 2**k >= nodes (capped at nodes), smaller ones likelier.
    top = max(1, math.ceil(math.log2(nodes)))
    weights = [1.0 / k for k in range(1, top + 1)]
    k = rng.choices(range(1, top + 1), weights=weights)[0]
    return min(1 << k, nodes)


def _runtime_estimate(rng: random.Random) -> tuple[int, int]:
    if rng.random() < OVERRUN_SHARE:
        # Outruns its estimate (it will be killed): at most 8 h asked, still <= 12 h used.
        estimate = rng.choice(ROUND_ESTIMATES[:6])
        runtime = min(MAX_RUNTIME, math.ceil(estimate * rng.uniform(1.02, 1.5)))
        return runtime, estimate
    runtime = round(math.exp(rng.uniform(math.log(MIN_RUNTIME), math.log(MAX_RUNTIME))))
    wanted = runtime * rng.uniform(1.0, 5.0)
    i = bisect.bisect_left(ROUND_ESTIMATES, wanted)
    estimate = ROUND_ESTIMATES[min(i, len(ROUND_ESTIMATES) - 1)]
    return runtime, max(estimate, runtime)


def synthetic_jobs(count: int, *, nodes: int, seed: int) -> list[Job]:
    """``count`` jobs for a machine of ``nodes`` nodes, sorted by submit, ids 1..count.

    Deterministic: the same arguments give the same list (only ``random.Random(seed)`` is
    used). The first job arrives shortly after midnight of day 0.
    """
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    if nodes <= 0:
        raise ValueError(f"a machine needs at least one node, got {nodes}")
    rng = random.Random(seed)
    shapes: list[tuple[int, int, int, str]] = []
    work = 0
    for _ in range(count):
        width = _width(rng, nodes)
        runtime, estimate = _runtime_estimate(rng)
        # A few heavy users, a long tail of light ones.
        user = str(min(USERS, int(rng.paretovariate(1.2))))
        shapes.append((width, runtime, estimate, user))
        work += width * runtime
    if count == 0:
        return []

    # Span such that work / (nodes * span) is the offered load; Poisson arrivals in
    # weighted time over that span, mapped back to the clock by the daily cycle.
    span = work / (OFFERED_LOAD * nodes)
    weighted_span = span * _weighted_day() / DAY
    gaps = [rng.expovariate(1.0) for _ in range(count)]
    scale = weighted_span / sum(gaps)
    jobs: list[Job] = []
    u = 0.0
    for i, (width, runtime, estimate, user) in enumerate(shapes, 1):
        u += gaps[i - 1] * scale
        jobs.append(
            Job(
                id=i,
                submit=int(_real_time(u)),
                width=width,
                estimate=estimate,
                runtime=runtime,
                user=user,
            )
        )
    return jobs


def synthetic_header(count: int, nodes: int, seed: int) -> SWFHeader:
    """SWF header lines describing a :func:`synthetic_jobs` workload."""
    return SWFHeader(
        [
            "; Version: 2.2",
            "; Computer: batchd synthetic",
            f"; MaxJobs: {count}",
            f"; MaxRecords: {count}",
            f"; MaxNodes: {nodes}",
            f"; MaxProcs: {nodes}",
            f"; Note: seed {seed}",
            f"; Note: offered load about {OFFERED_LOAD}, busier from 8:00 to 18:00",
        ]
    )
