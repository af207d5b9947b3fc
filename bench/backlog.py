"""How the cost of one conservative re-plan grows with the backlog of waiting jobs.

Part 1 times one full plan, as a re-plan of ``ConservativePolicy`` makes it
(``plans.base_profile``): ``Profile.of_running(...)`` for the running jobs, then
``.plan(widths, durations, now)`` for the whole waiting queue in FCFS, SJF or LJF order. The machine has
about half its nodes busy with running jobs whose estimated ends are staggered
over two days. The waiting jobs are the first N of one seeded draw (widths 1..100
log-uniform, so skewed to small jobs; estimates 60 s .. 2 days log-uniform), or
with ``--source kth`` shapes (width, estimate) drawn from the KTH-SP2 trace. The
same plan is timed with the pure-Python ``ListProfile`` for backlogs up to
``--list-max``, and both must give the same starts.

Part 2 replays the saturated KTH-SP2 trace (submits shrunk to 0.7, 100 nodes) with
fcfs-cons, sjf-cons and ljf-cons on the engine directly, records the backlog at
every re-plan and the policy's counts of rebuilds, compressions and skipped
re-plans, and replays once more with the skip turned off to show what it saves.

    .venv/bin/python bench/backlog.py
    .venv/bin/python bench/backlog.py --part plan --machines 100 --backlogs 50,500,5000
    .venv/bin/python bench/backlog.py --part replay --json /tmp/backlog.json
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from batchd.argtypes import positive_ints
from batchd.engine.core import Engine
from batchd.model.machine import Grid, Machine
from batchd.sched.core.profile import ListProfile, Profile
from batchd.sched.policies import conservative
from batchd.sched.policies.conservative import ConservativePolicy
from batchd.sched.registry import make_policy
from batchd.workload import load_swf

DEFAULT_TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
NOW = 1_000_000
TWO_DAYS = 2 * 86_400
ORDERS = ("fcfs", "sjf", "ljf")


# -- part 1: one plan ------------------------------------------------------------


@dataclass
class Shapes:
    """Job shapes in submission order: widths and planned durations (estimates)."""

    widths: np.ndarray
    durations: np.ndarray


def synthetic_shapes(rng: np.random.Generator, count: int, max_width: int = 100) -> Shapes:
    widths = np.floor(np.exp(rng.uniform(0.0, math.log(max_width + 1), count)))
    durations = np.rint(np.exp(rng.uniform(math.log(60), math.log(TWO_DAYS), count)))
    return Shapes(
        np.clip(widths, 1, max_width).astype(np.int64), np.maximum(durations, 1).astype(np.int64)
    )


def kth_shapes(rng: np.random.Generator, count: int, traces: Path) -> Shapes:
    jobs = load_swf(traces / KTH, nodes=100).jobs
    pick = rng.integers(0, len(jobs), count)
    return Shapes(
        np.array([jobs[i].width for i in pick], dtype=np.int64),
        np.array([jobs[i].duration for i in pick], dtype=np.int64),
    )


def running_jobs(
    rng: np.random.Generator, capacity: int, shapes: Callable[[int], Shapes]
) -> tuple[np.ndarray, np.ndarray]:
    """Running jobs that fill half the machine, ends staggered over two days (ascending).

    Each is at most a sixteenth of the machine wide, so there are a dozen or more
    of them and the profile starts as a staircase, not as one step.
    """
    target = capacity // 2
    cap = max(1, capacity // 16)
    widths: list[int] = []
    busy = 0
    while busy < target:
        w = int(shapes(1).widths[0])
        w = min(w, cap, target - busy)
        widths.append(w)
        busy += w
    ends = np.sort(NOW + rng.integers(60, TWO_DAYS, len(widths))).astype(np.int64)
    return ends, np.array(widths, dtype=np.int64)


def ordered(shapes: Shapes, n: int, order: str) -> tuple[np.ndarray, np.ndarray]:
    w, d = shapes.widths[:n], shapes.durations[:n]
    if order == "sjf":
        idx = np.argsort(d, kind="stable")
    elif order == "ljf":
        idx = np.argsort(-d, kind="stable")
    else:
        idx = np.arange(n)
    return np.ascontiguousarray(w[idx]), np.ascontiguousarray(d[idx])


def time_compiled(
    capacity: int, ends: np.ndarray, rw: np.ndarray, w: np.ndarray, d: np.ndarray, repeat: int
) -> tuple[float, int, int, np.ndarray]:
    """Median seconds of one plan, its step count, its array bytes and its starts."""
    times: list[float] = []
    prof = Profile(capacity)
    starts = np.empty(0, dtype=np.int64)
    for _ in range(repeat):
        began = time.perf_counter()
        prof = Profile.of_running(capacity, NOW, ends, rw, room=len(w))
        starts = prof.plan(w, d, NOW)
        times.append(time.perf_counter() - began)
    return statistics.median(times), prof.n, prof.t.nbytes + prof.f.nbytes, starts


def time_list(
    capacity: int, ends: list[int], rw: list[int], w: list[int], d: list[int], repeat: int
) -> tuple[float, list[int]]:
    times: list[float] = []
    starts: list[int] = []
    for _ in range(repeat):
        began = time.perf_counter()
        prof = ListProfile.of_running(capacity, NOW, ends, rw)
        starts = prof.plan(w, d, NOW)
        times.append(time.perf_counter() - began)
    return statistics.median(times), starts


@dataclass
class PlanRow:
    nodes: int
    order: str
    backlog: int
    running: int
    steps: int
    plan_us: float
    profile_kib: float
    list_us: float | None = None
    same_starts: bool | None = None

    @property
    def us_per_job(self) -> float:
        return self.plan_us / self.backlog

    @property
    def ns_per_job_step(self) -> float:
        return 1000.0 * self.plan_us / (self.backlog * self.steps)

    @property
    def speedup(self) -> float | None:
        return None if self.list_us is None else self.list_us / self.plan_us


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y against log x: the growth exponent."""
    if len(xs) < 2:
        return float("nan")
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def run_plans(args: argparse.Namespace) -> tuple[list[PlanRow], list[dict[str, Any]]]:
    rng = np.random.default_rng(args.seed)
    top = max(args.backlogs)
    if args.source == "kth":
        pool = kth_shapes(rng, top + 10_000, args.traces)
        offset = [top]

        def draw(k: int) -> Shapes:  # running jobs come from the same pool
            s = Shapes(
                pool.widths[offset[0] : offset[0] + k], pool.durations[offset[0] : offset[0] + k]
            )
            offset[0] += k
            return s

        waiting = Shapes(pool.widths[:top], pool.durations[:top])
    else:
        waiting = synthetic_shapes(rng, top)

        def draw(k: int) -> Shapes:
            return synthetic_shapes(rng, k)

    # Warm-up: load the compiled kernels (numba's on-disk cache) before timing.
    e0, w0 = running_jobs(rng, 100, draw)
    time_compiled(100, e0, w0, *ordered(waiting, min(top, 50), "fcfs"), 1)

    rows: list[PlanRow] = []
    for nodes in args.machines:
        ends, rw = running_jobs(rng, nodes, draw)
        clipped = Shapes(np.minimum(waiting.widths, nodes), waiting.durations)
        for order in ORDERS:
            for n in args.backlogs:
                w, d = ordered(clipped, n, order)
                sec, steps, nbytes, starts = time_compiled(nodes, ends, rw, w, d, args.repeat)
                row = PlanRow(nodes, order, n, len(rw), steps, sec * 1e6, nbytes / 1024)
                if n <= args.list_max:
                    lsec, lstarts = time_list(
                        nodes, ends.tolist(), rw.tolist(), w.tolist(), d.tolist(), args.list_repeat
                    )
                    row.list_us = lsec * 1e6
                    row.same_starts = lstarts == starts.tolist()
                rows.append(row)
                print(
                    f"  plan {nodes:4d} nodes {order} backlog {n:5d}: {row.plan_us:10.1f} us, "
                    f"{steps} steps"
                    + (f", list {row.list_us:.0f} us" if row.list_us is not None else ""),
                    file=sys.stderr,
                    flush=True,
                )

    fits: list[dict[str, Any]] = []
    for nodes in args.machines:
        for order in ORDERS:
            sel = [r for r in rows if r.nodes == nodes and r.order == order]
            big = [r for r in sel if r.backlog >= 500]
            lst = [r for r in sel if r.list_us is not None]
            fits.append(
                {
                    "nodes": nodes,
                    "order": order,
                    "time_exponent": slope([r.backlog for r in sel], [r.plan_us for r in sel]),
                    "time_exponent_500_up": slope(
                        [r.backlog for r in big], [r.plan_us for r in big]
                    ),
                    "steps_exponent": slope([r.backlog for r in sel], [r.steps for r in sel]),
                    "list_time_exponent": slope(
                        [r.backlog for r in lst], [r.list_us or 0.0 for r in lst]
                    ),
                }
            )
    return rows, fits


