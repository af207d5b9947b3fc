"""A state file that takes no writes: a full disk, an I/O error.

Two ways to make saving fail. ``PRAGMA max_page_count`` at the database's size
makes it really full: SQLite answers SQLITE_FULL and rolls the transaction back
itself. ``FailingCommits`` stands in for the store's connection and fails every
COMMIT with SQLite's message while it is told to, as a broken disk does.

What must hold: a change gets 503 naming the cause and leaves nothing behind,
in memory or in the file; reads answer; the clock and the jobs that start and
end go on and are saved once saving works again; the cause is logged once.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from api_helpers import T0, jid, new_service, serve, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.feed import ReplayFeed
from batchd.server.service import BatchService
from batchd.server.service.saving import SaveStatus
from batchd.server.store import Saved, SaveError, Store, StoreError

FULL = "database or disk is full"
IOERR = "disk I/O error"
SCRIPT = "#!/bin/sh\n" + "echo a line of a long job script\n" * 1000  # needs new pages


class FailingCommits:
    """A store's connection whose COMMIT fails with ``cause`` while ``failing`` is set."""

    def __init__(self, db: sqlite3.Connection, cause: str = IOERR) -> None:
        self.db = db
        self.cause = cause
        self.failing = False
        self.failed = 0

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if self.failing and sql == "COMMIT":
            self.failed += 1
            raise sqlite3.OperationalError(self.cause)
        return self.db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.db, name)


def broken_disk(svc: BatchService) -> FailingCommits:
    assert svc.store is not None
    disk = FailingCommits(svc.store.db)
    svc.store.db = disk  # type: ignore[assignment]
    return disk


def fill(db: sqlite3.Connection) -> None:
    """The database may not grow by one more page: a full disk, as SQLite reports it."""
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")


