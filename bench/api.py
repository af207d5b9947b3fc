"""API latency of a live batchd daemon, and the cost of listing 10,000 jobs with qstat.

For each policy and SQLite sync mode, a fresh ``batchd serve`` runs as a subprocess
on a temporary socket and state file at ``--speed 1`` (so nothing ends or starts
during the run), with a copy of ``conf/hpcline96.toml`` whose ``[server] policy``
is the policy and whose queue takes walltimes up to 100 h (the site's limit is 24 h).
Then:

1. ``GET /scheduler`` must name the policy, and one job takes the whole machine
   (96 nodes, walltime 100:00:00), so every job after it stays queued.
2. Setup, not timed: 1,000 jobs are queued by 4 concurrent clients.
3. Measured: 2,000 submissions (``POST /jobs``) from 8 concurrent clients, each
   request timed on its own. Every answer must be a 201 with a new job id, and
   ``GET /jobs`` must then list exactly 1 + 1,000 + 2,000 jobs, every id present.
4. More jobs are queued (4 clients) until ``GET /jobs`` lists 10,000 jobs (one
   running, 9,999 queued). Then, each the median of 5: ``GET /jobs`` (the raw
   answer), ``GET /jobs`` plus ``json.loads`` and a minimal table in this process,
   and the ``qstat`` console script end to end as a subprocess (``qstat``,
   ``qstat -T``, and ``qstat -B`` as the fixed cost of starting the command).
5. The daemon's RSS is read from ``/proc/PID/status``; SIGTERM must stop it with
   exit status 0 within ``--stop-timeout`` seconds.

The clients are threads with ``http.client`` over ``AF_UNIX``, one keep-alive
connection each (``--client aiohttp`` uses one ``aiohttp.ClientSession`` with a
``UnixConnector`` instead). A blocked thread releases the GIL, the daemon serves
one request at a time, and a thread does a few tens of microseconds of work per
request, so the time measured is the daemon's. The table shows the CPU the client
and the daemon spent per request, which checks this.

Job shapes are one seeded draw: widths 1..96 log-uniform, walltimes 60 s..24 h
log-uniform, emulated runtimes (``BATCHD_RUNTIME``) 10-100% of the walltime.

    .venv/bin/python bench/api.py                                # fcfs-easy, sync full and normal
    .venv/bin/python bench/api.py --policy fcfs-easy,fcfs-cons --json /tmp/api.json
    .venv/bin/python bench/api.py --policy dynp --sync normal --list-jobs 5000
    .venv/bin/python bench/api.py --profile /tmp/prof          # daemon under cProfile
    .venv/bin/python bench/api.py --policy fcfs-cons --gc-trace  # the daemon's GC pauses
    .venv/bin/python bench/api.py --qstat ".venv/bin/python -m batchclient.qstat"
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import http.client
import json
import math
import os
import platform
import random
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
CONFIG = ROOT / "conf" / "hpcline96.toml"
MACHINE_NODES = 96
BIG_WALLTIME = "100:00:00"
BIG_SECONDS = 100 * 3600
MAX_WALLTIME = 24 * 3600  # the site queue's limit for the other jobs
TARGET_P99_MS = 20.0
TARGET_QSTAT_MS = 300.0
JOB_LINE = re.compile(r"^\d+\.\S*\s")
CLK_TCK = os.sysconf("SC_CLK_TCK")
IDLE_SETTLE = 1.5  # seconds after start before the idle CPU is measured


# -- talking to the daemon ---------------------------------------------------------


class UnixConnection(http.client.HTTPConnection):
    """HTTP/1.1 over a Unix stream socket."""

    def __init__(self, path: str, timeout: float = 300.0) -> None:
        super().__init__("batchd", timeout=timeout)
        self.unix_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.unix_path)
        self.sock = sock


def call(
    conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None
) -> tuple[int, bytes]:
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    return response.status, response.read()


def call_json(sock: str, method: str, path: str, data: Any = None) -> tuple[int, Any]:
    conn = UnixConnection(sock)
    try:
        body = None if data is None else json.dumps(data).encode()
        status, raw = call(conn, method, path, body)
    finally:
        conn.close()
    return status, json.loads(raw) if raw else None


class BenchError(RuntimeError):
    """The daemon misbehaved or the run cannot go on."""


def site_config(policy: str, workdir: Path) -> Path:
    """A copy of conf/hpcline96.toml with ``[server] policy`` set and room for a 100 h job.

    The site's queue takes walltimes up to 24 h; the copy raises every queue's
    ``max_walltime`` to 100 h so the one job that fills the machine is accepted.
    """
    from batchd.site.config import load_site

    text = CONFIG.read_text(encoding="utf-8")
    text, policies = re.subn(r"(?m)^policy\s*=.*$", f'policy = "{policy}"', text)
    text = re.sub(r"(?m)^max_walltime\s*=.*$", f'max_walltime = "{BIG_WALLTIME}"', text)
    path = workdir / "site.toml"
    path.write_text(text, encoding="utf-8")
    site = load_site(path)
    limits = [q.max_walltime for q in site.queues()]
    if not policies or site.server.policy != policy:
        raise BenchError(f"{CONFIG}: found no [server] policy line to set")
    if any(limit is not None and limit < BIG_SECONDS for limit in limits):
        raise BenchError(f"{CONFIG}: could not raise the queues' max_walltime to {BIG_WALLTIME}")
    return path


class Daemon:
    """``batchd serve`` as a subprocess, with its JSON log in a file."""

    def __init__(
        self,
        prefix: list[str],
        workdir: Path,
        config: Path,
        sync: str,
        speed: float,
        env: dict[str, str] | None = None,
    ) -> None:
        self.env = env
        self.sock = str(workdir / "batchd.sock")
        self.state = workdir / "state.db"
        self.log_path = workdir / "daemon.log"
        self.cmd = [
            *prefix,
            "serve",
            "--config",
            str(config),
            "--speed",
            f"{speed:g}",
            "--socket",
            self.sock,
            "--state",
            str(self.state),
            "--sync",
            sync,
        ]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, timeout: float = 60.0) -> float:
        """Start it and wait until /healthz answers; returns the seconds that took."""
        began = time.perf_counter()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=ROOT, env=self.env
            )
        deadline = began + timeout
        while True:
            if self.proc.poll() is not None:
                raise BenchError(
                    f"the daemon exited with {self.proc.returncode}: {self.log_tail()}"
                )
            with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
                status, data = call_json(self.sock, "GET", "/healthz")
                if status == 200 and data.get("status") == "ok":
                    return time.perf_counter() - began
            if time.perf_counter() > deadline:
                raise BenchError(f"/healthz did not answer within {timeout:g} s")
            time.sleep(0.05)

    def alive(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            code = None if self.proc is None else self.proc.returncode
            raise BenchError(f"the daemon is gone (exit status {code}): {self.log_tail()}")

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime

    def memory_mb(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0]) / 1024
        return out

    def stop(self, timeout: float) -> tuple[int | None, float]:
        """SIGTERM; (exit status or None if it had to be killed, seconds until it exited)."""
        if self.proc is None:
            return None, 0.0
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        began = time.perf_counter()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code: int | None = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            code = None
        return code, time.perf_counter() - began

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def log_tail(self, lines: int = 5) -> str:
        try:
            return " | ".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def log_errors(self) -> int:
        try:
            text = self.log_path.read_text()
        except OSError:
            return 0
        return sum(
            1
            for line in text.splitlines()
            if '"level": "error"' in line or '"level": "critical"' in line or "Traceback" in line
        )


# The daemon's entry point with every garbage-collector pause recorded (``--gc-trace``),
# and optionally ``gc.freeze()`` after its imports (``--gc-freeze``, a what-if). Passed
# to ``python -c``; the daemon's arguments follow.
GC_TRACE = """
import atexit, gc, json, os, sys, time
pauses, began = [], [0.0]
def _cb(phase, info):
    if phase == "start":
        began[0] = time.perf_counter()
    else:
        pauses.append((time.time(), info["generation"], time.perf_counter() - began[0]))
