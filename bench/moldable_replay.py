"""Replay CTC-SP2 made moldable with the moldable policies and fcfs-easy beside them.

The trace is augmented as ``batchd moldable TRACE -o OUT.swf --a A --seed 1 --load
0.9`` does (both ``--a random`` and ``--a system`` by default), into a temporary
directory. Each replay runs in a fresh process (multiprocessing, 'spawn') after an
unmeasured replay of the first 300 jobs with the same policy, which loads the compiled
kernels from numba's on-disk cache; a warm-up process fills that cache first. "engine"
is ``summary['wall_seconds']`` of ``batchd.replay.run_replay`` (engine built, jobs
loaded into it, the run), "total" the whole call (reading the trace and the metrics
added). The average turnaround and the mean chosen / requested width show what was
replayed.

    .venv/bin/python bench/moldable_replay.py
    .venv/bin/python bench/moldable_replay.py --a random --load 0.9 \\
        --policies fcfs-easy,moldable-efficiency:obf=4:ef=1 --repeat 3
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

DEFAULT_TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
CTC = "CTC-SP2-1996-3.1-cln.swf.gz"
WARMUP_JOBS = 300
POLICIES = (
    "fcfs-easy,moldable-fairshare,moldable-fairshare:obf=4,"
    "moldable-efficiency,moldable-efficiency:obf=4:ef=1"
)


def split_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``name:key=value:key=value`` -> (name, params)."""
    name, *pairs = spec.split(":")
    params = dict(pair.split("=", 1) for pair in pairs)
    return name, params


def _worker(conn: Connection, trace: str, spec: str) -> None:
    try:
        from batchd.replay import ReplayOptions, run_replay

        policy, params = split_spec(spec)
        run_replay(ReplayOptions(trace=trace, policy=policy, params=params, first=WARMUP_JOBS))
        began = time.perf_counter()
        result = run_replay(ReplayOptions(trace=trace, policy=policy, params=params))
        total = time.perf_counter() - began
        summary = result.summary
        mold = summary.get("moldable") or {}
        conn.send(
            {
                "jobs": int(summary["jobs"]),
                "engine": float(summary["wall_seconds"]),
                "total": total,
                "turnaround": mold.get("turnaround"),
                "ratio": (mold.get("widths") or {}).get("mean_ratio"),
            }
        )
    except BaseException as exc:  # reported in the parent
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


def run_isolated(ctx: Any, trace: Path, spec: str, timeout: float) -> dict[str, Any]:
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_worker, args=(child, str(trace), spec))
    proc.start()
    child.close()
    try:
        data: dict[str, Any] = (
            parent.recv() if parent.poll(timeout) else {"error": f"timed out after {timeout} s"}
        )
    except EOFError:
        data = {"error": "worker died without a result"}
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join()
        parent.close()
    return data


def _warm(conn: Connection, specs: list[str]) -> None:
    try:
        from batchd.replay import ReplayOptions, run_replay

        for spec in specs:
            policy, params = split_spec(spec)
            run_replay(
                ReplayOptions(
                    trace="synthetic:300", policy=policy, params=params, nodes=100, seed=1
                )
            )
    finally:
        conn.send("")
        conn.close()


def augment(src: Path, dst: Path, a: str, load: float, seed: int) -> str:
    from batchd.workload.moldable_gen import MoldParams, augment_moldable, format_mold_stats
    from batchd.workload.swf import read_header

    header = read_header(src)
    nodes = header.max_nodes or header.max_procs
    assert nodes, f"{src}: no MaxNodes or MaxProcs in the header"
    params = MoldParams(nodes=nodes, a=a, load=load, seed=seed)  # type: ignore[arg-type]
    stats = augment_moldable(src, dst, params)
    return format_mold_stats(stats, params).splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=Path, default=DEFAULT_TRACES, help="directory of the traces")
    ap.add_argument("--a", default="random,system", help="augmentations: random, system or both")
    ap.add_argument("--load", type=float, default=0.9, help="offered load (default 0.9)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the augmentation")
    ap.add_argument("--policies", default=POLICIES, help="NAME[:KEY=VALUE...],...")
    ap.add_argument("--repeat", type=int, default=1, help="runs per replay; the best is kept")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per replay")
    args = ap.parse_args(argv)
    src = args.traces / CTC
    if not src.is_file():
        print(f"bench/moldable_replay.py: {src}: no such trace", file=sys.stderr)
        return 2
    specs = [s.strip() for s in args.policies.split(",") if s.strip()]
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    warm = ctx.Process(target=_warm, args=(child, specs))
    warm.start()
    parent.recv()
    warm.join()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for a in [x.strip() for x in args.a.split(",") if x.strip()]:
            trace = Path(tmp) / f"ctc-{a}.swf"
            print(f"--a {a}: {augment(src, trace, a, args.load, args.seed)}", flush=True)
            for spec in specs:
                best: dict[str, Any] | None = None
                for _ in range(args.repeat):
                    r = run_isolated(ctx, trace, spec, args.timeout)
                    if "error" in r:
                        best = r
                        break
                    if best is None or r["engine"] < best["engine"]:
                        best = r
                assert best is not None
                rows.append((a, spec, best))
                print(f"  {spec}: {best}", file=sys.stderr, flush=True)
    print()
    print("| A | policy | jobs | engine s | total s | turnaround s | width ratio |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for a, spec, r in rows:
        if "error" in r:
            print(f"| {a} | {spec} | ERROR {r['error']} | | | | |")
            continue
        tat = "-" if r["turnaround"] is None else f"{r['turnaround']:.0f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3f}"
        print(
            f"| {a} | {spec} | {r['jobs']} | {r['engine']:.2f} | {r['total']:.2f} | "
            f"{tat} | {ratio} |"
        )
    return 1 if any("error" in r for _, _, r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
