"""The command line of ``batchd sweep``, and the executor options every study shares.

Standard library only: the sweep's modules load when it runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from batchd.argtypes import int_in
from batchd.sweep.spec import LOCAL_DASK, ExecutorSpec


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """``--workers K`` and ``--dask [ADDRESS]``: where the runs execute."""
    parser.add_argument(
        "--workers",
        type=int_in(1, 1024),
        default=None,
        metavar="K",
        help="worker processes (default: the CPU count); with --dask: the local cluster's workers",
    )
    parser.add_argument(
        "--dask",
        nargs="?",
        const=LOCAL_DASK,
        default=None,
        metavar="ADDRESS",
        help="run on Dask: alone, a local cluster; with tcp://HOST:8786 or a scheduler "
        "file (.json), that cluster's scheduler (docs/sweeps.md)",
    )


def add_shard_options(group: Any) -> None:
    """``--shard I/N`` and ``--collect`` (an array job without a scheduler), into a
    mutually exclusive group; ``Shard.parse`` checks ``I/N`` when the command runs."""
    group.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I (from 0) of N, e.g. $SLURM_ARRAY_TASK_ID/10, and write no "
        "outputs; then --collect",
    )
    group.add_argument(
        "--collect",
        action="store_true",
        help="run nothing: write the outputs from the runs the shards stored",
    )


def executor_spec(args: argparse.Namespace) -> ExecutorSpec:
    return ExecutorSpec(workers=args.workers, dask=args.dask)


def add_sweep_command(sub: Any) -> None:
    sw = sub.add_parser(
        "sweep",
        help="run a declared grid of replays (an experiment file), resumable, locally or on Dask",
        description="Run every replay an experiment file declares; finished runs are kept in "
        "OUT/runs and skipped when the sweep starts again. Writes OUT/results.csv, "
        "OUT/results.parquet and OUT/summary.md (docs/sweeps.md).",
    )
    sw.add_argument("experiment", help="experiment file (TOML with a [sweep] table)")
    sw.add_argument("--out", required=True, metavar="DIR", help="output directory")
    add_executor_options(sw)
    add_shard_options(sw.add_mutually_exclusive_group())
    sw.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    from pathlib import Path

    from batchd.sweep.driver import SweepOptions, run_sweep
    from batchd.sweep.shard import Shard

    opts = SweepOptions(
        experiment=Path(args.experiment),
        out=Path(args.out),
        executor=executor_spec(args),
        shard=None if args.shard is None else Shard.parse(args.shard),
        collect=args.collect,
    )
    try:
        outcome = run_sweep(opts)
    except KeyboardInterrupt:
        print(
            f"batchd: sweep interrupted; the finished runs are stored in {opts.out}/runs: "
            "run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    for run, message in outcome.failures:
        print(f"batchd: run failed: {run.label()}: {message}", file=sys.stderr)
    if outcome.stale:
        print(
            f"batchd: note: {outcome.stale} stored runs in {opts.out}/runs belong to no run of "
            "this sweep (another experiment, or inputs that changed since)",
            file=sys.stderr,
        )
    where = ", ".join(p.name for p in outcome.outputs) or "no outputs (a shard; then --collect)"
    print(
        f"{opts.out}: {outcome.runs} runs ({outcome.new} new, {outcome.reused} reused, "
        f"{len(outcome.failures)} failed), {where}, {outcome.seconds:.1f} s"
    )
    return 1 if outcome.failures or outcome.missing else 0
