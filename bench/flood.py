"""A flood of half-sent requests against a live daemon, and a manager's latency meanwhile.

A fresh ``batchd serve`` (``conf/hpcline96.toml``, its default ``[connections]``
limits, ``--nofile`` file descriptors through ``prlimit``) listens on a socket in a
temporary directory and on a loopback TCP port. For ``--seconds``, a flooder process
opens TCP connections as fast as it can, each sending a request head without its
end, from ``--addresses`` loopback addresses; it keeps what the daemon holds open and
closes what it refuses. Meanwhile the manager (this process's user, root or the
daemon's) sends ``GET /jobs`` over the Unix socket every ``--interval`` seconds, and
once a second runs ``qstat`` as a fresh process.

Printed: the connections the flooder opened and the daemon refused per second (its
``batchd_connections_refused_total``), the lines the daemon logged during the flood,
and the manager's latencies (median, p99, most) before and during the flood.
``--daemon-path DIR`` runs the daemon of another checkout (its ``daemon`` folder).

    .venv/bin/python bench/flood.py                       # 10 s (about 20 s in all)
    .venv/bin/python bench/flood.py --seconds 30 --nofile 4096 --json out.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from batchclient.unixconn import UnixHTTPConnection

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "conf" / "hpcline96.toml"
HALF_HEAD = b"GET /jobs HTTP/1.1\r\nHost: batchd\r\n"

FLOODER = """
import socket, sys, time
port, seconds, addresses = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
head = sys.argv[4].encode().decode("unicode_escape").encode()
held, opened, failed, i = [], 0, 0, 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    s = socket.socket()
    s.settimeout(1.0)
    try:
        s.bind((f"127.0.0.{2 + i % addresses}", 0))
        s.connect(("127.0.0.1", port))
        s.sendall(head)
        opened += 1
    except OSError:
        failed += 1
        s.close()
        continue
    finally:
        i += 1
    held.append(s)  # refused or not: the daemon's side is what counts
print(opened, failed, flush=True)
"""


def call(sock: Path, path: str) -> tuple[int, bytes]:
    conn = UnixHTTPConnection(str(sock), timeout=30.0)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def metric(sock: Path, name: str) -> float:
    """The sum of a metric's series, NaN where the daemon does not export it."""
    status, body = call(sock, "/metrics")
    found = re.findall(rf"^{name}(?:{{.*}})? (\S+)$", body.decode(), re.MULTILINE)
    return sum(float(v) for v in found) if status == 200 and found else float("nan")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(sock: Path) -> float:
    began = time.perf_counter()
    try:
        status, _ = call(sock, "/jobs")
    except OSError:
        return float("inf")
    return time.perf_counter() - began if status == 200 else float("inf")


def timed_qstat(sock: Path) -> float:
    env = dict(os.environ, BATCHD_SOCKET=str(sock))
    began = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "batchclient.qstat"], env=env, capture_output=True, timeout=60
    )
    return time.perf_counter() - began if out.returncode == 0 else float("inf")


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return {
        "n": len(ordered),
        "median_ms": statistics.median(ordered) * 1000,
        "p99_ms": p99 * 1000,
        "max_ms": ordered[-1] * 1000,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--nofile", type=int, default=1024)
    parser.add_argument("--addresses", type=int, default=1)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--daemon-path", type=Path, default=ROOT / "daemon")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if shutil.which("prlimit") is None:
        print("needs prlimit (util-linux)", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="batchd-flood-"))
    sock = tmp / "batchd.sock"
    tokens = tmp / "tokens"
    tokens.write_text(f"{os.environ.get('USER', 'root')}:{'x' * 32}\n")
    tokens.chmod(0o600)
    port = free_port()
    env = dict(os.environ, PYTHONPATH=f"{args.daemon_path}:{ROOT / 'client'}")
    log = tmp / "daemon.log"
    argv = [
        "prlimit", f"--nofile={args.nofile}:{args.nofile}", "--",
        sys.executable, "-m", "batchd.cli", "serve", "--config", str(CONFIG),
        "--socket", str(sock), "--state", str(tmp / "state.db"),
        "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens),
    ]  # fmt: skip
    with open(log, "wb") as out:
        daemon = subprocess.Popen(argv, stdout=out, stderr=out, env=env, cwd=tmp)
    result: dict[str, Any] = {"nofile": args.nofile, "seconds": args.seconds}
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError):
                if call(sock, "/healthz")[0] == 200:
                    break
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise SystemExit(f"the daemon did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        timed(sock)  # the first request warms the daemon up
        before = [timed(sock) for _ in range(50)]
        qstat_before = [timed_qstat(sock) for _ in range(5)]
        refused_before = metric(sock, "batchd_connections_refused_total")
        cpu_before = cpu_seconds(daemon.pid)
        lines_before = len(log.read_bytes().splitlines())
        head = HALF_HEAD.decode().encode("unicode_escape").decode()
        flooder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                FLOODER,
                str(port),
                str(args.seconds),
                str(args.addresses),
                head,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        during: list[float] = []
        qstat_during: list[float] = []
        began = time.monotonic()
        next_qstat = began + 1.0
        while flooder.poll() is None:
            during.append(timed(sock))
            if time.monotonic() >= next_qstat:
                qstat_during.append(timed_qstat(sock))
                next_qstat += 1.0
            time.sleep(args.interval)
        elapsed = time.monotonic() - began
        cpu = cpu_seconds(daemon.pid) - cpu_before
        opened, failed = (int(x) for x in (flooder.stdout or [""]).read().split()[:2])
        refused = metric(sock, "batchd_connections_refused_total") - refused_before
        result.update(
            opened_per_second=opened / elapsed,
            connect_failures=failed,
            refused_per_second=refused / elapsed,
            open_at_end=metric(sock, "batchd_connections_open"),
            daemon_cpu_share=cpu / elapsed,
            log_lines_during_flood=len(log.read_bytes().splitlines()) - lines_before,
            get_jobs_before=summary(before),
            get_jobs_during=summary(during),
            qstat_before=summary(qstat_before),
            qstat_during=summary(qstat_during) if qstat_during else None,
        )
    finally:
        daemon.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            daemon.wait(15)
        if daemon.poll() is None:
            daemon.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
