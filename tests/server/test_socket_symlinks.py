"""The socket's directory is reached without following another user's symbolic link.

A user who makes ``/tmp/batchd-<uid>`` first, as a symbolic link, and swaps its target
while the daemon starts must not lead the daemon to bind its socket, or open it up,
anywhere but in the directory it checked (docs/operations.md, "Nobody else's socket").
"""

from __future__ import annotations

import os
import pwd
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchd.server.daemon import ServeError, claim_socket
from batchd.server.socketdir import ClaimedSocket
from users import client_python, need_root, open_dir

NEEDS_ROOT = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root to make files owned by nobody"
)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def nobody() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody on this host")


def refusal(sock: Path) -> str:
    with pytest.raises(ServeError) as exc:
        claim_socket(sock)
    assert "\n" not in str(exc.value)
    return str(exc.value)


def roots_dir(base: Path) -> Path:
    """A directory of the daemon user's with a socket directory ready inside: what a
    link would point the daemon at to pass its checks."""
    base.mkdir(mode=0o755)
    (base / "batchd").mkdir(mode=0o755)
    return base


@pytest.fixture
def claims() -> Iterator[list[ClaimedSocket]]:
    made: list[ClaimedSocket] = []
    yield made
    for claimed in made:
        claimed.close()


def test_the_socket_is_made_in_the_checked_directory_open_to_all(
    tmp_path: Path, claims: list[ClaimedSocket]
) -> None:
    sock = tmp_path / "run" / "batchd" / "batchd.sock"
    old = os.umask(0o077)
    try:
        claims.append(claimed := claim_socket(sock))
        server = claimed.bind()
    finally:
        os.umask(old)
    try:
        assert stat.S_ISSOCK(os.lstat(sock).st_mode) and mode(sock) == 0o666
        server.listen()
        client = socket.socket(socket.AF_UNIX)
        client.connect(str(sock))  # clients find it by its path
        client.close()
    finally:
        server.close()
    claimed.close()
    assert not sock.exists()


@NEEDS_ROOT
def test_a_symlinked_runtime_directory_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # as /tmp
    target = roots_dir(tmp_path / "roots")
    link = shared / "batchd-0"
    link.symlink_to(target)
    os.lchown(link, nobody().pw_uid, nobody().pw_gid)
    sock = link / "batchd" / "batchd.sock"
    assert refusal(sock) == (
        f"socket directory {sock.parent}: {link} is a symbolic link (to {target}): "
        "remove it or give --socket elsewhere"
    )
    assert list((target / "batchd").iterdir()) == []


def test_a_symlinked_socket_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    folder = tmp_path / "run" / "batchd"
    folder.symlink_to(elsewhere)
    assert refusal(folder / "batchd.sock") == (
        f"socket directory {folder}: {folder} is a symbolic link (to {elsewhere}): "
        "remove it or give --socket elsewhere"
    )
    assert list(elsewhere.iterdir()) == []


@NEEDS_ROOT
def test_a_directory_on_the_way_of_another_user_is_refused(tmp_path: Path) -> None:
    # theirs/mine is root's, but the owner of theirs may rename mine and put another there.
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, nobody().pw_uid, nobody().pw_gid)
    (theirs / "mine").mkdir(mode=0o755)
    sock = theirs / "mine" / "batchd" / "batchd.sock"
    assert refusal(sock) == (
        f"socket directory {sock.parent}: {theirs} is owned by nobody, who could replace it: "
        "give --socket elsewhere"
    )
    assert list((theirs / "mine").iterdir()) == []


@NEEDS_ROOT
def test_a_link_on_the_way_is_followed_only_when_the_daemons_user_made_it(
    tmp_path: Path, claims: list[ClaimedSocket]
) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o755)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    ours = shared / "ours"
    ours.symlink_to(real)  # as /var/run -> /run
    claims.append(claim_socket(ours / "run" / "batchd" / "batchd.sock"))
    assert mode(real / "run" / "batchd") == 0o755
    theirs = shared / "theirs"
    theirs.symlink_to(real)
    os.lchown(theirs, nobody().pw_uid, nobody().pw_gid)
    sock = theirs / "run" / "batchd" / "batchd.sock"
    assert refusal(sock) == (
        f"socket directory {sock.parent}: {theirs} is a symbolic link made by nobody "
        f"(to {real}): remove it or give --socket elsewhere"
    )


