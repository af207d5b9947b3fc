"""The daemon's state in SQLite (WAL): jobs, reservations, node states and settings.

Writes are gathered and committed in one transaction; the daemon commits
before it answers a request that changed something, so an acknowledged
submission survives ``kill -9``. Rows hold JSON documents: the store never
needs to query inside them, it only reloads everything at start.

A commit that fails (a full disk, an I/O error) is rolled back whole and raises
``SaveError`` with SQLite's cause; the writes stay gathered, so the next commit
tries them again, unless the caller ``discard``s them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from batchd.server.paths import make_dirs

Sync = Literal["full", "normal"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (seq INTEGER PRIMARY KEY, state TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS reservations (seq INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    machine INTEGER NOT NULL, node INTEGER NOT NULL, state TEXT NOT NULL, comment TEXT,
    PRIMARY KEY (machine, node)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
VERSION = 1


class StoreError(ValueError):
    """A state file that cannot be opened or read."""


class SaveError(Exception):
    """A commit that did not happen: nothing of it was written. ``cause`` is SQLite's word."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


def _make_private(path: Path) -> None:
    """state.db and its -wal and -shm readable by the daemon's user only (job scripts are
    in them), whatever the umask: the database is made 0600 before SQLite opens it, and
    SQLite gives the -wal and -shm it creates the database's mode. Files left by an older
    batchd are narrowed to 0600 too."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o600)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            if stat.S_IMODE(side.stat().st_mode) != 0o600:
                side.chmod(0o600)


@dataclass
class Saved:
    meta: dict[str, Any] = field(default_factory=dict)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    reservations: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[tuple[int, int, str, str | None]] = field(default_factory=list)


class Store:
    def __init__(self, path: str | Path, sync: Sync = "full") -> None:
        self.path = Path(path)
        self._jobs: dict[int, tuple[str, str]] = {}
        self._resvs: dict[int, str] = {}
        self._nodes: dict[tuple[int, int], tuple[str, str | None] | None] = {}
        self._meta: dict[str, str] = {}
        try:
            make_dirs(self.path.parent, 0o700)
            _make_private(self.path)
            self.db = sqlite3.connect(self.path, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={sync.upper()}")
            self.db.executescript(SCHEMA)
            version = self._meta_value("schema_version")
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.path}: cannot open the state database: {exc}") from None
        if version is None:
            self.put_meta("schema_version", VERSION)
            try:
                self.commit()
            except SaveError as exc:
                raise StoreError(f"{self.path}: cannot write the state database: {exc}") from None
        elif version != VERSION:
            raise StoreError(
                f"{self.path}: state schema version {version}, this batchd reads {VERSION}"
            )

    def _meta_value(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def load(self) -> Saved:
        try:
            saved = Saved()
            saved.meta = {
                k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")
            }
            saved.jobs = [
                json.loads(d) for (d,) in self.db.execute("SELECT data FROM jobs ORDER BY seq")
            ]
            saved.reservations = [
                json.loads(d)
                for (d,) in self.db.execute("SELECT data FROM reservations ORDER BY seq")
            ]
            saved.nodes = list(self.db.execute("SELECT machine, node, state, comment FROM nodes"))
        except (sqlite3.Error, ValueError) as exc:
            raise StoreError(f"{self.path}: cannot read the state database: {exc}") from None
        return saved

    # -- gathered writes ----------------------------------------------------------
    def put_job(self, row: dict[str, Any]) -> None:
        self._jobs[row["seq"]] = (row["state"], json.dumps(row, separators=(",", ":")))

    def put_reservation(self, row: dict[str, Any]) -> None:
        self._resvs[row["seq"]] = json.dumps(row, separators=(",", ":"))

    def put_node(self, machine: int, node: int, state: str | None, comment: str | None) -> None:
        """A node's state other than in service; None clears it."""
        self._nodes[(machine, node)] = None if state is None else (state, comment)

    def put_meta(self, key: str, value: Any) -> None:
        self._meta[key] = json.dumps(value, separators=(",", ":"))

    @property
    def pending(self) -> bool:
        return bool(self._jobs or self._resvs or self._nodes or self._meta)

    def discard(self) -> None:
        """Forget the gathered writes (a change that is undone instead of saved)."""
        self._jobs.clear()
        self._resvs.clear()
        self._nodes.clear()
        self._meta.clear()

    def commit(self) -> bool:
        """Write what was gathered in one transaction; False if there was nothing to write."""
        if not self.pending:
            return False
        db = self.db
        db.execute("BEGIN")
        try:
            if self._jobs:
                db.executemany(
                    "INSERT OR REPLACE INTO jobs (seq, state, data) VALUES (?, ?, ?)",
                    [(k, s, d) for k, (s, d) in self._jobs.items()],
                )
            if self._resvs:
                db.executemany(
                    "INSERT OR REPLACE INTO reservations (seq, data) VALUES (?, ?)",
                    list(self._resvs.items()),
                )
            for (machine, node), value in self._nodes.items():
                if value is None:
                    db.execute("DELETE FROM nodes WHERE machine = ? AND node = ?", (machine, node))
                else:
                    db.execute(
                        "INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?)", (machine, node, *value)
                    )
            if self._meta:
                db.executemany(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                    list(self._meta.items()),
                )
            db.execute("COMMIT")
        except BaseException as exc:
            # SQLite rolls back by itself after a full disk or an I/O error; a ROLLBACK
            # then fails ("no transaction is active") and must not hide the cause.
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error | OSError):
                raise SaveError(str(exc)) from exc
            raise
        self.discard()
        return True

    def close(self) -> None:
        try:
            self.commit()
        finally:
            self.db.close()