def plan_table(rows: list[PlanRow]) -> str:
    head = (
        "| nodes | order | backlog | running | steps | us/plan | us/job | ns/(job*step) "
        "| profile KiB | ListProfile us/plan | speedup | same starts |"
    )
    sep = "|------:|-------|" + "------:|" * 9 + ":---:|"
    out = [head, sep]
    for r in rows:
        out.append(
            f"| {r.nodes} | {r.order} | {r.backlog} | {r.running} | {r.steps} | {r.plan_us:.1f} "
            f"| {r.us_per_job:.2f} | {r.ns_per_job_step:.2f} | {r.profile_kib:.1f} | "
            + (f"{r.list_us:.0f} | {r.speedup:.0f}x | " if r.list_us is not None else "- | - | ")
            + ("-" if r.same_starts is None else ("yes" if r.same_starts else "NO"))
            + " |"
        )
    return "\n".join(out)


def fit_table(fits: list[dict[str, Any]]) -> str:
    out = [
        "| nodes | order | time exponent (all) | time exponent (backlog >= 500) "
        "| steps exponent | ListProfile time exponent |",
        "|------:|-------|------:|------:|------:|------:|",
    ]
    for f in fits:
        out.append(
            f"| {f['nodes']} | {f['order']} | {f['time_exponent']:.2f} "
            f"| {f['time_exponent_500_up']:.2f} | {f['steps_exponent']:.2f} "
            f"| {f['list_time_exponent']:.2f} |"
        )
    return "\n".join(out)


