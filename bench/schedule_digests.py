"""Digests of whole schedules, to show a change to the core leaves every schedule as it was.

For KTH-SP2 and CTC-SP2 (as logged and shrunk to 0.7) and every policy, with and
without killing, every replan mode and a set of dynP and prime-time parameters, this
replays the trace and takes a SHA-256 over every job's (id, submit, start, end,
nodes, outcome, killed, promised start, policy that started it) and one over the
summary without its wall times. Record the digests on the tree before a change and
check them on the tree after:

    PYTHONPATH=/tmp/before/daemon .venv/bin/python bench/schedule_digests.py --write before.json
    .venv/bin/python bench/schedule_digests.py --check before.json
    .venv/bin/python bench/schedule_digests.py --check before.json --traces KTH --workers 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from batchd.argtypes import positive_int

ROOT = Path(__file__).resolve().parent.parent
TRACES = {"KTH": ("KTH-SP2-1996-2.1-cln.swf.gz", 100), "CTC": ("CTC-SP2-1996-3.1-cln.swf.gz", 430)}
POLICIES = ("fcfs", "fcfs-easy", "sjf-easy", "ljf-easy", "fcfs-cons", "sjf-cons", "ljf-cons")
POLICIES += ("dynp-basic", "dynp", "primetime")
PRIMETIME = (
    {"prime_nodes": "30%", "prime_runtime": "50%", "discipline": "easy"},
    {"prime_nodes": "20%", "prime_runtime": "20%", "discipline": "fcfs"},
    {"prime_nodes": "30%", "prime_runtime": "30%", "overflow": "requeue"},
    {"prime_nodes": "40%", "prime_runtime": "40%", "discipline": "dynp"},
    {"prime_nodes": "50%", "prime_runtime": "60%", "discipline": "sjf-cons", "must_fit": "false"},
)
DYNP = (
    {"decider": "simple", "quality": "ms"},
    {"quality": "art", "slackness": "5"},
    {"reduced_future": "20"},
)
Case = tuple[str, str, float, str, dict[str, str], bool]


def cases(names: list[str], directory: Path) -> list[Case]:
    out: list[Case] = []
    for name in names:
        path = str(directory / TRACES[name][0])
        for shrink in (1.0, 0.7):
            out += [(name, path, shrink, p, {}, True) for p in POLICIES]
        out += [(name, path, 1.0, p, {}, False) for p in ("fcfs-easy", "fcfs-cons", "dynp")]
        for replan in ("rebuild", "compress", "guarded"):
            out += [
                (name, path, 1.0, f"{o}-cons", {"replan": replan}, True) for o in ("fcfs", "sjf")
            ]
        out += [(name, path, 1.0, "primetime", dict(p), True) for p in PRIMETIME]
        out += [(name, path, 1.0, "dynp", dict(p), True) for p in DYNP]
    return out


def key(case: Case) -> str:
    name, _, shrink, policy, params, kill = case
    return json.dumps([name, shrink, policy, params, kill])


def without_wall(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: without_wall(v)
            for k, v in value.items()
            if k not in ("wall_seconds", "tuning_seconds_mean", "tuning_seconds_max")
        }
    return value


def digest(case: Case) -> tuple[str, list[str], float]:
    from batchd.replay import ReplayOptions, run_replay

    name, path, shrink, policy, params, kill = case
    began = time.perf_counter()
    nodes = TRACES[name][1]
    result = run_replay(
        ReplayOptions(
            trace=path, policy=policy, params=params, nodes=nodes, shrink=shrink, kill=kill
        )
    )
    jobs = hashlib.sha256()
    for j in sorted(result.jobs, key=lambda j: j.id):
        fields = (j.id, j.submit, j.start, j.end, tuple(j.units), j.result.outcome, j.result.killed)
        jobs.update(repr((*fields, j.result.submit_plan, j.result.started_by)).encode())
    summary = json.dumps(without_wall(result.summary), sort_keys=True, default=str)
    digests = [jobs.hexdigest(), hashlib.sha256(summary.encode()).hexdigest()]
    return key(case), digests, time.perf_counter() - began


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="FILE", help="record the digests")
    group.add_argument("--check", metavar="FILE", help="compare with recorded digests")
    ap.add_argument("--traces", default="KTH,CTC", help="KTH, CTC (comma-separated)")
    ap.add_argument("--dir", default=str(ROOT.parent / "shared" / "traces"))
    ap.add_argument("--workers", type=positive_int, default=2)
    args = ap.parse_args()
    todo = cases(args.traces.split(","), Path(args.dir))
    recorded = json.loads(Path(args.check).read_text()) if args.check else {}
    got: dict[str, list[str]] = {}
    differ = 0
    with ProcessPoolExecutor(args.workers) as pool:
        for k, digests, seconds in pool.map(digest, todo):
            got[k] = digests
            verdict = ""
            if args.check:
                same = recorded.get(k) == digests
                differ += not same
                verdict = "same    " if same else "DIFFERS "
            print(f"{verdict}{seconds:7.1f} s  {k}", flush=True)
    if args.write:
        Path(args.write).write_text(json.dumps(got, indent=1) + "\n")
        print(f"{len(got)} digests written to {args.write}")
        return 0
    print(f"{len(got) - differ} of {len(got)} schedules and summaries as recorded")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
