"""Jobs that run for real on this host: start latency, and an array of 1,000 short jobs.

A daemon of its own (``batchd serve`` on conf/workstation.toml: one node of this host's
CPUs, shared, executor "local"; TMPDIRs in /tmp, a kill delay of 2 s) in a temporary
directory. Jobs run as
``--user`` (under a root run: ``batchd-bench``, made with useradd when missing and
removed at the end) or, run by anyone else, as yourself. Then:

1. Latency: ``--latency N`` jobs (default 50) in a chain, each waiting for the one
   before (``-W depend=afterok``), so that each start is decided inside the daemon as
   the job before ends, with no client at work; each script, run by the user's login
   shell, writes bash's ``$EPOCHREALTIME`` first thing. The daemon logs the start decision
   (``job_run``, ``decided``: when the engine's start hook ran) and the launch
   (``job_launched``: after the commit that saved the start). Printed: the median and
   p90 from decision to the script's first instruction, and its parts: decision to
   launch (the commit), launch to first instruction (launcher, supervisor, the job's
   process, the login shell); and the login shell alone (``bash -l -c``) for scale.
2. Throughput: ``qsub -J 1-N`` (``--array N``, default 1,000) of a script running
   ``true``, one CPU each, from submission until the array is finished (polled every
   0.2 s), against the same N commands through ``xargs -P CPUS`` run by the same user
   with the same login shell (``bash -l -c true``): the floor. Printed: both times, the
   ratio, and the daemon's CPU time (from /proc) per job.

    .venv/bin/python bench/execution.py                   # both, as batchd-bench (root) or you
    .venv/bin/python bench/execution.py --latency 100 --array 0
    .venv/bin/python bench/execution.py --json /tmp/exec.json
    .venv/bin/python bench/execution.py --latency 0 --profile /tmp/daemon.prof  # where it goes
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH_USER = "batchd-bench"


def site_file(roots: bool) -> str:
    """conf/workstation.toml as shipped, but for the TMPDIRs in /tmp, a kill delay of 2 s
    and, when the jobs are root's, acl_roots."""
    text = (ROOT / "conf" / "workstation.toml").read_text()
    extra = "kill_delay = 2\n" + ('acl_roots = ["root"]\n' if roots else "")
    text = text.replace("kill_delay = 10\n", "").replace("[server]\n", f"[server]\n{extra}", 1)
    return text.replace("[execution]\n", '[execution]\ntmpdir = "/tmp"\n', 1)


def client_python() -> str:
    """A Python the job's user may run, for qsub (the venv's may live in root's home)."""
    return "/usr/bin/python3" if os.geteuid() == 0 else sys.executable


