"""What one refresh of the web page costs the daemon with 10,000 jobs queued.

The page polls ``GET /plan`` about once a wall second (docs/ui.md). For each policy
(``--policy``, default fcfs-easy and fcfs-cons) a fresh ``batchd serve`` (real-time
clock, TCP listener with a token, conf/hpcline96.toml with the policy) replays a
generated SWF trace: one job on all 96 nodes for 100 hours, then 9,999 jobs
(``--jobs`` in all) a second later, widths 1..96 and walltimes 60 s..24 h both
log-uniform (seeded), so that every job after the first waits. Then, over TCP as
the page asks, the daemon's CPU (utime + stime from ``/proc/PID/stat``) is read
around ``--repeat`` requests of each kind:

- ``whole``: ``GET /plan`` with no version: what a page gets when it opens;
- ``unchanged``: with ``If-None-Match`` naming the current version (a 304);
- ``one qsub``: a job is submitted (over the Unix socket, not counted), then
  ``GET /plan?since=V`` gets the delta;
- ``idle``: no request for as long as the others took: the scheduling loop alone.

CPU per request is the difference over the repeats divided by their number (the
kernel counts in ticks of 10 ms, hence many repeats). ``--breakdown`` also builds the
same jobs in this process and times the parts of a refresh (the state of the moment,
the comparison, the answer). The figures go to docs/performance.md.

    .venv/bin/python bench/ui_refresh.py                          # both policies (about a minute)
    .venv/bin/python bench/ui_refresh.py --policy fcfs-cons --repeat 50 --json out.json
    .venv/bin/python bench/ui_refresh.py --breakdown
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import math
import os
import pwd
import random
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "daemon"), str(ROOT / "client")]

from batchclient.transport import UnixHTTPConnection  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
NODES = 96


def write_trace(path: Path, jobs: int, seed: int) -> None:
    """An SWF trace: a 96-node job for 100 h at 0, then ``jobs - 1`` jobs at 1 s."""
    rng = random.Random(seed)
    lines = [f"; MaxNodes: {NODES}", f"; MaxProcs: {NODES}"]
    hundred_hours = 100 * 3600

    def record(i: int, submit: int, width: int, walltime: int, runtime: int) -> str:
        fields = [i, submit, -1, runtime, width, -1, -1, width, walltime, -1, 1, 1 + i % 40]
        return " ".join(str(f) for f in [*fields, -1, -1, 1, -1, -1, -1])

    lines.append(record(1, 0, NODES, hundred_hours, hundred_hours))
    for i in range(2, jobs + 1):
        width = round(math.exp(rng.uniform(0, math.log(NODES))))
        walltime = round(math.exp(rng.uniform(math.log(60), math.log(86400))))
        lines.append(record(i, 1, width, walltime, max(1, walltime // 2)))
    path.write_text("\n".join(lines) + "\n")


def write_config(path: Path, policy: str) -> None:
    text = (ROOT / "conf" / "hpcline96.toml").read_text()
    lines = []
    for line in text.splitlines():
        if line.strip().startswith("policy ="):
            line = f'policy = "{policy}"'
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")


class Daemon:
    def __init__(self, workdir: Path, config: Path, trace: Path, port: int, tokens: Path) -> None:
        self.sock = str(workdir / "batchd.sock")
        self.log = workdir / "daemon.log"
        self.port = port
        self.cmd = [
            sys.executable, "-m", "batchd.cli", "serve",
            "--config", str(config), "--socket", self.sock,
            "--state", str(workdir / "state.db"), "--sync", "normal",
            "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens),
            "--replay", str(trace),
        ]  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = dict(os.environ, PYTHONPATH=f"{ROOT / 'daemon'}:{ROOT / 'client'}")
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=log, cwd=ROOT, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the daemon exited: {self.log.read_text()[-2000:]}")
            with contextlib.suppress(OSError):
                if self.unix("GET", "/healthz")[0] == 200:
                    return
            time.sleep(0.1)
        raise SystemExit("the daemon did not answer within 60 s")

    def unix(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        conn = UnixHTTPConnection(self.sock, timeout=60)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"null")
        finally:
            conn.close()

    def cpu(self) -> float:
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Page:
    """GET /plan as the page asks it: over TCP, with the token, keeping the version."""

    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.token = token
        self.version: str | None = None

    def get(self, *, since: bool, etag: bool) -> tuple[int, int]:
        """(status, bytes of the body)"""
        headers = {"Authorization": f"Bearer {self.token}"}
        path = "/plan"
        if self.version is not None and since:
            path += f"?since={self.version}"
        if self.version is not None and etag:
            headers["If-None-Match"] = f'"{self.version}"'
        self.conn.request("GET", path, headers=headers)
        resp = self.conn.getresponse()
        body = resp.read()
        if resp.status == 200:
            self.version = json.loads(body)["version"]
        elif resp.status != 304:
            raise SystemExit(f"GET {path}: {resp.status} {body[:300]!r}")
        return resp.status, len(body)


def wait_for_jobs(daemon: Daemon, jobs: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status, server = daemon.unix("GET", "/server")
        counts = server["jobs"]
        if counts["Q"] + counts["R"] >= jobs:
            return
        time.sleep(0.5)
    raise SystemExit(f"the trace's {jobs} jobs did not all arrive: {server['jobs']}")


def measure(daemon: Daemon, repeat: int, request: Any) -> dict[str, float]:
    statuses: list[int] = []
    sizes: list[int] = []
    walls: list[float] = []
    cpu0 = daemon.cpu()
    began = time.perf_counter()
    for _ in range(repeat):
        t = time.perf_counter()
        status, size = request()
        walls.append(time.perf_counter() - t)
        statuses.append(status)
        sizes.append(size)
    wall = time.perf_counter() - began
    cpu = daemon.cpu() - cpu0
    return {
        "status": statistics.mode(statuses),
        "bytes": statistics.median(sizes),
        "cpu_ms": 1000 * cpu / repeat,
        "wall_ms_p50": 1000 * statistics.median(walls),
        "wall_s": wall,
    }


def run_policy(policy: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    config = workdir / f"{policy}.toml"
    write_config(config, policy)
    trace = workdir / "trace.swf"
    write_trace(trace, args.jobs, args.seed)
    token = secrets.token_hex(16)
    tokens = workdir / "tokens"
    tokens.write_text(f"{pwd.getpwuid(os.getuid()).pw_name}:{token}\n")
    tokens.chmod(0o600)
    port = free_port()
    run = workdir / policy
    run.mkdir()
    daemon = Daemon(run, config, trace, port, tokens)
    daemon.start()
    try:
        wait_for_jobs(daemon, args.jobs)
        page = Page(port, token)
        for _ in range(3):  # warm: the plan, the imports of the first answers
            page.get(since=False, etag=False)
        results: dict[str, Any] = {"policy": policy}
        results["whole"] = measure(daemon, args.repeat, lambda: page.get(since=False, etag=False))
        page.get(since=False, etag=False)
        results["unchanged"] = measure(daemon, args.repeat, lambda: page.get(since=True, etag=True))

        def qsub_then_refresh() -> tuple[int, int]:
            cpu = daemon.cpu()
            status, _ = daemon.unix("POST", "/jobs", {"nodes": 4, "walltime": 600})
            assert status == 201
            submitted.append(daemon.cpu() - cpu)
            return page.get(since=True, etag=True)

        submitted: list[float] = []
        delta = measure(daemon, args.repeat, qsub_then_refresh)
        delta["cpu_ms"] -= 1000 * sum(submitted) / args.repeat  # the qsub itself is not the page's
        results["one qsub"] = delta
        idle_wall = results["whole"]["wall_s"]
        cpu0 = daemon.cpu()
        time.sleep(idle_wall)
        results["idle"] = {
            "cpu_ms": 1000 * (daemon.cpu() - cpu0) / args.repeat,
            "wall_s": idle_wall,
        }
        status, server = daemon.unix("GET", "/server")
        results["jobs"] = server["jobs"]
        return results
    finally:
        daemon.stop()


def breakdown(policy: str, jobs: int, seed: int, workdir: Path) -> dict[str, float]:
    """The parts of a refresh, in this process, best of 5 (milliseconds of wall time)."""
    import timeit

    from batchd.engine.clock import VirtualClock
    from batchd.model.job import Job
    from batchd.server.planfeed import PlanFeed, answer_steps
    from batchd.server.planview import plan_state, run_through
    from batchd.server.service import BatchService
    from batchd.server.store import Store
    from batchd.site.config import load_site

    site = load_site(ROOT / "conf" / "hpcline96.toml")
    site.server.policy = policy
    store = Store(workdir / f"{policy}-inprocess.db", sync="normal")
    svc = BatchService(site, VirtualClock(1_800_000_000), store)
    root = svc.caller("root")
    hundred_hours = 100 * 3600
    svc.inject(
        Job(id=0, submit=0, width=NODES, estimate=hundred_hours, runtime=hundred_hours), "root"
    )
    rng = random.Random(seed)
    for i in range(jobs - 1):
        width = round(math.exp(rng.uniform(0, math.log(NODES))))
        walltime = round(math.exp(rng.uniform(math.log(60), math.log(86400))))
        svc.inject(
            Job(id=0, submit=0, width=width, estimate=walltime, runtime=walltime // 2),
            f"user{i % 40}",
        )
    svc.settle()
    feed = PlanFeed()
    asyncio.run(feed.refresh(svc))
    last = feed.last
    assert last is not None

    def best(fn: Any) -> float:
        return 1000 * min(timeit.repeat(fn, number=1, repeat=5))

    fresh = plan_state(svc)
    return {
        "state": best(lambda: plan_state(svc)),
        "compare": best(lambda: last.same_as(fresh)),
        "whole answer": best(lambda: run_through(answer_steps(svc, feed.current(), root, None))),
    }


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default="fcfs-easy,fcfs-cons", help="comma-separated")
    parser.add_argument("--jobs", type=int, default=10_000, help="jobs in all (one runs)")
    parser.add_argument("--repeat", type=int, default=30, help="requests of each kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    parser.add_argument("--breakdown", action="store_true", help="also time the parts in-process")
    args = parser.parse_args()
    out = []
    with tempfile.TemporaryDirectory(prefix="batchd-ui-bench-") as tmp:
        for policy in args.policy.split(","):
            out.append(run_policy(policy, args, Path(tmp)))
            if args.breakdown:
                out[-1]["breakdown"] = breakdown(policy, args.jobs, args.seed, Path(tmp))
    print(
        f"GET /plan with {args.jobs:,} jobs (1 running), daemon CPU per request, {args.repeat} each"
    )
    print(
        f"{'policy':<10} {'request':<10} {'status':>6} {'bytes':>10} {'CPU ms':>8} {'wall ms p50':>12}"
    )
    for r in out:
        for kind in ("whole", "unchanged", "one qsub"):
            m = r[kind]
            print(
                f"{r['policy']:<10} {kind:<10} {m['status']:>6} {m['bytes']:>10,.0f} "
                f"{m['cpu_ms']:>8.1f} {m['wall_ms_p50']:>12.1f}"
            )
        print(f"{r['policy']:<10} {'idle':<10} {'':>6} {'':>10} {r['idle']['cpu_ms']:>8.1f}")
    worst = max(r[k]["cpu_ms"] for r in out for k in ("whole", "unchanged", "one qsub"))
    print(f"target: under 50 ms of daemon CPU per refresh; worst here {worst:.1f} ms")
    if args.breakdown:
        print(
            "in this process, wall ms, best of 5: "
            + ", ".join(
                f"{r['policy']}: " + ", ".join(f"{k} {v:.1f}" for k, v in r["breakdown"].items())
                for r in out
            )
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
