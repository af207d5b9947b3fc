"""``batchd serve`` on a disk that takes no writes, with a real I/O error.

The test lowers the running daemon's file-size limit (RLIMIT_FSIZE) to 0 with
``resource.prlimit``: every write to a file then fails with EFBIG, which SQLite
reports as "disk I/O error" (Python ignores SIGXFSZ). The daemon's log goes
through a pipe, which the limit spares. Raising the limit again is the disk
coming back. Before, the daemon answered the first change with 500 and exited.
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from batchd.server.store import Store
from daemon_proc import Daemon

pytestmark = pytest.mark.skipif(
    not hasattr(resource, "prlimit"),
    reason="resource.prlimit (Linux) is needed to limit the daemon's file writes",
)

# numba writes its cache when a kernel is first compiled: without the JIT, the state
# file is the only file the daemon writes.
ENV = {"NUMBA_DISABLE_JIT": "1"}
IOERR = "disk I/O error"
T = TypeVar("T")


def wait_for(what: str, fn: Callable[[], T], timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


def log_events(d: Daemon) -> list[dict[str, Any]]:
    out = []
    for line in d.log.read_text(errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def on_disk(path: Path) -> dict[int, dict[str, Any]]:
    """Every job in the state file, finished ones (the history) too; 0: the settings."""
    store = Store(path)
    try:
        saved = store.load()
        history = [store.finished_row(seq) for (seq,) in store.db.execute("SELECT seq FROM jobs")]
    finally:
        store.close()
    jobs = saved.jobs + [row for row in history if row is not None]
    return {j["seq"]: j for j in jobs} | {0: saved.meta}


def test_the_daemon_refuses_changes_goes_on_and_saves_once_it_can(tmp_path: Path) -> None:
    d = Daemon(tmp_path, "--speed", "10", piped=True, env=ENV)
    with d:
        assert d.proc is not None
        pid = d.proc.pid
        _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
        first = {
            "name": "first",
            "nodes": 4,
            "walltime": 3600,
            "variables": {"BATCHD_RUNTIME": "20"},
        }
        status, job = d.call("POST", "/jobs", first)
        assert (status, job["state"]) == (201, "R"), job
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, hard))
        try:
            status, body = d.call("POST", "/jobs", {"name": "refused"})
            assert status == 503, body
            assert body["error"] == "unavailable"
            assert IOERR in body["message"] and "nothing was changed" in body["message"]
            time.sleep(3)  # 30 emulated seconds: the first job ends at 20, heartbeats retry
            assert d.proc.poll() is None, d.log_text()
            status, body = d.call("GET", "/jobs?history=true")
            assert status == 200
            assert [(j["name"], j["state"]) for j in body["jobs"]] == [("first", "F")]
            status, server = d.call("GET", "/server")
            assert (status, server["state_save_error"]) == (200, IOERR)
            status, metrics = d.call("GET", "/metrics")
            assert status == 200 and "batchd_state_save_failing 1.0" in metrics
            saved = on_disk(d.state)
            assert saved[1]["state"] == "R"  # its end waits to be saved
            assert saved[0]["now"] < server["now"]
            ended_at = server["now"]
        finally:
            resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))
        wait_for(
            "saving works again",
            lambda: d.call("GET", "/server")[1]["state_save_error"] is None,
        )
        status, job = d.call("POST", "/jobs", {"name": "later"})
        assert (status, job["id"].split(".")[0]) == (201, "2"), job
        assert d.stop() == 0
    names = [e["event"] for e in log_events(d)]
    assert names.count("state_save_failing") == 1, d.log_text()
    assert names.count("state_save_recovered") == 1
    assert "Traceback" not in d.log.read_text()
    saved = on_disk(d.state)
    assert {seq: j["name"] for seq, j in saved.items() if seq} == {1: "first", 2: "later"}
    assert saved[1]["state"] == "F"
    assert saved[0]["now"] >= ended_at
