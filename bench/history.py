"""Memory of a live daemon across a whole trace replay, and ``qstat -x`` of all its jobs.

A fresh ``batchd serve --speed S --replay TRACE`` (default: CTC-SP2 at 10^6 emulated
seconds per wall second on a 430-node copy of ``conf/hpcline96.toml``) runs on a
temporary socket and state file. Its config keeps finished jobs in the history for
``--history`` (default 400 days, longer than the trace, so every job is still there
at the end). While the replay runs, the daemon's ``VmRSS`` is sampled every
``--sample`` wall seconds with the jobs finished so far (``GET /server``). When every
job has finished, ``qstat -x`` (and ``qstat -x -F json``) runs ``--repeat`` times as a
subprocess with its output to ``/dev/null``: its wall time and its peak RSS
(``ru_maxrss`` of ``wait4``); one more run counts the job lines.

Figures: RSS at start, at the end, its peak, and its growth over the second half of
the replay (MB per 10,000 finished jobs, least squares over the samples); qstat's
median and best wall time and its peak RSS. Targets: RSS at the end under 250 MB and
flat over the second half (under 2 MB per 10,000 jobs), ``qstat -x`` under 1 s with
the client under 100 MB; ``--check`` exits 1 when one is missed.

    .venv/bin/python bench/history.py                        # CTC-SP2, about a minute
    .venv/bin/python bench/history.py --trace KTH-SP2-1996-2.1-cln.swf.gz --nodes 100
    .venv/bin/python bench/history.py --history 0            # the config without the key
    .venv/bin/python bench/history.py --json /tmp/history.json --check
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from api import UnixConnection  # bench/api.py, beside this script

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "conf" / "hpcline96.toml"
TRACES = ROOT.parent / "shared" / "traces"
TARGET_RSS_MB = 250.0
TARGET_SLOPE_MB = 2.0  # per 10,000 finished jobs over the second half
TARGET_QSTAT_S = 1.0
TARGET_QSTAT_MB = 100.0
JOB_LINE = re.compile(r"^\d+\.\S*\s")


def get_json(sock: str, path: str) -> Any:
    conn = UnixConnection(sock)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        raw = response.read()
        if response.status != 200:
            raise RuntimeError(f"GET {path}: HTTP {response.status} {raw[:200]!r}")
        return json.loads(raw)
    finally:
        conn.close()


def site_config(workdir: Path, nodes: int, policy: str, history: str | None) -> Path:
    """hpcline96.toml with the machine's nodes, the policy and the history duration."""
    text = CONFIG.read_text()
    text = re.sub(r"(?m)^nodes = \d+", f"nodes = {nodes}", text, count=1)
    text = re.sub(r'(?m)^policy = "[^"]*"', f'policy = "{policy}"', text, count=1)
    text = re.sub(r'(?m)^max_walltime = "[^"]*"', 'max_walltime = "1000:00:00"', text)
    text = re.sub(r"(?m)^job_history_duration = .*\n", "", text)
    if history is not None:
        text = text.replace("[server]\n", f'[server]\njob_history_duration = "{history}"\n', 1)
    path = workdir / "site.toml"
    path.write_text(text)
    return path


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class Sample:
    wall: float
    finished: int
    rss_mb: float


@dataclass
class Run:
    trace: str
    nodes: int
    speed: float
    policy: str
    history: str | None
    jobs: int = 0
    replay_wall: float = 0.0
    samples: list[Sample] = field(default_factory=list)
    qstat: dict[str, dict[str, Any]] = field(default_factory=dict)

    def second_half_slope(self) -> float:
        """MB per 10,000 finished jobs over the samples of the second half (least squares)."""
        half = [s for s in self.samples if s.finished >= self.jobs / 2]
        if len(half) < 3:
            return float("nan")
        xs = [s.finished / 10_000 for s in half]
        ys = [s.rss_mb for s in half]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        if sxx == 0:
            return float("nan")
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx


def replay(args: argparse.Namespace, workdir: Path, env: dict[str, str]) -> tuple[Run, Any]:
    history = None if args.history == "0" else args.history
    config = site_config(workdir, args.nodes, args.policy, history)
    sock = str(workdir / "batchd.sock")
    trace = str(Path(args.trace) if Path(args.trace).is_file() else args.traces / args.trace)
    cmd = [
        sys.executable, "-m", "batchd.cli", "serve", "--config", str(config),
        "--socket", sock, "--state", str(workdir / "state.db"), "--sync", args.sync,
        "--speed", f"{args.speed:g}", "--start", "trace", "--replay", trace,
        "--log-level", "warning",
    ]  # fmt: skip
    log = open(workdir / "daemon.log", "wb")  # noqa: SIM115 - closed with the daemon
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env)
    run = Run(Path(trace).name, args.nodes, args.speed, args.policy, history)
    began = time.perf_counter()
    while True:
        if proc.poll() is not None:
            tail = (workdir / "daemon.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the daemon exited with {proc.returncode}: {tail}")
        with contextlib.suppress(OSError, http.client.HTTPException):
            server = get_json(sock, "/server")
            break
        if time.perf_counter() - began > 120:
            raise RuntimeError("the daemon did not answer within 120 s")
        time.sleep(0.05)
    began = time.perf_counter()
    while True:
        server = get_json(sock, "/server")
        counts = server["jobs"]
        replay_state = server["replay"]
        run.jobs = replay_state["jobs"]
        finished = counts.get("F", 0)
        run.samples.append(Sample(time.perf_counter() - began, finished, rss_mb(proc.pid)))
        unfinished = sum(n for k, n in counts.items() if k != "F")
        if replay_state["cursor"] >= run.jobs and unfinished == 0:
            break
        if time.perf_counter() - began > args.timeout:
            raise RuntimeError(f"the replay did not finish within {args.timeout} s")
        time.sleep(args.sample)
    run.replay_wall = time.perf_counter() - began
    return run, (proc, log, sock)


def qstat(
    args: argparse.Namespace, sock: str, workdir: Path, env: dict[str, str], extra: list[str]
) -> Any:
    """Wall time and peak RSS of ``qstat -x EXTRA``, and the jobs it printed.

    A child's ``ru_maxrss`` is at least its parent's peak RSS when it was spawned (Linux
    records the old address space's peak at exec), so this process never reads the
    output into memory: it stays small, and ``floor_mb`` says how small.
    """
    cmd = [sys.executable, "-m", "batchclient.qstat", "-x", *extra]
    env = dict(env, BATCHD_SOCKET=sock)
    out = workdir / "qstat.out"
    with open(out, "wb") as f:
        subprocess.run(cmd, env=env, stdout=f, check=True)
    line = re.compile(r'^      "id": ') if extra else JOB_LINE
    with open(out, encoding="utf-8") as f:
        count = sum(1 for text in f if line.match(text))
    out.unlink()
    walls, peaks = [], []
    for _ in range(args.repeat):
        with open(os.devnull, "wb") as devnull:
            began = time.perf_counter()
            proc = subprocess.Popen(cmd, env=env, stdout=devnull)
            _, status, usage = os.wait4(proc.pid, 0)
            walls.append(time.perf_counter() - began)
        if status != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited with {status}")
        peaks.append(usage.ru_maxrss / 1024)
    return {
        "jobs": count,
        "median_s": statistics.median(walls),
        "best_s": min(walls),
        "peak_mb": max(peaks),
        "floor_mb": own_peak_mb(),
        "walls": walls,
    }


