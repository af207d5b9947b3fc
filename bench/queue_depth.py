"""A live daemon with deep queues: submissions, listings and the plan at 10k-100k queued.

For each policy a fresh ``batchd serve`` runs (as in bench/api.py: a copy of
``conf/hpcline96.toml`` with the policy, ``--speed 1`` so nothing ends during the
run, one 100 h job taking the whole machine so every later job waits). Then for each
depth D, in ascending order on the same daemon:

1. Fill: jobs are submitted from ``--clients`` concurrent clients until D jobs
   wait. The rate of the last fill step is the sustained rate at that depth.
2. Measured: ``--measured`` more submissions (``POST /jobs``) from ``--clients``
   clients, each timed: jobs per second, p50 and p99 latency. Every answer must be a
   201 whose ``estimated_start`` is set (the job's planned start).
3. ``GET /jobs`` (the whole list), ``GET /jobs?brief=true`` (the whole list as ``qstat``
   asks for it), ``GET /plan`` (the whole plan) and ``GET /plan``
   with ``If-None-Match`` of the version just answered (a 304 poll), each timed
   ``--reads`` / ``--polls`` times on one connection: p50 and p99.
4. RSS from ``/proc/PID/status``; per queued job: (RSS - RSS before the first job)
   / jobs queued.

``--pages K`` keeps K web pages open during the measured submissions: each has
loaded the whole plan before they begin, then polls ``GET /plan`` once a second
with the version it has (``If-None-Match`` and ``since``), as the page's script
does, so the plan is made again after each change. The table then gives those
polls' p50 and p99 beside the submissions'.
``--qstat K`` runs K ``qstat`` loops meanwhile: each lists every job once a second as
the client does (brief, pages of 5,000).

A fill that falls below ``--min-rate`` jobs/s, or a depth not reached within
``--fill-budget`` seconds, ends the policy's run there (the table says so): with a
plan made for every submission, filling a deep queue takes hours.

    PYTHONPATH=$PWD/daemon:$PWD/client .venv/bin/python bench/queue_depth.py
    ... bench/queue_depth.py --policy fcfs-easy --depths 10000 --json /tmp/depth.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from api import (  # bench/api.py, beside this script
    BIG_WALLTIME,
    GC_TRACE,
    MACHINE_NODES,
    VENV_BIN,
    BenchError,
    Daemon,
    UnixConnection,
    call_json,
    gc_summary,
    job_bodies,
    log,
    machine_info,
    nearest_rank,
    site_config,
    submit,
    table,
)

FILL_STEP = 2000  # jobs per fill step: the rate is checked after each


@dataclass
class DepthResult:
    depth: int
    reached: bool = False
    fill_rate: float = 0.0  # jobs/s of the last fill step
    subs_per_s: float = 0.0
    post_p50_ms: float = 0.0
    post_p99_ms: float = 0.0
    post_max_ms: float = 0.0
    jobs_p50_ms: float = 0.0
    jobs_p99_ms: float = 0.0
    jobs_mb: float = 0.0
    brief_p50_ms: float = 0.0  # GET /jobs?brief=true: what qstat asks for
    brief_p99_ms: float = 0.0
    plan_p50_ms: float = 0.0
    plan_p99_ms: float = 0.0
    poll304_p50_ms: float = 0.0
    poll304_p99_ms: float = 0.0
    pages: int = 0  # web pages polling GET /plan during the measured submissions
    page_polls: int = 0
    page_p50_ms: float = 0.0
    page_p99_ms: float = 0.0
    qstats: int = 0  # qstat loops during the measured submissions
    qstat_runs: int = 0
    qstat_p50_ms: float = 0.0
    qstat_p99_ms: float = 0.0
    rss_mb: float = 0.0
    kb_per_job: float = 0.0
    daemon_cpu_ms: float = 0.0  # daemon CPU per measured submission
    gc: dict[str, Any] = field(default_factory=dict)  # --gc-trace: pauses while measured
    problems: list[str] = field(default_factory=list)


def quantiles(seconds: list[float]) -> tuple[float, float]:
    ms = sorted(s * 1000 for s in seconds)
    return nearest_rank(ms, 0.50), nearest_rank(ms, 0.99)


def timed_gets(
    sock: str, path: str, count: int, etag: str | None = None
) -> tuple[list[float], int]:
    """``count`` GETs of ``path`` on one connection: (seconds each, bytes of the last)."""
    conn = UnixConnection(sock)
    headers = {} if etag is None else {"If-None-Match": etag}
    want = 200 if etag is None else 304
    runs, size = [], 0
    try:
        for _ in range(count):
            began = time.perf_counter()
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            runs.append(time.perf_counter() - began)
            if response.status != want:
                raise BenchError(f"GET {path}: {response.status}, expected {want}")
            size = len(raw)
    finally:
        conn.close()
    return runs, size


def plan_etag(sock: str) -> str:
    conn = UnixConnection(sock)
    try:
        conn.request("GET", "/plan")
        response = conn.getresponse()
        response.read()
        etag = response.getheader("ETag")
    finally:
        conn.close()
    if response.status != 200 or not etag:
        raise BenchError(f"GET /plan: {response.status}, ETag {etag!r}")
    return etag


class Watcher(threading.Thread):
    """A client that asks the daemon once a second while the submissions are timed."""

    def __init__(self, sock: str) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.stopping = threading.Event()
        self.loaded = threading.Event()  # ready: the timed requests begin
        self.runs: list[float] = []
        self.error: str | None = None

    def run(self) -> None:
        conn = UnixConnection(self.sock)
        try:
            while not self.stopping.is_set():
                began = time.perf_counter()
                timed = self.ask(conn)
                if self.error:
                    return
                if timed:
                    self.runs.append(time.perf_counter() - began)
                self.loaded.set()
                self.stopping.wait(1.0)
        finally:
            self.loaded.set()
            conn.close()

    def ask(self, conn: UnixConnection) -> bool:
        """One round of requests; False when it is not timed."""
        raise NotImplementedError

    def get(self, conn: UnixConnection, path: str, headers: dict[str, str]) -> Any:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        if response.status not in (200, 304):
            self.error = f"GET {path}: {response.status}"
        return response, raw


class PagePoller(Watcher):
    """A web page left open: ``GET /plan`` with the version it has (the first, untimed,
    loads the whole plan)."""

    etag: str | None = None

    def ask(self, conn: UnixConnection) -> bool:
        etag = self.etag
        path = "/plan" if etag is None else f"/plan?since={etag.strip(chr(34))}"
        response, _ = self.get(conn, path, {} if etag is None else {"If-None-Match": etag})
        self.etag = response.getheader("ETag") or etag
        return etag is not None


class QstatPoller(Watcher):
    """``qstat`` in a loop: every job, brief, in pages of 5,000 as the client asks."""

    def ask(self, conn: UnixConnection) -> bool:
        after = 0
        while after is not None and not self.error:
            _, raw = self.get(conn, f"/jobs?brief=true&limit=5000&after={after}", {})
            after = json.loads(raw)["next"] if not self.error else None
        return True


def run_policy(args: argparse.Namespace, policy: str, workdir: Path) -> list[DepthResult]:
    prefix, env = list(args.daemon_prefix), None
    gc_path = workdir / "gc.json"
    if args.gc_trace:
        prefix = [sys.executable, "-c", GC_TRACE]
        env = dict(os.environ, BATCHD_BENCH_GC=str(gc_path))
    daemon = Daemon(prefix, workdir, site_config(policy, workdir), args.sync, 1.0, env)
    windows: list[tuple[DepthResult, tuple[float, float]]] = []
    tag = f"[{policy}]"
    out: list[DepthResult] = []
    total = max(args.depths) + args.measured * len(args.depths)
    bodies = job_bodies(total, args.seed)
    used = 0
    try:
        daemon.start()
        time.sleep(1.0)
        base_rss = daemon.memory_mb()["VmRSS"]
        big = {"name": "whole", "nodes": MACHINE_NODES, "walltime": BIG_WALLTIME}
        status, data = call_json(daemon.sock, "POST", "/jobs", big)
        if status != 201 or data.get("state") != "R":
            raise BenchError(f"the {MACHINE_NODES}-node job: {status} {data}")
        queued = 0
        stop = False
        for depth in args.depths:
            res = DepthResult(depth)
            out.append(res)
            began = time.perf_counter()
            while queued < depth and not stop:
                step = bodies[used : used + min(FILL_STEP, depth - queued)]
                done = submit(daemon, step, args.clients)
                if done.failures():
                    raise BenchError(f"fill submissions failed: {done.failures()[:3]}")
                used += len(step)
                queued += len(step)
                res.fill_rate = len(step) / done.wall
                if res.fill_rate < args.min_rate:
                    log(f"{tag} fill at {queued} queued: {res.fill_rate:.0f} jobs/s; stopping")
                    stop = True
                elif time.perf_counter() - began > args.fill_budget and queued < depth:
                    log(f"{tag} {queued} queued after {args.fill_budget:g} s; stopping")
                    stop = True
            if stop and queued < depth:
                res.problems.append(f"reached {queued} queued only")
                break
            log(f"{tag} {queued} queued (last fill step {res.fill_rate:.0f} jobs/s)")
            step = bodies[used : used + args.measured]
            pages: list[Watcher] = [PagePoller(daemon.sock) for _ in range(args.pages)]
            qstats: list[Watcher] = [QstatPoller(daemon.sock) for _ in range(args.qstat)]
            for watcher in pages + qstats:
                watcher.start()
            for watcher in pages + qstats:
                watcher.loaded.wait()
            window = time.time()
            sub = submit(daemon, step, args.clients)
            for watcher in pages + qstats:
                watcher.stopping.set()
                watcher.join()
                if watcher.error:
                    res.problems.append(watcher.error)
            windows.append((res, (window, time.time())))
            if pages:
                polls = [run for page in pages for run in page.runs]
                res.pages, res.page_polls = len(pages), len(polls)
                res.page_p50_ms, res.page_p99_ms = quantiles(polls)
            if qstats:
                runs = [run for q in qstats for run in q.runs]
                res.qstats, res.qstat_runs = len(qstats), len(runs)
                res.qstat_p50_ms, res.qstat_p99_ms = quantiles(runs)
            used += len(step)
            queued += len(step)
            res.subs_per_s = len(step) / sub.wall
            res.post_p50_ms, res.post_p99_ms = quantiles([r[0] for r in sub.results])
            res.post_max_ms = 1000 * max(r[0] for r in sub.results)
            res.daemon_cpu_ms = sub.daemon_cpu * 1000 / len(step)
            res.problems += sub.failures()[:3]
            no_estimate = sum(
                1
                for _, s, raw in sub.results
                if s == 201 and json.loads(raw).get("est_start") is None
            )
            if no_estimate:
                res.problems.append(f"{no_estimate} answers without a planned start")
            runs, size = timed_gets(daemon.sock, "/jobs", args.reads)
            res.jobs_p50_ms, res.jobs_p99_ms = quantiles(runs)
            res.jobs_mb = size / 1e6
            runs, _ = timed_gets(daemon.sock, "/jobs?brief=true", args.reads)
            res.brief_p50_ms, res.brief_p99_ms = quantiles(runs)
            runs, _ = timed_gets(daemon.sock, "/plan", args.reads)
            res.plan_p50_ms, res.plan_p99_ms = quantiles(runs)
            runs, _ = timed_gets(daemon.sock, "/plan", args.polls, plan_etag(daemon.sock))
            res.poll304_p50_ms, res.poll304_p99_ms = quantiles(runs)
            res.rss_mb = daemon.memory_mb()["VmRSS"]
            res.kb_per_job = (res.rss_mb - base_rss) * 1024 / queued
            res.reached = True
            log(
                f"{tag} at {depth}: {res.subs_per_s:.0f} subs/s, POST p50 {res.post_p50_ms:.1f}"
                f" p99 {res.post_p99_ms:.1f} max {res.post_max_ms:.0f} ms; GET /jobs p50 {res.jobs_p50_ms:.0f} ms, "
                f"brief {res.brief_p50_ms:.0f} ms; "
                f"GET /plan p50 {res.plan_p50_ms:.0f} ms, 304 p50 {res.poll304_p50_ms:.2f} ms; "
                f"RSS {res.rss_mb:.0f} MB"
                + (
                    f"; {res.pages} pages, {res.page_polls} polls p50 {res.page_p50_ms:.0f}"
                    f" p99 {res.page_p99_ms:.0f} ms"
                    if res.pages
                    else ""
                )
            )
    finally:
        daemon.stop(10.0)
    if args.gc_trace:
        for res, window in windows:
            res.gc = gc_summary(gc_path, window)
            log(f"{tag} at {res.depth}: collector pauses while measured {res.gc}")
    return out


def report(results: dict[str, list[DepthResult]], args: argparse.Namespace) -> str:
    rows = []
    for policy, depths in results.items():
        for r in depths:
            if not r.reached:
                rows.append([policy, f"{r.depth}", "not reached: " + "; ".join(r.problems)])
                rows[-1] += [""] * 14
                continue
            rows.append(
                [
                    policy,
                    f"{r.depth}",
                    f"{r.subs_per_s:.0f}",
                    f"{r.fill_rate:.0f}",
                    f"{r.post_p50_ms:.1f} / {r.post_p99_ms:.1f} / {r.post_max_ms:.0f}",
                    f"{r.daemon_cpu_ms:.2f}",
                    f"{r.jobs_p50_ms:.0f} / {r.jobs_p99_ms:.0f}",
                    f"{r.jobs_mb:.1f}",
                    f"{r.brief_p50_ms:.0f} / {r.brief_p99_ms:.0f}",
                    f"{r.plan_p50_ms:.0f} / {r.plan_p99_ms:.0f}",
                    f"{r.poll304_p50_ms:.2f} / {r.poll304_p99_ms:.2f}",
                    f"{r.rss_mb:.0f}",
                    f"{r.kb_per_job:.1f}",
                    f"{r.page_p50_ms:.0f} / {r.page_p99_ms:.0f} ({r.page_polls})"
                    if r.pages
                    else "-",
                    f"{r.qstat_p50_ms:.0f} / {r.qstat_p99_ms:.0f} ({r.qstat_runs})"
                    if r.qstats
                    else "-",
                    "none" if not r.problems else "; ".join(r.problems),
                ]
            )
    head = ["policy", "queued", "subs/s", "fill/s", "POST /jobs p50/p99/max ms"]
    head += ["daemon CPU ms/sub", "GET /jobs p50/p99 ms", "MB", "brief p50/p99 ms"]
    head += ["GET /plan p50/p99 ms"]
    head += ["304 p50/p99 ms", "RSS MB", "KB/job", "page polls p50/p99 ms (n)"]
    head += ["qstat p50/p99 ms (n)", "problems"]
    return "\n".join(
        [
            f"{args.measured} submissions from {args.clients} clients at each depth; "
            f"GET /jobs and GET /plan x{args.reads}, 304 polls x{args.polls}; sync {args.sync}"
            + (f"; {args.pages} web pages open while measured" if args.pages else "")
            + (f"; {args.qstat} qstat loops while measured" if args.qstat else ""),
            table(head, rows),
        ]
    )


def _ints(text: str) -> list[int]:
    try:
        values = sorted(int(p) for p in text.split(",") if p.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N[,N...], got {text!r}") from None
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError("depths must be positive")
    return values


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="fcfs-easy,fcfs-cons", help="policies, comma list")
    ap.add_argument("--depths", type=_ints, default=[10_000, 50_000, 100_000])
    ap.add_argument("--measured", type=int, default=2000, help="timed submissions per depth")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--reads", type=int, default=5, help="timed GET /jobs and GET /plan")
    ap.add_argument("--polls", type=int, default=50, help="timed 304 polls of GET /plan")
    ap.add_argument("--pages", type=int, default=0, help="web pages polling GET /plan")
    ap.add_argument("--qstat", type=int, default=0, help="qstat loops (brief, pages of 5,000)")
    ap.add_argument("--sync", choices=("full", "normal"), default="normal")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-rate", type=float, default=20.0, help="jobs/s below which to stop")
    ap.add_argument("--fill-budget", type=float, default=900.0, help="seconds to reach a depth")
    ap.add_argument("--daemon", metavar="CMD", help="command that takes 'serve ...'")
    ap.add_argument("--gc-trace", action="store_true", help="record the collector's pauses")
    ap.add_argument("--tmp", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    args.policies = [p.strip() for p in args.policy.split(",") if p.strip()]
    args.daemon_prefix = args.daemon.split() if args.daemon else [str(VENV_BIN / "batchd")]
    if min(args.measured, args.clients, args.reads, args.polls) < 1:
        ap.error("--measured, --clients, --reads and --polls must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine_info()
    log(f"machine: {info.get('cpu', '?')}, {info['cores']} cores; Python {info['python']}")
    base = Path(tempfile.mkdtemp(prefix="bdepth-", dir=args.tmp))
    results: dict[str, list[DepthResult]] = {}
    try:
        for policy in args.policies:
            workdir = base / policy
            workdir.mkdir()
            try:
                results[policy] = run_policy(args, policy, workdir)
            except BenchError as exc:
                log(f"[{policy}] failed: {exc}")
                return 1
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(report(results, args))
    if args.json:
        data = {p: [asdict(r) for r in rs] for p, rs in results.items()}
        args.json.write_text(json.dumps({"machine": info, "results": data}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
