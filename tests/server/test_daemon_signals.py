"""The daemon process: SIGHUP re-reads the config, SIGTERM stops it cleanly, bad starts say why."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from daemon_proc import ROOT, Daemon

SITE = """
[[machine]]
name = "tiny"
nodes = 4

[server]
policy = "fcfs-cons"

[[queue]]
name = "workq"
"""


def test_sighup_reloads_queues_and_refuses_a_new_machine(tmp_path: Path) -> None:
    conf = tmp_path / "site.toml"
    conf.write_text(SITE)
    with Daemon(tmp_path, "--speed", "10", config=str(conf)) as d:
        assert [q["name"] for q in d.call("GET", "/queues")[1]["queues"]] == ["workq"]
        conf.write_text(SITE + '\n[[queue]]\nname = "long"\nmax_nodes = 2\n')
        assert d.proc is not None
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            names = [q["name"] for q in d.call("GET", "/queues")[1]["queues"]]
            if names == ["workq", "long"]:
                break
            time.sleep(0.05)
        assert names == ["workq", "long"]
        # A machine of another size is refused and logged; the daemon goes on as it was.
        conf.write_text(SITE.replace("nodes = 4", "nodes = 8"))
        d.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert d.call("GET", "/server")[1]["nodes"] == 4
        assert "config_reload_refused" in d.log_text()
        status, job = d.call("POST", "/jobs", {"nodes": 2, "queue": "long", "walltime": 60})
        assert status == 201, job
        assert d.stop() == 0
    assert not d.socket.exists()
    assert "daemon_stopped" in d.log_text()


def _wait_for_log(d: Daemon, text: str, count: int) -> str:
    deadline = time.monotonic() + 10
    while d.log_text().count(text) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return d.log_text()


def test_sighup_refuses_a_fifo_and_a_queue_that_holds_jobs(tmp_path: Path) -> None:
    conf = tmp_path / "site.toml"
    with_long = SITE + '\n[[queue]]\nname = "long"\n'
    conf.write_text(with_long)
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        assert d.proc is not None
        status, _ = d.call("POST", "/jobs", {"nodes": 1, "queue": "long", "walltime": 600})
        assert status == 201
        # The config path now names a FIFO nobody writes to: the daemon reads nothing.
        conf.unlink()
        os.mkfifo(conf)
        d.proc.send_signal(signal.SIGHUP)
        log = _wait_for_log(d, "config_reload_refused", 1)
        assert "is a FIFO, not a configuration file" in log
        assert d.call("GET", "/healthz")[0] == 200
        # A file without the queue that holds the job keeps the old queues.
        conf.unlink()
        conf.write_text(SITE)
        d.proc.send_signal(signal.SIGHUP)
        log = _wait_for_log(d, "config_reload_refused", 2)
        assert "queue long, which the file no longer has, holds 1 unfinished job" in log
        names = [q["name"] for q in d.call("GET", "/queues")[1]["queues"]]
        assert names == ["workq", "long"]
        assert d.stop() == 0


def test_second_daemon_on_the_same_socket_is_refused(tmp_path: Path) -> None:
    with Daemon(tmp_path, "--speed", "10") as d:
        other = subprocess.run(
            [*d.argv[:-2], "--state", str(tmp_path / "other.db")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )
        assert other.returncode == 2
        assert other.stderr.strip().splitlines()[-1] == (
            f"batchd: error: another batchd is listening on {d.socket}"
        )
        assert d.call("GET", "/healthz")[0] == 200


def test_bad_config_names_file_and_key(tmp_path: Path) -> None:
    conf = tmp_path / "bad.toml"
    conf.write_text(SITE.replace('policy = "fcfs-cons"', 'policy = "fastest"'))
    out = subprocess.run(
        [sys.executable, "-m", "batchd.cli", "serve", "--config", str(conf),
         "--socket", str(tmp_path / "s.sock"), "--state", str(tmp_path / "s.db")],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith(f"batchd: error: {conf}: server.policy: ")
    assert "unknown policy 'fastest'" in line
    assert not (tmp_path / "s.db").exists()


def test_listen_without_tokens_is_refused(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "batchd.cli", "serve", "--listen", "15099",
         "--socket", str(tmp_path / "s.sock"), "--state", str(tmp_path / "s.db")],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert "--listen needs --token-file" in out.stderr


def test_stopped_queue_keeps_its_jobs_until_started(tmp_path: Path) -> None:
    conf = tmp_path / "site.toml"
    stopped = SITE + '\n[[queue]]\nname = "night"\nstarted = false\n'
    conf.write_text(stopped)
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        status, job = d.call("POST", "/jobs", {"nodes": 1, "queue": "night", "walltime": 600})
        assert status == 201
        assert job["state"] == "Q" and job["comment"] == "Not Running: queue night is stopped"
        assert d.call("GET", "/jobs/1")[1]["state"] == "Q"  # the machine is idle, yet it waits
        conf.write_text(stopped.replace("started = false", "started = true"))
        assert d.proc is not None
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while d.call("GET", "/jobs/1")[1]["state"] != "R" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert d.call("GET", "/jobs/1")[1]["state"] == "R"
        # Stopping it again parks the queued jobs of that queue.
        conf.write_text(stopped)
        d.proc.send_signal(signal.SIGHUP)
        while time.monotonic() < deadline:
            queues = {q["name"]: q for q in d.call("GET", "/queues")[1]["queues"]}
            if not queues["night"]["started"]:
                break
            time.sleep(0.05)
        status, job = d.call("POST", "/jobs", {"nodes": 4, "walltime": 600})  # waits for node
        assert job["state"] == "Q"
        status, job = d.call("POST", "/jobs", {"nodes": 1, "queue": "night", "walltime": 600})
        assert job["state"] == "Q" and job["comment"].endswith("stopped")


def test_state_of_another_machine_is_refused(tmp_path: Path) -> None:
    conf = tmp_path / "site.toml"
    conf.write_text(SITE)
    with Daemon(tmp_path, "--speed", "10", config=str(conf)) as d:
        assert d.call("POST", "/jobs", {"nodes": 1, "walltime": 60})[0] == 201
        assert d.stop() == 0
    conf.write_text(SITE.replace("nodes = 4", "nodes = 8"))
    out = subprocess.run(
        [*d.argv], capture_output=True, text=True, cwd=ROOT, timeout=60
    )  # fmt: skip
    assert out.returncode == 2
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith(f"batchd: error: {d.state}: the state was saved by server tiny")
    assert "use that config, or another --state file" in line