# -- part 2: the saturated replay --------------------------------------------------


@dataclass
class ReplayRow:
    policy: str
    jobs: int
    engine_seconds: float
    replans: int
    rebuilds: int
    compressions: int
    skipped: int
    full_plans: int
    backlog_mean: float
    backlog_p90: float
    backlog_max: int
    replan_seconds: float
    replan_us_mean: float
    replan_us_max: float
    noskip_engine_seconds: float | None = None
    noskip_replans: int | None = None
    noskip_replan_seconds: float | None = None
    same_schedule: bool | None = None


class Recorder:
    """Backlog and time of every re-plan of one policy, and every full plan built."""

    def __init__(self, policy: ConservativePolicy) -> None:
        self.backlogs: list[int] = []
        self.seconds: list[float] = []
        self.full_plans = 0
        inner = policy.replan

        def replan(view: Any) -> None:
            self.backlogs.append(len(policy.queue))
            began = time.perf_counter()
            inner(view)
            self.seconds.append(time.perf_counter() - began)

        policy.replan = replan  # type: ignore[method-assign]


def _no_skip(policy: ConservativePolicy) -> None:
    """Turn the skip off: every job end makes the plan stale, so it is made again."""

    def job_ended(view: Any, job: Any) -> None:
        policy.stale = True

    policy.job_ended = job_ended  # type: ignore[method-assign]


