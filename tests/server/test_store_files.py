"""The state files hold every job script: only the daemon's user may read them.

state.db, its -wal and -shm are 0600 and a directory the daemon makes for them 0700,
whatever the umask (docs/operations.md, "State"). A state file or directory another
user owns, or a symbolic link by a state file's name, is refused and left as it was.
"""

from __future__ import annotations

import os
import pwd
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchd.server.store import SCHEMA, Store, StoreError
from paths import ROOT
from users import need_root, open_dir, user

ME = pwd.getpwuid(os.geteuid()).pw_name


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def files(db: Path) -> list[Path]:
    return [db, db.with_name("state.db-wal"), db.with_name("state.db-shm")]


@pytest.fixture(params=[0o000, 0o022], ids=["umask000", "umask022"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def test_state_files_are_private(tmp_path: Path, umask: int) -> None:
    db = tmp_path / "state" / "batchd" / "state.db"
    store = Store(db)
    store.put_job(
        {
            "seq": 1,
            "state": "Q",
            "owner": "alice",
            "queue": "workq",
            "end": -1,
            "script": "export API_KEY=secret\n",
        }
    )
    store.commit()
    try:
        assert [mode(f) for f in files(db)] == [0o600] * 3  # the WAL holds the script
        assert mode(db.parent) == mode(db.parent.parent) == 0o700
    finally:
        store.close()


def test_state_files_of_an_older_batchd_are_narrowed(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    old = sqlite3.connect(db)  # kept open: its -wal and -shm stay, as after a crash
    old.execute("PRAGMA journal_mode=WAL")
    old.executescript(SCHEMA)
    old.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    old.commit()
    for f in files(db):
        os.chmod(f, 0o644)
    store = Store(db)
    try:
        assert [mode(f) for f in files(db)] == [0o600] * 3
    finally:
        store.close()
        old.close()


def test_a_store_in_memory_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = Store(":memory:")
    store.put_meta("k", "v")
    store.commit()
    assert list(tmp_path.iterdir()) == []


# -- files another user made, and symbolic links: refused, and left as they were --------


def refusal(db: Path) -> str:
    with pytest.raises(StoreError) as exc:
        Store(db)
    assert "\n" not in str(exc.value)
    return str(exc.value)


def test_a_state_file_another_user_made_first_in_a_shared_directory_is_refused() -> None:
    need_root()
    shared = open_dir("batchd-shared-")  # as /tmp
    db = shared / "state.db"
    for name in ("state.db", "state.db-wal"):  # made by nobody before the daemon starts
        subprocess.run(["runuser", "-u", "nobody", "--", "touch", str(shared / name)], check=True)
    planted = {p.name: (p.stat().st_uid, mode(p), p.stat().st_size) for p in shared.iterdir()}
    assert refusal(db) == (
        f"state directory {shared} is writable by its group or others (mode 1777): another "
        f"user could make the state files there first; give --state a file in a directory "
        f"of {ME}'s own"
    )
    assert {p.name: (p.stat().st_uid, mode(p), p.stat().st_size) for p in shared.iterdir()} == (
        planted
    )


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_a_state_file_of_another_user_is_refused(tmp_path: Path, suffix: str) -> None:
    need_root()
    who = user("nobody")
    db = tmp_path / "state.db"
    theirs = tmp_path / f"state.db{suffix}"
    theirs.write_bytes(b"")
    os.chown(theirs, who.uid, who.gid)
    theirs.chmod(0o644)
    assert refusal(db) == (
        f"state file {theirs} is owned by nobody, not by {ME} who runs batchd, and could be "
        "read by them: remove it, or give --state a file of your own"
    )
    assert os.stat(theirs).st_uid == who.uid and mode(theirs) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == [theirs.name]


@pytest.mark.parametrize("suffix", ["", "-wal", "-shm", "-journal"])
def test_a_symbolic_link_by_a_state_files_name_is_refused(tmp_path: Path, suffix: str) -> None:
    victim = tmp_path / "shadow"
    victim.write_text("root:*:19000::::::\n")
    victim.chmod(0o640)
    folder = tmp_path / "state"
    folder.mkdir(mode=0o700)
    link = folder / f"state.db{suffix}"
    link.symlink_to(victim)
    assert refusal(folder / "state.db") == (
        f"state file {link} is a symbolic link (to {victim}), which batchd does not follow: "
        "remove it, or give --state the file itself"
    )
    assert mode(victim) == 0o640 and victim.read_text() == "root:*:19000::::::\n"
    assert [p.name for p in folder.iterdir()] == [link.name]


def test_a_state_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    need_root()
    who = user("nobody")
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, who.uid, who.gid)
    assert refusal(folder / "state.db") == (
        f"state directory {folder} is owned by nobody, not by {ME} who runs batchd: "
        f"give --state a file in a directory of {ME}'s own"
    )
    assert list(folder.iterdir()) == []


def test_a_symlinked_state_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    folder = tmp_path / "state"
    folder.symlink_to(real)
    assert refusal(folder / "state.db") == (
        f"state directory {folder}: {folder} is a symbolic link (to {real}): give --state elsewhere"
    )
    assert list(real.iterdir()) == []


def test_serve_refuses_a_state_file_in_a_shared_directory(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(
        [sys.executable, "-m", "batchd.cli", "serve", "--config", str(ROOT / "conf/hpcline96.toml"),
         "--socket", str(tmp_path / "run" / "batchd.sock"), "--state", str(shared / "state.db")],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr == (
        f"batchd: error: state directory {shared} is writable by its group or others "
        "(mode 1777): another user could make the state files there first; give --state a "
        f"file in a directory of {ME}'s own\n"
    )
    assert list(shared.iterdir()) == []
