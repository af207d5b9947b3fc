"""Big machines: time and peak memory of whole ``batchd replay`` processes, per trace and
policy, beside the plain Python simulator (``bench/plain_sim.py``), in one run.

Each trace runs on the machine the replay sizes from its header (MaxProcs where some job
is wider than MaxNodes, else MaxNodes), given to every run as ``--nodes`` so that trees
that size differently still replay the same machine. Every run is its own process; its
peak RSS is the kernel's maximum resident set of that process. ``--tree`` adds another
tree's batchd (its ``daemon`` folder) to compare, side by side:

    .venv/bin/python bench/big_machines.py --policies fcfs-easy --plain --repeat 3
    .venv/bin/python bench/big_machines.py --traces CEA-Curie,LLNL-Thunder \\
        --tree before=/tmp/old/daemon --plain --timeout 300
    .venv/bin/python bench/big_machines.py --empty 100000     # a machine, before any job
    .venv/bin/python bench/big_machines.py --policies all --workers 2 --timeout 150

``--policies all`` runs every registered policy; ``--workers N`` runs N processes at a
time (each is timed alone, but they share the host).
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT.parent / "shared" / "traces"
PLAIN = {"fcfs": "fcfs", "fcfs-easy": "easy", "fcfs-cons": "cons"}


@dataclass
class Run:
    trace: str
    who: str  # a tree's label, or "plain"
    policy: str
    seconds: float | None  # None: it did not finish in time
    peak_mb: float
    jobs: str


def machine_size(path: Path) -> tuple[int, str]:
    """The header's MaxProcs when some job is wider than MaxNodes, else MaxNodes."""
    nodes = procs = None
    widest = 0
    with gzip.open(path, "rt", errors="replace") if path.suffix == ".gz" else open(path) as fh:
        for line in fh:
            if line.startswith(";"):
                if m := re.match(r";\s*Max(Nodes|Procs):\s*(\d+)", line):
                    if m.group(1) == "Nodes":
                        nodes = int(m.group(2))
                    else:
                        procs = int(m.group(2))
                continue
            f = line.split()
            if len(f) >= 9:
                req, alloc = float(f[7]), float(f[4])
                widest = max(widest, round(req) if req > 0 else round(alloc))
    if nodes and procs and procs > nodes and widest > nodes:
        return procs, "MaxProcs"
    if nodes:
        return nodes, "MaxNodes"
    if procs:
        return procs, "MaxProcs"
    raise SystemExit(f"{path}: the header names no MaxNodes or MaxProcs")


def run_process(
    argv: list[str], env: dict[str, str], timeout: float
) -> tuple[float | None, float, str]:
    """Wall seconds (None past ``timeout``: killed), peak RSS in MB, and the job count the
    output names."""
    with tempfile.TemporaryFile("w+") as out:
        began = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = began + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        seconds = time.perf_counter() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if proc.returncode not in (0, -9):
        raise SystemExit(f"{' '.join(argv)} failed:\n{text}")
    words = next((ln.split() for ln in text.splitlines() if ln.startswith("jobs")), [""])
    return (seconds if proc.returncode == 0 else None), usage.ru_maxrss / 1024, (words + [""])[1]


def replay_argv(trace: Path, policy: str, nodes: int) -> list[str]:
    argv = [sys.executable, "-m", "batchd.cli", "replay", str(trace), "--policy", policy]
    return [*argv, "--nodes", str(nodes)]


def plain_argv(trace: Path, policy: str, nodes: int) -> list[str]:
    plain = str(ROOT / "bench" / "plain_sim.py")
    return [sys.executable, plain, str(trace), "--nodes", str(nodes), "--policy", PLAIN[policy]]


