"""Crash consistency soak: ``kill -9`` at a random moment of a fast replay, many times over.

One ``batchd serve`` (conf/hpcline96.toml, an accelerated clock, a synthetic trace
injected) runs on a state file kept for the whole soak. In each cycle several clients
submit jobs through qsub's own request building and transport, one new connection
per job as the command makes it, and an observer lists the running jobs; at a random
moment the daemon gets SIGKILL. It is started again on the same state, and the listing
of every job is checked (tests/crash_checks.py): each acknowledged job exactly once,
no submission saved twice, the trace's jobs injected once each and in order, started
jobs with their start and nodes, ended jobs at their due time, no node held by two
jobs, no start before its submission, and a clock that never goes back. Beside the API,
the state file's clock must not be behind any time an answer showed, and every
``job_submitted`` line of the daemon's log must name a saved job.

Exit status 1 when any rule was broken.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from batchclient.qsub import build_request  # noqa: E402
from batchclient.transport import (  # noqa: E402
    ApiError,
    Client,
    ConnectError,
    Endpoint,
    TransportError,
)
from batchd.argtypes import float_in, positive_int, speed  # noqa: E402
from batchd.workload.source import load_trace  # noqa: E402
from crash_checks import Seen, violations  # noqa: E402
from daemon_proc import Daemon  # noqa: E402

seconds = float_in(0.001, 3600.0)

NODES = 96  # conf/hpcline96.toml
SCRIPT = "#!/bin/sh\n#PBS -j oe\nsleep 1\n"


@dataclass
class Options:
    cycles: int = 50
    clients: int = 4
    seed: int = 1
    speed: float = 2000.0
    shrink: float = 1.0
    trace_jobs: int = 5000
    kill_min: float = 0.3
    kill_max: float = 3.0
    pause: float = 0.02

    @property
    def trace(self) -> str:
        return f"synthetic:{self.trace_jobs}"

    def serve_args(self) -> list[str]:
        return [
            "--speed", f"{self.speed:g}", "--replay", self.trace,
            "--shrink", f"{self.shrink:g}", "--seed", str(self.seed),
        ]  # fmt: skip


@dataclass
class Cycle:
    number: int
    kill_after: float  # wall seconds after the clients started
    quiet: float  # of them, at the end, wall seconds without submissions
    acked: int  # submissions acknowledged in this cycle
    cut: int  # submissions sent whose answer the kill cut off
    cut_saved: int  # of those, how many the daemon had saved
    running_at_kill: int  # jobs running at the observer's last look
    restart: float  # wall seconds from the new process to its first answer
    jobs: int  # jobs checked after the restart
    running: int  # of them running
    cursor: int  # trace jobs injected so far
    violations: list[str]

    def row(self) -> str:
        return (
            f"{self.number:5d} {self.kill_after:6.2f} {self.quiet:5.2f} {self.acked:5d} "
            f"{self.cut:3d} {self.cut_saved:5d} {self.running_at_kill:6d} {self.restart:9.2f} "
            f"{self.jobs:6d} {self.running:4d} {self.cursor:5d} {len(self.violations):4d}"
        )


HEADER = "cycle kill s quiet acked cut saved R@kill restart s   jobs    R trace viol"


@dataclass
class Soak:
    cycles: list[Cycle] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        return [f"cycle {c.number}: {v}" for c in self.cycles for v in c.violations]


class Clients:
    """Concurrent submitters plus an observer of the running jobs, until stopped."""

    def __init__(self, socket: Path, seen: Seen, cycle: int, opts: Options, rng: random.Random):
        self.endpoint = Endpoint(socket_path=str(socket), timeout=10.0)
        self.seen = seen
        self.pause = opts.pause
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.calm = threading.Event()  # the submitters stop; the observer goes on
        self.acked = 0
        self.cut: list[str] = []
        self.refused: list[str] = []
        self.running = 0
        self.threads = [
            threading.Thread(target=self._submit, args=(f"c{cycle}k{k}n", rng.randrange(1 << 30)))
            for k in range(opts.clients)
        ]
        self.threads.append(threading.Thread(target=self._observe))

    def __enter__(self) -> Clients:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.calm.set()
        self.stop.set()
        for t in self.threads:
            t.join()

    def _submit(self, prefix: str, seed: int) -> None:
        rng = random.Random(seed)
        n = 0
        while not self.calm.is_set():
            n += 1
            name = f"{prefix}{n}"
            walltime = rng.choice((60, 300, 900, 1800))
            runtime = int(walltime * rng.uniform(0.05, 1.1))  # some outrun their walltime
            nodes = 1 << rng.randrange(3)
            body, _ = build_request(
                ["-N", name, "-l", f"nodes={nodes},walltime={walltime}",
                 "-v", f"BATCHD_RUNTIME={runtime}"],
                script=SCRIPT,
            )  # fmt: skip
            client = Client(self.endpoint)
            try:
                job = client.post("/jobs", body)
            except ConnectError:
                self.stop.wait(0.05)  # never sent: the daemon is down
                continue
            except TransportError:
                # Sent, and the answer cut off by the kill: saved or not, never twice.
                with self.lock:
                    self.seen.unacked.add(name)
                    self.cut.append(name)
                continue
            except ApiError as exc:
                with self.lock:
                    self.refused.append(f"qsub {name} refused: {exc.status} {exc.message}")
                continue
            finally:
                client.close()
            with self.lock:
                self.seen.acked[job["id"]] = name
                self.seen.now = max(self.seen.now, job["ctime"])
                self.acked += 1
            self.stop.wait(rng.uniform(0, 2 * self.pause))

    def _observe(self) -> None:
        client = Client(self.endpoint)
        while not self.stop.wait(0.1):
            try:
                body = client.get("/jobs", {"state": "R"})
            except TransportError:
                continue
            with self.lock:
                self.seen.learn(body["jobs"], body["now"])
                self.running = len(body["jobs"])
        client.close()


def saved_now(state: Path) -> int:
    """The emulated time in the state file: where an accelerated clock resumes."""
    db = sqlite3.connect(f"file:{state}?mode=ro", uri=True)
    try:
        return int(json.loads(db.execute("SELECT value FROM meta WHERE key = 'now'").fetchone()[0]))
    finally:
        db.close()


def unsaved_in_log(log: Path, jobs: list[dict[str, Any]]) -> list[str]:
    """``job_submitted`` lines of the daemon's log that name no saved job of that shape."""
    by_id = {j["id"]: j for j in jobs}
    out = []
    with open(log, errors="replace") as fh:
        for line in fh:
            if '"job_submitted"' not in line:
                continue
            # A kill between a line and its newline glues the next start's line to it.
            event, _ = json.JSONDecoder().raw_decode(line)
            job = by_id.get(event["job"])
            shape = (event["owner"], event["nodes"], event["walltime"])
            if job is None or (job["owner"], job["nodes"], job["walltime"]) != shape:
                saved = job and job["name"]
                out.append(f"the log says {event['job']} was submitted as {shape}; saved: {saved}")
    return out