def _dump():
    with open(os.environ["BATCHD_BENCH_GC"], "w") as f:
        json.dump(pauses, f)
atexit.register(_dump)
from batchd.cli import main
if os.environ.get("BATCHD_BENCH_FREEZE"):
    import batchd.server.daemon, batchd.sched.registry, batchd.sched.kernels.profile
    gc.collect()
    gc.freeze()
gc.callbacks.append(_cb)
sys.exit(main(sys.argv[1:]))
"""


def gc_summary(path: Path, window: tuple[float, float]) -> dict[str, Any]:
    """Collector pauses of the daemon inside the measured part, by generation."""
    try:
        pauses = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    out: dict[str, Any] = {}
    for gen in (0, 1, 2):
        ms = [p[2] * 1000 for p in pauses if p[1] == gen and window[0] <= p[0] <= window[1]]
        out[f"gen{gen}"] = {
            "count": len(ms),
            "total_ms": round(sum(ms), 2),
            "max_ms": round(max(ms, default=0.0), 2),
        }
    return out


# -- the jobs ----------------------------------------------------------------------


def hms(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def job_bodies(count: int, seed: int) -> list[bytes]:
    """``count`` JobSubmit bodies of one seeded draw."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        width = min(MACHINE_NODES, int(math.exp(rng.uniform(0.0, math.log(MACHINE_NODES + 1)))))
        walltime = int(math.exp(rng.uniform(math.log(60), math.log(MAX_WALLTIME))))
        runtime = max(1, int(walltime * rng.uniform(0.1, 1.0)))
        body = {
            "name": "bench",
            "nodes": max(1, width),
            "walltime": hms(walltime),
            "variables": {"BATCHD_RUNTIME": str(runtime)},
        }
        out.append(json.dumps(body, separators=(",", ":")).encode())
    return out


