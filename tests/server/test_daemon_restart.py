"""kill -9 in the middle of an accelerated replay, then a restart: nothing acknowledged is lost.

The daemon runs a synthetic trace at 1,000x while jobs are submitted beside it.
After SIGKILL and a restart on the same state file, every acknowledged job is
back, jobs that had started keep their start times on the emulated clock, no
trace job is injected twice, and no node ever holds two jobs at once. An answer's time
is saved before the answer leaves, so the clock resumes no earlier than any time shown.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from batchd.server.store import Store
from crash_checks import node_overlaps
from daemon_proc import Daemon

ARGS = ("--speed", "1000", "--replay", "synthetic:120", "--shrink", "0.05", "--seed", "3")


def all_jobs(d: Daemon) -> dict[str, dict[str, Any]]:
    status, body = d.call("GET", "/jobs?history=true")
    assert status == 200, body
    return {j["id"]: j for j in body["jobs"]}


def test_kill_9_and_restart_lose_nothing(tmp_path: Path) -> None:
    acked: list[str] = []
    d = Daemon(tmp_path, *ARGS).start()
    try:
        for i in range(12):
            status, job = d.call(
                "POST",
                "/jobs",
                {"name": f"mine{i}", "nodes": 1 + i % 5, "walltime": 3600,
                 "variables": {"BATCHD_RUNTIME": str(600 + 97 * i)}},
            )  # fmt: skip
            assert status == 201, job
            acked.append(job["id"])
            time.sleep(0.1)
        time.sleep(1.0)
        before = all_jobs(d)
        status, server = d.call("GET", "/server")
        assert server["replay"]["cursor"] > 0, "the trace feed never started"
        assert any(j["state"] == "R" for j in before.values())
        d.crash()
    finally:
        if d.proc is not None and d.proc.poll() is None:
            d.crash()

    d2 = Daemon(tmp_path, *ARGS).start()
    try:
        after = all_jobs(d2)
        status, server2 = d2.call("GET", "/server")
        # Every acknowledged job is back; ids are never reused.
        assert set(acked) <= set(after)
        assert set(before) <= set(after)
        for jid, old in before.items():
            new = after[jid]
            if old["stime"] is not None:
                # Started before the crash: same start, never started again.
                assert new["stime"] == old["stime"], (jid, old, new)
                assert new["exec_host"] == old["exec_host"]
            if old["state"] == "F":
                assert new["state"] == "F" and new["end_time"] == old["end_time"]
        assert server2["now"] >= server["now"]
        # Run on, stop cleanly, then check the whole saved history.
        time.sleep(2.0)
        final = all_jobs(d2)
        status, server3 = d2.call("GET", "/server")
        assert node_overlaps(list(final.values()), server3["now"]) == []
        assert d2.stop() == 0
    finally:
        if d2.proc is not None and d2.proc.poll() is None:
            d2.crash()
    store = Store(tmp_path / "state.db")
    saved = store.load()
    # Every job, finished ones (the history) included.
    rows = [json.loads(d) for (d,) in store.db.execute("SELECT data FROM jobs ORDER BY seq")]
    assert [r["seq"] for r in saved.jobs] == [r["seq"] for r in rows if r["state"] != "F"]
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    trace_names = Counter(r["name"] for r in rows if not r["name"].startswith("mine"))
    assert trace_names and max(trace_names.values()) == 1, "a trace job was injected twice"
    assert saved.meta["replay"]["cursor"] == sum(trace_names.values())
    assert {r["name"] for r in rows} >= {f"mine{i}" for i in range(12)}


def test_kill_9_after_a_read_resumes_the_clock_after_the_time_it_showed(tmp_path: Path) -> None:
    # An idle accelerated daemon: the answer shows a now no change has saved yet.
    d = Daemon(tmp_path, "--speed", "1000").start()
    try:
        time.sleep(0.3)
        status, server = d.call("GET", "/server")
        assert status == 200, server
        d.crash()
    finally:
        if d.proc is not None and d.proc.poll() is None:
            d.crash()
    assert Store(tmp_path / "state.db").load().meta["now"] >= server["now"]
    with Daemon(tmp_path, "--speed", "1000") as d2:
        assert d2.call("GET", "/server")[1]["now"] >= server["now"]
