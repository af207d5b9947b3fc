"""The state files hold every job script: only the daemon's user may read them.

state.db, its -wal and -shm are 0600 and a directory the daemon makes for them 0700,
whatever the umask (docs/operations.md, "State").
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchd.server.store import Store


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
    old.execute("CREATE TABLE t (x)")
    old.execute("INSERT INTO t VALUES (1)")
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