def replay_once(
    trace: Path, nodes: int, shrink: float, name: str, skip: bool, perfect: bool = False
) -> tuple[ConservativePolicy, Recorder, Engine, float]:
    workload = load_swf(trace, nodes=nodes, shrink=shrink, perfect_estimates=perfect)
    policy = make_policy(name)
    if not isinstance(policy, ConservativePolicy):
        raise SystemExit(f"{name} is not a conservative policy")
    rec = Recorder(policy)
    if not skip:
        _no_skip(policy)
    original = conservative.base_profile

    def base_profile(view: Any, room: int) -> Any:
        rec.full_plans += 1
        return original(view, room)

    conservative.base_profile = base_profile
    try:
        engine = Engine(Grid([Machine("cluster", nodes)]), [policy])
        engine.load(workload.jobs)
        began = time.perf_counter()
        engine.run()
        wall = time.perf_counter() - began
    finally:
        conservative.base_profile = original
    return policy, rec, engine, wall


def run_replays(args: argparse.Namespace) -> list[ReplayRow]:
    trace = args.traces / KTH
    # Warm-up: a short replay loads the compiled kernels before anything is timed.
    warm = load_swf(trace, nodes=100, first=300)
    engine = Engine(Grid([Machine("cluster", 100)]), [make_policy("fcfs-cons")])
    engine.load(warm.jobs)
    engine.run()

    rows: list[ReplayRow] = []
    for name in args.replay_policies:
        policy, rec, engine, wall = replay_once(
            trace, 100, args.shrink, name, skip=True, perfect=args.perfect_estimates
        )
        b = np.array(rec.backlogs or [0])
        s = np.array(rec.seconds or [0.0])
        c = policy.counts
        row = ReplayRow(
            policy=name,
            jobs=len(engine.finished),
            engine_seconds=wall,
            replans=len(rec.backlogs),
            rebuilds=c.rebuilds,
            compressions=c.compressions,
            skipped=c.skipped,
            full_plans=rec.full_plans,
            backlog_mean=float(b.mean()),
            backlog_p90=float(np.percentile(b, 90)),
            backlog_max=int(b.max()),
            replan_seconds=float(s.sum()),
            replan_us_mean=float(s.mean() * 1e6),
            replan_us_max=float(s.max() * 1e6),
        )
        if args.compare_no_skip:
            starts = {j.id: j.start for j in engine.finished}
            _, rec2, engine2, wall2 = replay_once(
                trace, 100, args.shrink, name, skip=False, perfect=args.perfect_estimates
            )
            row.noskip_engine_seconds = wall2
            row.noskip_replans = len(rec2.backlogs)
            row.noskip_replan_seconds = float(sum(rec2.seconds))
            row.same_schedule = starts == {j.id: j.start for j in engine2.finished}
        rows.append(row)
        print(
            f"  replay {name}: {wall:.2f} s, {row.replans} re-plans, {row.skipped} skipped"
            + (
                f"; without skip {row.noskip_engine_seconds:.2f} s"
                if row.noskip_engine_seconds is not None
                else ""
            ),
            file=sys.stderr,
            flush=True,
        )
    return rows


