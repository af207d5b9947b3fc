"""A state file that takes no writes: a full disk, an I/O error.

``PRAGMA max_page_count`` at the database's size makes it really full: SQLite
answers SQLITE_FULL and rolls the transaction back itself.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from batchd.server.store import Saved, SaveError, Store

FULL = "database or disk is full"
SCRIPT = "#!/bin/sh\n" + "echo a line of a long job script\n" * 1000  # needs new pages


def fill(db: sqlite3.Connection) -> None:
    """The database may not grow by one more page: a full disk, as SQLite reports it."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")


def make_room(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA max_page_count = 1073741823")


def on_disk(path: Path) -> Saved:
    """What a restart would find in the state file."""
    store = Store(path)
    try:
        return store.load()
    finally:
        store.close()


def test_a_failed_commit_names_its_cause_and_keeps_its_writes(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    fill(store.db)
    store.put_job({"seq": 1, "state": "Q", "script": SCRIPT})
    with pytest.raises(SaveError) as err:
        store.commit()
    # SQLite rolled back by itself; the cause is not hidden behind a failed ROLLBACK.
    assert err.value.cause == FULL
    assert store.pending and not store.db.in_transaction
    make_room(store.db)
    assert store.commit() is True
    assert not store.pending
    store.close()
    assert [j["seq"] for j in on_disk(tmp_path / "state.db").jobs] == [1]
