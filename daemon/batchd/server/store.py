"""The daemon's state in SQLite (WAL): jobs, reservations, node states and settings.

Each job's events (what ``tracejob`` prints) are kept in ``job_events``
until the job leaves the history.

Writes are gathered and committed in one transaction; the daemon commits
before it answers a request that changed something, so an acknowledged
submission survives ``kill -9``. Rows hold JSON documents, reloaded at start,
except those of finished jobs: they stay here only, with the owner, queue and
end time to select them by and their API views (full and brief) ready to send,
and are read back a page at a time (the job history, ``qstat -x``).

A commit that fails (a full disk, an I/O error) is rolled back whole and raises
``SaveError`` with SQLite's cause; the writes stay gathered, so the next commit
tries them again, unless the caller ``discard``s them.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from batchd.server.arrays import MAX_INDEX, SUBJOB_BASE, subjob_key
from batchd.server.statefiles import StateFileRefused, claim_state_files

Sync = Literal["full", "normal"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY, state TEXT NOT NULL, data TEXT NOT NULL,
    owner TEXT, queue TEXT, end_time INTEGER, view TEXT, brief TEXT
);
CREATE TABLE IF NOT EXISTS reservations (seq INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    machine INTEGER NOT NULL, node INTEGER NOT NULL, state TEXT NOT NULL, comment TEXT,
    PRIMARY KEY (machine, node)
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS job_events (
    seq INTEGER NOT NULL, time INTEGER NOT NULL, source TEXT NOT NULL, message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS job_events_seq ON job_events (seq);
"""
INDEXES = "CREATE INDEX IF NOT EXISTS jobs_ended ON jobs (end_time) WHERE state = 'F';"
# Version 1 kept only (seq, state, data) per job; version 2 adds the history's columns;
# version 3 is version 2 whose job_events table (added within version 2) is always there.
MIGRATE_1 = """
ALTER TABLE jobs ADD COLUMN owner TEXT;
ALTER TABLE jobs ADD COLUMN queue TEXT;
ALTER TABLE jobs ADD COLUMN end_time INTEGER;
ALTER TABLE jobs ADD COLUMN view TEXT;
ALTER TABLE jobs ADD COLUMN brief TEXT;
UPDATE jobs SET owner = json_extract(data, '$.owner'), queue = json_extract(data, '$.queue'),
    end_time = json_extract(data, '$.end');
"""
VERSION = 3
TABLES = ("jobs", "reservations", "nodes", "meta", "job_events")
JobRow = tuple[str, str, str, str, int, str | None, str | None]


class StoreError(ValueError):
    """A state file that cannot be opened or read."""


