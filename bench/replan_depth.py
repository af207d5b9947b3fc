"""What one conservative re-plan costs against the depth of the waiting queue.

Part ``plan``: a re-plan is what fcfs-cons, sjf-cons and every dynP candidate do
at a job's early end: the whole waiting queue placed again in policy order onto
the profile of the running jobs (``Profile.of_running(...).plan(...)``). The
machine has half its nodes busy and N jobs wait (1,000, 10,000 and 50,000 by
default); the table gives the time of one re-plan, per event and per waiting job.
Job shapes are ``synthetic`` (widths 1..100 log-uniform, estimates 60 s .. 2 days
log-uniform: almost every shape is new, so the profile has about one step per
job) or ``ricc`` (widths and estimates drawn from RICC-2010-2, which repeats a
few shapes, so the profile stays short). ``compress`` is the compression of that
plan after a running job ends before its estimate (what fcfs-cons does when a
rebuild would start a job later than promised): one due to end in a minute (little
room opens) or the one due last, in up to two days (the whole plan moves forward),
made afresh (``Profile.compress``) and from the plan in force (``KeptCompression``);
``moved`` counts the starts it changed. ``--depth K`` adds fcfs-cons with
``depth=K`` (the policy's own re-plan, ``ConservativePolicy.replan``): only the first
K waiting jobs are compressed, the others hold their slots.

Part ``replay``: replays the first jobs of RICC-2010-2 with fcfs-cons and, at every
re-plan with at least ``--min-depth`` jobs waiting, counts the waiting jobs whose
planned start the re-plan changed and the position of the first of them in the
queue order. That is the work an incremental re-plan could not avoid.

    .venv/bin/python bench/replan_depth.py
    .venv/bin/python bench/replan_depth.py --part plan --shapes ricc --nodes 8192
    .venv/bin/python bench/replan_depth.py --part plan --shapes ricc \
        --depths 1000,2000,5000,10000,20000,50000 --depth 500 \
        --figure docs/figures/replan_depth.png
    .venv/bin/python bench/replan_depth.py --part replay --first 20000 --nodes 8192
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from batchd.argtypes import positive_ints
from batchd.engine.core import Engine
from batchd.model.job import Job
from batchd.model.machine import Grid, Machine
from batchd.sched.core.compression import KeptCompression
from batchd.sched.core.order import fcfs_key
from batchd.sched.core.profile import Profile
from batchd.sched.policies.conservative import ConservativePolicy
from batchd.sched.registry import make_policy
from batchd.workload import load_swf

DEFAULT_TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
RICC = "RICC-2010-2.swf.gz"
NOW = 1_000_000
TWO_DAYS = 2 * 86_400


def shapes(kind: str, count: int, nodes: int, traces: Path) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    if kind == "synthetic":
        w = np.floor(np.exp(rng.uniform(0.0, np.log(101), count))).clip(1, 100)
        d = np.rint(np.exp(rng.uniform(np.log(60), np.log(TWO_DAYS), count)))
        return w.astype(np.int64), np.maximum(d, 1).astype(np.int64)
    jobs = load_swf(traces / RICC, nodes=nodes, first=100_000).jobs
    pick = rng.integers(0, len(jobs), count)
    return (
        np.array([jobs[i].width for i in pick], dtype=np.int64),
        np.array([jobs[i].duration for i in pick], dtype=np.int64),
    )


def running(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Half the machine busy in eight jobs, their ends staggered over two days."""
    rng = np.random.default_rng(2)
    ends = np.sort(NOW + rng.integers(60, TWO_DAYS, 8)).astype(np.int64)
    return ends, np.full(8, max(1, nodes // 16), dtype=np.int64)


def replan(
    nodes: int, ends: np.ndarray, rw: np.ndarray, w: np.ndarray, d: np.ndarray
) -> tuple[float, int]:
    began = time.perf_counter()
    prof = Profile.of_running(nodes, NOW, ends, rw, room=len(w))
    prof.plan(w, d, NOW)
    return time.perf_counter() - began, prof.n


def compressions(
    nodes: int, ends: np.ndarray, rw: np.ndarray, w: np.ndarray, d: np.ndarray, soon: bool
) -> tuple[float, float, int]:
    """The plan compressed when a running job ends now: one due in a minute (``soon``)
    or the one due last. Returns (seconds afresh, seconds from the plan, jobs moved)."""
    if soon:  # one more running job, due in a minute
        ends = np.concatenate(([NOW + 60], ends))
        rw = np.concatenate(([rw[0]], rw))
        gone = 0
    else:
        gone = len(ends) - 1
    plan = Profile.of_running(nodes, NOW, ends, rw, room=len(w))
    held = plan.plan(w, d, NOW)
    rest = np.delete(ends, gone), np.delete(rw, gone)
    times = []
    for made in ("afresh", "kept"):
        kept = KeptCompression()
        kept.made_on(Profile.of_running(nodes, NOW, ends, rw))
        in_force = plan.copy()
        began = time.perf_counter()
        profile = Profile.of_running(nodes, NOW, *rest, room=len(w))
        if made == "afresh":
            profile.reserve_all(w, d, held)
            starts = profile.compress(w, d, held, NOW)
        else:  # the plan in force made that of now, as the policy does
            gains = kept.changed(in_force, profile, NOW, len(w))
            starts = kept.compress(in_force, gains, (w, d), held.copy(), profile, NOW)
        times.append(time.perf_counter() - began)
    return times[0], times[1], int((starts != held).sum())


class Machine1:
    """The engine's view of one machine, set by hand (``MachineView``)."""

    def __init__(self, nodes: int, ends: np.ndarray, widths: np.ndarray) -> None:
        self.index = 0
        self.now = NOW
        self.capacity = nodes
        self.free = nodes - int(widths.sum())
        self.overrun = False
        self.arrays = ends, widths

    def running_ends(self) -> list[int]:
        return self.arrays[0].tolist()

    def running_widths(self) -> list[int]:
        return self.arrays[1].tolist()

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return self.arrays

    def reservations(self) -> list[tuple[int, int, int]]:
        return []


def front_replans(
    nodes: int,
    ends: np.ndarray,
    rw: np.ndarray,
    w: np.ndarray,
    d: np.ndarray,
    soon: bool,
    depth: int,
) -> tuple[float, int]:
    """``compressions``' early end under fcfs-cons with ``depth``: (seconds, jobs moved)."""
    if soon:
        ends = np.concatenate(([NOW + 60], ends))
        rw = np.concatenate(([rw[0]], rw))
        gone = 0
    else:
        gone = len(ends) - 1
    policy = ConservativePolicy("fcfs-cons", fcfs_key, "compress", depth)
    for i in range(len(w)):
        job = Job(id=i, submit=NOW, width=int(w[i]), estimate=int(d[i]), runtime=int(d[i]))
        policy.queue.insert(job)
    policy.replan(Machine1(nodes, ends, rw))  # the first plan: every job placed
    held = policy.queue.starts_array()
    view = Machine1(nodes, np.delete(ends, gone), np.delete(rw, gone))
    policy.stale = True
    began = time.perf_counter()
    policy.replan(view)
    seconds = time.perf_counter() - began
    return seconds, int((policy.queue.starts_array() != held).sum())


def plan_part(args: argparse.Namespace) -> None:
    w_all, d_all = shapes(args.shapes, max(args.depths), args.nodes, args.traces)
    ends, rw = running(args.nodes)
    replan(args.nodes, ends, rw, w_all[:300], d_all[:300])  # load the compiled kernels
    compressions(args.nodes, ends, rw, w_all[:300], d_all[:300], True)
    if args.depth:
        front_replans(args.nodes, ends, rw, w_all[:300], d_all[:300], True, args.depth)
    print(f"shapes {args.shapes}, {args.nodes} nodes, median of {args.repeat} re-plans")
    capped = f" | depth {args.depth}: soon ms | moved | last ms | moved" if args.depth else ""
    print(
        "| waiting | profile steps | plan: ms per event | us per waiting job "
        "| compress, one due in a minute ends: afresh ms | kept ms | moved "
        f"| the one due last ends: afresh ms | kept ms | moved{capped} |"
    )
    print("|---:" * (10 + (4 if args.depth else 0)) + "|")
    curves: dict[str, list[float]] = {key: [] for key in curve_names(args.depth)}
    for depth in args.depths:
        w, d = w_all[:depth], d_all[:depth]
        runs = [replan(args.nodes, ends, rw, w, d) for _ in range(args.repeat)]
        secs = statistics.median(r[0] for r in runs)
        curves["plan"].append(secs)
        cells = []
        for soon in (True, False):
            made = [compressions(args.nodes, ends, rw, w, d, soon) for _ in range(args.repeat)]
            afresh = statistics.median(r[0] for r in made)
            kept = statistics.median(r[1] for r in made)
            which = "soon" if soon else "last"
            curves[f"{which} afresh"].append(afresh)
            curves[f"{which} kept"].append(kept)
            cells.append(f"{afresh * 1e3:.1f} | {kept * 1e3:.1f} | {made[-1][2]:,}")
        for soon in (True, False) if args.depth else ():
            fronts = [
                front_replans(args.nodes, ends, rw, w, d, soon, args.depth)
                for _ in range(args.repeat)
            ]
            secs_front = statistics.median(r[0] for r in fronts)
            curves[f"{'soon' if soon else 'last'} depth"].append(secs_front)
            cells.append(f"{secs_front * 1e3:.2f} | {fronts[-1][1]:,}")
        print(
            f"| {depth:,} | {runs[-1][1]:,} | {secs * 1e3:.1f} | {secs / depth * 1e6:.2f} "
            f"| {' | '.join(cells)} |"
        )
    if args.figure is not None:
        figure(args, curves)


# The costs measured at each depth, and how the figure names them.
CURVES = {
    "plan": "full plan (a rebuild: sjf-cons, dynP's candidates)",
    "soon afresh": "compression laid out afresh, a job due in a minute ends",
    "soon kept": "compression from the plan in force, a job due in a minute ends",
    "last afresh": "compression laid out afresh, the job due last ends",
    "last kept": "compression from the plan in force, the job due last ends",
}


def curve_names(depth: int) -> dict[str, str]:
    if not depth:
        return CURVES
    return {
        **CURVES,
        "soon depth": f"fcfs-cons depth={depth}, a job due in a minute ends",
        "last depth": f"fcfs-cons depth={depth}, the job due last ends",
    }


def figure(args: argparse.Namespace, curves: dict[str, list[float]]) -> None:
    """Cost per event against the depth, on log scales, beside a cost in proportion
    to the depth (slope 1)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    depths = np.array(args.depths, dtype=np.float64)
    fig, ax = plt.subplots(figsize=(7.5, 5))
    for key, label in curve_names(args.depth).items():
        ms = np.array(curves[key]) * 1e3
        style = "--" if key.endswith("afresh") else "-"
        ax.loglog(depths, ms, style, marker="o", label=label)
    anchor = np.array(curves["soon kept"]) * 1e3
    ax.loglog(depths, anchor[0] * depths / depths[0], ":", color="grey", label="in proportion")
    ax.set_xlabel("jobs waiting")
    ax.set_ylabel("ms per event")
    ax.set_title(
        f"One re-plan against the queue's depth ({args.shapes} shapes, {args.nodes} nodes)"
    )
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.figure, dpi=110)
    print(f"figure: {args.figure}")


class ChangeCounter:
    """Wraps a conservative policy's re-plan to count the starts each one changes."""

    def __init__(self, policy: ConservativePolicy, min_depth: int) -> None:
        self.rows: list[tuple[int, int, int, float]] = []
        inner = policy.replan

        def counted(view: Any) -> None:
            held = {id(j): s for j, s in zip(policy.queue.jobs, policy.queue.starts, strict=True)}
            began = time.perf_counter()
            inner(view)
            spent = time.perf_counter() - began
            depth = len(policy.queue)
            if depth < min_depth:
                return
            moved = [
                k
                for k, (j, s) in enumerate(zip(policy.queue.jobs, policy.queue.starts, strict=True))
                if held.get(id(j)) != s
            ]
            self.rows.append((depth, len(moved), moved[0] if moved else depth, spent))

        policy.replan = counted  # type: ignore[method-assign]


def replay_part(args: argparse.Namespace) -> None:
    jobs = load_swf(args.traces / RICC, nodes=args.nodes, first=args.first).jobs
    policy = make_policy("fcfs-cons")
    assert isinstance(policy, ConservativePolicy)
    counter = ChangeCounter(policy, args.min_depth)
    engine = Engine(Grid([Machine("cluster", args.nodes)]), [policy])
    engine.load(jobs)
    began = time.perf_counter()
    engine.run()
    wall = time.perf_counter() - began
    rows = np.array(counter.rows, dtype=np.float64)
    print(
        f"RICC-2010-2 first {args.first:,} jobs, fcfs-cons, {args.nodes} nodes: {wall:.1f} s, "
        f"{len(rows):,} re-plans with >= {args.min_depth} waiting"
    )
    print(
        "| waiting | re-plans | ms per re-plan | starts changed (median / mean) | first change at (median) |"
    )
    print("|---|---:|---:|---:|---:|")
    edges = [args.min_depth, 500, 1000, 2000, 5000, 10**9]
    for lo, hi in zip(edges, edges[1:], strict=False):
        part = rows[(rows[:, 0] >= lo) & (rows[:, 0] < hi)]
        if not len(part):
            continue
        label = f"{lo:,}+" if hi == 10**9 else f"{lo:,}-{hi - 1:,}"
        print(
            f"| {label} | {len(part):,} | {part[:, 3].mean() * 1e3:.2f} | "
            f"{np.median(part[:, 1]):.0f} / {part[:, 1].mean():.0f} | {np.median(part[:, 2]):.0f} |"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--part", choices=["plan", "replay", "all"], default="all")
    ap.add_argument("--depths", type=positive_ints, default=[1000, 10_000, 50_000])
    ap.add_argument("--shapes", choices=["synthetic", "ricc"], default="synthetic")
    ap.add_argument("--nodes", type=int, default=8192)
    ap.add_argument("--repeat", type=int, default=3, help="median of this many re-plans")
    ap.add_argument("--first", type=int, default=20_000, help="replay: jobs of RICC-2010-2")
    ap.add_argument("--min-depth", type=int, default=200, help="replay: re-plans counted")
    ap.add_argument("--traces", type=Path, default=DEFAULT_TRACES)
    ap.add_argument("--figure", type=Path, help="plan: draw the costs against the depth here")
    ap.add_argument("--depth", type=int, default=0, help="plan: also fcfs-cons with this depth")
    args = ap.parse_args(argv)
    if args.part in ("plan", "all"):
        plan_part(args)
    if args.part in ("replay", "all"):
        replay_part(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
