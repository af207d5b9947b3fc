"""Shared nodes: what placing pieces on nodes costs the engine.

A random workload of jobs of one to four pieces (one to eight cores each, half of
them spread) on nodes of 8 cores, at an offered load of about ``--load``, replayed with fcfs-easy twice: once with the
pieces (each on one node, best fit) and once as plain widths (any free cores).
Prints the engine's wall time for each, how many times a job's pieces found no node
although enough cores were free (unplaced), and the mean wait.

    PYTHONPATH=daemon .venv/bin/python bench/shared_nodes.py --nodes 256 --jobs 20000 --load 1
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from batchd.argtypes import positive_int
from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.model.states import JobState
from batchd.sched.core.policy import Placement
from batchd.sched.registry import make_policy

CORES = 8


def workload(jobs: int, nodes: int, seed: int, pieces: bool, load: float) -> list[Job]:
    rng = random.Random(seed)
    out = []
    t = 0
    # A job asks for 11.25 cores for 1,830 s on average.
    mean_gap = max(1, round(20_600 / (load * nodes * CORES)))
    for i in range(1, jobs + 1):
        t += rng.randint(0, 2 * mean_gap)
        shape = tuple(rng.randint(1, CORES) for _ in range(rng.randint(1, 4)))
        runtime = rng.randint(60, 3_600)
        job = Job(id=i, submit=t, width=sum(shape), estimate=runtime * 2, runtime=runtime)
        if pieces:
            job.pieces, job.spread = shape, rng.random() < 0.5
        out.append(job)
    return out


def run(jobs: list[Job], nodes: int) -> tuple[float, Engine, int]:
    """The engine's wall time, the engine, and how many times a job was unplaced."""
    machine = Machine("m", nodes * CORES, slots_per_node=CORES)
    engine = Engine(Grid([machine]), [make_policy("fcfs-easy")])
    unplaced = 0
    original = engine._start

    def counting(m: Any, placement: Placement) -> None:
        nonlocal unplaced
        original(m, placement)
        if placement[0].state is JobState.QUEUED:
            unplaced += 1

    engine._start = counting  # type: ignore[method-assign]
    engine.load(jobs)
    t0 = time.perf_counter()
    engine.run()
    wall = time.perf_counter() - t0
    return wall, engine, unplaced


def one_wide_job(nodes: int, chunks: int, seed: int) -> tuple[float, bool]:
    """One placement of a job of ``chunks`` chunks of one to eight cores on an empty
    machine: the seconds it takes and whether it fit."""
    rng = random.Random(seed)
    pool = Machine("m", nodes * CORES, slots_per_node=CORES).pool
    pieces = tuple(rng.randint(1, CORES) for _ in range(chunks))
    t0 = time.perf_counter()
    units = pool.allocate_pieces(pieces, False)
    return time.perf_counter() - t0, units is not None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=positive_int, default=256)
    ap.add_argument("--jobs", type=positive_int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--load", type=float, default=1.0, help="offered load (default 1.0)")
    args = ap.parse_args()
    wall, placed = one_wide_job(20_000, 30_000, args.seed)
    print(
        f"one job of 30000 chunks on 20000 nodes x {CORES} cores: {wall * 1e3:.0f} ms, fit {placed}"
    )
    for pieces in (False, True):
        jobs = workload(args.jobs, args.nodes, args.seed, pieces, args.load)
        wall, engine, unplaced = run(jobs, args.nodes)
        wait = sum(j.start - j.submit for j in jobs) / len(jobs)
        label = "pieces on nodes" if pieces else "plain widths   "
        print(
            f"{label}  {args.nodes} nodes x {CORES} cores  {len(jobs)} jobs  engine {wall:6.2f} s"
            f"  {wall / len(jobs) * 1e6:6.1f} us/job  unplaced {unplaced:6d}"
            f"  mean wait {wait:8.0f} s"
        )


if __name__ == "__main__":
    main()