# -- submitting --------------------------------------------------------------------


@dataclass
class Submitted:
    """What a batch of submissions gave: one (seconds, status, body) per request."""

    results: list[tuple[float, int, bytes]]
    wall: float
    client_cpu: float
    daemon_cpu: float

    def ids(self) -> list[str]:
        out = []
        for _, status, raw in self.results:
            if status == 201:
                out.append(json.loads(raw)["id"])
        return out

    def failures(self) -> list[str]:
        return [
            f"HTTP {status}: {raw[:120].decode('utf-8', 'replace')}"
            for _, status, raw in self.results
            if status != 201
        ]


def _thread_worker(
    sock: str,
    bodies: list[bytes],
    barrier: threading.Barrier,
    out: list[tuple[float, int, bytes]],
) -> None:
    conn = UnixConnection(sock)
    conn.connect()
    barrier.wait()
    clock = time.perf_counter
    for body in bodies:
        began = clock()
        try:
            status, raw = call(conn, "POST", "/jobs", body)
        except (OSError, http.client.HTTPException) as exc:
            status, raw = -1, f"{type(exc).__name__}: {exc}".encode()
            conn.close()
            conn = UnixConnection(sock)
        out.append((clock() - began, status, raw))
    conn.close()


def submit_threads(sock: str, chunks: list[list[bytes]]) -> tuple[list[Any], float]:
    outs: list[list[tuple[float, int, bytes]]] = [[] for _ in chunks]
    barrier = threading.Barrier(len(chunks) + 1)
    threads = [
        threading.Thread(target=_thread_worker, args=(sock, chunk, barrier, out), daemon=True)
        for chunk, out in zip(chunks, outs, strict=True)
    ]
    for t in threads:
        t.start()
    barrier.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    return [r for out in outs for r in out], wall


async def _aiohttp_run(sock: str, chunks: list[list[bytes]]) -> tuple[list[Any], float]:
    import aiohttp

    headers = {"Content-Type": "application/json"}
    connector = aiohttp.UnixConnector(path=sock, limit=len(chunks))
    timeout = aiohttp.ClientTimeout(total=300)
    outs: list[list[tuple[float, int, bytes]]] = [[] for _ in chunks]
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def warm() -> None:
            async with session.get("http://batchd/healthz") as r:
                await r.read()

        await asyncio.gather(*(warm() for _ in chunks))  # open every connection first
        clock = time.perf_counter

        async def worker(bodies: list[bytes], out: list[tuple[float, int, bytes]]) -> None:
            for body in bodies:
                began = clock()
                try:
                    async with session.post("http://batchd/jobs", data=body, headers=headers) as r:
                        raw = await r.read()
                        status = r.status
                except aiohttp.ClientError as exc:
                    status, raw = -1, f"{type(exc).__name__}: {exc}".encode()
                out.append((clock() - began, status, raw))

        began = time.perf_counter()
        await asyncio.gather(*(worker(c, o) for c, o in zip(chunks, outs, strict=True)))
        wall = time.perf_counter() - began
    return [r for out in outs for r in out], wall


def submit(daemon: Daemon, bodies: list[bytes], clients: int, kind: str = "threads") -> Submitted:
    """Submit ``bodies`` from ``clients`` concurrent clients, round robin."""
    chunks = [bodies[i::clients] for i in range(clients)]
    chunks = [c for c in chunks if c]
    gc.collect()
    gc.disable()  # no collector pauses inside a timed request
    try:
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        dcpu0 = daemon.cpu_seconds()
        if kind == "aiohttp":
            results, wall = asyncio.run(_aiohttp_run(daemon.sock, chunks))
        else:
            results, wall = submit_threads(daemon.sock, chunks)
        dcpu1 = daemon.cpu_seconds()
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        gc.enable()
    client_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return Submitted(results, wall, client_cpu, dcpu1 - dcpu0)


# -- listing -----------------------------------------------------------------------


def list_ids(sock: str) -> list[str]:
    status, data = call_json(sock, "GET", "/jobs")
    if status != 200:
        raise BenchError(f"GET /jobs answered {status}: {data}")
    return [j["id"] for j in data["jobs"]]


