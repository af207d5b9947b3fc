"""A deep queue in process: whole listings (``GET /jobs``) and submissions, timed.

A ``BatchService`` on an 8-node site (as the API tests use), one job holding every
node for 100 hours and ``--queued`` more waiting behind it (widths 1 to 8, walltimes
from 60 s to 5,060 s). Then, without HTTP around it:

- ``--listings K``: K whole listings, consumed page by page as ``GET /jobs`` sends
  them (``listing.Pages``), full and brief (``qstat``'s) views; the first one of each
  also makes the plan of the queue.
- ``--submissions M``: M more submissions, each answered with its view as
  ``POST /jobs`` answers it, and committed.
- ``--plans P``: P times, a submission and then ``GET /plan`` as a page polling it
  asks for it (the state made again and the delta since the version before), made
  in steps as the daemon makes it: the whole time, and the longest step, which is the
  longest the event loop is held. The objects held are frozen first, as the daemon
  freezes them (``server/collector.py``).
- ``--traced``: the Python memory the queued jobs hold, per job (tracemalloc over the
  filling after its first 200 jobs, which it slows down), and the lines that
  allocated most of it.

    PYTHONPATH=$PWD/daemon .venv/bin/python bench/service_depth.py --queued 100000
    PYTHONPATH=$PWD/daemon .venv/bin/python bench/service_depth.py --policy dynp \\
        --queued 6000 --listings 0 --submissions 1000
    PYTHONPATH=$PWD/daemon .venv/bin/python bench/service_depth.py --queued 100000 \\
        --listings 0 --plans 5
    PYTHONPATH=$PWD/daemon .venv/bin/python bench/service_depth.py --queued 5000 \\
        --listings 0 --traced
"""

from __future__ import annotations

import argparse
import gc
import logging
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Generator
from pathlib import Path
from typing import TypeVar

import structlog

from batchd.engine.clock import VirtualClock
from batchd.server import listing, views
from batchd.server.planfeed import PlanFeed, Version, answer_steps
from batchd.server.planview import PlanState, plan_state_steps
from batchd.server.schemas import JobSubmit
from batchd.server.service import BatchService
from batchd.server.service.access import Caller
from batchd.server.service.operations import jobs as job_ops
from batchd.server.store import Store
from batchd.site.config import SiteConfig

ALICE = Caller("alice", "user", True)
T = TypeVar("T")
WARM_JOBS = 200  # --traced: submitted before the tracing starts


def service(policy: str, path: Path) -> BatchService:
    site = SiteConfig.model_validate(
        {
            "machine": [{"name": "mini", "nodes": 8}],
            "server": {"policy": policy, "query_other_jobs": True},
            "queue": [{"name": "workq", "default_walltime": 3600}],
        }
    )
    svc = BatchService(site, VirtualClock(1_000_000), Store(path), daemon_user="batchd")
    svc.save_meta(started=svc.now)
    svc.commit()
    return svc


def submit(svc: BatchService, i: int) -> None:
    body = JobSubmit(
        nodes=1 + i % 8,
        walltime=60 + (i * 7919) % 5000,
        variables={"BATCHD_RUNTIME": "30"},
    )
    rec = job_ops.submit(svc, ALICE, body)
    views.job_out(svc, rec, svc.plan_of(rec))


def listed(svc: BatchService, brief: bool) -> tuple[int, int]:
    """One whole listing: (jobs, bytes)."""
    query, after, _ = listing.parse(svc, {"brief": "true"} if brief else {}, ALICE)
    pages = listing.Pages(svc, query, ALICE)
    jobs = size = 0
    for texts in pages.chunks(after):
        jobs += len(texts)
        size += sum(map(len, texts))
    return jobs, size


def stepped(steps: Generator[None, None, T]) -> tuple[T, float, float]:
    """A generator of steps run through: its value, the whole time and the longest step (ms)."""
    began = last = time.perf_counter()
    longest = 0.0
    while True:
        try:
            next(steps)
        except StopIteration as done:
            now = time.perf_counter()
            value: T = done.value
            return value, 1000 * (now - began), 1000 * max(longest, now - last)
        now = time.perf_counter()
        longest, last = max(longest, now - last), now


