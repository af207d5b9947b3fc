"""Time one self-tuning dynP step against the backlog, and whole dynP replays.

A step builds full conservative plans of the waiting jobs in FCFS, SJF and LJF
order, measures each and lets the decider choose (Streit's dynP paper reports 0.05 s for an
average backlog of 185 jobs). Usage: python bench/dynp_step.py [--replays]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from batchd.model.job import Job
from batchd.sched.core.order import OrderedQueue
from batchd.sched.core.plans import running_arrays_of
from batchd.sched.policies.dynp import DynP, DynPParams

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"


class FakeView:
    """A machine with half its nodes busy, jobs ending at staggered times."""

    def __init__(self, capacity: int, rng: np.random.Generator) -> None:
        self.now = 0
        self.capacity = capacity
        widths: list[int] = []
        while sum(widths) < capacity // 2:
            widths.append(int(rng.integers(1, max(2, capacity // 16))))
        ends = np.sort(rng.integers(60, 86_400, size=len(widths)))
        self._ends = ends.tolist()
        self._widths = widths
        self.free = capacity - sum(widths)
        self.overrun = False

    def running_ends(self) -> list[int]:
        return self._ends

    def running_widths(self) -> list[int]:
        return self._widths

    def running_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return running_arrays_of(self)

    def reservations(self) -> list[tuple[int, int, int]]:
        return []


def waiting_jobs(count: int, capacity: int, rng: np.random.Generator) -> list[Job]:
    widths = np.minimum(capacity, np.ceil(2 ** rng.uniform(0, np.log2(capacity / 2), count)))
    estimates = np.exp(rng.uniform(np.log(60), np.log(2 * 86_400), count)).astype(int)
    submits = np.sort(rng.integers(-86_400, 0, count))
    return [
        Job(i + 1, int(s), int(w), int(e), int(e))
        for i, (s, w, e) in enumerate(zip(submits, widths, estimates, strict=True))
    ]


def time_step(backlog: int, capacity: int, repeats: int) -> tuple[float, float]:
    rng = np.random.default_rng(backlog)
    view = FakeView(capacity, rng)
    jobs = waiting_jobs(backlog, capacity, rng)
    samples = []
    for _ in range(repeats):
        policy = DynP(DynPParams())
        for p, q in policy.queues.items():
            fresh = OrderedQueue(q.key)
            for j in jobs:
                fresh.insert(j)
            policy.queues[p] = fresh
        policy.queue = policy.queues[policy.current]
        began = time.perf_counter()
        policy.tune(view)  # type: ignore[arg-type]
        samples.append(time.perf_counter() - began)
    return statistics.median(samples), max(samples)


def replay(trace: str, nodes: int, shrink: float) -> dict[str, float]:
    from batchd.replay import ReplayOptions, run_replay

    opts = ReplayOptions(trace=str(TRACES / trace), policy="dynp", nodes=nodes, shrink=shrink)
    s = run_replay(opts).summary
    return {
        "wall_seconds": s["wall_seconds"],
        "avg_backlog": s["dynp"]["avg_backlog"],
        "step_mean_ms": 1000 * s["dynp"]["tuning_seconds_mean"],
        "step_max_ms": 1000 * s["dynp"]["tuning_seconds_max"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=430)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--replays", action="store_true", help="also replay KTH and CTC")
    args = parser.parse_args()
    time_step(10, args.nodes, 2)  # warm the compiled kernels
    print(f"self-tuning step on a {args.nodes}-node machine (median of {args.repeats})")
    print(f"{'backlog':>8} {'median ms':>10} {'max ms':>8} {'target':>8}")
    for backlog in (50, 200, 1000):
        med, worst = time_step(backlog, args.nodes, args.repeats)
        target = "< 10 ms" if backlog == 200 else ""
        verdict = ("PASS" if med < 0.010 else "FAIL") if target else ""
        print(f"{backlog:>8} {1000 * med:>10.3f} {1000 * worst:>8.3f} {target:>8} {verdict}")
    if args.replays:
        print("\nwhole replays with dynp (defaults: advanced decider, ARTwW)")
        cases = [
            ("KTH-SP2-1996-2.1-cln.swf.gz", 100, 1.0, 10),
            ("CTC-SP2-1996-3.1-cln.swf.gz", 430, 1.0, 45),
            ("KTH-SP2-1996-2.1-cln.swf.gz", 100, 0.7, 180),
        ]
        for trace, nodes, shrink, target in cases:
            r = replay(trace, nodes, shrink)
            ok = "PASS" if r["wall_seconds"] < target else "FAIL"
            print(
                f"{trace.split('-')[0]:>4} nodes {nodes} shrink {shrink}: {r['wall_seconds']:.2f} s "
                f"(target < {target} s, {ok}); mean backlog {r['avg_backlog']:.1f}, "
                f"step mean {r['step_mean_ms']:.3f} ms, max {r['step_max_ms']:.2f} ms"
            )


if __name__ == "__main__":
    main()
