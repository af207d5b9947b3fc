"""A flood of half-sent requests against a real daemon with few file descriptors.

The daemon runs under ``prlimit --nofile=256``, with caps lowered in its site file.
Callers open many connections that never finish their request head, over TCP from
several loopback addresses and over the Unix socket as another user; a manager
(root, the test's user) must still be answered at once, the half-sent connections
must be closed after the header timeout, the log must stay short, and everyone is
served again once the flood ends.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from daemon_proc import Daemon, call, write_tokens
from pbs_commands import run
from users import as_root, client_python

NOFILE = 256
HEADER_TIMEOUT = 2.0
MAX_OPEN = 40
PER_PEER = 10
SITE = f"""
[[machine]]
name = "flood"
nodes = 4

[connections]
header_timeout = {HEADER_TIMEOUT}
idle_timeout = 5
max_open = {MAX_OPEN}
max_per_peer = {PER_PEER}
managers_room = 8
"""
HALF_HEAD = b"GET /jobs HTTP/1.1\r\nHost: batchd\r\n"  # the blank line never comes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def limited_daemon(tmp: Path, *args: str) -> Daemon:
    config = tmp / "site.toml"
    config.write_text(SITE)
    d = Daemon(tmp, *args, config=str(config))
    d.argv = ["prlimit", f"--nofile={NOFILE}:{NOFILE}", "--", *d.argv]
    return d


def log_lines(d: Daemon) -> int:
    return len(d.log.read_bytes().splitlines())


def sent_so_far(sock: socket.socket) -> bytes:
    """What the daemon has sent on a connection by now, b"" if nothing."""
    sock.setblocking(False)
    try:
        return sock.recv(1000)
    except (BlockingIOError, ConnectionResetError):
        return b""


def first_bytes(sock: socket.socket, timeout: float) -> bytes:
    """What the daemon sent first, b"" when it closed or sent nothing in time."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1000)
    except (TimeoutError, ConnectionResetError):
        return b""


def metric(d: Daemon, reason: str) -> float:
    text = call(d.socket, "GET", "/metrics")[1]
    found = re.search(rf'^batchd_connections_refused_total{{reason="{reason}"}} (\S+)$', text, re.M)
    assert found, text[:2000]
    return float(found.group(1))


def open_connections(d: Daemon) -> float:
    """batchd_connections_open, the scrape's own connection included."""
    text = call(d.socket, "GET", "/metrics")[1]
    found = re.search(r"^batchd_connections_open (\S+)$", text, re.M)
    assert found, text[:2000]
    return float(found.group(1))


def timed_healthz(d: Daemon) -> float:
    began = time.monotonic()
    status, _ = call(d.socket, "GET", "/healthz")
    assert status == 200
    return time.monotonic() - began


@pytest.fixture
def prlimit() -> None:
    if shutil.which("prlimit") is None:
        pytest.skip("needs prlimit (util-linux) to lower the daemon's RLIMIT_NOFILE")


@pytest.mark.usefixtures("prlimit")
def test_tcp_flood_is_capped_and_a_manager_is_still_served(tmp_path: Path) -> None:
    token = write_tokens(tmp_path / "tokens")
    port = free_port()
    d = limited_daemon(
        tmp_path, "--listen", f"127.0.0.1:{port}", "--token-file", str(tmp_path / "tokens")
    )
    with d:
        timed_healthz(d)  # the first request warms the daemon up
        lines_before = log_lines(d)
        flood: list[socket.socket] = []
        try:
            # 300 connections from 10 loopback addresses: far more than the daemon has
            # descriptors for, and than its caps per address and in all.
            for i in range(300):
                s = socket.create_connection(
                    ("127.0.0.1", port), timeout=5, source_address=(f"127.0.0.{2 + i % 10}", 0)
                )
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    s.sendall(HALF_HEAD)  # a refused one may be closed already
                flood.append(s)
            # Those over the caps were answered 503 at once.
            time.sleep(0.3)
            answers = [sent_so_far(s) for s in flood]
            # A manager on the Unix socket: answered at once, the caps are not theirs.
            assert max(timed_healthz(d) for _ in range(5)) < 1.0
            qstat = run(d, "qstat", "-Q")
            assert qstat.returncode == 0, qstat.stderr
            refused = [a for a in answers if a.startswith(b"HTTP/1.1 503")]
            assert len(refused) >= 300 - MAX_OPEN
            assert b"too_many_connections" in refused[0]
            assert metric(d, "peer_limit") + metric(d, "total_limit") >= 300 - MAX_OPEN
            assert metric(d, "total_limit") > 0  # 10 addresses x 10 exceed 40 in all
            # The ones admitted get 408 and are closed after the header timeout.
            time.sleep(HEADER_TIMEOUT + 0.5)
            held = [s for s, a in zip(flood, answers, strict=True) if not a]
            assert len(held) <= MAX_OPEN
            timed_out = [first_bytes(s, 1.0) for s in held]
            assert all(a.startswith(b"HTTP/1.1 408") for a in timed_out), timed_out
            assert metric(d, "header_timeout") >= len(held)
            assert open_connections(d) == 1
            # The flood wrote a few throttled lines, not one per connection.
            assert log_lines(d) - lines_before < 20, d.log_text()
        finally:
            for s in flood:
                s.close()
        # Over: every address is served again, with its token.
        for i in range(10):
            with socket.create_connection(
                ("127.0.0.1", port), timeout=5, source_address=(f"127.0.0.{2 + i}", 0)
            ) as s:
                s.sendall(
                    b"GET /server HTTP/1.1\r\nHost: batchd\r\nConnection: close\r\n"
                    + f"Authorization: Bearer {token}\r\n\r\n".encode()
                )
                assert first_bytes(s, 5.0).startswith(b"HTTP/1.1 200"), i