def make_room(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA max_page_count = 1073741823")


def on_disk(path: Path) -> Saved:
    """What a restart would find in the state file, with the finished jobs of the
    history among the jobs (a restart leaves those in the database)."""
    store = Store(path)
    try:
        saved = store.load()
        seqs = [seq for (seq,) in store.db.execute("SELECT seq FROM jobs WHERE state = 'F'")]
        saved.jobs += [row for seq in seqs if (row := store.finished_row(seq)) is not None]
        saved.jobs.sort(key=lambda j: j["seq"])
        return saved
    finally:
        store.close()


def restarted(path: Path, at: int) -> BatchService:
    svc = BatchService(site_config(), VirtualClock(at), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    return svc


def events(logs: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [e for e in logs if e["event"] == name]


def retry_due(svc: BatchService) -> None:
    """Wall time passes beyond any backoff."""
    later = time.monotonic() + 3600
    svc.saving.wall = lambda: later


def test_a_failed_commit_names_its_cause_and_keeps_its_writes(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    fill(store.db)
    store.put_job(
        {"seq": 1, "state": "Q", "owner": "alice", "queue": "workq", "end": -1, "script": SCRIPT}
    )
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


async def test_qsub_on_a_full_disk_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        svc = api.svc
        assert svc.store is not None
        await api.submit("alice", nodes=2, walltime=600)
        before = await api.state()
        fill(svc.store.db)
        with capture_logs() as logs:
            await api.error(
                "alice",
                "POST",
                "/jobs",
                {"nodes": 1, "script": SCRIPT},
                status=503,
                code="unavailable",
                says=(f"the state could not be saved: {FULL}", "nothing was changed"),
            )
            assert await api.state() == before
            for path_ in ("/jobs", "/jobs/1", "/nodes", "/queues", "/scheduler", "/healthz"):
                await api.call("alice", "GET", path_)
            assert (await api.call("alice", "GET", "/server"))["state_save_error"] == FULL
            metrics = await api.call(None, "GET", "/metrics")
            assert "batchd_state_save_failing 1.0" in metrics
            # Too soon for a retry: refused at once, without trying.
            await api.error("alice", "POST", "/jobs", {}, status=503, code="unavailable", says=FULL)
            make_room(svc.store.db)
            retry_due(svc)
            body = await api.submit("alice", nodes=1, script="#!/bin/sh\n")
            assert body["id"] == jid(2)  # the refused job took no id
            metrics = await api.call(None, "GET", "/metrics")
            assert "batchd_state_save_failing 0.0" in metrics
            assert (await api.call("alice", "GET", "/server"))["state_save_error"] is None
        assert [e["error"] for e in events(logs, "state_save_failing")] == [FULL]
        assert len(events(logs, "state_save_recovered")) == 1
        assert len(events(logs, "change_undone")) == 1
        assert [e["job"] for e in events(logs, "job_submitted")] == [jid(2)]  # the saved one
        after = await api.jobs()
    svc = restarted(path, T0 + 10)
    async with start_api(svc) as api:
        assert [j["id"] for j in await api.jobs()] == [j["id"] for j in after] == [jid(1), jid(2)]


async def test_the_clock_and_the_jobs_go_on_and_are_saved_once_the_disk_works(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        svc = api.svc
        wall = [0.0]
        svc.saving.wall = lambda: wall[0]
        await api.submit("alice", nodes=8, walltime=100)  # runs [0, 100)
        await api.submit("bob", nodes=8, walltime=1000)  # queued, starts at 100
        disk = broken_disk(svc)
        disk.failing = True
        with capture_logs() as logs:
            api.at(150)
            svc.tick()  # job 1 ends and job 2 starts at 100: neither is saved
            for t in range(151, 160):  # heartbeats, 0.5 wall s apart: retries back off
                wall[0] += 0.5
                api.at(t)
                svc.tick()
            assert disk.failed == 3  # at 0, at 1 (+1 s), at 3 (+2 s); the next at 7
            jobs = {j["id"]: j["state"] for j in await api.jobs()}
            assert jobs == {jid(1): "F", jid(2): "R"}
            saved = on_disk(path)
            assert {j["seq"]: j["state"] for j in saved.jobs} == {1: "R", 2: "Q"}
            assert saved.meta["now"] == T0
            await api.error("bob", "POST", "/jobs", {}, status=503, code="unavailable", says=IOERR)
            disk.failing = False
            wall[0] += 60
            api.at(200)
            svc.tick()
            saved = on_disk(path)
            assert {j["seq"]: j["state"] for j in saved.jobs} == {1: "F", 2: "R"}
            assert saved.meta["now"] == T0 + 200
            assert (await api.submit("alice"))["id"] == jid(3)
        assert [e["error"] for e in events(logs, "state_save_failing")] == [IOERR]
        assert len(events(logs, "state_save_recovered")) == 1
        assert not events(logs, "change_undone")  # the loop's records were kept, not undone
    svc = restarted(path, T0 + 200)
    async with start_api(svc) as api:
        one, two, three = await api.jobs()
        assert (one["state"], one["end_time"]) == ("F", T0 + 100)
        assert (two["state"], two["stime"]) == ("R", T0 + 100)
        assert three["state"] == "Q"  # behind job 2


# Each change: (caller, method, path, body, status when it works).
CHANGES = {
    "qsub": ("alice", "POST", "/jobs", {"nodes": 2, "walltime": 60}, 201),
    "qdel running": ("alice", "DELETE", "/jobs/1", None, 200),
    "qdel queued": ("bob", "DELETE", "/jobs/2", None, 200),
    "qhold": ("bob", "POST", "/jobs/2/hold", {"types": "u"}, 200),
    "qrls": ("alice", "POST", "/jobs/3/release", {"types": "u"}, 200),
    "qalter": ("bob", "PATCH", "/jobs/2", {"walltime": 100}, 200),
    "node down": ("oper", "PATCH", "/nodes/node001", {"state": "down"}, 200),
    "node offline": ("oper", "PATCH", "/nodes/node008", {"state": "offline"}, 200),
    "reservation": (
        "boss", "POST", "/reservations", {"start": "asap", "duration": 100, "nodes": 2}, 201,
    ),
    "reservation deleted": ("boss", "DELETE", "/reservations/R1", None, 200),
    "policy": ("boss", "PATCH", "/scheduler", {"policy": "sjf-cons"}, 200),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CHANGES))
async def test_a_change_whose_commit_fails_is_undone(tmp_path: Path, name: str) -> None:
    who, method, url, body, ok = CHANGES[name]
    path = tmp_path / "state.db"
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=4, walltime=1000)  # 1: R on node001-004
        await api.submit("bob", nodes=8, walltime=300)  # 2: Q behind it
        await api.submit("alice", hold=True)  # 3: H
        req = {"start": T0 + 5000, "duration": 100, "nodes": 2}
        await api.call("boss", "POST", "/reservations", req, status=201)
        api.at(10)
        before = await api.state()
        saved_before = on_disk(path)
        disk = broken_disk(api.svc)
        disk.failing = True  # nothing waits to be saved: the change's own commit fails
        await api.error(
            who,
            method,
            url,
            body,
            status=503,
            code="unavailable",
            says=(IOERR, "nothing was changed"),
        )
        assert disk.failed == 1
        assert await api.state() == before
        assert on_disk(path) == saved_before
        disk.failing = False
        retry_due(api.svc)
        await api.call(who, method, url, body, status=ok)
        assert await api.state() != before


async def test_a_replay_goes_on_where_the_state_file_has_it_after_an_undo(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    svc = new_service(path)
    svc.replay = ReplayFeed.starting_now(svc, "synthetic:40", shrink=0.05, seed=3)
    svc.replay.start()
    svc.commit()
    total = len(svc.replay.jobs)
    async with start_api(svc) as api:
        api.at(300)
        svc.tick()
        injected = svc.replay.cursor
        assert 0 < injected < total
        disk = broken_disk(svc)
        disk.failing = True
        await api.error("alice", "POST", "/jobs", {}, status=503, code="unavailable", says=IOERR)
        assert svc.replay.cursor == injected
        assert len(await api.jobs()) == injected
        disk.failing = False
        retry_due(svc)
        svc.history.duration = 100_000_000  # keep every finished job listed
        api.at(10_000_000)
        svc.tick()
        names = [j["name"] for j in await api.jobs()]
        assert svc.replay.cursor == len(names) == len(set(names)) == total


async def test_a_state_file_that_cannot_be_read_back_stops_the_daemon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.db"
    async with serve(tmp_path) as api:
        svc = api.svc
        assert svc.store is not None
        stopped: list[bool] = []
        svc.on_lost.append(lambda: stopped.append(True))
        disk = broken_disk(svc)
        disk.failing = True

        def unreadable() -> Saved:
            raise StoreError(f"{path}: cannot read the state database: {IOERR}")

        monkeypatch.setattr(svc.store, "load", unreadable)
        await api.error(
            "alice", "POST", "/jobs", {}, status=503, code="unavailable", says="the daemon stops"
        )
        assert stopped == [True]
        await api.error("alice", "GET", "/jobs", status=503, code="unavailable", says=IOERR)
        disk.failing = False
        svc.tick()  # nothing is written any more: the refused job can never be
    assert on_disk(path).jobs == []


def test_retries_back_off_and_the_cause_is_logged_once() -> None:
    wall = [0.0]
    status = SaveStatus("state.db", wall=lambda: wall[0])
    status.max_retry = 8.0
    waits = []
    with capture_logs() as logs:
        for _ in range(6):
            status.failed(IOERR)
            start = wall[0]
            while not status.due():
                wall[0] += 0.25
            waits.append(wall[0] - start)
        status.failed(FULL)  # a new cause is worth a line
        status.saved()
        status.saved()
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert [e["error"] for e in events(logs, "state_save_failing")] == [IOERR, FULL]
    assert [e["failures"] for e in events(logs, "state_save_recovered")] == [7]
    assert not status.failing and status.due()
