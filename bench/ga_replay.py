"""Replay SDSC-BLUE jobs 5,000 through 10,000 with the ga policy (Lee's utility paper, sec. 6-7).

Lee's utility paper replays these 5,000 jobs of SDSC Blue Horizon (1,152 processors) with its GA
scheduler in 8,900 s; the target here is under 15 minutes. The trace gets its utility
functions first, as ``batchd utility TRACE -o OUT --seed 1`` gives them (``--seed``),
unless ``--utility-trace`` names a file made so already; then the jobs numbered 5,000
through 10,000 (SWF field 1) are written with the header to a file of their own in
``--workdir``, which the replays read. Each policy of ``--policies`` replays it once,
in this process, after the ga kernels are loaded from numba's cache (not timed); the
figures are the whole ``run_replay`` (reading the slice, the simulation, the summary)
and the simulation alone (``wall_seconds``).

    .venv/bin/python bench/ga_replay.py
    .venv/bin/python bench/ga_replay.py --policies fcfs-easy,prio-fifo,utility-easy,ga
    .venv/bin/python bench/ga_replay.py --param generations=50 --perfect-estimates
    .venv/bin/python bench/ga_replay.py --check      # exit status 1 if ga takes 15 min or more
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from batchd.replay import ReplayOptions, run_replay
from batchd.sched.ga.search import warm_up
from batchd.sched.registry import parse_param_args
from batchd.workload.job_range import slice_jobs
from batchd.workload.utility_gen import SDSC_BLUE_MAP, UtilityParams, augment_trace

TRACE = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
TRACE /= "SDSC-BLUE-2000-4.2-cln.swf.gz"
NODES = 1152
FIRST, LAST = 5_000, 10_000
TARGET_S = 15 * 60


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, default=TRACE, help="SDSC-BLUE as archived")
    ap.add_argument("--utility-trace", type=Path, help="the trace with utility functions already")
    ap.add_argument("--seed", type=int, default=1, help="seed of the utility functions")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/batchd-ga-bench"))
    ap.add_argument("--policies", default="ga", help="comma-separated")
    ap.add_argument("--param", action="append", default=[], help="ga parameter KEY=VALUE")
    ap.add_argument("--perfect-estimates", action="store_true", help="estimate := runtime")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--check", action="store_true", help="fail if ga takes 15 minutes or more")
    args = ap.parse_args(argv)
    params = parse_param_args(args.param)

    args.workdir.mkdir(parents=True, exist_ok=True)
    augmented = args.utility_trace
    if augmented is None:
        augmented = args.workdir / f"sdsc-blue-u{args.seed}.swf"
        began = time.perf_counter()
        augment_trace(args.trace, augmented, UtilityParams(seed=args.seed), SDSC_BLUE_MAP)
        print(f"utility functions (seed {args.seed}): {time.perf_counter() - began:.1f} s")
    part = args.workdir / f"sdsc-blue-{FIRST}-{LAST}.swf"
    jobs = slice_jobs(augmented, part, FIRST, LAST)
    print(f"{part}: jobs {FIRST} through {LAST}, {jobs} job lines")

    warm_up()
    figures: dict[str, Any] = {
        "jobs": jobs,
        "nodes": NODES,
        "perfect_estimates": args.perfect_estimates,
        "python": platform.python_version(),
        "runs": {},
    }
    for policy in args.policies.split(","):
        opts = ReplayOptions(
            trace=str(part),
            policy=policy,
            params=params if policy == "ga" else {},
            nodes=NODES,
            perfect_estimates=args.perfect_estimates,
        )
        began = time.perf_counter()
        result = run_replay(opts)
        total = time.perf_counter() - began
        summary = result.summary
        run = {
            "total_s": round(total, 1),
            "engine_s": round(summary["wall_seconds"], 1),
            "jobs": summary["jobs"],
            "utilization": round(summary["utilization"], 4),
            "aggregate_utility": summary["utility"]["aggregate"],
            **({"ga": summary["ga"]} if "ga" in summary else {}),
        }
        figures["runs"][policy] = run
        print(
            f"{policy}: {total:.1f} s ({summary['wall_seconds']:.1f} s simulating), "
            f"{summary['jobs']} jobs, utilization {summary['utilization']:.4f}, "
            f"aggregate utility {summary['utility']['aggregate']:.6g}"
        )
        if "ga" in summary:
            ga = summary["ga"]
            print(
                f"  {ga['searches']} searches of {ga['avg_jobs']:.1f} jobs on average, "
                f"{ga['search_seconds_mean'] * 1e3:.1f} ms each (max "
                f"{ga['search_seconds_max']:.2f} s), better than every seed order in "
                f"{ga['improved_share']:.1%}"
            )
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    ga_run = figures["runs"].get("ga")
    if args.check and ga_run is not None and ga_run["total_s"] >= TARGET_S:
        print(f"FAIL: ga took {ga_run['total_s']} s >= {TARGET_S} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
