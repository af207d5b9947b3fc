"""Replay whole real traces with every policy and check the speed targets.

Each measured replay runs in a fresh process (multiprocessing, 'spawn' context), so
its peak resident memory (``ru_maxrss``) is its own. Inside that process a tiny
replay of the first jobs of the same trace with the same policy runs first and is
not measured: it loads the compiled kernels from numba's on-disk cache, so the
measured time is the steady state, not the one-off cache load. Before any
measurement a warm-up replay (in its own process) makes sure that on-disk cache
is filled, so no measured run pays for compilation either.

The measured "engine" time is ``summary['wall_seconds']`` from
``batchd.replay.run_replay`` (engine construction, load of the jobs into it and the
run); "total" is the whole ``run_replay`` call, which adds reading the trace and
computing the metrics.

    .venv/bin/python bench/replay.py                      # every scenario
    .venv/bin/python bench/replay.py --scenario kth --repeat 3
    .venv/bin/python bench/replay.py --scenario saturated --policies fcfs-cons,sjf-cons
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import platform
import resource
import sys
import time
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from batchd.metrics.schedule import SUMMARY_KEYS

DEFAULT_TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
KTH = "KTH-SP2-1996-2.1-cln.swf.gz"
CTC = "CTC-SP2-1996-3.1-cln.swf.gz"
WARMUP_JOBS = 300


@dataclass(frozen=True)
class Scenario:
    name: str
    trace: str
    nodes: int
    shrink: float
    description: str

    def target(self, policy: str) -> float | None:
        """Engine-time target in seconds for a policy, None when it is only reported."""
        dynp = policy.startswith("dynp")
        if self.name == "kth":
            if dynp:
                return 10.0
            if policy == "fcfs-easy":
                return 1.0
            if policy.endswith("-cons"):
                return 2.0
            return None
        if self.name == "ctc":
            return 45.0 if dynp else 10.0
        if self.name == "saturated":
            return 180.0 if dynp else 60.0
        return None


SCENARIOS: dict[str, Scenario] = {
    "kth": Scenario("kth", KTH, 100, 1.0, "KTH-SP2 whole trace, 100 nodes"),
    "ctc": Scenario("ctc", CTC, 430, 1.0, "CTC-SP2 whole trace, 430 nodes"),
    "saturated": Scenario(
        "saturated", KTH, 100, 0.7, "KTH-SP2 whole trace, submits shrunk to 0.7, 100 nodes"
    ),
}


@dataclass
class RunResult:
    scenario: str
    trace: str
    nodes: int
    shrink: float
    policy: str
    jobs: int = 0
    engine_seconds: float = float("nan")
    total_seconds: float = float("nan")
    warmup_seconds: float = float("nan")
    base_rss_mb: float = float("nan")
    peak_rss_mb: float = float("nan")
    report: dict[str, Any] = field(default_factory=dict)
    error: str = ""

    @property
    def jobs_per_second(self) -> float:
        return self.jobs / self.engine_seconds if self.engine_seconds > 0 else float("nan")


def _rss_mb() -> float:
    # Linux reports ru_maxrss in KiB (macOS in bytes).
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _worker(
    conn: Connection, trace: str, policy: str, nodes: int, shrink: float, first: int | None
) -> None:
    """One measured replay in a fresh process; sends a dict back over ``conn``."""
    try:
        from batchd.replay import ReplayOptions, run_replay

        began = time.perf_counter()
        warm = min(WARMUP_JOBS, first) if first else WARMUP_JOBS
        run_replay(
            ReplayOptions(trace=trace, policy=policy, nodes=nodes, shrink=shrink, first=warm)
        )
        warmup = time.perf_counter() - began
        base = _rss_mb()
        opts = ReplayOptions(trace=trace, policy=policy, nodes=nodes, shrink=shrink, first=first)
        began = time.perf_counter()
        result = run_replay(opts)
        total = time.perf_counter() - began
        summary = result.summary
        conn.send(
            {
                "jobs": int(summary["jobs"]),
                "engine_seconds": float(summary["wall_seconds"]),
                "total_seconds": total,
                "warmup_seconds": warmup,
                "base_rss_mb": base,
                "peak_rss_mb": _rss_mb(),
                "report": {
                    k: v
                    for k, v in summary.items()
                    if k in ("utilization", "awt", "art", "sldww60", "bsld10", "killed")
                    or k not in _SUMMARY_KEYS
                },
            }
        )
    except BaseException as exc:  # reported in the parent, not raised
        conn.send({"error": f"{type(exc).__name__}: {exc}"})
    finally:
        conn.close()


# Summary keys every replay has; anything else came from policy.report().
_SUMMARY_KEYS = frozenset(SUMMARY_KEYS)


def run_isolated(
    ctx: Any, scenario: Scenario, trace: Path, policy: str, first: int | None, timeout: float
) -> RunResult:
    """One replay in a fresh spawned process."""
    out = RunResult(scenario.name, trace.name, scenario.nodes, scenario.shrink, policy)
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(
        target=_worker,
        args=(child, str(trace), policy, scenario.nodes, scenario.shrink, first),
    )
    proc.start()
    child.close()
    try:
        if parent.poll(timeout):
            data = parent.recv()
        else:
            data = {"error": f"timed out after {timeout:.0f} s"}
    except EOFError:
        data = {"error": "worker died without a result"}
    finally:
        if proc.is_alive():
            proc.terminate()
        proc.join()
        parent.close()
    if "error" in data:
        out.error = data["error"]
        return out
    for key, value in data.items():
        setattr(out, key, value)
    return out


def warm_cache(ctx: Any, policies: list[str]) -> float:
    """A tiny synthetic replay with every policy in its own process: fills numba's cache."""
    parent, child = ctx.Pipe(duplex=False)
    began = time.perf_counter()
    proc = ctx.Process(target=_warm_worker, args=(child, policies))
    proc.start()
    child.close()
    try:
        msg = parent.recv()
    except EOFError:
        msg = "warm-up process died"
    proc.join()
    if msg:
        print(f"warm-up: {msg}", file=sys.stderr)
    return time.perf_counter() - began