def time_raw_get(sock: str, path: str = "/jobs") -> tuple[float, int]:
    """GET ``path`` on a new connection, the body read but not decoded: (seconds, bytes)."""
    began = time.perf_counter()
    conn = UnixConnection(sock)
    status, raw = call(conn, "GET", path)
    conn.close()
    spent = time.perf_counter() - began
    if status != 200:
        raise BenchError(f"GET {path} answered {status}")
    return spent, len(raw)


def time_get_parse(sock: str) -> tuple[float, int]:
    """GET /jobs, json.loads and a minimal qstat-like table in this process: (seconds, lines)."""
    began = time.perf_counter()
    conn = UnixConnection(sock)
    status, raw = call(conn, "GET", "/jobs")
    conn.close()
    data = json.loads(raw)
    lines = ["Job id            Name             User              Time Use S Queue", "-" * 69]
    for j in data["jobs"]:
        lines.append(
            f"{j['id'][:17]:<17} {j['name'][:16]:<16} {j['owner'][:16]:<16}  "
            f"{j['elapsed'] or 0:>8} {j['state']} {j['queue'][:16]:<16}"
        )
    text = "\n".join(lines) + "\n"
    spent = time.perf_counter() - began
    if status != 200:
        raise BenchError(f"GET /jobs answered {status}")
    return spent, text.count("\n")


def find_qstat(given: str | None) -> list[str] | None:
    if given:
        return shlex.split(given)
    for candidate in (VENV_BIN / "qstat", shutil.which("qstat")):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return [str(candidate)]
    return None


def time_command(cmd: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    proc = subprocess.run(
        cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    spent = time.perf_counter() - began
    if proc.returncode != 0:
        raise BenchError(
            f"{shlex.join(cmd)} exited with {proc.returncode}: {proc.stderr.decode()[-300:]}"
        )
    return spent


def count_lines(cmd: list[str], env: dict[str, str]) -> tuple[int, int, int]:
    """(lines, job lines, job lines whose last column is '--') of one untimed run."""
    proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True)
    if proc.returncode != 0:
        raise BenchError(f"{shlex.join(cmd)} exited with {proc.returncode}: {proc.stderr[-300:]!r}")
    lines = proc.stdout.decode().splitlines()
    jobs = [line for line in lines if JOB_LINE.match(line)]
    unknown = sum(1 for line in jobs if line.rstrip().endswith("--"))
    return len(lines), len(jobs), unknown


@dataclass
class Timing:
    name: str
    runs: list[float]
    note: str = ""
    lines: int | None = None
    job_lines: int | None = None
    ok: bool = True

    @property
    def median_ms(self) -> float:
        return statistics.median(self.runs) * 1000

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "median_ms": round(self.median_ms, 2),
            "runs_ms": [round(r * 1000, 2) for r in self.runs],
            "note": self.note,
            "lines": self.lines,
            "job_lines": self.job_lines,
            "ok": self.ok,
        }


# -- one case ----------------------------------------------------------------------


def nearest_rank(sorted_values: list[float], q: float) -> float:
    """The q-quantile by nearest rank (p99 of 2,000 values is the 1,980th smallest)."""
    k = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[k - 1]