def listing(d: Daemon) -> tuple[list[dict[str, Any]], int, tuple[int, int]]:
    """Every job, the emulated now of that listing and the trace feed's cursor just before
    and just after it."""
    before = d.call("GET", "/server")[1]["replay"]["cursor"]
    status, body = d.call("GET", "/jobs?history=true")
    assert status == 200, body
    after = d.call("GET", "/server")[1]["replay"]["cursor"]
    return body["jobs"], body["now"], (before, after)


def run(opts: Options, tmp: Path, say: Callable[[str], None] = print) -> Soak:
    rng = random.Random(opts.seed)
    trace = [j.name or f"swf{j.id}" for j in load_trace(opts.trace, NODES, seed=opts.seed).jobs]
    seen = Seen()
    soak = Soak()
    daemon = Daemon(tmp, *opts.serve_args())
    say(
        f"soak: {opts.cycles} cycles, {opts.clients} clients, --speed {opts.speed:g}, "
        f"--replay {opts.trace} --shrink {opts.shrink:g} --seed {opts.seed}, "
        f"kill after {opts.kill_min:g}-{opts.kill_max:g} s"
    )
    say(HEADER)
    daemon.start()
    try:
        for number in range(1, opts.cycles + 1):
            kill_after = rng.uniform(opts.kill_min, opts.kill_max)
            # Half the kills come after a calm spell, when only reads reach the daemon.
            quiet = rng.uniform(0, kill_after) if rng.random() < 0.5 else 0.0
            with Clients(daemon.socket, seen, number, opts, rng) as clients:
                time.sleep(kill_after - quiet)
                clients.calm.set()
                time.sleep(quiet)
                daemon.crash()
            saved = saved_now(daemon.state)
            t0 = time.monotonic()
            daemon.start()
            restart = time.monotonic() - t0
            jobs, now, cursors = listing(daemon)
            bad = clients.refused + violations(jobs, now, seen, trace, cursors)
            bad += unsaved_in_log(daemon.log, jobs)
            if saved < seen.now:
                bad.append(f"answers showed {seen.now}; the clock resumes at {saved}")
            names = {j["name"] for j in jobs}
            c = Cycle(
                number, kill_after, quiet, clients.acked, len(clients.cut),
                sum(n in names for n in clients.cut), clients.running, restart, len(jobs),
                sum(j["state"] == "R" for j in jobs), cursors[0], bad,
            )  # fmt: skip
            soak.cycles.append(c)
            seen.learn(jobs, now)
            say(c.row())
            for line in bad[:20]:
                say(f"      {line}")
    finally:
        if daemon.proc is not None and daemon.proc.poll() is None:
            daemon.stop()
    summarize(soak, say)
    return soak


