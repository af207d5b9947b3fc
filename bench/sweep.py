"""The cost of running replays as a sweep, and its speed-up with local workers.

The same runs (synthetic workloads of ``--jobs`` jobs, fcfs-easy, one seed each,
about 2 s apiece by default) four ways: replayed directly one after another in
this process (the reference: no keying, no store, no outputs; measured again
before each executor, as other load on the machine drifts), then as a sweep
with one worker (``--workers 1``: in this process; a local Dask cluster of one
worker process) and with two (a local process pool; a local Dask cluster). Each
executor first runs a sweep of one tiny run: its start-up (processes, a cluster),
paid once per sweep. The overhead per run is the sweep's wall time less that
start-up and the reference's time, per run, as a share of a run; the speed-up
is the reference's wall time over the sweep's, start-up included. On a loaded
machine those shares drift by several per cent; the fixed cost of a run, from
``--tiny`` runs of 100 jobs (milliseconds each) with one worker, does not.

    .venv/bin/python bench/sweep.py                  # 4 runs of about 2 s
    .venv/bin/python bench/sweep.py --runs 6 --jobs 40000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from batchd.replay import ReplayOptions, run_replay
from batchd.sweep.driver import SweepOptions, run_sweep
from batchd.sweep.spec import LOCAL_DASK, ExecutorSpec


def experiment(folder: Path, runs: int, jobs: int) -> Path:
    path = folder / f"bench-{runs}x{jobs}.toml"
    path.write_text(
        f'[sweep]\ntraces = "synthetic:{jobs}"\nnodes = 128\npolicies = "fcfs-easy"\n'
        f"repeats = {runs}\n"
    )
    return path


def direct(runs: int, jobs: int) -> float:
    began = time.perf_counter()
    for seed in range(runs):
        run_replay(
            ReplayOptions(
                trace=f"synthetic:{jobs}", policy="fcfs-easy", nodes=128, seed=seed, records=False
            )
        )
    return time.perf_counter() - began


def swept(exp: Path, out: Path, spec: ExecutorSpec) -> float:
    began = time.perf_counter()
    outcome = run_sweep(SweepOptions(exp, out, spec, lines=False))
    if outcome.failures or outcome.new != outcome.runs:
        sys.exit(f"bench: the sweep did not run every run: {outcome}")
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=80_000, help="jobs per run (about 2 s)")
    parser.add_argument(
        "--tiny", type=int, default=100, help="runs of 100 jobs for the fixed cost of a run"
    )
    args = parser.parse_args()
    direct(1, 1000)  # the compiled kernels from numba's cache, outside the measurement
    print(f"{os.cpu_count()} CPUs; {args.runs} runs of synthetic:{args.jobs}, fcfs-easy")
    executors = [
        ("sweep in this process", ExecutorSpec(workers=1)),
        ("local pool, 2 workers", ExecutorSpec(workers=2)),
        ("local Dask, 1 worker", ExecutorSpec(workers=1, dask=LOCAL_DASK)),
        ("local Dask, 2 workers", ExecutorSpec(workers=2, dask=LOCAL_DASK)),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        exp = experiment(Path(tmp), args.runs, args.jobs)
        tiny = experiment(Path(tmp), 1, 100)
        for i, (name, spec) in enumerate(executors):
            reference = direct(args.runs, args.jobs)  # again before each: the load drifts
            per_run = reference / args.runs
            fixed = swept(tiny, Path(tmp) / f"tiny{i}", spec)  # start-up and one tiny run
            wall = swept(exp, Path(tmp) / str(i), spec)
            print(f"{'  direct, one by one:':24}{reference:6.2f} s ({per_run:.2f} s a run)")
            overhead = (wall - fixed - reference) / args.runs
            print(
                f"{name + ':':24}{wall:6.2f} s (start-up {fixed:4.2f} s)  overhead "
                f"{overhead:+.3f} s a run ({100 * overhead / per_run:+.1f} %)  "
                f"speed-up {reference / wall:.2f}x"
            )
        print(f"the fixed cost of a run: {args.tiny} runs of 100 jobs, one worker")
        many = experiment(Path(tmp), args.tiny, 100)
        reference = direct(args.tiny, 100)
        print(f"{'  direct, one by one:':24}{1000 * reference / args.tiny:6.1f} ms a run")
        for name, spec in executors:
            if spec.workers == 1:
                fixed = swept(tiny, Path(tmp) / f"tiny-{name}", spec)
                wall = swept(many, Path(tmp) / f"many-{name}", spec) - fixed
                cost = 1000 * (wall - reference) / args.tiny
                print(f"{name + ':':24}{1000 * wall / args.tiny:6.1f} ms a run ({cost:+.1f} ms)")


if __name__ == "__main__":
    main()