@dataclass
class CaseResult:
    policy: str
    sync: str
    client: str
    submissions: int = 0
    throughput: float = 0.0
    p50_ms: float = 0.0
    p90_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    mean_ms: float = 0.0
    client_cpu_ms: float = 0.0
    daemon_cpu_ms: float = 0.0
    lost: list[str] = field(default_factory=list)
    listed_after_measure: int = 0
    fill_jobs: int = 0
    fill_seconds: float = 0.0
    setup_seconds: float = 0.0
    timings: list[Timing] = field(default_factory=list)
    qstat_missing: bool = False
    rss_mb: float = 0.0
    hwm_mb: float = 0.0
    stop_status: int | None = None
    stop_seconds: float = 0.0
    log_errors: int = 0
    idle_cpu: float = 0.0
    start_seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    load_before: tuple[float, float, float] = (0.0, 0.0, 0.0)
    window: tuple[float, float] = (0.0, 0.0)  # the measured part, seconds since the epoch
    gc: dict[str, Any] = field(default_factory=dict)  # --gc-trace: the daemon's GC pauses
    sources: dict[str, str] = field(default_factory=dict)  # source_stamp() at the start
    host_ms: float = 0.0  # host_speed_ms() at the start

    def timing(self, name: str) -> Timing | None:
        return next((t for t in self.timings if t.name == name), None)

    def verdicts(self, stop_timeout: float) -> dict[str, bool | None]:
        qstat = self.timing("qstat")
        return {
            "nothing lost": not self.lost,
            f"p99 < {TARGET_P99_MS:g} ms": self.p99_ms < TARGET_P99_MS,
            f"qstat < {TARGET_QSTAT_MS:g} ms": (
                None if qstat is None else qstat.ok and qstat.median_ms < TARGET_QSTAT_MS
            ),
            "stops cleanly": self.stop_status == 0 and self.stop_seconds < stop_timeout,
        }


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_case(args: argparse.Namespace, policy: str, sync: str, workdir: Path) -> CaseResult:
    res = CaseResult(policy, sync, args.client, load_before=os.getloadavg())
    res.sources = source_stamp()
    res.host_ms = host_speed_ms()
    prefix = list(args.daemon_prefix)
    env = None
    gc_path = workdir / "gc.json"
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
        out = args.profile / f"daemon-{policy}-{sync}.prof"
        prefix = [sys.executable, "-m", "cProfile", "-o", str(out), "-m", "batchd.cli"]
    elif args.gc_trace or args.gc_freeze:
        prefix = [sys.executable, "-c", GC_TRACE]
        env = dict(os.environ, BATCHD_BENCH_GC=str(gc_path))
        if args.gc_freeze:
            env["BATCHD_BENCH_FREEZE"] = "1"
    daemon = Daemon(prefix, workdir, site_config(policy, workdir), sync, args.speed, env)
    tag = f"[{policy}, sync {sync}]"
    try:
        res.start_seconds = daemon.start()
        log(f"{tag} daemon {daemon.pid} answers /healthz after {res.start_seconds:.2f} s")
        time.sleep(IDLE_SETTLE)  # past the first heartbeat of the scheduling loop
        before = daemon.cpu_seconds()
        time.sleep(args.idle_probe)
        res.idle_cpu = (daemon.cpu_seconds() - before) / args.idle_probe
        status, data = call_json(daemon.sock, "GET", "/scheduler")
        if status != 200 or data.get("policy") != policy:
            raise BenchError(f"GET /scheduler: {status}, policy {data.get('policy')!r}")
        big = {"name": "whole", "nodes": MACHINE_NODES, "walltime": BIG_WALLTIME}
        status, data = call_json(daemon.sock, "POST", "/jobs", big)
        if status != 201 or data.get("state") != "R":
            raise BenchError(f"the 96-node job: {status} {data}")
        expected = [data["id"]]

        total = args.list_jobs - 1
        bodies = job_bodies(total, args.seed)
        setup, measured = bodies[: args.setup_jobs], bodies[args.setup_jobs :]
        measured, rest = measured[: args.submissions], measured[args.submissions :]

        began = time.perf_counter()
        done = submit(daemon, setup, args.setup_clients)
        res.setup_seconds = time.perf_counter() - began
        if done.failures():
            raise BenchError(f"setup submissions failed: {done.failures()[:3]}")
        expected += done.ids()
        log(f"{tag} {len(setup)} jobs queued in {res.setup_seconds:.1f} s (setup)")

        daemon.alive()
        window = time.time()
        sub = submit(daemon, measured, args.clients, args.client)
        res.window = (window, time.time())
        lat = sorted(r[0] * 1000 for r in sub.results)
        n = len(sub.results)
        res.submissions = n
        res.throughput = n / sub.wall
        res.p50_ms = nearest_rank(lat, 0.50)
        res.p90_ms = nearest_rank(lat, 0.90)
        res.p99_ms = nearest_rank(lat, 0.99)
        res.max_ms = lat[-1]
        res.mean_ms = statistics.fmean(lat)
        res.client_cpu_ms = sub.client_cpu * 1000 / n
        res.daemon_cpu_ms = sub.daemon_cpu * 1000 / n
        res.latencies_ms = [round(r[0] * 1000, 3) for r in sub.results]
        ids = sub.ids()
        res.lost += sub.failures()
        if len(set(ids)) != len(ids):
            res.lost.append(f"{len(ids) - len(set(ids))} ids answered twice")
        if set(ids) & set(expected):
            res.lost.append("ids answered again that earlier jobs had")
        expected += ids
        listed = list_ids(daemon.sock)
        res.listed_after_measure = len(listed)
        want = 1 + len(setup) + len(measured)
        if len(listed) != want:
            res.lost.append(f"GET /jobs lists {len(listed)} jobs, expected {want}")
        if len(set(listed)) != len(listed):
            res.lost.append("GET /jobs lists a job twice")
        missing = set(expected) - set(listed)
        if missing:
            res.lost.append(f"{len(missing)} acknowledged jobs missing from GET /jobs")
        log(
            f"{tag} measured {n} submissions: {res.throughput:.0f}/s, p50 {res.p50_ms:.1f} ms, "
            f"p99 {res.p99_ms:.1f} ms; {'nothing lost' if not res.lost else res.lost[:3]}"
        )

        began = time.perf_counter()
        done = submit(daemon, rest, args.setup_clients)
        res.fill_seconds = time.perf_counter() - began
        res.fill_jobs = len(rest)
        if done.failures():
            raise BenchError(f"fill submissions failed: {done.failures()[:3]}")
        expected += done.ids()
        log(f"{tag} {len(rest)} more jobs queued in {res.fill_seconds:.1f} s")
        status, server = call_json(daemon.sock, "GET", "/server")
        counts = server["jobs"]
        if counts["R"] != 1 or counts["Q"] != args.list_jobs - 1:
            raise BenchError(f"expected 1 running and {args.list_jobs - 1} queued, got {counts}")

        res.timings = time_listings(args, daemon, res)
        mem = daemon.memory_mb()
        res.rss_mb, res.hwm_mb = mem.get("VmRSS", 0.0), mem.get("VmHWM", 0.0)
    finally:
        res.stop_status, res.stop_seconds = daemon.stop(args.stop_timeout)
        res.log_errors = daemon.log_errors()
    if env is not None:
        res.gc = gc_summary(gc_path, res.window)
    log(
        f"{tag} SIGTERM: exit status {res.stop_status} after {res.stop_seconds:.2f} s; "
        f"RSS {res.rss_mb:.0f} MB"
    )
    return res