def summarize(soak: Soak, say: Callable[[str], None] = print) -> None:
    cycles = soak.cycles
    if not cycles:
        return
    kills = [c.kill_after for c in cycles]
    last = cycles[-1]
    say(f"cycles              {len(cycles)}")
    say(f"acknowledged jobs   {sum(c.acked for c in cycles)}")
    say(
        f"answers cut off     {sum(c.cut for c in cycles)} "
        f"({sum(c.cut_saved for c in cycles)} of them saved, none twice)"
    )
    calm = [c.quiet for c in cycles if c.quiet > 0]
    say(f"kills after a calm  {len(calm)} (no submission for the last {_range(calm)} s)")
    say(f"running at the kill median {statistics.median(c.running_at_kill for c in cycles):g}")
    say(f"jobs in the state   {last.jobs} ({last.cursor} from the trace)")
    say(f"jobs checked        {sum(c.jobs for c in cycles)} (every job after every restart)")
    say(f"violations          {len(soak.violations)}")
    say(f"restart s           {_range(c.restart for c in cycles)}")
    say(f"kill moments s      {_range(kills)} after the clients started")


def _range(values: Iterable[float]) -> str:
    v = list(values) or [0.0]
    return f"min {min(v):.2f}, median {statistics.median(v):.2f}, max {max(v):.2f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    d = Options()
    add = p.add_argument
    add("--cycles", type=positive_int, default=d.cycles, help="kill -9 and restarts (50)")
    add("--clients", type=positive_int, default=d.clients, help="concurrent submitters (4)")
    add("--seed", type=int, default=d.seed, help="kill moments, jobs and trace (1)")
    add("--speed", type=speed, default=d.speed, help="emulated s per wall s (2000)")
    add(
        "--shrink",
        type=float_in(0.001, 1000.0),
        default=d.shrink,
        help="trace arrival gaps times F (1)",
    )
    add("--trace-jobs", type=positive_int, default=d.trace_jobs, help="synthetic trace (5000)")
    add("--kill-min", type=seconds, default=d.kill_min, help="earliest kill, s (0.3)")
    add("--kill-max", type=seconds, default=d.kill_max, help="latest kill, s (3)")
    add("--pause", type=seconds, default=d.pause, help="mean pause between qsubs, s")
    add("--keep", metavar="DIR", help="keep the state file and the daemon's log in DIR")
    a = p.parse_args(argv)
    if a.kill_max < a.kill_min:
        p.error("--kill-max is before --kill-min")
    opts = Options(
        a.cycles, a.clients, a.seed, a.speed, a.shrink, a.trace_jobs, a.kill_min, a.kill_max,
        a.pause,
    )  # fmt: skip
    if a.keep:
        Path(a.keep).mkdir(parents=True, exist_ok=True)
        soak = run(opts, Path(a.keep))
    else:
        with tempfile.TemporaryDirectory(prefix="batchd-soak-") as tmp:
            soak = run(opts, Path(tmp))
    return 1 if soak.violations else 0


if __name__ == "__main__":
    sys.exit(main())