def as_user(user: str, argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    if os.geteuid() == 0 and user != "root":
        argv = ["runuser", "-u", user, "--", *argv]
    return subprocess.run(argv, capture_output=True, text=True, **kw)


def qsub(user: str, sock: Path, work: Path, script: str, *options: str) -> str:
    done = as_user(
        user,
        ["env", f"BATCHD_SOCKET={sock}", f"PYTHONPATH={ROOT / 'client'}", client_python(),
         "-c", "import sys; from batchclient.qsub import main; sys.exit(main())", *options],
        input=script, cwd=work,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"qsub failed: {done.stderr}")
    return done.stdout.strip()


def call(sock: Path, path: str) -> Any:
    sys.path.insert(0, str(ROOT / "tests"))
    from daemon_proc import call as http

    status, body = http(sock, "GET", path)
    if status != 200:
        raise SystemExit(f"GET {path}: {status} {body}")
    return body


def log_events(log: Path, event: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for line in log.read_text().splitlines():
        if f'"{event}"' in line:
            data = json.loads(line)
            found[data["job"]] = float(data.get("decided") or data["at"])
    return found


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def latency(user: str, sock: Path, work: Path, log: Path, count: int) -> dict[str, Any]:
    """A chain of jobs, each waiting for the one before (afterok): every start is decided
    inside the daemon, as the job before ends, with no client working meanwhile."""
    script = '#!/bin/bash\necho "$EPOCHREALTIME" > "$PBS_O_WORKDIR/first.$PBS_JOBID"\n'
    ids = [qsub(user, sock, work, script, "-S", "/bin/bash", "-l", "select=1:ncpus=1", "-h")]
    for _ in range(count - 1):
        depend = f"depend=afterok:{ids[-1]}"
        ids.append(qsub(user, sock, work, script, "-S", "/bin/bash", "-W", depend))
    as_user(user, ["env", f"BATCHD_SOCKET={sock}", f"PYTHONPATH={ROOT / 'client'}",
                   client_python(), "-c",
                   "import sys; from batchclient.qrls import main; sys.exit(main())", ids[0]])  # fmt: skip
    while call(sock, f"/jobs/{ids[-1]}")["state"] != "F":
        time.sleep(0.2)
    decided, launched = log_events(log, "job_run"), log_events(log, "job_launched")
    total, commit, launch = [], [], []
    for job in ids:
        first = float((work / f"first.{job}").read_text())
        total.append(first - decided[job])
        commit.append(launched[job] - decided[job])
        launch.append(first - launched[job])
    shell = []
    for _ in range(10):
        began = time.time()
        done = as_user(user, ["bash", "-l", "-c", 'echo "$EPOCHREALTIME"'], cwd="/")
        shell.append(float(done.stdout) - began)
    return {
        "jobs": count,
        "decision_to_first_ms": summary(total),
        "decision_to_launch_ms": summary(commit),
        "launch_to_first_ms": summary(launch),
        "login_shell_alone_ms": summary(shell),
    }


def summary(values: list[float]) -> dict[str, float]:
    ms = sorted(v * 1000 for v in values)
    return {
        "median": round(statistics.median(ms), 2),
        "p90": round(ms[int(0.9 * (len(ms) - 1))], 2),
        "min": round(ms[0], 2),
    }


def throughput(user: str, sock: Path, work: Path, count: int, daemon_pid: int) -> dict[str, Any]:
    cpus = len(os.sched_getaffinity(0))
    began = time.monotonic()
    cpu0 = cpu_seconds(daemon_pid)
    array = qsub(user, sock, work, "true\n", "-J", f"1-{count}", "-l", "select=1:ncpus=1")
    while call(sock, f"/jobs/{array}")["state"] != "F":
        time.sleep(0.2)  # each answer plans the queue for est_start: a cost to the daemon
    batchd = time.monotonic() - began
    daemon_cpu = cpu_seconds(daemon_pid) - cpu0
    began = time.monotonic()
    as_user(user, ["sh", "-c", f"seq {count} | xargs -P {cpus} -I{{}} bash -l -c true"], cwd="/")
    floor = time.monotonic() - began
    return {
        "jobs": count,
        "cpus": cpus,
        "batchd_s": round(batchd, 2),
        "xargs_floor_s": round(floor, 2),
        "ratio": round(batchd / floor, 2),
        "daemon_cpu_ms_per_job": round(1000 * daemon_cpu / count, 2),
    }


def ensure_user(name: str | None) -> tuple[str, bool]:
    if os.geteuid() != 0:
        return pwd.getpwuid(os.getuid()).pw_name, False
    name = name or BENCH_USER
    try:
        pwd.getpwnam(name)
        return name, False
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
        return name, True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--user", help=f"the jobs' owner (root runs: default {BENCH_USER})")
    ap.add_argument("--latency", type=int, default=50, help="jobs one at a time (0: skip)")
    ap.add_argument("--array", type=int, default=1000, help="subjobs of the array (0: skip)")
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--profile", help="run the daemon under cProfile, its stats to this file")
    ap.add_argument("--sync", default="full", choices=("full", "normal"),
                    help="the daemon's --sync (SQLite synchronous mode): full (default)")  # fmt: skip
    args = ap.parse_args()
    user, made = ensure_user(args.user)
    folder = Path(tempfile.mkdtemp(prefix="batchd-bench-", dir="/tmp"))
    folder.chmod(0o755)
    work = folder / "work"
    work.mkdir()
    work.chmod(0o1777)
    site = folder / "site.toml"
    site.write_text(site_file(user == "root"))
    sock, log = folder / "batchd.sock", folder / "daemon.log"
    profile = ["-m", "cProfile", "-o", str(Path(args.profile).resolve())] if args.profile else []
    with open(log, "w") as out:
        daemon = subprocess.Popen(
            [sys.executable, *profile, "-m", "batchd.cli", "serve", "--config", str(site),
             "--socket", str(sock), "--state", str(folder / "state.db"), "--sync", args.sync],
            stdout=out, stderr=out, cwd=ROOT,
        )  # fmt: skip
    results: dict[str, Any] = {"user": user, "sync": args.sync}
    try:
        for _ in range(300):
            if sock.exists():
                break
            time.sleep(0.05)
        # Warm: the first job loads the planners' compiled kernels (the plan gauges).
        warm = qsub(user, sock, work, "true\n", "-l", "select=1:ncpus=1")
        while call(sock, f"/jobs/{warm}")["state"] != "F":
            time.sleep(0.05)
        time.sleep(6)  # past the first refresh of the plan gauges ([metrics] plan_interval)
        if args.latency:
            results["latency"] = latency(user, sock, work, log, args.latency)
            print(f"latency ({args.latency} jobs, ms): {json.dumps(results['latency'])}")
        if args.array:
            results["array"] = throughput(user, sock, work, args.array, daemon.pid)
            print(f"array: {json.dumps(results['array'])}")
    finally:
        daemon.terminate()
        daemon.wait(30)
        if made:
            subprocess.run(["userdel", "-r", user], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