def time_listings(args: argparse.Namespace, daemon: Daemon, res: CaseResult) -> list[Timing]:
    sock, repeat, jobs = daemon.sock, args.repeat, args.list_jobs
    pycache = daemon.state.parent / "pycache"
    out: list[Timing] = []
    runs, size = [], 0
    for _ in range(repeat):
        spent, size = time_raw_get(sock)
        runs.append(spent)
    out.append(Timing("GET /jobs", runs, f"{size / 1e6:.1f} MB of JSON"))
    runs, lines = [], 0
    for _ in range(repeat):
        spent, lines = time_get_parse(sock)
        runs.append(spent)
    out.append(Timing("GET /jobs + parse", runs, "json.loads + table in-process", lines, lines - 2))
    out[-1].ok = lines == jobs + 2

    qstat = find_qstat(args.qstat)
    if qstat is None:
        res.qstat_missing = True
        log(
            "qstat: no qstat console script (looked in "
            f"{VENV_BIN} and $PATH); skipping the qstat timings. 'GET /jobs + parse' "
            "stands in for it; give a command with --qstat to time another client."
        )
        return out
    # Bytecode as an installed client has it: written by the first (untimed) run to a
    # private cache, even where PYTHONDONTWRITEBYTECODE is set, and not into the tree.
    env = dict(os.environ, BATCHD_SOCKET=sock, PYTHONPYCACHEPREFIX=str(pycache))
    for name in ("BATCHD_URL", "PYTHONDONTWRITEBYTECODE"):
        env.pop(name, None)
    for name, extra, headers in (("qstat", [], 2), ("qstat -T", ["-T"], None)):
        cmd = qstat + extra
        lines, job_lines, unknown = count_lines(cmd, env)
        runs = [time_command(cmd, env) for _ in range(repeat)]
        t = Timing(name, runs, shlex.join(cmd), lines, job_lines)
        t.ok = job_lines == jobs and (headers is None or lines == jobs + headers)
        if name == "qstat -T":
            t.note += f"; {unknown} jobs without an estimate"
            t.ok = t.ok and unknown == 0
        if not t.ok:
            log(f"{name}: {lines} lines, {job_lines} job lines; expected {jobs} jobs")
        out.append(t)
    time_command(qstat + ["-B"], env)  # untimed, like the line counts above
    runs = [time_command(qstat + ["-B"], env) for _ in range(repeat)]
    out.append(Timing("qstat -B", runs, "start-up + GET /server"))
    return out


def host_speed_ms() -> float:
    """Median ms of json.dumps + json.loads of a fixed 10,000-row document in this process.

    The machine is shared and virtual; when this figure moves between runs, so does
    everything else, and the runs are not comparable.
    """
    row = {"id": "1.hpcline", "name": "bench", "state": "Q", "nodes": 8, "walltime": 3600}
    doc = {"jobs": [dict(row, seq=i, variables={"BATCHD_RUNTIME": "600"}) for i in range(10_000)]}
    runs = []
    for _ in range(5):
        began = time.perf_counter()
        json.loads(json.dumps(doc))
        runs.append(time.perf_counter() - began)
    return statistics.median(runs) * 1000


