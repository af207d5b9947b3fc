"""Whole-process replay times: ``batchd replay`` as a user runs it, beside a plain simulator.

Each command runs as a fresh process (interpreter start, imports, reading the trace,
the schedule, the summary), ``--repeat`` times; the best and the median wall time are
printed. ``bench/plain_sim.py`` is the yardstick: a plain Python simulator of the same
policy that shares no code with batchd.

    .venv/bin/python bench/startup.py                    # KTH-SP2 and CTC-SP2, every policy
    .venv/bin/python bench/startup.py --traces KTH --policies fcfs-easy --repeat 9
    .venv/bin/python bench/startup.py --batchd /tmp/old/daemon   # another tree's batchd
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRACES = {
    "KTH": ("KTH-SP2-1996-2.1-cln.swf.gz", 100),
    "CTC": ("CTC-SP2-1996-3.1-cln.swf.gz", 430),
}
PLAIN = {"fcfs": "fcfs", "fcfs-easy": "easy"}
POLICIES = ("fcfs", "fcfs-easy", "sjf-easy", "fcfs-cons", "sjf-cons", "primetime")


def timed(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, float, float]:
    """Best and median wall time, and best CPU time (user + system: what other work on a
    shared host disturbs less), of ``repeat`` fresh processes."""
    times = []
    cpu = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - began)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(times), statistics.median(times), min(cpu)


def row(
    trace: str, program: str, policy: str, best: float, median: float, cpu: float
) -> dict[str, object]:
    return {
        "trace": trace,
        "program": program,
        "policy": policy,
        "best": best,
        "median": median,
        "cpu_best": cpu,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default="KTH,CTC", help="KTH, CTC (comma-separated)")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", default=str(ROOT.parent / "shared" / "traces"))
    ap.add_argument("--batchd", help="run the batchd of this daemon/ directory instead")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as users run it: with .pyc caches
    if args.batchd:
        env["PYTHONPATH"] = args.batchd
    rows = []
    for name in args.traces.split(","):
        trace, nodes = TRACES[name]
        path = str(Path(args.dir) / trace)
        for policy in args.policies.split(","):
            argv = [sys.executable, "-m", "batchd.cli", "replay", path, "--policy", policy]
            argv += ["--nodes", str(nodes)]
            subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)  # warm caches
            best, median, cpu = timed(argv, env, args.repeat)
            rows.append(row(name, "batchd", policy, best, median, cpu))
            print(
                f"{name:4} batchd replay {policy:10} best {best:6.3f} s  median {median:6.3f} s"
                f"  cpu {cpu:6.3f} s"
            )
            if policy in PLAIN:
                argv = [sys.executable, str(ROOT / "bench" / "plain_sim.py"), path]
                argv += ["--nodes", str(nodes), "--policy", PLAIN[policy]]
                best, median, cpu = timed(argv, env, args.repeat)
                rows.append(row(name, "plain", policy, best, median, cpu))
                print(
                    f"{name:4} plain_sim     {policy:10} best {best:6.3f} s  median {median:6.3f} s"
                    f"  cpu {cpu:6.3f} s"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
