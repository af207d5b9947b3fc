"""The cost of a Prometheus scrape of a live batchd daemon with 10,000 queued jobs.

Two parts:

1. A real daemon (``batchd serve`` at ``--speed 1`` on a copy of conf/hpcline96.toml,
   as bench/api.py starts it): one job takes the whole machine for 100 h, then
   ``--jobs`` more are queued by 4 concurrent clients. ``GET /metrics`` is timed
   ``--scrapes`` times over the Unix socket (a new connection each, body read),
   and once more after every 100 further submissions, so the tally has changes
   to take in. Target: under 50 ms.
2. In this process, on the same shape of backlog: the time of one scrape
   (``generate_latest``) after a submission, and of ``refresh_plan_gauges``, the
   full plan the scheduling loop makes at most every ``[metrics] plan_interval``
   wall seconds and that a scrape never makes.

    .venv/bin/python bench/metrics.py
    .venv/bin/python bench/metrics.py --policy fcfs-easy,fcfs-cons --jobs 10000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from api import (
    BIG_WALLTIME,
    ROOT,
    VENV_BIN,
    Daemon,
    call_json,
    job_bodies,
    site_config,
    submit,
    time_raw_get,
)

TARGET_MS = 50.0


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def daemon_case(policy: str, jobs: int, scrapes: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="batchd-bench-") as tmp:
        work = Path(tmp)
        config = site_config(policy, work)
        daemon = Daemon([str(VENV_BIN / "batchd")], work, config, "normal", 1.0)
        daemon.start()
        try:
            blocker = {"name": "big", "nodes": 96, "walltime": BIG_WALLTIME}
            status, _ = call_json(daemon.sock, "POST", "/jobs", blocker)
            assert status == 201
            bodies = job_bodies(jobs + 1000, seed=7)
            submit(daemon, bodies[:jobs], clients=4)
            idle = [time_raw_get(daemon.sock, "/metrics") for _ in range(scrapes)]
            after = []
            for i in range(10):
                submit(daemon, bodies[jobs + 100 * i : jobs + 100 * (i + 1)], clients=4)
                after.append(time_raw_get(daemon.sock, "/metrics"))
            status, data = call_json(daemon.sock, "GET", "/server")
            queued = data["jobs"]["Q"] if status == 200 else -1
        finally:
            daemon.stop(15.0)
    ms = [s * 1000 for s, _ in idle]
    ms_after = [s * 1000 for s, _ in after]
    return {
        "queued": queued,
        "p50_ms": statistics.median(ms),
        "p99_ms": pct(ms, 0.99),
        "max_ms": max(ms),
        "after_changes_max_ms": max(ms_after),
        "bytes": idle[0][1],
    }


def in_process_case(policy: str, jobs: int) -> dict[str, float]:
    import logging

    import structlog
    from prometheus_client import generate_latest

    # The service logs every submission; the figures are what this prints.
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))

    from batchd.engine.clock import VirtualClock
    from batchd.metrics.exporter import make_registry
    from batchd.server.schemas import JobSubmit
    from batchd.server.service import BatchService
    from batchd.server.service.operations import jobs as job_ops
    from batchd.site.config import load_site

    with tempfile.TemporaryDirectory(prefix="batchd-bench-") as tmp:
        site = load_site(site_config(policy, Path(tmp)))
    svc = BatchService(site, VirtualClock(1_700_000_000), None, daemon_user="bench")
    registry = make_registry(svc)
    boss = svc.caller("bench")
    job_ops.submit(svc, boss, JobSubmit(nodes=96, walltime=100 * 3600))
    for raw in job_bodies(jobs, seed=7):
        job_ops.submit(svc, boss, JobSubmit.model_validate(json.loads(raw)))
    scrape = []
    for raw in job_bodies(50, seed=8):
        job_ops.submit(svc, boss, JobSubmit.model_validate(json.loads(raw)))
        began = time.perf_counter()
        generate_latest(registry)
        scrape.append((time.perf_counter() - began) * 1000)
    refresh = []
    for raw in job_bodies(5, seed=9):
        job_ops.submit(svc, boss, JobSubmit.model_validate(json.loads(raw)))
        began = time.perf_counter()
        svc.refresh_plan_gauges()
        refresh.append((time.perf_counter() - began) * 1000)
    return {
        "scrape_after_submit_p50_ms": statistics.median(scrape),
        "scrape_after_submit_max_ms": max(scrape),
        "plan_refresh_median_ms": statistics.median(refresh),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="fcfs-easy,fcfs-cons")
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--scrapes", type=int, default=50)
    args = parser.parse_args(argv)
    print(f"# /metrics with {args.jobs} queued jobs (target {TARGET_MS:g} ms)")
    print(f"# {' '.join([Path(sys.executable).name, *sys.argv])} (from {ROOT})")
    print(
        "| policy | queued | p50 ms | p99 ms | max ms | max ms after changes | bytes "
        "| in-process scrape p50/max ms | plan refresh ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ok = True
    for policy in args.policy.split(","):
        d = daemon_case(policy, args.jobs, args.scrapes)
        p = in_process_case(policy, args.jobs)
        ok = ok and d["max_ms"] < TARGET_MS and d["after_changes_max_ms"] < TARGET_MS
        print(
            f"| {policy} | {d['queued']:.0f} | {d['p50_ms']:.2f} | {d['p99_ms']:.2f} "
            f"| {d['max_ms']:.2f} | {d['after_changes_max_ms']:.2f} | {d['bytes']:.0f} "
            f"| {p['scrape_after_submit_p50_ms']:.2f}/{p['scrape_after_submit_max_ms']:.2f} "
            f"| {p['plan_refresh_median_ms']:.1f} |"
        )
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