def source_stamp() -> dict[str, str]:
    """A digest of the daemon's and the client's sources, to tell trees apart."""
    import hashlib

    digest = hashlib.sha256()
    newest, newest_file = 0.0, ""
    for base in (ROOT / "daemon", ROOT / "client"):
        for path in sorted(base.rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
            mtime = path.stat().st_mtime
            if mtime > newest:
                newest, newest_file = mtime, str(path.relative_to(ROOT))
    return {
        "sha256": digest.hexdigest()[:16],
        "newest": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(newest)),
        "newest_file": newest_file,
    }


# -- output ------------------------------------------------------------------------


def machine_info() -> dict[str, Any]:
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
    }
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    with contextlib.suppress(ImportError):
        import aiohttp

        info["aiohttp"] = aiohttp.__version__
    return info


def table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        lines.append("| " + " | ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) + " |")
    return "\n".join(lines)


def report(results: list[CaseResult], args: argparse.Namespace) -> str:
    sub_rows = [
        [
            r.policy,
            r.sync,
            f"{r.submissions}",
            f"{r.throughput:.0f}",
            f"{r.p50_ms:.1f}",
            f"{r.p90_ms:.1f}",
            f"{r.p99_ms:.1f}",
            f"{r.max_ms:.1f}",
            f"{r.daemon_cpu_ms:.2f}",
            f"{r.client_cpu_ms:.2f}",
            f"{r.idle_cpu * 100:.0f}%",
            "none" if not r.lost else f"{len(r.lost)} problems",
        ]
        for r in results
    ]
    head = ["policy", "sync", "subs", "subs/s", "p50 ms", "p90 ms", "p99 ms", "max ms"]
    head += ["daemon CPU ms/req", "client CPU ms/req", "idle CPU", "lost"]
    parts = [
        f"Submissions: {args.submissions} from {args.clients} concurrent clients "
        f"({args.client}), {args.setup_jobs} jobs already queued behind a 96-node job",
        table(head, sub_rows),
    ]
    names = ["GET /jobs", "GET /jobs + parse", "qstat", "qstat -T", "qstat -B"]
    list_rows = []
    for r in results:
        row = [r.policy, r.sync]
        for name in names:
            t = r.timing(name)
            row.append("-" if t is None else f"{t.median_ms:.0f}" + ("" if t.ok else " (!)"))
        fill_rate = r.fill_jobs / r.fill_seconds if r.fill_seconds else 0.0
        row += [f"{fill_rate:.0f}", f"{r.rss_mb:.0f}", f"{r.hwm_mb:.0f}"]
        row += [f"{r.stop_status} in {r.stop_seconds:.2f} s", str(r.log_errors)]
        row.append(f"{r.host_ms:.0f}")
        list_rows.append(row)
    head = ["policy", "sync"] + [f"{n} ms" for n in names]
    head += ["fill subs/s", "RSS MB", "peak MB", "SIGTERM", "log errors", "host ms"]
    parts += [
        "",
        f"Listing {args.list_jobs} jobs (median of {args.repeat}); fill = submissions from "
        f"{args.setup_jobs + args.submissions + 1} to {args.list_jobs} jobs ({args.setup_clients} "
        "clients)",
        table(head, list_rows),
    ]
    parts.append(
        "host ms: json.dumps + json.loads of a fixed 10,000-row document in the benchmark's "
        "process before the case; a different figure means a faster or slower machine"
    )
    if any(r.qstat_missing for r in results):
        parts.append(
            "qstat: the console script is missing; 'GET /jobs + parse' (json.loads and a "
            "minimal table in this process) stands in for it."
        )
    stamps = {r.sources.get("sha256") for r in results}
    if len(stamps) > 1:
        parts.append(
            "warning: the daemon's or client's sources changed between cases; the figures "
            "come from different trees (see 'sources' in --json)"
        )
    elif results:
        src = results[0].sources
        parts.append(
            f"sources: {src['sha256']} (newest file {src['newest_file']}, {src['newest']})"
        )
    parts.append("")
    for r in results:
        verdicts = r.verdicts(args.stop_timeout)
        text = ", ".join(
            f"{k}: {'not measured' if v is None else 'PASS' if v else 'MISS'}"
            for k, v in verdicts.items()
        )
        parts.append(f"targets [{r.policy}, sync {r.sync}]: {text}")
        if r.gc:
            text = "; ".join(
                f"{gen}: {g['count']} pauses, {g['total_ms']:.1f} ms, max {g['max_ms']:.1f} ms"
                for gen, g in r.gc.items()
            )
            freeze = " (gc.freeze() after imports)" if args.gc_freeze else ""
            parts.append(f"  daemon GC in the measured part{freeze}: {text}")
        for problem in r.lost[:5]:
            parts.append(f"  lost: {problem}")
    return "\n".join(parts)


def to_json(results: list[CaseResult], args: argparse.Namespace) -> dict[str, Any]:
    cases = []
    for r in results:
        d = {k: v for k, v in r.__dict__.items() if k not in ("timings",)}
        d["timings"] = [t.as_dict() for t in r.timings]
        d["targets"] = r.verdicts(args.stop_timeout)
        cases.append(d)
    opts = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"machine": machine_info(), "options": opts, "argv": sys.argv, "cases": cases}


