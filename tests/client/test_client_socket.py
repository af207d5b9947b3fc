"""The commands send nothing over a socket that may not be batchd's (docs/client.md).

Before a byte goes out, the socket's directory must be root's, the daemon user's
(``$BATCHD_DAEMON_USER``, default ``batchd``) or the caller's own and writable by
nobody else, and the server on the socket must run as one of those users (its peer
credentials). Another user's directory or server is refused in one line naming it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import batchclient.transport as transport
from batchclient import qstat, qsub
from paths import ROOT

NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as user nobody")
SECRET = "#!/bin/sh\nexport API_KEY=hunter2-secret\n"


@pytest.fixture
def folder() -> Iterator[Path]:
    """A directory with a short path (socket paths are limited to about 100 bytes)."""
    tmp = Path(tempfile.mkdtemp(prefix="bq"))
    os.chmod(tmp, 0o755)
    yield tmp
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, folder: Path) -> Path:
    """$BATCHD_SOCKET at ``folder/batchd.sock``; a client that would wait gives up soon."""
    for name in ("BATCHD_URL", "BATCHD_TOKEN", "BATCHD_DAEMON_USER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BATCHD_SOCKET", str(folder / "batchd.sock"))
    monkeypatch.setenv("BATCHD_TIMEOUT", "2")
    return folder / "batchd.sock"


def listening(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    return server


def connections(server: socket.socket) -> list[bytes]:
    """What each client that connected to ``server`` sent, without answering."""
    server.setblocking(False)
    got = []
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return got
        with conn:
            conn.settimeout(2)
            got.append(conn.recv(65536))


def submit(tmp_path: Path) -> int:
    script = tmp_path / "secret.sh"
    script.write_text(SECRET)
    return qsub.main([str(script)])


def nobody() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody on this host")


@NEEDS_ROOT
def test_a_squatted_directory_is_refused_before_anything_is_sent(
    env: Path, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Another user made the directory first and listens there.
    os.chown(folder, nobody().pw_uid, nobody().pw_gid)
    server = listening(env)
    try:
        assert submit(tmp_path) == 2
        assert connections(server) == []  # not even a connection, let alone the script
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(
        f"qsub: refusing the socket {env}: its directory {folder} is owned by nobody, expected root"
    )
    assert err.endswith("(set BATCHD_DAEMON_USER if batchd runs as another user)\n")


def test_a_directory_others_may_write_is_refused(
    env: Path, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.chmod(folder, 0o1777)  # even sticky, as /tmp: anyone could have made the socket
    server = listening(env)
    try:
        assert submit(tmp_path) == 2
        assert connections(server) == []
    finally:
        server.close()
    assert capsys.readouterr() == (
        "",
        f"qsub: refusing the socket {env}: its directory {folder} is writable by its group "
        "or others (mode 1777)\n",
    )


class ServerAs:
    """A listening socket bound here and listening in a child process of user ``uid``:
    SO_PEERCRED tells a client the user who called listen(). The child takes one
    connection and reports what it received."""

    def __init__(self, path: Path, uid: int, gid: int) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(path))
        ready_r, ready_w = os.pipe()
        self.report, report_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns into pytest
            try:
                os.setgid(gid)
                os.setuid(uid)
                sock.listen()
                os.write(ready_w, b"r")
                sock.settimeout(20)
                conn, _ = sock.accept()
                conn.settimeout(5)
                data = conn.recv(65536)
                os.write(report_w, data or b"-")
            finally:
                os._exit(0)
        os.close(ready_w)
        os.close(report_w)
        sock.close()
        assert os.read(ready_r, 1) == b"r"
        os.close(ready_r)

    def received(self) -> bytes | None:
        """What the client sent: b"" if it connected and sent nothing, None if it never
        connected."""
        data = os.read(self.report, 65536)
        os.close(self.report)
        os.waitpid(self.pid, 0)
        return None if not data else b"" if data == b"-" else data


@NEEDS_ROOT
def test_a_server_of_another_user_is_refused(
    env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The directory is root's, as /run/batchd would be; the server on it is nobody's.
    server = ServerAs(env, nobody().pw_uid, nobody().pw_gid)
    assert submit(tmp_path) == 2
    assert server.received() == b""  # connected, checked, closed: nothing sent
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"qsub: refusing the socket {env}: the server on it runs as nobody, ")
    assert "expected root" in err and "BATCHD_DAEMON_USER" in err


@NEEDS_ROOT
def test_batchd_daemon_user_names_the_daemons_user(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BATCHD_DAEMON_USER", "nobody")
    server = ServerAs(env, nobody().pw_uid, nobody().pw_gid)
    assert qstat.main([]) == 2  # the stand-in hangs up without answering
    assert (server.received() or b"").startswith(b"GET /jobs")
    assert "refusing" not in capsys.readouterr().err


def test_an_unknown_batchd_daemon_user_is_an_error(
    env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("BATCHD_DAEMON_USER", "no-such-user-x")
    assert qstat.main([]) == 2
    assert capsys.readouterr() == ("", "qstat: BATCHD_DAEMON_USER='no-such-user-x': no such user\n")


def test_trusted_users() -> None:
    me = os.geteuid()
    trusted = transport.trusted_users()
    assert trusted[0] == "root" and me in trusted
    assert set(trusted) <= {0, me, *(u.pw_uid for u in pwd.getpwall() if u.pw_name == "batchd")}
    assert transport.trusted_users("4242")[4242] == "4242"


def test_the_readme_export_line_is_the_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """README: ``export BATCHD_SOCKET=...  # the default`` is where a daemon started
    without --socket listens, with or without XDG_RUNTIME_DIR."""
    line = next(
        line
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("export BATCHD_SOCKET=")
    )
    value = line.removeprefix("export BATCHD_SOCKET=").partition("  #")[0]
    monkeypatch.setattr(transport, "SYSTEM_SOCKET", str(tmp_path / "no-system-daemon.sock"))
    for runtime in ("/run/user/4242", None):
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        if runtime is None:
            monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
        else:
            env["XDG_RUNTIME_DIR"] = runtime
            monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
        shell = subprocess.run(
            ["sh", "-c", f"echo {value}"], env=env, capture_output=True, text=True, check=True
        )
        assert shell.stdout.strip() == transport.default_socket()
