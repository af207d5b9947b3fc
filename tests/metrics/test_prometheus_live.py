"""The real Prometheus scrapes a real ``batchd serve``, and PromQL agrees with the daemon's API.

A small synthetic trace is replayed at 600x: short jobs that finish within the
first emulated half hour (one of them killed at its walltime), then three long
jobs that hold 48 nodes for days. Once the trace is over and the state is
stable, a manager switches the policy live; two scrapes later, Prometheus'
query API must say what the daemon's own API says: finished jobs, allocated
nodes, the policy in use, the emulated clock, and that the target is up.

Skips (with the reason) when the Prometheus server is not installed; `make test`
installs it where it can (.ci/install-prometheus).
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from daemon_proc import Daemon, write_tokens
from prom_server import PromServer, free_port, missing_reason, prometheus_binary

SPEED = 600.0
NEW_POLICY = "sjf-cons"

# (submit, runtime, nodes, requested walltime) in trace seconds.
SHORT = [
    (0, 300, 64, 600),
    (10, 240, 48, 600),  # waits for the first one
    (20, 120, 16, 300),
    (60, 180, 8, 300),
    (90, 500, 4, 300),  # killed at its walltime (300 s)
    (120, 60, 2, 120),
    (150, 200, 24, 400),
    (200, 90, 1, 120),
]
DAY = 86_400
LONG = [(700, 3 * DAY, 8, 3 * DAY), (710, 3 * DAY, 16, 3 * DAY), (720, 3 * DAY, 24, 3 * DAY)]
LONG_NODES = sum(nodes for _, _, nodes, _ in LONG)


def write_trace(path: Path) -> None:
    lines = [
        "; Version: 2.2",
        "; Computer: batchd test trace (short jobs, then long ones that hold 48 nodes)",
        f"; MaxJobs: {len(SHORT) + len(LONG)}",
        "; MaxNodes: 96",
        "; MaxProcs: 96",
    ]
    for i, (submit, runtime, nodes, walltime) in enumerate(SHORT + LONG, 1):
        # id submit wait runtime alloc cpu mem req_procs req_time req_mem status user
        # group exe queue part prec think
        fields = [i, submit, -1, runtime, nodes, -1, -1, nodes, walltime, -1, 1, 7]
        lines.append(" ".join(str(f) for f in fields + [-1] * 6))
    path.write_text("\n".join(lines) + "\n")


def api(d: Daemon, method: str, path: str, body: Any = None) -> Any:
    status, answer = d.call(method, path, body)
    assert status == 200, (method, path, status, answer)
    return answer


def wait_for_stable_state(d: Daemon, timeout: float = 20.0) -> dict[str, Any]:
    """Until the trace is fed, the short jobs have ended and the long ones run."""
    deadline = time.monotonic() + timeout
    while True:
        server = api(d, "GET", "/server")
        jobs = api(d, "GET", "/jobs?history=true")["jobs"]
        states = Counter(j["state"] for j in jobs)
        replay = server["replay"]
        if (
            replay is not None
            and replay["cursor"] >= replay["jobs"] == len(SHORT) + len(LONG)
            and states == {"F": len(SHORT), "R": len(LONG)}
        ):
            return server
        if time.monotonic() > deadline:
            pytest.fail(f"trace not done after {timeout} s: replay {replay}, jobs {dict(states)}")
        time.sleep(0.1)


def test_promql_agrees_with_the_api(tmp_path: Path) -> None:
    if prometheus_binary() is None:
        pytest.skip(f"prometheus not installed: {missing_reason()}")
    trace = tmp_path / "live.swf"
    write_trace(trace)
    tokens = tmp_path / "tokens"
    token = write_tokens(tokens)
    port = free_port()
    args = (
        "--speed", str(SPEED), "--replay", str(trace),
        "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens),
    )  # fmt: skip

    with Daemon(tmp_path, *args) as d, PromServer(f"127.0.0.1:{port}", tmp_path) as prom:
        # The TCP listener Prometheus scrapes is the daemon's, with the token for the API.
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/server", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert json.load(resp)["speed"] == SPEED

        server = wait_for_stable_state(d)
        old_policy = server["policy"]
        assert old_policy != NEW_POLICY

        # The daemon's own user is a manager on the Unix socket (peer credentials).
        changed = api(d, "PATCH", "/scheduler", {"policy": NEW_POLICY})
        assert changed["policy"] == NEW_POLICY
        switched = time.time()
        prom.wait_for_scrapes(2, since=switched)

        # What the daemon says (stable: no job starts or ends for days of emulated time).
        t0 = time.time()
        server = api(d, "GET", "/server")
        t1 = time.time()
        jobs = api(d, "GET", "/jobs?history=true")["jobs"]
        nodes = api(d, "GET", "/nodes")["nodes"]
        assert server["policy"] == NEW_POLICY
        finished = [j for j in jobs if j["state"] == "F"]
        running = [j for j in jobs if j["state"] == "R"]
        held = sum(j["nodes"] for j in running)
        assert held == LONG_NODES
        assert sum(1 for n in nodes if n["jobs"]) == held
        outcomes = Counter(j["outcome"] for j in finished)
        assert outcomes == {"ok": len(SHORT) - 1, "walltime": 1}, outcomes

        # What Prometheus says.
        assert prom.value('up{job="batchd"}') == 1.0
        assert prom.value("sum(batchd_jobs_completed_total)") == len(finished)
        by_outcome = {
            s.labels["outcome"]: s.value
            for s in prom.query("sum by (outcome) (batchd_jobs_completed_total)")
            if s.value
        }
        assert by_outcome == outcomes
        assert prom.value('sum(batchd_nodes{state="allocated"})') == held
        assert prom.value('sum(batchd_jobs{state="running"})') == len(running)
        assert prom.value('sum(batchd_jobs{state="queued"})') == 0
        assert prom.value(f'batchd_scheduler_policy{{policy="{NEW_POLICY}"}}') == 1.0
        assert prom.value(f'batchd_scheduler_policy{{policy="{old_policy}"}}') == 0.0
        assert prom.value("sum(batchd_scheduler_policy)") == 1.0
        assert prom.value("batchd_clock_speed") == SPEED

        # The emulated clock at the last scrape, against the API's now taken t0..t1:
        # the gap is the wall time between them times the speed.
        emulated = prom.query("batchd_emulated_timestamp_seconds")[0].value
        scraped_at = prom.value("timestamp(batchd_emulated_timestamp_seconds)")
        assert scraped_at is not None and scraped_at > switched
        expected = server["now"] - SPEED * ((t0 + t1) / 2 - scraped_at)
        slack = SPEED * (0.5 + (t1 - t0)) + 2
        assert abs(emulated - expected) <= slack, (emulated, expected, slack)
