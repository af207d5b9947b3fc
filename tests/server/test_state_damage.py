"""A damaged state file: the daemon refuses to start, names the file and what is wrong
in it, and leaves it as it was (docs/operations.md, "State and restarts").

One state is saved by a real daemon (jobs, a reservation, a node out of service);
each test damages a copy of it and starts ``batchd serve`` on that copy.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from batchd.cli import main
from daemon_proc import Daemon
from paths import ROOT

ARGS = ("--speed", "100")
DAMAGED = "the state file is damaged: restore it from a backup, or start with another --state"


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A state file holding jobs, a reservation and a node out of service."""
    d = Daemon(tmp_path_factory.mktemp("saved"), *ARGS)
    with d:
        for nodes in (4, 96, 2):
            status, body = d.call("POST", "/jobs", {"nodes": nodes, "walltime": 3600})
            assert status == 201, body
        now = d.call("GET", "/server")[1]["now"]
        status, body = d.call(
            "POST", "/reservations", {"start": now + 90000, "duration": 600, "nodes": 2}
        )
        assert status == 201, body
        status, body = d.call("PATCH", "/nodes/node008", {"state": "offline", "comment": "ecc"})
        assert status == 200, body
        time.sleep(0.2)
        assert d.stop() == 0
    return d.state


def damaged_copy(saved: Path, tmp: Path, *sql: str) -> Path:
    db = tmp / "state.db"
    shutil.copy(saved, db)
    with sqlite3.connect(db) as con:
        for statement in sql:
            con.execute(statement)
    con.close()
    return db


def digest(db: Path) -> tuple[str, list[str]]:
    """The database's bytes and the state files beside it."""
    files = sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name))
    return hashlib.sha256(db.read_bytes()).hexdigest(), files


def refused(db: Path) -> str:
    """``batchd serve``'s one line of refusal on ``db``, run in a process of its own (exit
    code 2), which must leave the file as it was."""
    d = Daemon(db.parent / "run", *ARGS)
    d.argv[d.argv.index("--state") + 1] = str(db)
    before = digest(db)
    proc = subprocess.run(
        d.argv, capture_output=True, text=True, timeout=60, cwd=ROOT, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 2, proc.stderr
    assert digest(db) == before
    # Before the refusal the daemon may log (as JSON lines) loading its kernels.
    said = [line for line in proc.stderr.splitlines() if not line.startswith("{")]
    assert len(said) == 1 and proc.stderr.endswith(said[0] + "\n"), proc.stderr
    assert said[0].startswith(f"batchd: error: {db}: ")
    return said[0].removeprefix(f"batchd: error: {db}: ")


def refused_here(db: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """The same refusal from ``batchd serve`` run in this process (as quick as a daemon
    start allows: no interpreter to start)."""
    sock = db.parent / "run" / "batchd.sock"
    sock.parent.mkdir(exist_ok=True)
    before = digest(db)
    code = main(["serve", "--config", str(ROOT / "conf/hpcline96.toml"), "--socket", str(sock),
                 "--state", str(db), *ARGS])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert digest(db) == before
    said = [line for line in err.splitlines() if line.startswith("batchd: error: ")]
    assert len(said) == 1 and said[0].startswith(f"batchd: error: {db}: "), err
    return said[0].removeprefix(f"batchd: error: {db}: ")


@pytest.fixture(autouse=True)
def keep_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    """``batchd serve`` run in this process must not point the logs at a captured stream."""
    monkeypatch.setattr("batchd.server.logs.setup_logging", lambda *args: None)


def test_the_saved_state_starts(saved: Path, tmp_path: Path) -> None:
    """The copy the tests damage starts as it is (the refusals below are the damage's)."""
    db = damaged_copy(saved, tmp_path)
    d = Daemon(tmp_path, *ARGS)
    with d:
        jobs = d.call("GET", "/jobs")[1]["jobs"]
        assert len(jobs) == 3
        assert len(d.call("GET", "/reservations")[1]["reservations"]) == 1
        assert d.stop() == 0
    assert db == d.state


@pytest.mark.parametrize("table", ["jobs", "reservations", "nodes", "meta", "job_events"])
def test_a_dropped_table_is_refused(
    saved: Path, tmp_path: Path, table: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = damaged_copy(saved, tmp_path, f"DROP TABLE {table}")
    # One in a process of its own, as an operator meets it; the others in this one.
    message = refused(db) if table == "jobs" else refused_here(db, capsys)
    assert message.startswith(f"no table {table}: it holds ")
    assert message.endswith(f"; {DAMAGED}")


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "UPDATE jobs SET data = '{\"seq\": 2' WHERE seq = 2",
            "table jobs, row seq 2: its data is not a JSON object",
        ),
        (
            "UPDATE jobs SET data = 42 WHERE seq = 1",
            "table jobs, row seq 1: its data is not a JSON object",
        ),
        (
            "UPDATE jobs SET data = json_remove(data, '$.submit') WHERE seq = 3",
            "table jobs, row seq 3: it has no 'submit'",
        ),
        (
            "UPDATE jobs SET data = json_set(data, '$.state', 'Z') WHERE seq = 1",
            "table jobs, row seq 1: ValueError: 'Z' is not a valid JobState",
        ),
        (
            "UPDATE reservations SET data = json_remove(data, '$.end')",
            "table reservations, row seq 1: it has no 'end'",
        ),
        (
            "UPDATE nodes SET machine = 'zero'",
            "table nodes, row machine 'zero' node 7: state 'offline', comment 'ecc' are not a "
            "node's state",
        ),
        ("UPDATE meta SET value = 'x{' WHERE key = 'seq'", "table meta, key seq: 'x{' is not JSON"),
        (
            "DELETE FROM meta WHERE key = 'schema_version'",
            "table meta: no schema_version",
        ),
        ("DELETE FROM meta WHERE key != 'schema_version'", "table meta: no saved clock (key now), yet jobs has rows"),
    ],
    ids=["cut-json", "number", "no-key", "bad-state", "resv", "node-column", "meta", "version",
         "meta-rows"],
)  # fmt: skip
def test_a_damaged_row_is_refused(
    saved: Path, tmp_path: Path, sql: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = damaged_copy(saved, tmp_path, sql)
    assert refused_here(db, capsys) == f"{message}; {DAMAGED}"


def test_a_file_that_is_no_state_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE notes (text)")
    con.close()
    assert refused(db) == (
        f"no table jobs, reservations, nodes, meta, job_events: it holds notes; {DAMAGED}"
    )


def test_a_version_2_file_without_job_events_is_opened(saved: Path, tmp_path: Path) -> None:
    """Version 2 files written before job_events existed start, and become version 3;
    a version 3 file without it is damaged (tested above)."""
    db = damaged_copy(
        saved,
        tmp_path,
        "DROP TABLE job_events",
        "UPDATE meta SET value = '2' WHERE key = 'schema_version'",
    )
    d = Daemon(tmp_path, *ARGS)
    with d:
        assert len(d.call("GET", "/jobs")[1]["jobs"]) == 3
        assert d.stop() == 0
    assert db == d.state
    with sqlite3.connect(db) as con:
        (version,) = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        tables = {n for (n,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    con.close()
    assert version == "3" and "job_events" in tables