def replay_tables(rows: list[ReplayRow]) -> str:
    out = [
        "| policy | jobs | engine s | re-plans | rebuilds | compressions | skipped "
        "| full plans built | backlog mean | backlog p90 | backlog max "
        "| re-plan s (total) | share of engine | us/re-plan mean | us/re-plan max |",
        "|--------|" + "------:|" * 14,
    ]
    for r in rows:
        out.append(
            f"| {r.policy} | {r.jobs} | {r.engine_seconds:.2f} | {r.replans} | {r.rebuilds} "
            f"| {r.compressions} | {r.skipped} | {r.full_plans} | {r.backlog_mean:.1f} "
            f"| {r.backlog_p90:.0f} | {r.backlog_max} | {r.replan_seconds:.2f} "
            f"| {100 * r.replan_seconds / r.engine_seconds:.0f}% | {r.replan_us_mean:.0f} "
            f"| {r.replan_us_max:.0f} |"
        )
    if any(r.noskip_engine_seconds is not None for r in rows):
        out += [
            "",
            "| policy | engine s (skip on) | engine s (skip off) | re-plans (skip off) "
            "| re-plan s (skip off) | same schedule |",
            "|--------|------:|------:|------:|------:|:---:|",
        ]
        for r in rows:
            if r.noskip_engine_seconds is None:
                continue
            out.append(
                f"| {r.policy} | {r.engine_seconds:.2f} | {r.noskip_engine_seconds:.2f} "
                f"| {r.noskip_replans} | {r.noskip_replan_seconds:.2f} "
                f"| {'yes' if r.same_schedule else 'NO'} |"
            )
    return "\n".join(out)


# -- command line --------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("plan", "replay", "all"), default="all", help="what to run")
    ap.add_argument(
        "--backlogs",
        type=positive_ints,
        default=[50, 100, 200, 500, 1000, 2000, 5000],
        help="waiting-queue lengths to plan (comma-separated)",
    )
    ap.add_argument(
        "--machines", type=positive_ints, default=[100, 430], help="machine sizes in nodes"
    )
    ap.add_argument("--source", choices=("synthetic", "kth"), default="synthetic")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=7, help="timed plans per case (median)")
    ap.add_argument("--list-max", type=int, default=1000, help="largest backlog for ListProfile")
    ap.add_argument("--list-repeat", type=int, default=3, help="timed ListProfile plans (median)")
    ap.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    ap.add_argument("--shrink", type=float, default=0.7, help="submit shrink of the replay")
    ap.add_argument(
        "--perfect-estimates",
        action="store_true",
        help="replay with estimates equal to runtimes (every job ends at its planned end)",
    )
    ap.add_argument(
        "--replay-policies",
        default="fcfs-cons,sjf-cons,ljf-cons",
        help="conservative policies to replay (comma-separated)",
    )
    ap.add_argument(
        "--no-compare",
        dest="compare_no_skip",
        action="store_false",
        help="do not replay again with the skip of unchanged re-plans turned off",
    )
    ap.add_argument("--json", type=Path, help="save the results here")
    args = ap.parse_args(argv)
    args.replay_policies = [p.strip() for p in args.replay_policies.split(",") if p.strip()]
    if args.repeat < 1 or args.list_repeat < 1:
        ap.error("--repeat and --list-repeat must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import numba

    print(
        f"Python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}; "
        "compiled kernels loaded by an untimed warm-up first"
    )
    payload: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}}
    if args.part in ("plan", "all"):
        if args.source == "kth" and not (args.traces / KTH).is_file():
            print(f"bench/backlog.py: {args.traces / KTH}: no such trace", file=sys.stderr)
            return 2
        rows, fits = run_plans(args)
        print(
            f"\nOne full plan (Profile.of_running + plan), {args.source} shapes, seed {args.seed}, "
            f"median of {args.repeat} (ListProfile: {args.list_repeat}):\n"
        )
        print(plan_table(rows))
        print("\nGrowth exponents (log-log least-squares slope against the backlog):\n")
        print(fit_table(fits))
        payload["plans"] = [
            {**asdict(r), "us_per_job": r.us_per_job, "speedup": r.speedup} for r in rows
        ]
        payload["fits"] = fits
    if args.part in ("replay", "all"):
        if not (args.traces / KTH).is_file():
            print(f"bench/backlog.py: {args.traces / KTH}: no such trace", file=sys.stderr)
            return 2
        rrows = run_replays(args)
        perfect = ", perfect estimates" if args.perfect_estimates else ""
        print(f"\nSaturated replay: KTH-SP2, shrink {args.shrink:g}, 100 nodes{perfect}:\n")
        print(replay_tables(rrows))
        payload["replays"] = [asdict(r) for r in rrows]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
        print(f"\nsaved {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
