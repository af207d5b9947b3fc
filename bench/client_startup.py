"""Start-up of the PBS commands: fresh ``qstat`` and ``qsub`` processes against an idle daemon.

A fresh ``batchd serve`` (``conf/hpcline96.toml``: emulated nodes, the real-time clock)
listens on a socket in a temporary directory, and ``--jobs`` jobs are queued so that
``qstat`` lists something. Then, ``--repeat`` times each and in turn (a burst of load
on a shared host hits all three alike), as fresh processes with ``BATCHD_SOCKET`` set
and their output to ``/dev/null``:

- ``python -c pass``: the venv's interpreter and its ``site`` (``.pth`` files, an
  editable install's import hook), the floor under any command;
- ``qstat``: the console script, one ``GET /jobs``;
- ``qsub``: the console script with a one-line script on stdin, one ``POST /jobs``.

One untimed run of each comes first (it leaves the ``.pyc`` files, as an installed
client has them: the commands run without ``PYTHONDONTWRITEBYTECODE``). Printed: the
least, median and p90 (nearest rank) wall time of each, and the median CPU time of
the process (user + system: less disturbed by other work on the host). Target: a
median under 50 ms for ``qstat`` and for ``qsub``; ``--check`` exits with status 1
when one misses it. The daemon is stopped (SIGTERM) and the directory removed at the
end.

    .venv/bin/python bench/client_startup.py                      # 30 runs each (about 6 s)
    .venv/bin/python bench/client_startup.py --repeat 100 --json out.json
    .venv/bin/python bench/client_startup.py --bin /tmp/other/bin  # another install's commands
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from batchclient.unixconn import UnixHTTPConnection

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
CONFIG = ROOT / "conf" / "hpcline96.toml"
TARGET_MS = 50.0
SCRIPT = b"sleep 1\n"  # what qsub reads on stdin (emulated: nothing runs)
QSUB_ARGS = ["-l", "walltime=01:00:00"]


class BenchError(RuntimeError):
    """The daemon or a command misbehaved: the run cannot go on."""


class Daemon:
    """``batchd serve`` on a socket and state file in ``workdir``, its log in a file."""

    def __init__(self, batchd: list[str], workdir: Path) -> None:
        self.sock = str(workdir / "batchd.sock")
        self.log_path = workdir / "daemon.log"
        self.cmd = [
            *batchd,
            "serve",
            "--config",
            str(CONFIG),
            "--socket",
            self.sock,
            "--state",
            str(workdir / "state.db"),
        ]
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        """Start it and wait until ``GET /healthz`` answers."""
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                self.cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=ROOT
            )
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"the daemon exited with {self.proc.returncode}: {self.tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
                conn = UnixHTTPConnection(str(self.sock), timeout=5.0)
                try:
                    conn.request("GET", "/healthz")
                    if conn.getresponse().status == 200:
                        return
                finally:
                    conn.close()
            if time.monotonic() > deadline:
                raise BenchError(f"/healthz did not answer within {timeout:g} s: {self.tail()}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def tail(self, lines: int = 5) -> str:
        try:
            return " | ".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return "(no log)"


class Command:
    """One command line to time, with what it reads on stdin."""

    def __init__(self, label: str, argv: list[str], stdin: bytes = b"") -> None:
        self.label = label
        self.argv = argv
        self.stdin = stdin
        self.wall_ms: list[float] = []
        self.cpu_ms: list[float] = []

    def run(self, env: dict[str, str], cwd: Path, timed: bool = True) -> bytes:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.perf_counter()
        done = subprocess.run(
            self.argv,
            input=self.stdin,
            stdout=subprocess.DEVNULL if timed else subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        wall = time.perf_counter() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise BenchError(
                f"{self.label}: exit status {done.returncode}: {done.stderr.decode().strip()}"
            )
        if timed:
            self.wall_ms.append(wall * 1000)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            self.cpu_ms.append(cpu * 1000)
        return done.stdout or b""

    def figures(self) -> dict[str, float]:
        ranked = sorted(self.wall_ms)
        return {
            "min_ms": ranked[0],
            "median_ms": statistics.median(ranked),
            "p90_ms": ranked[math.ceil(0.9 * len(ranked)) - 1],
            "cpu_median_ms": statistics.median(self.cpu_ms),
        }


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=30, help="timed runs of each command (30)")
    ap.add_argument("--jobs", type=int, default=5, help="jobs queued before the timed runs (5)")
    ap.add_argument(
        "--bin",
        type=Path,
        default=VENV_BIN,
        help="the directory of the console scripts and the python timed (this python's)",
    )
    ap.add_argument(
        "--batchd",
        default=str(VENV_BIN / "batchd"),
        help="the daemon's command, split at blanks (the batchd beside this python)",
    )
    ap.add_argument("--tmp", help="where the temporary directory goes (default: the system's)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="save every figure and time")
    ap.add_argument(
        "--check", action="store_true", help="exit status 1 when a median misses the target"
    )
    args = ap.parse_args(argv)
    args.bin = args.bin.absolute()  # the commands run in the temporary directory
    if args.repeat < 1 or args.jobs < 0:
        ap.error("--repeat must be at least 1 and --jobs at least 0")
    return args


def report(commands: list[Command], args: argparse.Namespace) -> str:
    lines = [
        f"fresh processes, {args.repeat} timed runs each, commands from {args.bin}; an idle "
        f"daemon with {args.jobs} jobs at first (and one more after each qsub)",
        "",
        f"{'command':<16} {'min ms':>8} {'median ms':>10} {'p90 ms':>8} {'cpu ms':>8}",
    ]
    for cmd in commands:
        f = cmd.figures()
        lines.append(
            f"{cmd.label:<16} {f['min_ms']:8.1f} {f['median_ms']:10.1f} {f['p90_ms']:8.1f} "
            f"{f['cpu_median_ms']:8.1f}"
        )
    lines.append("")
    for cmd in commands[1:]:
        median = cmd.figures()["median_ms"]
        verdict = "met" if median < TARGET_MS else "MISSED"
        lines.append(f"target {cmd.label} median < {TARGET_MS:g} ms: {verdict} ({median:.1f} ms)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for name in ("python", "qstat", "qsub"):
        if not (args.bin / name).exists():
            print(f"bench/client_startup.py: no {name} in {args.bin}", file=sys.stderr)
            return 2
    print(
        f"machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    workdir = Path(tempfile.mkdtemp(prefix="bcs-", dir=args.tmp))
    batchd = args.batchd.split()
    if "/" in batchd[0]:
        batchd[0] = os.path.abspath(batchd[0])
    daemon = Daemon(batchd, workdir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BATCHD_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as users run them: with .pyc files
    env["BATCHD_SOCKET"] = daemon.sock
    commands = [
        Command("python -c pass", [str(args.bin / "python"), "-c", "pass"]),
        Command("qstat", [str(args.bin / "qstat")]),
        Command("qsub", [str(args.bin / "qsub"), *QSUB_ARGS], SCRIPT),
    ]
    python, qstat, qsub = commands
    try:
        daemon.start()
        for _ in range(args.jobs):  # untimed, as the runs below: the .pyc files are written
            if not qsub.run(env, workdir, timed=False).strip():
                raise BenchError("qsub printed no job id")
        python.run(env, workdir, timed=False)
        table = qstat.run(env, workdir, timed=False)
        listed = sum(1 for line in table.split(b"\n") if line[:1].isdigit())
        if listed != args.jobs:
            raise BenchError(f"qstat listed {listed} jobs, expected {args.jobs}")
        for _ in range(args.repeat):
            for cmd in commands:
                cmd.run(env, workdir)
    except BenchError as exc:
        print(f"bench/client_startup.py: {exc}", file=sys.stderr)
        return 1
    finally:
        daemon.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(report(commands, args))
    if args.json:
        out: dict[str, Any] = {
            "repeat": args.repeat,
            "bin": str(args.bin),
            "load_average": os.getloadavg()[0],
            "target_ms": TARGET_MS,
            "commands": {
                c.label: {**c.figures(), "wall_ms": c.wall_ms, "cpu_ms": c.cpu_ms} for c in commands
            },
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n")
        print(f"results saved to {args.json}")
    missed = any(c.figures()["median_ms"] >= TARGET_MS for c in commands[1:])
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
