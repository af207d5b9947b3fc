"""A deep queue in process: whole listings (``GET /jobs``) and submissions, timed.

A ``BatchService`` on an 8-node site (as the API tests use), one job holding every
node for 100 hours and ``--queued`` more waiting behind it (widths 1 to 8, walltimes
from 60 s to 5,060 s). Then, without HTTP around it:

- ``--listings K``: K whole listings, consumed page by page as ``GET /jobs`` sends
  them (``listing.Pages``), full and brief (``qstat``'s) views; the first one of each
  also makes the plan of the queue.
- ``--submissions M``: M more submissions, each answered with its view as
  ``POST /jobs`` answers it, and committed.

    PYTHONPATH=$PWD/daemon .venv/bin/python bench/service_depth.py --queued 100000
    PYTHONPATH=$PWD/daemon .venv/bin/python bench/service_depth.py --policy dynp \\
        --queued 6000 --listings 0 --submissions 1000
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

import structlog

from batchd.engine.clock import VirtualClock
from batchd.server import listing, views
from batchd.server.schemas import JobSubmit
from batchd.server.service import BatchService
from batchd.server.service.access import Caller
from batchd.server.service.operations import jobs as job_ops
from batchd.server.store import Store
from batchd.site.config import SiteConfig

ALICE = Caller("alice", "user", True)


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="fcfs-easy")
    ap.add_argument("--queued", type=int, default=20_000)
    ap.add_argument("--listings", type=int, default=3, help="whole listings of each view")
    ap.add_argument("--submissions", type=int, default=0)
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)
    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    with tempfile.TemporaryDirectory() as tmp:
        svc = service(args.policy, Path(tmp) / "state.db")
        began = time.perf_counter()
        job_ops.submit(svc, ALICE, JobSubmit(nodes=8, walltime=360_000))
        for i in range(args.queued):
            submit(svc, i)
            if i % 1000 == 0:
                svc.commit()
        svc.commit()
        print(f"{args.policy}: {args.queued} queued in {time.perf_counter() - began:.1f} s")
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
        if svc.store is not None:
            svc.store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
