"""Time moldable-iterative's step (Sabin et al.'s moldable paper, Fig. 6) on real queues, and whole replays.

The workload is CTC-SP2 made moldable as ``batchd moldable TRACE -o OUT --a A --seed 1
--load 0.9`` makes it (every job 1..338 nodes, Downey's speedup; A the system size or
uniform in 1..2 x the requested width). Part ``step`` replays it with
``moldable-iterative`` and keeps every ``--every``-th step's input (the base profile
and the waiting jobs' shapes, as the policy handed them to the search) and the
``--largest`` steps with the longest queues; then it times the search
(``iterative_step``) on each kept input, ``--repeat`` times, and prints the median,
p95 and largest of the per-input medians, with the queue lengths every step of the
replay saw. Part ``replay`` times whole replays (``run_replay``, as ``batchd replay``
runs them) of both augmentations. Targets: a step's median at most 50 ms, a whole
replay under 10 minutes.

    .venv/bin/python bench/moldable_step.py                     # both parts, both augmentations
    .venv/bin/python bench/moldable_step.py --part step --a random
    .venv/bin/python bench/moldable_step.py --part replay --load 1.0 --json out.json
"""

from __future__ import annotations

import argparse
import heapq
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from batchd.argtypes import positive_int
from batchd.engine.core import Engine
from batchd.model.machine import Grid, Machine
from batchd.replay import ReplayOptions, run_replay
from batchd.sched.policies.moldable_iterative import MoldableIterative, StepInput, iterative_step
from batchd.workload.moldable_gen import MoldParams, augment_moldable
from batchd.workload.source import load_trace

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
CTC = "CTC-SP2-1996-3.1-cln.swf.gz"
NODES = 338  # CTC-SP2's batch partition: the header's MaxNodes
STEP_TARGET = 0.050
REPLAY_TARGET = 600.0


def make_workload(traces: Path, a: str, load: float, out: Path) -> Path:
    path = out / f"ctc_{a}_{load:g}.swf"
    if not path.exists():
        params = MoldParams(nodes=NODES, a=a, load=load, seed=1)  # type: ignore[arg-type]
        augment_moldable(traces / CTC, path, params)
    return path


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def capture(path: Path, every: int, largest: int) -> tuple[list[int], list[StepInput]]:
    """Replay with a hook on the search: every step's queue length, and the kept inputs."""
    policy = MoldableIterative()
    lengths: list[int] = []
    kept: list[StepInput] = []
    biggest: list[tuple[int, int, StepInput]] = []  # a heap: (queue length, step, input)

    def keep(step: StepInput) -> None:
        q = len(step.shapes)
        lengths.append(q)
        if len(lengths) % every == 0:
            kept.append(step)
        elif len(biggest) < largest:
            heapq.heappush(biggest, (q, len(lengths), step))
        elif q > biggest[0][0]:
            heapq.heapreplace(biggest, (q, len(lengths), step))

    policy.on_step = keep
    engine = Engine(Grid([Machine("ctc", NODES)]), [policy])
    engine.load(load_trace(str(path), NODES, records=False).jobs)
    engine.run()
    return lengths, kept + [step for _, _, step in biggest]


def time_steps(steps: list[StepInput], repeat: int) -> list[tuple[int, float, int]]:
    """(queue length, median seconds, trials) of the search on each input."""
    out = []
    for step in steps:
        samples = []
        trials = 0
        for _ in range(repeat):
            began = time.perf_counter()
            trials = iterative_step(step).trials
            samples.append(time.perf_counter() - began)
        out.append((len(step.shapes), statistics.median(samples), trials))
    return out