class SaveError(Exception):
    """A commit that did not happen: nothing of it was written. ``cause`` is SQLite's word."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


@dataclass
class Saved:
    meta: dict[str, Any] = field(default_factory=dict)
    jobs: list[dict[str, Any]] = field(default_factory=list)
    reservations: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[tuple[int, int, str, str | None]] = field(default_factory=list)


class Store:
    def __init__(self, path: str | Path, sync: Sync = "full") -> None:
        self.path = Path(path)
        self._jobs: dict[int, JobRow] = {}
        self._resvs: dict[int, str] = {}
        self._nodes: dict[tuple[int, int], tuple[str, str | None] | None] = {}
        self._meta: dict[str, str] = {}
        self._events: list[tuple[int, int, str, str]] = []
        if str(path) != ":memory:":
            try:
                claim_state_files(self.path)
            except StateFileRefused as exc:
                raise StoreError(str(exc)) from None
            except OSError as exc:
                raise StoreError(f"{self.path}: cannot open the state database: {exc}") from None
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.path}: cannot open the state database: {exc}") from None
        try:
            self._open(sync)
        except BaseException:
            self.db.close()  # a refused file is left closed, as it was
            raise

    def _open(self, sync: str) -> None:
        """Check the saved schema, then set the database up (migrated if old, made if new)."""
        try:
            version = self._saved_version()  # before anything is written
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(f"PRAGMA synchronous={sync.upper()}")
            self.db.executescript(SCHEMA)
            if version == 1:
                self._migrate_1()
                version = 2
            if version == 2:  # SCHEMA made job_events if it was missing
                self.put_meta("schema_version", VERSION)
                version = VERSION
            if version in (None, VERSION):
                self.db.executescript(INDEXES)
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

    def _migrate_1(self) -> None:
        """Add the history's columns; the views of old finished jobs are made at restore."""
        script = MIGRATE_1 + "INSERT OR REPLACE INTO meta VALUES ('schema_version', '2');"
        self.db.executescript(f"BEGIN;\n{script}\nCOMMIT;")

    def damaged(self, where: str, what: str) -> StoreError:
        return StoreError(
            f"{self.path}: {where}: {what}; the state file is damaged: restore it from a "
            "backup, or start with another --state"
        )

    def _saved_version(self) -> int | None:
        """The schema version of a state file saved before (None: a new, empty file). A
        file with some of the tables and not others, or without its version, is damaged:
        making the missing ones empty would start without what they held."""
        found = {
            name for (name,) in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if not found:
            return None
        version = self._meta_value("schema_version") if "meta" in found else None
        # Files of versions 1 and 2 may lack job_events: they get it when opened.
        missing = [
            t for t in TABLES if t not in found and not (version in (1, 2) and t == "job_events")
        ]
        if missing:
            raise self.damaged(
                "no table " + ", ".join(missing), "it holds " + ", ".join(sorted(found))
            )
        if version is None:
            raise self.damaged("table meta", "no schema_version")
        if isinstance(version, bool) or not isinstance(version, int):
            raise self.damaged("table meta, key schema_version", f"{version!r} is not a version")
        return version

    def _meta_value(self, key: str) -> Any:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else self._meta_json(key, row[0])

    def _meta_json(self, key: str, text: Any) -> Any:
        try:
            return json.loads(text)
        except (TypeError, ValueError):
            raise self.damaged(f"table meta, key {key}", f"{text!r} is not JSON") from None

    def _documents(self, table: str, sql: str) -> list[dict[str, Any]]:
        """The JSON objects in the data column of ``table``'s rows (seq, data)."""
        docs = []
        for seq, data in self.db.execute(sql):
            try:
                doc = json.loads(data)
            except (TypeError, ValueError):
                doc = None
            if not isinstance(doc, dict):
                raise self.damaged(f"table {table}, row seq {seq}", "its data is not a JSON object")
            docs.append(doc)
        return docs

    def _node_states(self) -> list[tuple[int, int, str, str | None]]:
        rows = list(self.db.execute("SELECT machine, node, state, comment FROM nodes"))
        for machine, node, state, comment in rows:
            if not (
                isinstance(machine, int)
                and isinstance(node, int)
                and isinstance(state, str)
                and isinstance(comment, str | None)
            ):
                raise self.damaged(
                    f"table nodes, row machine {machine!r} node {node!r}",
                    f"state {state!r}, comment {comment!r} are not a node's state",
                )
        return rows

    def check_new(self) -> None:
        """A state the daemon starts afresh (no saved clock: meta's ``now``, saved with every
        change) must hold nothing: rows mean the meta table lost its own, and a fresh start
        would leave them behind."""
        try:
            for table in ("jobs", "reservations", "nodes"):
                (rows,) = self.db.execute(f"SELECT count(*) FROM {table}").fetchone()
                if rows:
                    raise self.damaged(
                        "table meta", f"no saved clock (key now), yet {table} has rows"
                    )
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot read the state database: {exc}") from None

    def load(self) -> Saved:
        """What was saved; a row that cannot be read is a StoreError naming its table."""
        try:
            saved = Saved()
            for key, value in self.db.execute("SELECT key, value FROM meta"):
                saved.meta[key] = self._meta_json(key, value)
            saved.jobs = self._documents(
                "jobs", "SELECT seq, data FROM jobs WHERE state != 'F' ORDER BY seq"
            )
            saved.reservations = self._documents(
                "reservations", "SELECT seq, data FROM reservations ORDER BY seq"
            )
            saved.nodes = self._node_states()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot read the state database: {exc}") from None
        return saved

    # -- the job history: finished jobs, read back a page at a time ----------------
    def finished_count(self) -> int:
        row = self.db.execute("SELECT count(*) FROM jobs WHERE state = 'F'").fetchone()
        return int(row[0])

    def oldest_end(self) -> int | None:
        """When the finished job that ended first ended (None: no finished job)."""
        row = self.db.execute("SELECT min(end_time) FROM jobs WHERE state = 'F'").fetchone()
        return None if row[0] is None else int(row[0])

    def finished_row(self, seq: int) -> dict[str, Any] | None:
        row = self.db.execute(
            "SELECT data FROM jobs WHERE seq = ? AND state = 'F'", (seq,)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def finished_page(
        self,
        after: int,
        limit: int,
        owners: Sequence[str] | None = None,
        queue: str | None = None,
        *,
        brief: bool = False,
    ) -> list[tuple[int, str]]:
        """Up to ``limit`` finished jobs with seq > ``after``, in seq order: (seq, view).
        Jobs and arrays: subjobs are listed with their arrays (``finished_subjobs``)."""
        sql = (
            f"SELECT seq, {'brief' if brief else 'view'} FROM jobs "
            "WHERE state = 'F' AND seq > ? AND seq < ?"
        )
        args: list[Any] = [after, SUBJOB_BASE]
        if owners is not None:
            sql += f" AND owner IN ({', '.join('?' * len(owners))})"
            args += owners
        if queue is not None:
            sql += " AND queue = ?"
            args.append(queue)
        args.append(limit)
        return self.db.execute(sql + " ORDER BY seq LIMIT ?", args).fetchall()

    def finished_subjobs(self, seq: int, *, brief: bool = False) -> dict[int, str]:
        """The views of array ``seq``'s finished subjobs in the history, by index."""
        low = subjob_key(seq, 0)
        rows = self.db.execute(
            f"SELECT seq, {'brief' if brief else 'view'} FROM jobs "
            "WHERE state = 'F' AND seq BETWEEN ? AND ?",
            (low, low + MAX_INDEX),
        )
        return {int(key) - low: str(view) for key, view in rows if view is not None}

    def purge_finished(self, before: int) -> int:
        """Delete the finished jobs that ended before ``before``, with their events; how
        many jobs there were."""
        try:
            self.db.execute(
                "DELETE FROM job_events WHERE seq IN "
                "(SELECT seq FROM jobs WHERE state = 'F' AND end_time < ?)",
                (before,),
            )
            cur = self.db.execute("DELETE FROM jobs WHERE state = 'F' AND end_time < ?", (before,))
        except sqlite3.Error as exc:
            raise SaveError(str(exc)) from exc
        return cur.rowcount

    def events_of(self, seq: int) -> list[tuple[int, str, str]]:
        """A job's events, (time, source, message), in the order they happened."""
        rows = self.db.execute(
            "SELECT time, source, message FROM job_events WHERE seq = ? ORDER BY rowid", (seq,)
        )
        return [(int(t), str(src), str(msg)) for t, src, msg in rows]

    def unviewed(self, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` finished jobs saved without views (by a batchd before the history)."""
        rows = self.db.execute(
            "SELECT data FROM jobs WHERE state = 'F' AND view IS NULL LIMIT ?", (limit,)
        )
        return [json.loads(d) for (d,) in rows]

    def set_views(self, views: Sequence[tuple[str, str, int]]) -> None:
        """(view, brief, seq) of finished jobs."""
        self.db.execute("BEGIN")
        try:
            self.db.executemany("UPDATE jobs SET view = ?, brief = ? WHERE seq = ?", views)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- gathered writes ----------------------------------------------------------
    def put_job(
        self, row: dict[str, Any], view: str | None = None, brief: str | None = None
    ) -> None:
        """A job's row; a finished job's with its views (the API's JSON, full and brief)."""
        self._jobs[row["seq"]] = (
            row["state"],
            json.dumps(row, separators=(",", ":")),
            row["owner"],
            row["queue"],
            row["end"],
            view,
            brief,
        )

    def put_reservation(self, row: dict[str, Any]) -> None:
        self._resvs[row["seq"]] = json.dumps(row, separators=(",", ":"))

    def put_node(self, machine: int, node: int, state: str | None, comment: str | None) -> None:
        """A node's state other than in service; None clears it."""
        self._nodes[(machine, node)] = None if state is None else (state, comment)

    def put_meta(self, key: str, value: Any) -> None:
        self._meta[key] = json.dumps(value, separators=(",", ":"))

    def put_event(self, seq: int, time: int, source: str, message: str) -> None:
        """One line of a job's history (``tracejob``): a log source letter and a message."""
        self._events.append((seq, time, source, message))

    @property
    def pending(self) -> bool:
        return bool(self._jobs or self._resvs or self._nodes or self._meta or self._events)

    def discard(self) -> None:
        """Forget the gathered writes (a change that is undone instead of saved)."""
        self._jobs.clear()
        self._resvs.clear()
        self._nodes.clear()
        self._meta.clear()
        self._events.clear()

    def commit(self) -> bool:
        """Write what was gathered in one transaction; False if there was nothing to write."""
        if not self.pending:
            return False
        db = self.db
        db.execute("BEGIN")
        try:
            if self._jobs:
                db.executemany(
                    "INSERT OR REPLACE INTO jobs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(k, *row) for k, row in self._jobs.items()],
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
            if self._events:
                db.executemany("INSERT INTO job_events VALUES (?, ?, ?, ?)", self._events)
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

    def abandon(self) -> None:
        """Close without writing what was gathered (a start that was refused)."""
        self.discard()
        self.db.close()