def own_peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def report(run: Run) -> None:
    first, last = run.samples[0], run.samples[-1]
    peak = max(s.rss_mb for s in run.samples)
    print(f"{run.trace} on {run.nodes} nodes, {run.policy}, x{run.speed:g}, history {run.history}")
    print(f"  jobs {run.jobs:,}, replay {run.replay_wall:.1f} s wall, {len(run.samples)} samples")
    print("  finished   RSS MB")
    step = max(1, len(run.samples) // 12)
    for s in run.samples[::step] + ([last] if len(run.samples) % step != 1 else []):
        print(f"  {s.finished:>8,}  {s.rss_mb:7.1f}")
    slope = run.second_half_slope()
    print(
        f"  RSS start {first.rss_mb:.1f} MB, end {last.rss_mb:.1f} MB, peak {peak:.1f} MB; "
        f"second half {slope:+.2f} MB per 10,000 jobs"
    )
    for name, q in run.qstat.items():
        print(
            f"  {name}: {q['jobs']:,} jobs, median {q['median_s']:.3f} s, "
            f"best {q['best_s']:.3f} s, peak {q['peak_mb']:.1f} MB "
            f"(this process: {q['floor_mb']:.1f} MB)"
        )


def missed(run: Run) -> list[str]:
    out = []
    last = run.samples[-1]
    if last.rss_mb >= TARGET_RSS_MB:
        out.append(f"RSS at the end {last.rss_mb:.1f} MB >= {TARGET_RSS_MB:g}")
    slope = run.second_half_slope()
    if not slope < TARGET_SLOPE_MB:
        out.append(f"second-half growth {slope:.2f} MB per 10,000 jobs >= {TARGET_SLOPE_MB:g}")
    q = run.qstat.get("qstat -x")
    if q is not None and q["median_s"] >= TARGET_QSTAT_S:
        out.append(f"qstat -x {q['median_s']:.3f} s >= {TARGET_QSTAT_S:g}")
    if q is not None and q["peak_mb"] >= TARGET_QSTAT_MB:
        out.append(f"qstat -x peak {q['peak_mb']:.1f} MB >= {TARGET_QSTAT_MB:g}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="CTC-SP2-1996-3.1-cln.swf.gz")
    ap.add_argument("--traces", type=Path, default=TRACES, help="directory of the traces")
    ap.add_argument("--nodes", type=int, default=430)
    ap.add_argument("--policy", default="fcfs-easy")
    ap.add_argument("--speed", type=float, default=1e6)
    ap.add_argument("--sync", default="normal", choices=["full", "normal"])
    ap.add_argument(
        "--history", default="9600:00:00", help="job_history_duration; 0 leaves the key out"
    )
    ap.add_argument("--sample", type=float, default=0.5, help="wall seconds between samples")
    ap.add_argument("--repeat", type=int, default=5, help="qstat runs (median)")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--json", type=Path, help="write every figure and sample here")
    ap.add_argument("--keep", action="store_true", help="keep the state file and the log")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = ap.parse_args(argv)
    trace = Path(args.trace) if Path(args.trace).is_file() else args.traces / args.trace
    if not trace.is_file():
        print(f"history.py: no trace {trace} (give --traces DIR)", file=sys.stderr)
        return 2
    env = dict(os.environ)
    tree = f"{ROOT / 'daemon'}{os.pathsep}{ROOT / 'client'}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (tree, env.get("PYTHONPATH")) if p)
    workdir = Path(tempfile.mkdtemp(prefix="batchd-history-"))
    proc: subprocess.Popen[bytes] | None = None
    try:
        run, (proc, log, sock) = replay(args, workdir, env)
        run.qstat["qstat -x"] = qstat(args, sock, workdir, env, [])
        run.qstat["qstat -x -F json"] = qstat(args, sock, workdir, env, ["-F", "json"])
        proc.terminate()
        proc.wait(30)
        log.close()
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    report(run)
    if args.json:
        doc = {
            "run": {k: v for k, v in vars(run).items() if k != "samples"},
            "samples": [vars(s) for s in run.samples],
            "slope_mb_per_10k": run.second_half_slope(),
        }
        args.json.write_text(json.dumps(doc, indent=1))
    misses = missed(run)
    for m in misses:
        print(f"  target missed: {m}")
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    sys.exit(main())