@NEEDS_ROOT
def test_a_directory_swapped_after_the_check_gets_no_socket(tmp_path: Path) -> None:
    # The swap is made between the check and the bind: the socket is made in the
    # directory checked (then removed), and nothing at all in the other.
    victim = tmp_path / "victim"
    victim.write_text("secret\n")
    victim.chmod(0o600)
    lair = tmp_path / "lair"
    lair.mkdir(mode=0o777)
    (lair / "batchd.sock").symlink_to(victim)
    sock = tmp_path / "run" / "batchd" / "batchd.sock"
    claimed = claim_socket(sock)
    try:
        sock.parent.rename(tmp_path / "moved")
        sock.parent.symlink_to(lair)
        with pytest.raises(ServeError) as exc:
            claimed.bind()
    finally:
        claimed.close()
    assert str(exc.value) == (
        f"socket directory {sock.parent}: {sock.parent} is a symbolic link (to {lair}): "
        "remove it or give --socket elsewhere (found after binding the socket)"
    )
    assert [p.name for p in lair.iterdir()] == ["batchd.sock"]
    assert (lair / "batchd.sock").is_symlink()
    assert mode(victim) == 0o600 and victim.read_text() == "secret\n"
    assert list((tmp_path / "moved").iterdir()) == []


SWAPPER = """
import os, sys, time
link, roots, lair, victim, seconds = sys.argv[1:6]
end = time.monotonic() + float(seconds)
bound = 0
while time.monotonic() < end:
    for target in (roots, lair):
        try:
            os.symlink(target, link + ".new")
            os.rename(link + ".new", link)
        except OSError:
            pass
        found = os.path.join(lair, "batchd", "batchd.sock")
        if os.path.lexists(found) and not os.path.islink(found):
            bound += 1
            try:  # what the attack does next: the socket's name leads to the victim
                os.rename(found, found + ".seen")
                os.symlink(victim, found)
            except OSError:
                pass
print(bound)
"""


def test_a_link_swapped_in_a_loop_never_leads_the_daemon_elsewhere(
    claims: list[ClaimedSocket],
) -> None:
    """Another user swaps /tmp/batchd-<uid> between a directory of root's and one of
    their own while the daemon claims and binds its socket, again and again."""
    need_root()
    who = nobody()
    shared = open_dir("batchd-race-")
    roots = roots_dir(open_dir("batchd-roots-") / "d")
    lair = open_dir("batchd-lair-")
    os.chown(lair, who.pw_uid, who.pw_gid)
    (lair / "batchd").mkdir(mode=0o777)
    os.chown(lair / "batchd", who.pw_uid, who.pw_gid)
    victim = roots / "victim"
    victim.write_text("secret\n")
    victim.chmod(0o600)
    link = shared / "batchd-0"
    child = subprocess.Popen(
        ["runuser", "-u", "nobody", "--", client_python(), "-c", SWAPPER,
         str(link), str(roots), str(lair), str(victim), "2.5"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        ready = time.monotonic() + 10
        while not os.path.lexists(link) and time.monotonic() < ready:
            time.sleep(0.01)
        deadline = time.monotonic() + 1.5
        tries = refused = 0
        while time.monotonic() < deadline:
            tries += 1
            try:
                claims.append(claimed := claim_socket(link / "batchd" / "batchd.sock"))
                claimed.bind().close()
                claimed.close()
            except ServeError as exc:
                refused += 1
                assert "is a symbolic link" in str(exc), exc
        out, _ = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait()
    assert tries > 50 and refused == tries
    assert out.strip() == "0"  # no socket ever appeared in the other user's directory
    assert list((lair / "batchd").iterdir()) == []
    assert mode(victim) == 0o600 and victim.read_text() == "secret\n"
    assert sorted(p.name for p in (roots / "batchd").iterdir()) == []
