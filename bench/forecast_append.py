"""What a submission's planned start costs under a policy that keeps no plan (EASY).

The daemon answers each ``qsub`` with the new job's planned start: the forecast kept
for the queue (``sched/core/forecast.py``) places the job at the end of it. This
times that placement alone, in process, for jobs of ``bench/api.py``'s shapes on the
96-node machine that ``bench/queue_depth.py`` runs (one job holding every node for
100 hours, so every job waits), at each depth:

    PYTHONPATH=$PWD/daemon .venv/bin/python bench/forecast_append.py
    ... bench/forecast_append.py --depths 10000,100000 --measured 2000
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from batchd.model.job import Job
from batchd.sched.core.forecast import Forecaster
from batchd.sched.core.order import OrderedQueue, fcfs_key
from batchd.sched.core.plans import running_arrays_of

NODES = 96
MAX_WALLTIME = 4 * 24 * 3600
BIG_JOB_END = 100 * 3600


@dataclass
class View:
    """The machine as the forecast sees it: every node busy until ``BIG_JOB_END``."""

    now: int = 0
    capacity: int = NODES
    free: int = 0
    index: int = 0
    overrun: bool = False
    pending: list[tuple[int, int, int]] = field(default_factory=list)

    def running_ends(self) -> list[int]:
        return [BIG_JOB_END]

    def running_widths(self) -> list[int]:
        return [NODES]

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)

    def reservations(self) -> list[tuple[int, int, int]]:
        return self.pending


def shapes(count: int, seed: int) -> Iterator[tuple[int, int]]:
    """(width, walltime) drawn as ``bench/api.py`` draws its submissions."""
    rng = random.Random(seed)
    for _ in range(count):
        width = min(NODES, int(math.exp(rng.uniform(0.0, math.log(NODES + 1)))))
        walltime = int(math.exp(rng.uniform(math.log(60), math.log(MAX_WALLTIME))))
        yield max(1, width), walltime


def per_job_us(depth: int, measured: int, seed: int) -> tuple[float, int]:
    """Microseconds per appended job's planned start, and the kept profile's steps."""
    view = View()
    queue = OrderedQueue(fcfs_key)
    forecast = Forecaster()
    jobs = [Job(i, 0, w, d, d) for i, (w, d) in enumerate(shapes(depth + measured, seed), 1)]
    for job in jobs[:depth]:
        queue.insert(job)
    forecast.plan_queue(view, queue)
    began = time.perf_counter()
    for job in jobs[depth:]:
        queue.insert(job)
        forecast.start_of(view, queue, job)
    seconds = time.perf_counter() - began
    steps = forecast._profile.n if forecast._profile is not None else 0
    return 1e6 * seconds / measured, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="1000,10000,50000,100000")
    parser.add_argument("--measured", type=int, default=2000, help="jobs appended, timed")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("| queued | us per planned start | steps of the kept profile |")
    print("|--:|--:|--:|")
    for depth in (int(d) for d in args.depths.split(",")):
        us, steps = per_job_us(depth, args.measured, args.seed)
        print(f"| {depth:,} | {us:.1f} | {steps:,} |", flush=True)


if __name__ == "__main__":
    main()
