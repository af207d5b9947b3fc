"""GET /plan: the web page's data, its versions and deltas, and who may read it."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from api_helpers import NODES, T0, Api, headers, serve, site_config
from batchd.server import planfeed
from batchd.server.plan_schemas import PlanOut
from batchd.server.planview import DAY_STEP, PlanState, plan_state_steps
from batchd.server.service import BatchService
from batchd.site.config import SiteConfig


async def plan(
    api: Api, who: str | None = "alice", *, since: str | None = None, etag: str | None = None
) -> tuple[int, Any, str]:
    """GET /plan: the status, the body (validated as a PlanOut when 200) and the ETag."""
    h = headers(who)
    if etag is not None:
        h["If-None-Match"] = etag
    resp = await api.client.get("/plan", params={"since": since} if since else None, headers=h)
    raw = await resp.read()
    body: Any = None
    if raw:
        body = await resp.json()
    if resp.status == 200:
        PlanOut.model_validate(body)
    return resp.status, body, resp.headers.get("ETag", "")


def rows(body: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """The job rows of an answer by seq, as dicts, with reasons as text."""
    fields = body["fields"]
    out = {}
    for row in body["jobs"]:
        job = dict(zip(fields, row, strict=True))
        if job["reason"] is not None:
            job["reason"] = body["reasons"][job["reason"]]
        out[job["seq"]] = job
    return out


def infos(body: dict[str, Any]) -> dict[int, tuple[str, str, str]]:
    return {seq: (name, owner, queue) for seq, name, owner, queue in body["info"]}


async def test_the_plan_shows_what_the_jobs_api_shows(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=6, walltime=600, runtime=600, name="big")
        await api.submit("bob", nodes=4, walltime=300, name="waits")
        await api.submit("bob", nodes=2, walltime=300, queue="small", name="fits")
        await api.submit("alice", nodes=1, walltime=60, hold=True, name="held")
        status, body, etag = await plan(api)
        assert status == 200 and etag == f'"{body["version"]}"'
        assert body["base"] is None and body["caller"] == {"user": "alice", "role": "user"}
        listed = {j["seq"]: j for j in await api.jobs("")}
        got = rows(body)
        assert set(got) == set(listed)
        for seq, job in listed.items():
            row = got[seq]
            assert row["state"] == job["state"]
            assert row["nodes"] == job["nodes"] and row["walltime"] == job["walltime"]
            assert row["start"] == (job["stime"] if job["state"] == "R" else job["est_start"])
            assert infos(body)[seq] == (job["name"], job["owner"], job["queue"])
            if job["state"] != "R":
                assert row["reason"] == job["comment"], (row, job)
        # Running jobs carry their nodes as runs; the waiting one is in the plan's order.
        assert got[1]["alloc"] == [[0, 0, 6]] and got[3]["alloc"] == [[0, 6, 2]]
        assert body["order"] == [[2]]
        machine = body["machines"][0]
        assert machine["states"] == "a" * 8 and machine["allocated"] == NODES
        assert body["node_names"] == [[f"node{i:03d}" for i in range(1, NODES + 1)]]


async def test_nothing_changed_is_a_304_and_a_change_is_a_delta(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=8, walltime=600, runtime=600, name="fills")
        await api.submit("bob", nodes=2, walltime=300, name="first")
        _, whole, etag = await plan(api)
        v1 = whole["version"]
        status, body, again = await plan(api, since=v1, etag=etag)
        assert (status, body, again) == (304, None, etag)
        # Time passing with no event changes nothing the page draws.
        api.at(100)
        assert (await plan(api, since=v1, etag=etag))[0] == 304

        await api.submit("bob", nodes=3, walltime=300, name="second")
        status, delta, etag2 = await plan(api, since=v1, etag=etag)
        assert status == 200 and delta["base"] == v1 and etag2 != etag
        assert set(rows(delta)) == {3} and infos(delta) == {3: ("second", "bob", "workq")}
        assert delta["gone"] == [] and delta["order"] == [None]  # [2] + new ones by seq
        assert "node_names" not in delta

        await api.call("bob", "DELETE", "/jobs/2")
        status, delta2, _ = await plan(api, since=delta["version"], etag=etag2)
        assert status == 200 and delta2["gone"] == [2] and delta2["info"] == []
        # A version two behind, or of another run, gets the whole plan.
        for old in (v1, "00000000-1"):
            status, body, _ = await plan(api, since=old)
            assert status == 200 and body["base"] is None and set(rows(body)) == {1, 3}


async def test_a_poll_of_an_unchanged_plan_makes_no_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []

    def counted(svc: BatchService) -> Generator[None, None, PlanState]:
        made.append(svc.now)
        return plan_state_steps(svc)

    monkeypatch.setattr(planfeed, "plan_state_steps", counted)
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=8, walltime=600, runtime=600, name="fills")
        await api.submit("bob", nodes=2, walltime=300, name="waits")
        _, whole, etag = await plan(api)
        assert len(made) == 1
        for _ in range(3):
            assert (await plan(api, etag=etag))[0] == 304
        assert len(made) == 1  # the stamp alone answered
        api.at(100)  # the clock moved on, no event was due and no planned start reached
        assert (await plan(api, etag=etag))[0] == 304 and len(made) == 1
        await api.call("bob", "PATCH", "/jobs/2", {"name": "renamed"})
        status, body, etag2 = await plan(api, etag=etag)
        assert status == 200 and etag2 != etag and len(made) == 2
        assert infos(body)[2] == ("renamed", "bob", "workq")
        api.at(DAY_STEP)  # a new step of the utilization drawn: made again
        await plan(api, etag=etag2)
        assert len(made) == 3


async def test_a_new_order_is_sent_when_it_is_not_the_old_one_extended(tmp_path: Path) -> None:
    async with serve(tmp_path, site_config(policy="sjf-easy")) as api:
        await api.submit("alice", nodes=8, walltime=600, runtime=600)
        await api.submit("bob", nodes=2, walltime=3000)
        _, whole, _ = await plan(api)
        await api.submit("bob", nodes=2, walltime=60)  # shorter: served first under SJF
        _, delta, _ = await plan(api, since=whole["version"])
        assert delta["order"] == [[3, 2]]


async def test_every_role_sees_every_job(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=1, walltime=60, name="hers")
        await api.submit("bob", nodes=1, walltime=60, name="his")
        for who, role in (("bob", "user"), ("oper", "operator"), ("boss", "manager")):
            _, body, _ = await plan(api, who)
            assert body["caller"] == {"user": who, "role": role}
            assert {i[1] for i in body["info"]} == {"hers", "his"}


async def test_bad_requests_are_refused(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.error(None, "GET", "/plan", status=401, code="unauthorized")
        await api.error(
            "alice", "GET", "/plan?since=latest", status=400, code="bad_request", says="since"
        )
        await api.error(
            "alice", "GET", "/plan?after=3", status=400, code="bad_request", says="'after'"
        )
        await api.error("alice", "PUT", "/plan", {}, status=405, code="method_not_allowed")


async def test_nodes_reservations_and_windows(tmp_path: Path) -> None:
    site = SiteConfig.model_validate(
        {
            "machine": [{"name": "mini", "nodes": NODES}],
            "server": {"policy": "fcfs-easy", "timezone": "UTC"},
            "auth": {"operators": ["oper"], "managers": ["boss"]},
            "queue": [
                {"name": "workq", "default_walltime": 3600},
                {"name": "night", "window": "Mon-Sun 20:00-06:00", "default_walltime": 3600},
            ],
        }
    )
    async with serve(tmp_path, site) as api:
        await api.call("oper", "PATCH", "/nodes/node002", {"state": "offline"})
        await api.call("oper", "PATCH", "/nodes/node003", {"state": "down"})
        await api.submit("alice", nodes=2, walltime=600, runtime=600)
        resv = await api.call(
            "boss",
            "POST",
            "/reservations",
            {"start": T0 + 7200, "duration": 600, "nodes": 3},
            status=201,
        )
        _, body, _ = await plan(api)
        machine = body["machines"][0]
        assert machine["states"] == "aodaiiii"
        [r] = body["reservations"]
        assert (r["id"], r["start"], r["nodes"], r["runs"]) == (resv["id"], T0 + 7200, 3, [])
        [window] = machine["windows"]
        assert window["queue"] == "night"
        # Closed from 06:00 to 20:00 UTC every day, from the day before now on.
        day = T0 // 86400 * 86400
        assert [day + 6 * 3600, day + 20 * 3600] in window["closed"]
        assert all(b - a == 14 * 3600 for a, b in window["closed"][1:-1])


async def test_dynp_decisions_are_listed(tmp_path: Path) -> None:
    async with serve(tmp_path, site_config(policy="dynp")) as api:
        await api.submit("alice", nodes=8, walltime=600, runtime=600)
        for walltime in (3000, 60, 1200):
            await api.submit("bob", nodes=2, walltime=walltime)
        _, body, _ = await plan(api)
        decisions = body["machines"][0]["decisions"]
        assert decisions, body["machines"][0]
        when, case, order, switched = decisions[-1]
        assert when == T0 and order in ("FCFS", "SJF", "LJF") and isinstance(switched, bool)
        assert body["machines"][0]["order"] == order


async def test_a_grid_plan_its_central_queue_and_a_multisite_job(tmp_path: Path) -> None:
    from test_grid_live import grid_site

    site = grid_site("multisite", select="bestfit-free", min_part="2", overhead="3", p="0.25")
    async with serve(tmp_path, site) as api:
        for n in (2, 9, 1):  # test_grid_multisite_live's scene: job 2 runs on a and b
            await api.submit(nodes=n, walltime=100)
        await api.submit(nodes=12, walltime=100)  # the whole grid: waits for it
        _, body, _ = await plan(api)
        got = rows(body)
        assert [m["name"] for m in body["machines"]] == ["a", "b"]
        assert got[2]["alloc"] == [[0, 2, 2], [1, 0, 7]]  # a003-a004, b001-b007
        assert got[2]["nodes"] == 9 and got[2]["state"] == "R"
        listed = {j["seq"]: j for j in await api.jobs("")}
        assert got[4]["state"] == "Q" and got[4]["start"] == listed[4]["est_start"]
        assert 4 in [seq for order in body["order"] for seq in order]
        # j1 on a001-a002, j2 on a003-a004 and b001-b007, j3 on b008
        assert [m["states"] for m in body["machines"]] == ["aaaa", "aaaaaaaa"]
        assert got[1]["alloc"] == [[0, 0, 2]] and got[3]["alloc"] == [[1, 7, 1]]
