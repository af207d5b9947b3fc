"""Finished jobs leave memory for the history in the database, and are purged from it.

A finished job is saved with its views and dropped from the service's memory;
``GET /jobs`` lists the history from the database, paged, in id order, before
and after a restart; ``job_history_duration`` (emulated time) purges it; the
dependencies and the counts of finished jobs stay right.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from pathlib import Path

import pytest

from api_helpers import T0, Api, headers, jid, new_service, serve, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.model.job import Job
from batchd.model.states import JobState
from batchd.server import listing
from batchd.server.schemas import JobBriefList, JobList
from batchd.server.service import BatchService
from batchd.server.store import Store

BRIEF = {
    "id", "seq", "name", "owner", "queue", "state", "nodes", "walltime",
    "stime", "est_start", "elapsed", "front_end", "workdir", "account", "slurm",
    "pending_reason", "term_signal", "resource_list", "array",
}  # fmt: skip


def finished_jobs_in_memory() -> set[int]:
    """The finished Job objects alive in this process (by id: other tests may leave some)."""
    gc.collect()
    return {id(o) for o in gc.get_objects() if isinstance(o, Job) and o.state is JobState.FINISHED}


async def run_six(api: Api) -> None:
    """Jobs 1-6 on 8 nodes, one node each, runtimes 10..60: all finished at 60; 7 runs on."""
    for i in range(6):
        await api.submit("alice" if i % 2 else "bob", nodes=1, walltime=100, runtime=10 * (i + 1))
    api.at(60)
    await api.submit("alice", nodes=1, walltime=1000)  # 7: running


async def page_ids(api: Api, query: str, limit: int) -> list[list[str]]:
    """Every page of a paged listing, following ``next``."""
    pages: list[list[str]] = []
    after = 0
    while True:
        body = await api.call("alice", "GET", f"/jobs?{query}&limit={limit}&after={after}")
        JobList.model_validate(body)
        pages.append([j["id"] for j in body["jobs"]])
        if body["next"] is None:
            return pages
        after = body["next"]
        assert after == body["jobs"][-1]["seq"]


async def test_finished_jobs_leave_memory_but_stay_listed(api: Api) -> None:
    before = finished_jobs_in_memory()
    await run_six(api)
    svc = api.svc
    assert list(svc.records) == [7]
    assert svc.engine.finished == [] and svc.engine.ended == 6
    assert finished_jobs_in_memory() <= before
    assert list(svc.scheduler.gates[0].classes) == [7]  # the gate forgets ended jobs too
    # The history: from the database, in id order, with the unfinished job in its place.
    jobs = await api.jobs("history=true")
    assert [j["id"] for j in jobs] == [jid(i) for i in range(1, 8)]
    assert [j["state"] for j in jobs] == ["F"] * 6 + ["R"]
    assert [j["end_time"] for j in jobs[:6]] == [T0 + 10 * (i + 1) for i in range(6)]
    assert [j["id"] for j in await api.jobs("")] == [jid(7)]
    assert [j["id"] for j in await api.jobs("state=F&user=alice")] == [jid(2), jid(4), jid(6)]
    assert [j["id"] for j in await api.jobs("history=true&user=alice,bob&state=FR")] == [
        jid(i) for i in range(1, 8)
    ]
    # One finished job by id, read back from the database (and still not kept).
    job = await api.job(3)
    assert job == jobs[2]
    assert (job["state"], job["outcome"], job["exit_status"]) == ("F", "ok", None)  # emulated
    assert job["comment"] == "Job run and finished (no process ran: the job was emulated)"
    assert finished_jobs_in_memory() <= before
    # qdel of a finished job still says it has finished.
    await api.error(
        "bob", "DELETE", "/jobs/3", status=409, code="conflict", says="already finished"
    )


async def test_history_pages_follow_the_cursor(api: Api) -> None:
    await run_six(api)
    assert await page_ids(api, "history=true", 3) == [
        [jid(1), jid(2), jid(3)],
        [jid(4), jid(5), jid(6)],
        [jid(7)],
    ]
    assert await page_ids(api, "history=true", 7) == [[jid(i) for i in range(1, 8)]]
    assert await page_ids(api, "history=true&user=alice", 2) == [[jid(2), jid(4)], [jid(6), jid(7)]]
    assert await page_ids(api, "state=F", 6) == [[jid(i) for i in range(1, 7)]]
    # A page of brief jobs: the fields of the tables, the same values as the full view.
    full = {j["id"]: j for j in await api.jobs("history=true")}
    body = await api.call("alice", "GET", "/jobs?history=true&brief=true&limit=4&after=2")
    JobBriefList.model_validate(body)
    assert [j["id"] for j in body["jobs"]] == [jid(3), jid(4), jid(5), jid(6)]
    assert body["next"] == 6
    for j in body["jobs"]:
        assert set(j) == BRIEF
        whole = full[j["id"]]
        assert j == {k: whole[k] for k in BRIEF - {"resource_list"}} | {
            "resource_list": {k: whole["resource_list"][k] for k in ("ncpus", "nodect")}
        }


async def test_a_listing_sent_whole_comes_in_chunks(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    await run_six(api)
    paged = await api.jobs("history=true")
    monkeypatch.setattr(listing, "CHUNK", 2)
    resp = await api.client.get("/jobs?history=true", headers=headers("alice"))
    assert resp.headers.get("Transfer-Encoding") == "chunked"
    body = json.loads(await resp.read())
    JobList.model_validate(body)
    assert body["jobs"] == paged and body["next"] is None
    resp = await api.client.get("/jobs?state=Q", headers=headers("alice"))
    assert json.loads(await resp.read())["jobs"] == []


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("limit=0", "limit: expected an integer from 1 to 10000, got '0'"),
        ("limit=10001", "limit: expected an integer from 1 to 10000"),
        ("limit=ten", "limit: expected an integer"),
        ("after=-1", "after: expected an integer from 0"),
        ("brief=maybe", "brief: expected true or false, got 'maybe'"),
        ("page=2", "unknown query parameter 'page'"),
    ],
)
async def test_bad_listing_queries(api: Api, query: str, says: str) -> None:
    await api.error("alice", "GET", f"/jobs?{query}", status=400, code="bad_request", says=says)


async def test_history_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        await run_six(api)
        before = await api.jobs("history=true")
    svc = BatchService(site_config(), VirtualClock(T0 + 60), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    assert list(svc.records) == [7]  # only the unfinished job came back into memory
    assert svc.history.count == 6
    async with start_api(svc) as api:
        after = await api.jobs("history=true")
        assert after == before
        assert await page_ids(api, "state=F", 4) == [
            [jid(1), jid(2), jid(3), jid(4)],
            [jid(5), jid(6)],
        ]
        assert (await api.call("alice", "GET", "/server"))["jobs"]["F"] == 6


async def test_purged_after_the_history_duration(tmp_path: Path) -> None:
    async with serve(tmp_path, site_config(job_history_duration=1000)) as api:
        await run_six(api)
        server = await api.call("alice", "GET", "/server")
        assert (server["job_history_duration"], server["jobs"]["F"]) == (1000, 6)
        # Ended at 10..60: job 1 is gone once it ended more than 1000 s ago.
        api.at(1010)
        assert len(await api.jobs("state=F")) == 6
        api.at(1011)
        assert [j["id"] for j in await api.jobs("history=true")] == [jid(i) for i in range(2, 8)]
        await api.error("alice", "GET", "/jobs/1", status=404, code="not_found",
                        says="Unknown Job Id 1.mini")  # fmt: skip
        await api.error("alice", "POST", "/jobs", {"depend": "afterok:1"}, status=400,
                        code="bad_request", says="unknown job id 1.mini")  # fmt: skip
        api.at(1045)
        server = await api.call("alice", "GET", "/server")
        assert server["jobs"]["F"] == 2
        rows = api.svc.store.db.execute("SELECT seq FROM jobs ORDER BY seq").fetchall()
        assert rows == [(5,), (6,), (7,)]
        # A manager shortens it live: the rest goes at once.
        await api.error("alice", "PATCH", "/server", {"job_history_duration": 10},
                        status=403, code="forbidden")  # fmt: skip
        await api.error("boss", "PATCH", "/server", {"job_history_duration": 0},
                        status=400, code="bad_request", says="must be positive")  # fmt: skip
        body = await api.call("boss", "PATCH", "/server", {"job_history_duration": "00:16:40"})
        assert (body["job_history_duration"], body["jobs"]["F"]) == (1000, 2)
        body = await api.call("boss", "PATCH", "/server", {"job_history_duration": 10})
        assert (body["job_history_duration"], body["jobs"]["F"]) == (10, 0)
        assert [j["id"] for j in await api.jobs("history=true")] == [jid(7)]
    # The value a manager set is saved, and wins over the config at the next start.
    path = tmp_path / "state.db"
    site = site_config(job_history_duration=1000)
    svc = BatchService(site, VirtualClock(T0 + 2000), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    assert svc.history.duration == 10
    svc.reload(site)
    assert svc.history.duration == 10
    svc.store.close()


async def test_dependencies_on_jobs_gone_from_memory(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    before = finished_jobs_in_memory()
    async with start_api(new_service(path)) as api:
        await api.submit("alice", nodes=2, walltime=100, runtime=10)  # 1: ok at 10
        await api.submit("alice", nodes=2, walltime=20, runtime=50)  # 2: walltime at 20
        await api.submit("alice", nodes=2, walltime=1000)  # 3: runs on
        # 4 waits for 1 (ends first) and 3; 5 for 3 and for 2 to fail; 6 for 2 to end ok.
        await api.submit("bob", nodes=1, walltime=100, depend="afterok:1:3")
        await api.submit("bob", nodes=1, walltime=100, depend="afterok:3,afternotok:2")
        await api.submit("bob", nodes=1, walltime=100, depend="afterok:2")
        api.at(30)
        assert (await api.job(6))["outcome"] == "dependency"  # 2 ended at its walltime
        assert sorted(api.svc.records) == [3, 4, 5]
        assert finished_jobs_in_memory() <= before
        # Submitted after 1 and 2 left memory: judged from the history.
        ok = await api.submit("bob", nodes=1, walltime=100, depend="afterok:1")  # 7
        assert (ok["state"], ok["stime"]) == ("R", T0 + 30)
        notok = await api.submit("bob", nodes=1, walltime=100, depend="afternotok:2")  # 8
        assert notok["state"] == "R"
        anyway = await api.submit("bob", nodes=1, walltime=100, depend="afterany:1:2")  # 9
        assert anyway["state"] == "R"
        await api.error("bob", "POST", "/jobs", {"depend": "afterok:2"}, status=400,
                        code="bad_request", says=("never", "walltime"))  # fmt: skip
        await api.error("bob", "POST", "/jobs", {"depend": "afternotok:1"}, status=400,
                        code="bad_request", says="never")  # fmt: skip
        held = await api.job(4)
        assert (held["state"], held["hold_types"], held["depend"]) == ("H", "s", "afterok:1:3")
    # After a restart, 3 ends: 4 and 5 run, though 1 and 2 are only in the history.
    svc = BatchService(site_config(), VirtualClock(T0 + 30), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    assert sorted(svc.records) == [3, 4, 5, 7, 8, 9]
    async with start_api(svc) as api:
        await api.call("alice", "DELETE", "/jobs/3")
        api.at(40)
        jobs = {j["seq"]: j for j in await api.jobs("history=true")}
        assert (jobs[3]["state"], jobs[3]["outcome"]) == ("F", "cancelled")
        # 4 waited for 3 to end ok: it did not, so 4 never runs; 5 as well.
        assert (jobs[4]["state"], jobs[4]["outcome"]) == ("F", "dependency")
        assert (jobs[5]["state"], jobs[5]["outcome"]) == ("F", "dependency")


async def test_counts_of_finished_jobs_stay_right(api: Api) -> None:
    await run_six(api)
    await api.submit("bob", nodes=1, hold=True)  # 8: held
    await api.call("bob", "DELETE", "/jobs/8")  # finished unrun
    server = await api.call("alice", "GET", "/server")
    assert server["jobs"] == {"Q": 0, "H": 0, "W": 0, "R": 1, "E": 0, "F": 7}
    text = (await (await api.client.get("/metrics")).read()).decode()
    assert 'batchd_jobs_completed_total{outcome="ok",queue="workq"} 6.0' in text
    assert 'batchd_jobs_completed_total{outcome="cancelled",queue="workq"} 1.0' in text
    assert 'batchd_jobs{queue="workq",state="running"} 1.0' in text


async def test_a_state_file_from_before_the_history(tmp_path: Path) -> None:
    """Version 1 kept finished jobs as plain rows: they are migrated and shown."""
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        await run_six(api)
        before = await api.jobs("history=true")
    db = sqlite3.connect(path)
    rows = db.execute("SELECT seq, state, data FROM jobs").fetchall()
    db.executescript(
        "DROP TABLE jobs; DROP INDEX IF EXISTS jobs_ended;"
        "CREATE TABLE jobs (seq INTEGER PRIMARY KEY, state TEXT NOT NULL, data TEXT NOT NULL);"
        "UPDATE meta SET value = '1' WHERE key = 'schema_version';"
    )
    db.executemany("INSERT INTO jobs VALUES (?, ?, ?)", rows)
    db.commit()
    db.close()
    svc = BatchService(site_config(), VirtualClock(T0 + 60), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    assert list(svc.records) == [7]
    async with start_api(svc) as api:
        assert await api.jobs("history=true") == before