def part_step(path: Path, a: str, args: argparse.Namespace) -> dict[str, Any]:
    lengths, steps = capture(path, args.every, args.largest)
    iterative_step(steps[0])  # load the compiled search before timing
    timed = time_steps(steps, args.repeat)
    sampled = timed[: len(timed) - min(args.largest, len(timed))]
    secs = [s for _, s, _ in sampled]
    result = {
        "augmentation": a,
        "steps_in_replay": len(lengths),
        "queue_median": statistics.median(lengths),
        "queue_p95": percentile([float(x) for x in lengths], 0.95),
        "queue_max": max(lengths),
        "sampled": len(sampled),
        "median_ms": 1000 * statistics.median(secs),
        "p95_ms": 1000 * percentile(secs, 0.95),
        "max_ms": 1000 * max(secs),
        "largest": [
            {"queue": q, "ms": round(1000 * s, 3), "trials": n}
            for q, s, n in sorted(timed[len(sampled) :], reverse=True)[:5]
        ],
    }
    verdict = "PASS" if result["median_ms"] <= 1000 * STEP_TARGET else "FAIL"
    print(
        f"--a {a}: {len(lengths)} steps, queue median {result['queue_median']:g}, "
        f"p95 {result['queue_p95']:g}, max {result['queue_max']}"
    )
    print(
        f"  step on {len(sampled)} sampled queues: median {result['median_ms']:.3f} ms, "
        f"p95 {result['p95_ms']:.3f} ms, max {result['max_ms']:.3f} ms "
        f"(target median <= {1000 * STEP_TARGET:g} ms: {verdict})"
    )
    for row in result["largest"]:
        print(f"  longest queues: {row['queue']} jobs, {row['ms']} ms, {row['trials']} trials")
    result["verdict"] = verdict
    return result


def part_replay(path: Path, a: str) -> dict[str, Any]:
    began = time.perf_counter()
    res = run_replay(ReplayOptions(trace=str(path), policy="moldable-iterative", nodes=NODES))
    total = time.perf_counter() - began
    s = res.summary
    it = s["moldable_iterative"]
    verdict = "PASS" if s["wall_seconds"] < REPLAY_TARGET else "FAIL"
    print(
        f"--a {a}: whole replay {s['wall_seconds']:.1f} s engine, {total:.1f} s in all "
        f"(target < {REPLAY_TARGET:g} s: {verdict}); {it['steps']} steps, mean queue "
        f"{it['avg_queue']:.1f}, step mean {1000 * it['step_seconds_mean']:.3f} ms, "
        f"max {1000 * it['step_seconds_max']:.1f} ms; turnaround "
        f"{s['moldable']['turnaround']:.0f} s, utilization {s['moldable']['utilization']:.3f}"
    )
    return {
        "augmentation": a,
        "engine_seconds": s["wall_seconds"],
        "total_seconds": total,
        "verdict": verdict,
        **it,
        "turnaround": s["moldable"]["turnaround"],
        "utilization": s["moldable"]["utilization"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["step", "replay", "both"], default="both")
    parser.add_argument("--a", choices=["system", "random", "both"], default="both")
    parser.add_argument("--load", type=float, default=0.9, help="offered load (default 0.9)")
    parser.add_argument("--every", type=positive_int, default=32, help="keep every N-th step")
    parser.add_argument("--largest", type=int, default=20, help="also keep the N longest queues")
    parser.add_argument("--repeat", type=positive_int, default=5, help="timings per kept step")
    parser.add_argument("--traces", type=Path, default=TRACES)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    if not (args.traces / CTC).is_file():
        print(f"{args.traces / CTC}: no such trace (give --traces DIR)", file=sys.stderr)
        return 2
    augmentations = ["system", "random"] if args.a == "both" else [args.a]
    out: dict[str, Any] = {"load": args.load, "step": [], "replay": []}
    with tempfile.TemporaryDirectory() as tmp:
        for a in augmentations:
            path = make_workload(args.traces, a, args.load, Path(tmp))
            if args.part in ("step", "both"):
                out["step"].append(part_step(path, a, args))
            if args.part in ("replay", "both"):
                out["replay"].append(part_replay(path, a))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")
    failed = [r for part in ("step", "replay") for r in out[part] if r["verdict"] == "FAIL"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