NOBODY_FLOOD = """
import json, socket, sys, time
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_UNIX)
    s.connect("batchd.sock")
    try:
        s.sendall(b"GET /jobs HTTP/1.1\\r\\nHost: batchd\\r\\n")
    except BrokenPipeError:
        pass  # refused and closed already: its 503 is there to read
    socks.append(s)
time.sleep(0.5)  # the refusals are answered at once
answers = []
for s in socks:
    s.setblocking(False)
    try:
        answers.append(s.recv(1000).decode(errors="replace"))
    except (BlockingIOError, ConnectionResetError):
        answers.append("")
print(json.dumps(answers), flush=True)
sys.stdin.read()  # held until the test closes stdin
"""

NOBODY_GET = """
import socket
s = socket.socket(socket.AF_UNIX)
s.connect("batchd.sock")
s.sendall(b"GET /server HTTP/1.1\\r\\nHost: batchd\\r\\nConnection: close\\r\\n\\r\\n")
s.settimeout(5)
print(s.recv(200).decode(errors="replace").splitlines()[0])
"""


def as_nobody(d: Daemon, script: str, *args: str) -> subprocess.Popen[str]:
    """A Python of the host's run as nobody in the socket's directory (nobody may not
    pass the test's private directories above it, only connect to the 0666 socket)."""
    return subprocess.Popen(
        [client_python(), "-c", script, *args],
        cwd=d.tmp,
        user="nobody",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.usefixtures("prlimit")
def test_a_users_unix_flood_stops_at_their_cap(tmp_path: Path) -> None:
    if not as_root():
        pytest.skip("connects as nobody: needs a root test run")
    d = limited_daemon(tmp_path)
    tmp_path.chmod(0o711)
    with d:
        timed_healthz(d)
        flood = as_nobody(d, NOBODY_FLOOD, "60")
        try:
            assert flood.stdout is not None
            line = flood.stdout.readline()
            assert line, flood.communicate("", timeout=10)[1]
            answers = json.loads(line)
            assert open_connections(d) == PER_PEER + 1
            refused = [a for a in answers if a.startswith("HTTP/1.1 503")]
            held = [a for a in answers if not a]
            assert len(held) == PER_PEER, answers
            assert len(refused) == 60 - PER_PEER
            assert "too many connections open from this caller" in refused[0]
            # root, a manager, is served while nobody holds all they may.
            assert timed_healthz(d) < 1.0
            # nobody's held connections are closed after the header timeout ...
            time.sleep(HEADER_TIMEOUT + 0.5)
            assert metric(d, "header_timeout") == PER_PEER
        finally:
            flood.communicate("", timeout=10)
        # ... and, the flood over, nobody is served again.
        get = as_nobody(d, NOBODY_GET)
        out, err = get.communicate(timeout=10)
        assert out.strip() == "HTTP/1.1 200 OK", err


@pytest.mark.usefixtures("prlimit")
def test_caps_beyond_the_descriptors_stop_the_start(tmp_path: Path) -> None:
    config = tmp_path / "site.toml"
    config.write_text(SITE.replace(f"max_open = {MAX_OPEN}", "max_open = 200"))
    d = Daemon(tmp_path, config=str(config))
    out = subprocess.run(
        ["prlimit", f"--nofile={NOFILE}:{NOFILE}", "--", *d.argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert f"{config}: connections.max_open: 200 connections and managers_room 8" in out.stderr
    assert f"(RLIMIT_NOFILE {NOFILE}," in out.stderr
    assert not d.state.exists() and not d.socket.exists()  # refused before anything