def _warm_worker(conn: Connection, policies: list[str]) -> None:
    errors: list[str] = []
    try:
        from batchd.replay import ReplayOptions, run_replay

        for name in policies:
            try:
                run_replay(ReplayOptions(trace="synthetic:300", policy=name, nodes=100, seed=1))
            except Exception as exc:
                errors.append(f"{name}: {type(exc).__name__}: {exc}")
    finally:
        conn.send("; ".join(errors))
        conn.close()


def versions() -> dict[str, str]:
    info = {"python": platform.python_version(), "platform": platform.platform()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import numba
        import numpy

        info["numpy"] = numpy.__version__
        info["numba"] = numba.__version__
    except ImportError:
        pass
    return info


def default_policies() -> list[str]:
    from batchd.sched.registry import policy_names

    return [p for p in policy_names() if not p.startswith("dynp")]


def _fmt(x: float, digits: int = 2) -> str:
    return "-" if x != x else f"{x:.{digits}f}"


def verdict(scenario: Scenario, r: RunResult) -> tuple[str, str]:
    target = scenario.target(r.policy)
    if r.error:
        return ("-" if target is None else f"< {target:g} s"), "ERROR"
    if target is None:
        return "-", "report"
    return f"< {target:g} s", ("PASS" if r.engine_seconds < target else "FAIL")


HEADERS = (
    "trace",
    "nodes",
    "shrink",
    "policy",
    "jobs",
    "engine s",
    "total s",
    "load+metrics s",
    "jobs/s",
    "base MB",
    "peak MB",
    "target",
    "result",
)


def table_rows(results: list[tuple[Scenario, RunResult]]) -> list[list[str]]:
    rows: list[list[str]] = []
    for scenario, r in results:
        target, result = verdict(scenario, r)
        rows.append(
            [
                r.trace.removesuffix(".swf.gz"),
                str(r.nodes),
                f"{r.shrink:g}",
                r.policy,
                str(r.jobs) if not r.error else "-",
                _fmt(r.engine_seconds, 3),
                _fmt(r.total_seconds, 3),
                _fmt(r.total_seconds - r.engine_seconds, 3),
                _fmt(r.jobs_per_second, 0),
                _fmt(r.base_rss_mb, 0),
                _fmt(r.peak_rss_mb, 0),
                target,
                result if not r.error else f"ERROR ({r.error})",
            ]
        )
    return rows


def markdown_table(rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(HEADERS)]
    right = {1, 2, 4, 5, 6, 7, 8, 9, 10}

    def line(cells: list[str] | tuple[str, ...]) -> str:
        parts = [
            c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cells)
        ]
        return "| " + " | ".join(parts) + " |"

    sep = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if i in right else ("-" * (w + 2)) for i, w in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([line(HEADERS), sep, *(line(r) for r in rows)])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--scenario",
        action="append",
        metavar="NAME",
        help=f"scenario(s) to run, repeatable or comma-separated: {', '.join(SCENARIOS)} "
        "(default: all)",
    )
    ap.add_argument(
        "--policies",
        help="comma-separated policy names (default: every registered policy not named dynp*)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per replay; the best is kept")
    ap.add_argument("--traces", type=Path, default=DEFAULT_TRACES, help="directory of the traces")
    ap.add_argument("--json", type=Path, help="save every run and the machine facts here")
    ap.add_argument(
        "--first", type=int, help="replay only the first N jobs (for trying the bench out)"
    )
    ap.add_argument(
        "--timeout", type=float, default=900.0, help="seconds before one replay is abandoned"
    )
    ap.add_argument(
        "--check", action="store_true", help="exit with status 1 when a target is missed"
    )
    args = ap.parse_args(argv)
    names: list[str] = []
    for item in args.scenario or list(SCENARIOS):
        names += [s.strip() for s in item.split(",") if s.strip()]
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}")
    args.scenarios = list(dict.fromkeys(names))
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if args.first is not None and args.first < 1:
        ap.error("--first must be a positive integer")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from batchd.sched.registry import PolicyError, get_spec

    policies = (
        [p.strip() for p in args.policies.split(",") if p.strip()]
        if args.policies
        else default_policies()
    )
    for name in policies:
        try:
            get_spec(name)
        except PolicyError as exc:
            print(f"bench/replay.py: {exc}", file=sys.stderr)
            return 2
    scenarios = [SCENARIOS[n] for n in args.scenarios]
    for sc in scenarios:
        if not (args.traces / sc.trace).is_file():
            print(f"bench/replay.py: {args.traces / sc.trace}: no such trace", file=sys.stderr)
            return 2

    ctx = mp.get_context("spawn")
    info = versions()
    print(
        f"machine: {info.get('cpu', '?')}, {mp.cpu_count()} cores; Python {info['python']}, "
        f"numpy {info.get('numpy', '?')}, numba {info.get('numba', '?')}"
    )
    warm = warm_cache(ctx, policies)
    print(
        f"warm-up: a {WARMUP_JOBS}-job synthetic replay with each of {len(policies)} policies "
        f"filled numba's compile cache ({warm:.1f} s); each measured replay runs in a fresh "
        f"process after an unmeasured {WARMUP_JOBS}-job replay of the same trace and policy "
        "(loads the cached kernels)"
    )

    results: list[tuple[Scenario, RunResult]] = []
    every_run: list[dict[str, Any]] = []
    for sc in scenarios:
        trace = args.traces / sc.trace
        for policy in policies:
            best: RunResult | None = None
            for rep in range(args.repeat):
                r = run_isolated(ctx, sc, trace, policy, args.first, args.timeout)
                every_run.append({**asdict(r), "repeat": rep})
                print(
                    f"  {sc.name:9s} {policy:12s} run {rep + 1}/{args.repeat}: "
                    + (
                        f"engine {r.engine_seconds:.3f} s, total {r.total_seconds:.3f} s, "
                        f"peak {r.peak_rss_mb:.0f} MB"
                        if not r.error
                        else f"ERROR {r.error}"
                    ),
                    file=sys.stderr,
                    flush=True,
                )
                if r.error:
                    best = r
                    break
                if best is None or r.engine_seconds < best.engine_seconds:
                    best = r
            assert best is not None
            results.append((sc, best))

    print()
    print(markdown_table(table_rows(results)))
    failed = [r for sc, r in results if verdict(sc, r)[1] in ("FAIL", "ERROR")]
    met = sum(1 for sc, r in results if verdict(sc, r)[1] == "PASS")
    checked = sum(1 for sc, r in results if sc.target(r.policy) is not None)
    print(
        f"\ntargets met: {met}/{checked}" + (f"; missed or failed: {len(failed)}" if failed else "")
    )

    if args.json:
        payload = {
            "machine": {**info, "cores": mp.cpu_count()},
            "repeat": args.repeat,
            "first": args.first,
            "warmup_seconds": warm,
            "best": [
                {
                    **asdict(r),
                    "jobs_per_second": r.jobs_per_second,
                    "target_seconds": sc.target(r.policy),
                    "result": verdict(sc, r)[1],
                }
                for sc, r in results
            ],
            "runs": every_run,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2, default=str) + "\n")
        print(f"saved {args.json}")
    return 1 if (args.check and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
