"""State saved in the store comes back after a restart: jobs, nodes, reservations, policy.

The first service is driven through the API, then its store is closed; a second service
restores from the same file on a clock at the saved time or later, and is served again.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from api_helpers import T0, Api, new_service, nodes, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.model.times import CLOCK_MAX
from batchd.server.service import BatchService
from batchd.server.store import SaveError, Store

# Fields that depend on the clock's now rather than on the saved state.
MOVING = ("elapsed",)


def still(jobs: list[dict]) -> dict[str, dict]:
    return {j["id"]: {k: v for k, v in j.items() if k not in MOVING} for j in jobs}


async def _first_life(api: Api) -> None:
    """At t=0..100, on 8 nodes (fcfs-easy, switched to fcfs-cons at t=20):

    1 alice 4 nodes, walltime 1000, runs 500 -> R [0, 500) on node001-004
    2 bob   4 nodes, walltime  300           -> R [0, 300) on node005-008
    3 alice 7 nodes, walltime  200           -> Q, planned at 1000 (job 1's estimated end)
    4 alice held (u)                         -> H
    5 bob   depends on afterok:1             -> H (s)
    6 alice exec_time 2000                   -> W
    7 bob   deleted while queued             -> F cancelled
    R1: 2 nodes at 5000 for 100 s            -> CO
    node008 offline while job 2 runs         -> offline,job-exclusive
    """
    await api.submit("alice", nodes=4, walltime=1000, runtime=500)
    await api.submit("bob", nodes=4, walltime=300)
    await api.submit("alice", nodes=7, walltime=200)
    await api.submit("alice", hold=True)
    await api.submit("bob", nodes=2, walltime=100, depend="afterok:1")
    await api.submit("alice", nodes=1, walltime=100, exec_time=T0 + 2000)
    await api.submit("bob", nodes=1, walltime=100)
    api.at(10)
    await api.call("bob", "DELETE", "/jobs/7")
    api.at(20)
    await api.call("boss", "PATCH", "/scheduler", {"policy": "fcfs-cons"})
    req = {"start": T0 + 5000, "duration": 100, "nodes": 2}
    await api.call("boss", "POST", "/reservations", req, status=201)
    await api.call("oper", "PATCH", "/nodes/node008", {"state": "offline", "comment": "ecc"})
    api.at(100)


async def test_restart_restores_every_job(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        await _first_life(api)
        before = await api.jobs()
        nodes_before = (await api.call("alice", "GET", "/nodes"))["nodes"]
        resv_before = (await api.call("alice", "GET", "/reservations"))["reservations"]
        sched_before = await api.call("alice", "GET", "/scheduler")
    # The store is closed: a second daemon on the same file, 50 s later.
    svc = BatchService(site_config(), VirtualClock(T0 + 150), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        after = await api.jobs()
        assert still(after) == still(before)
        states = {j["id"]: j["state"] for j in after}
        assert states == {
            "1.mini": "R", "2.mini": "R", "3.mini": "Q", "4.mini": "H",
            "5.mini": "H", "6.mini": "W", "7.mini": "F",
        }  # fmt: skip
        one = next(j for j in after if j["id"] == "1.mini")
        assert (one["stime"], one["exec_host"], one["elapsed"]) == (T0, nodes(1, 2, 3, 4), 150)
        assert next(j for j in after if j["id"] == "3.mini")["est_start"] == T0 + 1000
        assert (await api.call("alice", "GET", "/nodes"))["nodes"] == nodes_before
        assert (await api.call("alice", "GET", "/reservations"))["reservations"] == resv_before
        sched = await api.call("alice", "GET", "/scheduler")
        assert (sched["policy"], sched["switches"]) == ("fcfs-cons", sched_before["switches"])
        server = await api.call("alice", "GET", "/server")
        assert (server["started"], server["now"]) == (T0, T0 + 150)

        # Running jobs end when they would have: job 2 at 300, job 1 at 500.
        api.at(300)
        two = await api.job(2)
        assert (two["state"], two["end_time"], two["outcome"]) == ("F", T0 + 300, "ok")
        assert (await api.node_states())["node008"] == "offline"  # it stays out
        api.at(500)
        one = await api.job(1)
        assert (one["state"], one["end_time"]) == ("F", T0 + 500)
        # Job 3 takes the 7 nodes in service [500, 700); job 5's dependency is met at 500,
        # but it queues behind job 3 (both submitted at 0) and runs at 700.
        three = await api.job(3)
        assert (three["state"], three["stime"], three["exec_host"]) == (
            "R", T0 + 500, nodes(*range(1, 8)),
        )  # fmt: skip
        five = await api.job(5)
        assert (five["state"], five["hold_types"], five["est_start"]) == ("Q", "", T0 + 700)
        api.at(700)
        five = await api.job(5)
        assert (five["state"], five["stime"], five["exec_host"]) == ("R", T0 + 700, nodes(1, 2))
        api.at(2000)
        six = await api.job(6)
        assert (six["state"], six["stime"]) == ("R", T0 + 2000)

        # Ids go on where they stopped: no reuse of job or reservation numbers.
        body = await api.submit("bob")
        assert body["id"] == "8.mini"
        req = {"start": T0 + 9000, "duration": 10, "nodes": 1}
        body = await api.call("boss", "POST", "/reservations", req, status=201)
        assert body["id"] == "R2.mini"
        api.at(5000)
        resv = await api.call("alice", "GET", "/reservations/R1")
        assert (resv["state"], len(resv["node_list"])) == ("RN", 2)


async def test_restart_twice_keeps_ids_and_finished_jobs(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        await api.submit("alice", nodes=2, walltime=100, runtime=50)
        api.at(60)
        await api.submit("alice", nodes=2, walltime=100)
    for restart, now in enumerate((T0 + 60, T0 + 70)):
        svc = BatchService(site_config(), VirtualClock(now), Store(path), daemon_user="batchd")
        svc.restore(Store(path).load())
        async with start_api(svc) as api:
            jobs = {j["id"]: j for j in await api.jobs()}
            assert (jobs["1.mini"]["state"], jobs["1.mini"]["end_time"]) == ("F", T0 + 50)
            assert (jobs["2.mini"]["state"], jobs["2.mini"]["stime"]) == ("R", T0 + 60)
            assert len(jobs) == 2 + restart
            body = await api.submit("bob", hold=True)
            assert body["id"] == f"{3 + restart}.mini"


def test_restore_refuses_a_clock_before_the_saved_time(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    svc = new_service(path)
    svc.clock.set(T0 + 100)  # type: ignore[attr-defined]
    svc.tick()
    svc.store.close()  # type: ignore[union-attr]
    late = BatchService(site_config(), VirtualClock(T0 + 99), Store(path), daemon_user="batchd")
    with pytest.raises(ValueError, match=f"saved at emulated time {T0 + 100}"):
        late.restore(Store(path).load())


def _restart(path: Path, now: int) -> BatchService:
    svc = BatchService(site_config(), VirtualClock(now), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    return svc


async def test_restart_keeps_an_open_reservation(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        req = {"start": "now", "duration": 500, "nodes": 2, "name": "keep"}
        await api.call("boss", "POST", "/reservations", req, status=201)
        await api.submit("alice", nodes=6, walltime=1000)  # node003-008
        api.at(100)
        before = await api.call("alice", "GET", "/reservations/R1")
        assert (before["state"], before["node_list"]) == ("RN", nodes(1, 2))
    async with start_api(_restart(path, T0 + 150)) as api:
        assert await api.call("alice", "GET", "/reservations/R1") == before
        states = await api.node_states()
        assert [states[n] for n in nodes(1, 2, 3)] == ["resv-exclusive"] * 2 + ["job-exclusive"]
        wide = await api.submit("bob", nodes=2, walltime=10)
        assert (wide["state"], wide["est_start"]) == ("Q", T0 + 500)
        api.at(500)
        assert (await api.call("alice", "GET", "/reservations/R1"))["state"] == "FN"
        assert (await api.job(2))["exec_host"] == nodes(1, 2)


async def test_restart_after_a_reservation_window_passed(tmp_path: Path) -> None:
    # R1 over [200, 300) was confirmed when the daemon stopped at 100; it restarts at 1000.
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        req = {"start": T0 + 200, "duration": 100, "nodes": 8}
        await api.call("boss", "POST", "/reservations", req, status=201)
        api.at(100)
        await api.jobs()
    async with start_api(_restart(path, T0 + 1000)) as api:
        resv = await api.call("alice", "GET", "/reservations/R1")
        assert resv["state"] == "FN"
        body = await api.submit("alice", nodes=8, walltime=10)
        assert (body["state"], body["stime"]) == ("R", T0 + 1000)


async def test_restart_after_downtime_ends_overdue_jobs(tmp_path: Path) -> None:
    # Saved at 100: job 1 runs [0, 300) on all nodes, job 2 (8 nodes) waits for it.
    # The daemon comes back at 600: job 1 has ended meanwhile; job 2 cannot have started
    # before the scheduler was back, and time never runs backwards.
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        await api.submit("alice", nodes=8, walltime=300)
        await api.submit("bob", nodes=8, walltime=300)
        api.at(100)
        await api.jobs()
    async with start_api(_restart(path, T0 + 600)) as api:
        one, two = await api.job(1), await api.job(2)
        assert one["state"] == "F" and T0 + 300 <= one["end_time"] <= T0 + 600
        assert (two["state"], two["stime"]) == ("R", T0 + 600)
        api.at(601)
        two = await api.job(2)
        assert (two["state"], two["stime"]) == ("R", T0 + 600)
        assert (await api.call("alice", "GET", "/server"))["now"] == T0 + 601


async def test_the_time_an_answer_shows_is_saved_before_it_leaves(tmp_path: Path) -> None:
    # Reads change nothing, but a crash after one must not resume the clock before the
    # time it showed: the file is what a restart after kill -9 reads.
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        for offset, route in ((100, "/server"), (250, "/jobs"), (251, "/nodes")):
            api.at(offset)
            body = await api.call("alice", "GET", route)
            assert body["now"] == T0 + offset
            assert Store(path).load().meta["now"] == T0 + offset, route


async def test_no_answer_saves_a_clock_past_its_last_date(tmp_path: Path) -> None:
    # Between the clock passing its last date and the scheduling loop noticing (up to a
    # wall second), an answer catches the engine up: to the last date, never beyond it,
    # so that the state file stays one a daemon can start from.
    path = tmp_path / "state.db"
    async with start_api(new_service(path, start=CLOCK_MAX - 10)) as api:
        api.clock.set(CLOCK_MAX + 998)
        body = await api.call("alice", "GET", "/server")
        assert body["now"] == CLOCK_MAX
        assert Store(path).load().meta["now"] == CLOCK_MAX


async def test_a_change_is_logged_once_it_is_saved(tmp_path: Path) -> None:
    # A kill -9 between the log line and the commit left job_submitted lines for jobs
    # that were never saved (and whose number the next job took). A failing commit
    # stands for that moment: the change is refused and undone, and nothing is logged.
    path = tmp_path / "state.db"
    svc = new_service(path)
    store = svc.store
    assert store is not None
    saving = store.commit

    def disk_error() -> bool:
        if store.pending:
            raise SaveError("disk I/O error")
        return False

    async with start_api(svc) as api:
        svc.save()  # the clock saved, so that only the submission is pending below
        store.commit = disk_error  # type: ignore[method-assign]
        with capture_logs() as logs:
            status, _ = await api.raw("alice", "POST", "/jobs", {"nodes": 1})
        assert status == 503
        assert "job_submitted" not in [e["event"] for e in logs]
        store.commit = saving  # type: ignore[method-assign]
        later = time.monotonic() + 3600
        svc.saving.wall = lambda: later  # the retry is due
        with capture_logs() as logs:
            status, _ = await api.raw("alice", "POST", "/jobs", {"nodes": 1})
        assert status == 201
        submitted = [e.get("job") for e in logs if e["event"] == "job_submitted"]
        assert submitted == ["1.mini"]
        assert [r["seq"] for r in Store(path).load().jobs] == [1]
