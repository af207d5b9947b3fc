"""Random moldable traces and the invariants every schedule of them must keep."""

from __future__ import annotations

import random

from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.moldable import FIXED, Moldable, Speedup
from batchd.sched.registry import make_policy


def mold_job(jid: int, submit: int, mold: Moldable) -> Job:
    return Job(jid, submit, mold.width, mold.estimate, mold.runtime, mold=mold)


def run(nodes: int, jobs: list[Job], policy: str) -> Engine:
    engine = Engine(Grid([Machine("m", nodes)]), [make_policy(policy)])
    engine.load(jobs)
    engine.run()
    return engine


def random_trace(
    rng: random.Random, nodes: int, n: int, *, longest: int = 200, rounded: bool = False
) -> list[Job]:
    """``n`` jobs on a ``nodes``-node machine: four in five moldable (one in five of
    those with a fixed runtime), some killed at their estimate, some arriving together.

    Runtimes and estimates up to ``longest``; ``rounded``: Downey's A and sigma to
    thousandths, as ``batchd moldable`` writes them."""
    jobs = []
    t = 0
    for i in range(n):
        t += rng.choice([0, 0, rng.randint(1, 30)])
        width = rng.randint(1, nodes)
        low = rng.randint(1, width)
        high = rng.randint(width, nodes)
        if rng.random() < 0.2:
            speed = FIXED
        else:
            a, sigma = rng.uniform(1, 2 * nodes), rng.uniform(0, 2)
            speed = (
                Speedup("downey", round(a, 3), round(sigma, 3))
                if rounded
                else Speedup("downey", a, sigma)
            )
        runtime = rng.randint(0, longest)
        estimate = rng.randint(1, longest)
        mold = Moldable(low, high, speed, width, runtime, estimate)
        jobs.append(
            mold_job(i + 1, t, mold)
            if rng.random() < 0.8
            else Job(i + 1, t, width, estimate, runtime)
        )
    return jobs


def check_invariants(jobs: list[Job], requested: dict[int, tuple[int, int]]) -> None:
    """Widths in range, runtimes as the model gives them, no node used twice at once.

    ``requested`` holds each job's (width, runtime) as submitted.
    """
    busy: dict[int, list[tuple[int, int]]] = {}
    for job in jobs:
        assert len(job.units) == job.width
        if job.mold is None:
            assert (job.width, job.runtime) == requested[job.id]
        else:
            assert job.mold.allows(job.width)
            assert job.runtime == job.mold.runtime_on(job.width)
            assert job.end - job.start == min(job.runtime, job.mold.estimate_on(job.width))
        for node in job.units:
            busy.setdefault(node, []).append((job.start, job.end))
    for spans in busy.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            assert start >= end, "a node was used twice at once"