def plan_polls(svc: BatchService, count: int, first: int) -> None:
    """``count`` submissions, each followed by a page's poll of GET /plan, in steps."""
    gc.collect()  # what the queue holds is frozen, as the daemon freezes it (server/collector.py)
    gc.freeze()
    feed = PlanFeed()
    state, whole, longest = stepped(plan_state_steps(svc))
    print(f"GET /plan first state: {whole:.0f} ms, longest step {longest:.1f} ms")
    number = 1
    rows = []
    for i in range(first, first + count):
        submit(svc, i)
        svc.commit()
        new: PlanState
        new, made, made_step = stepped(plan_state_steps(svc))
        version = Version(feed.boot, number + 1, new, state)
        body, sent, sent_step = stepped(answer_steps(svc, version, ALICE, f"{feed.boot}-{number}"))
        state, number = new, number + 1
        rows.append((made, made_step, sent, sent_step, len(body)))
    made = statistics.median(r[0] for r in rows)
    sent = statistics.median(r[2] for r in rows)
    size = statistics.median(r[4] for r in rows)
    print(
        f"GET /plan after a submission (median of {count}): state {made:.0f} ms "
        f"(longest step {max(r[1] for r in rows):.1f} ms), delta {sent:.0f} ms "
        f"(longest step {max(r[3] for r in rows):.1f} ms, {size:.0f} B)"
    )


def traced_per_job(before: tracemalloc.Snapshot, jobs: int) -> None:
    """The Python memory the queued jobs hold, per job, and the lines that made most."""
    gc.collect()
    diff = tracemalloc.take_snapshot().compare_to(before, "lineno")
    tracemalloc.stop()
    print(f"Python memory per queued job: {sum(d.size_diff for d in diff) / jobs:.0f} B")
    for d in diff[:8]:
        print(f"  {d.size_diff / jobs:6.0f} B  {d.traceback[0]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="fcfs-easy")
    ap.add_argument("--queued", type=int, default=20_000)
    ap.add_argument("--listings", type=int, default=3, help="whole listings of each view")
    ap.add_argument("--submissions", type=int, default=0)
    ap.add_argument("--plans", type=int, default=0, help="GET /plan polls after a submission")
    ap.add_argument("--traced", action="store_true", help="Python memory per queued job")
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)
    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    with tempfile.TemporaryDirectory() as tmp:
        svc = service(args.policy, Path(tmp) / "state.db")
        began = time.perf_counter()
        job_ops.submit(svc, ALICE, JobSubmit(nodes=8, walltime=360_000))
        warm = min(WARM_JOBS, args.queued) if args.traced else 0
        for i in range(args.queued):
            if args.traced and i == warm:  # the modules a submission imports are in
                svc.commit()
                gc.collect()
                tracemalloc.start()
                before = tracemalloc.take_snapshot()
            submit(svc, i)
            if i % 1000 == 0:
                svc.commit()
        svc.commit()
        print(f"{args.policy}: {args.queued} queued in {time.perf_counter() - began:.1f} s")
        if args.traced and args.queued > warm:
            traced_per_job(before, args.queued - warm)
        for brief in (False, True):
            runs = []
            for _ in range(args.listings):
                began = time.perf_counter()
                jobs, size = listed(svc, brief)
                runs.append(1000 * (time.perf_counter() - began))
            if runs:
                print(
                    f"{'brief' if brief else 'full'} listing of {jobs} jobs ({size / 1e6:.1f} MB):"
                    f" first {runs[0]:.0f} ms, median of the rest "
                    f"{statistics.median(runs[1:] or runs):.0f} ms"
                )
        if args.submissions:
            began = time.perf_counter()
            for i in range(args.queued, args.queued + args.submissions):
                submit(svc, i)
                svc.commit()
            spent = time.perf_counter() - began
            print(f"{1000 * spent / args.submissions:.2f} ms per submission")
        if args.plans:
            plan_polls(svc, args.plans, args.queued + args.submissions)
        if svc.store is not None:
            svc.store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