# -- command line ------------------------------------------------------------------


def _names(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected NAME[,NAME...]")
    return names


def _syncs(text: str) -> list[str]:
    names = _names(text)
    bad = [n for n in names if n not in ("full", "normal")]
    if bad:
        raise argparse.ArgumentTypeError(f"sync modes are full and normal, not {bad[0]!r}")
    return names


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", type=_names, default=["fcfs-easy"], help="policies, comma list")
    ap.add_argument("--sync", type=_syncs, default=["full", "normal"], help="full,normal")
    ap.add_argument("--client", choices=("threads", "aiohttp"), default="threads")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients, measured part")
    ap.add_argument("--submissions", type=int, default=2000, help="measured submissions")
    ap.add_argument("--setup-jobs", type=int, default=1000, help="jobs queued before (untimed)")
    ap.add_argument("--setup-clients", type=int, default=4, help="clients of the untimed parts")
    ap.add_argument("--list-jobs", type=int, default=10_000, help="jobs listed by qstat")
    ap.add_argument("--repeat", type=int, default=5, help="timed listings (median)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the job shapes")
    ap.add_argument("--speed", type=float, default=1.0, help="the daemon's clock speed")
    ap.add_argument("--qstat", metavar="CMD", help="qstat command (default: the console script)")
    ap.add_argument(
        "--daemon",
        metavar="CMD",
        help="command that takes 'serve ...' (default: the venv's batchd)",
    )
    ap.add_argument("--profile", type=Path, metavar="DIR", help="run the daemon under cProfile")
    ap.add_argument(
        "--gc-trace", action="store_true", help="record the daemon's garbage-collector pauses"
    )
    ap.add_argument(
        "--gc-freeze",
        action="store_true",
        help="what-if: the daemon calls gc.freeze() after its imports (implies --gc-trace)",
    )
    ap.add_argument("--tmp", type=Path, help="directory for the socket, state and logs")
    ap.add_argument("--keep", action="store_true", help="keep the state files and logs")
    ap.add_argument(
        "--idle-probe", type=float, default=2.0, help="seconds the idle daemon's CPU is measured"
    )
    ap.add_argument("--stop-timeout", type=float, default=5.0, help="seconds SIGTERM may take")
    ap.add_argument("--json", type=Path, help="save the results here")
    ap.add_argument("--check", action="store_true", help="exit status 1 when a target is missed")
    args = ap.parse_args(argv)
    if args.list_jobs < 1 + args.setup_jobs + args.submissions:
        ap.error("--list-jobs must be at least 1 + --setup-jobs + --submissions")
    if min(args.clients, args.setup_clients, args.submissions, args.repeat) < 1:
        ap.error("--clients, --setup-clients, --submissions and --repeat must be positive")
    if args.profile is not None and (args.gc_trace or args.gc_freeze):
        ap.error("--profile cannot be combined with --gc-trace or --gc-freeze")
    if args.daemon and (args.profile is not None or args.gc_trace or args.gc_freeze):
        ap.error("--daemon cannot be combined with --profile, --gc-trace or --gc-freeze")
    args.daemon_prefix = shlex.split(args.daemon) if args.daemon else [str(VENV_BIN / "batchd")]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from batchd.sched.registry import PolicyError, get_spec

    for name in args.policy:
        try:
            get_spec(name)
        except PolicyError as exc:
            print(f"bench/api.py: {exc}", file=sys.stderr)
            return 2
    info = machine_info()
    log(
        f"machine: {info.get('cpu', '?')}, {info['cores']} cores; Python {info['python']}; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    base = Path(tempfile.mkdtemp(prefix="bapi-", dir=args.tmp))
    results: list[CaseResult] = []
    try:
        for policy in args.policy:
            for sync in args.sync:
                workdir = base / f"{policy}-{sync}"
                workdir.mkdir()
                try:
                    results.append(run_case(args, policy, sync, workdir))
                except BenchError as exc:
                    log(f"[{policy}, sync {sync}] failed: {exc}")
                    return 1
    finally:
        if args.keep:
            log(f"state files and logs kept in {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    print(report(results, args))
    if args.profile is not None:
        print(f"\ncProfile output of the daemon in {args.profile} (times inflated by profiling)")
    if args.json:
        args.json.write_text(json.dumps(to_json(results, args), indent=1) + "\n")
        print(f"results saved to {args.json}")
    missed = any(v is False for r in results for v in r.verdicts(args.stop_timeout).values())
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