def empty_machine_mb(nodes: int, env: dict[str, str]) -> float:
    """Peak RSS of a process that builds an engine on a machine of ``nodes`` nodes."""
    code = (
        "import resource\n"
        "from batchd.engine.core import Engine\n"
        "from batchd.model.machine import Grid, Machine\n"
        "from batchd.sched.registry import make_policy\n"
        f"engine = Engine(Grid([Machine('m', {nodes})]), [make_policy('fcfs-easy', {{}})])\n"
        "engine.run()\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return float(out.stdout.split()[-1])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="", help="name prefixes, comma-separated (default: all)")
    ap.add_argument("--dir", type=Path, default=TRACES, help="directory of the traces")
    ap.add_argument(
        "--policies", default="fcfs-easy", help="comma-separated, or all: every registered one"
    )
    ap.add_argument(
        "--tree",
        action="append",
        default=[],
        metavar="LABEL=DAEMON_DIR",
        help="another tree's batchd to run beside this one (repeatable)",
    )
    ap.add_argument("--plain", action="store_true", help="run bench/plain_sim.py beside")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds a run may take")
    ap.add_argument("--repeat", type=int, default=1, help="rounds; the best time is kept")
    ap.add_argument("--empty", type=int, metavar="NODES", help="only an empty machine's RSS")
    ap.add_argument("--workers", type=int, default=1, help="processes run at a time")
    return ap.parse_args(argv)


def environments(trees: list[str]) -> list[tuple[str, dict[str, str]]]:
    out = [("this", {**os.environ, "PYTHONPATH": str(ROOT / "daemon")})]
    for spec in trees:
        label, _, path = spec.partition("=")
        if not path or not Path(path, "batchd").is_dir():
            raise SystemExit(f"--tree {spec}: give LABEL=DIR, DIR a tree's daemon folder")
        out.append((label, {**os.environ, "PYTHONPATH": path}))
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    envs = environments(args.tree)
    if args.empty:
        for label, env in envs:
            print(
                f"{label:8} engine on {args.empty:,} nodes, no job: {empty_machine_mb(args.empty, env):.0f} MB"
            )
        return 0
    wanted = [t for t in args.traces.split(",") if t]
    traces = sorted(
        p for p in args.dir.glob("*.swf*") if not wanted or p.name.startswith(tuple(wanted))
    )
    policies = [p for p in args.policies.split(",") if p]
    if policies == ["all"]:
        from batchd.sched.registry import policy_names

        policies = policy_names()
    print(f"{'trace':28} {'nodes':>14} {'policy':19} {'run':8} {'seconds':>8} {'peak MB':>8} jobs")
    cells = []  # (trace, nodes, source, policy, runs)
    for trace in traces:
        nodes, source = machine_size(trace)
        for policy in policies:
            runs: list[tuple[str, list[str], dict[str, str]]] = [
                (label, replay_argv(trace, policy, nodes), env) for label, env in envs
            ]
            if args.plain and policy in PLAIN:
                runs.append(("plain", plain_argv(trace, policy, nodes), envs[0][1]))
            cells.append((trace, nodes, source, policy, runs))

    def measure(
        cell: tuple[Path, int, str, str, list[tuple[str, list[str], dict[str, str]]]],
    ) -> dict[str, tuple[float | None, float, str]]:
        runs = cell[4]
        best: dict[str, tuple[float | None, float, str]] = {}
        for _ in range(args.repeat):  # the runs of one round side by side, then again
            for who, cmd, env in runs:
                seconds, peak, jobs = run_process(cmd, env, args.timeout)
                old = best.get(who)
                if old is not None and old[0] is not None:
                    seconds = old[0] if seconds is None else min(seconds, old[0])
                best[who] = (seconds, max(peak, old[1] if old else 0.0), jobs)
        return best

    with ThreadPoolExecutor(max(1, args.workers)) as pool:
        for (trace, nodes, source, policy, _), best in zip(
            cells, pool.map(measure, cells), strict=True
        ):
            for who, (seconds, peak, jobs) in best.items():
                shown = f"{seconds:8.2f}" if seconds is not None else f">{args.timeout:7.0f}"
                size = f"{nodes} {source}"
                print(
                    f"{trace.name[:28]:28} {size:>14} {policy:19} {who:8} {shown} {peak:8.0f} {jobs}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
