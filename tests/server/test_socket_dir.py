"""Where the daemon puts its socket (docs/operations.md, "The socket and who is calling").

It makes its own directory 0755, owned by itself, so every user reaches the socket
and nobody else can put one there; it refuses a directory another user owns or that
others may write, and one in a directory that another user could replace.
"""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchd.server.daemon import ServeError, claim_socket
from batchd.server.paths import default_socket
from paths import ROOT

NEEDS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to make a directory owned by nobody"
)
ME = pwd.getpwuid(os.geteuid()).pw_name


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def give_to_nobody(path: Path) -> None:
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody on this host")
    os.chown(path, nobody.pw_uid, nobody.pw_gid)


@pytest.fixture(params=[0o000, 0o077], ids=["umask000", "umask077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def refusal(sock: Path) -> str:
    with pytest.raises(ServeError) as exc:
        claim_socket(sock)
    assert "\n" not in str(exc.value)
    return str(exc.value)


def test_the_daemon_makes_its_own_directory_0755(tmp_path: Path, umask: int) -> None:
    sock = tmp_path / "run" / "batchd" / "batchd.sock"
    claim_socket(sock)
    assert mode(sock.parent) == 0o755  # every user reaches the socket; nobody else writes
    assert mode(sock.parent.parent) == 0o700  # a missing parent is private, as a runtime dir
    assert os.stat(sock.parent).st_uid == os.geteuid()
    claim_socket(sock)  # its own directory, again


@pytest.mark.parametrize("bits", [0o777, 0o1777, 0o775, 0o757])
def test_a_directory_others_may_write_is_refused(tmp_path: Path, bits: int) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    os.chmod(folder, bits)
    assert refusal(folder / "batchd.sock") == (
        f"socket directory {folder} is writable by its group or others (mode {bits:04o}): "
        "chmod 755 it or give --socket elsewhere"
    )


@NEEDS_ROOT
def test_a_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir(mode=0o755)
    give_to_nobody(folder)
    assert refusal(folder / "batchd.sock") == (
        f"socket directory {folder} is owned by nobody, not by {ME} who runs batchd: "
        "remove it or give --socket elsewhere"
    )
    assert list(folder.iterdir()) == []


@NEEDS_ROOT
def test_a_squatted_runtime_directory_is_refused(tmp_path: Path) -> None:
    # /tmp/batchd-UID made first by another user, open to all: the daemon would make its
    # own directory inside, which that user could move away. Nothing is made there.
    squat = tmp_path / "batchd-0"
    squat.mkdir()
    os.chmod(squat, 0o777)
    give_to_nobody(squat)
    sock = squat / "batchd" / "batchd.sock"
    assert refusal(sock) == (
        f"socket directory {sock.parent} is in {squat}, owned by nobody, who could replace it: "
        "give --socket elsewhere"
    )
    assert list(squat.iterdir()) == []


def test_a_parent_others_may_write_must_be_sticky(tmp_path: Path) -> None:
    above = tmp_path / "shared"
    above.mkdir()
    os.chmod(above, 0o777)
    sock = above / "batchd" / "batchd.sock"
    assert refusal(sock) == (
        f"socket directory {sock.parent} is in {above}, which its group or others may write "
        "and is not sticky (mode 0777): give --socket elsewhere"
    )
    os.chmod(above, 0o1777)  # as /tmp: nobody else may move the daemon's directory
    claim_socket(sock)
    assert mode(sock.parent) == 0o755


def test_a_file_at_the_socket_path_is_left_alone(tmp_path: Path) -> None:
    precious = tmp_path / "passwd"
    precious.write_text("root:x:0:0\n")
    assert refusal(precious) == f"{precious} exists and is not a socket: give --socket another path"
    assert precious.read_text() == "root:x:0:0\n"


def test_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNTIME_DIRECTORY", "/run/batchd")  # systemd's RuntimeDirectory=batchd
    assert default_socket() == "/run/batchd/batchd.sock"
    monkeypatch.delenv("RUNTIME_DIRECTORY")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/4242")
    assert default_socket() == "/run/user/4242/batchd/batchd.sock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert default_socket() == f"/tmp/batchd-{os.geteuid()}/batchd/batchd.sock"


def test_serve_refuses_before_touching_the_state(tmp_path: Path) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    os.chmod(folder, 0o777)
    state = tmp_path / "state" / "state.db"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(
        [sys.executable, "-m", "batchd.cli", "serve", "--config", str(ROOT / "conf/hpcline96.toml"),
         "--socket", str(folder / "batchd.sock"), "--state", str(state)],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == (
        f"batchd: error: socket directory {folder} is writable by its group or others "
        "(mode 0777): chmod 755 it or give --socket elsewhere\n"
    )
    assert not state.parent.exists()
