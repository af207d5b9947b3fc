"""Operator and manager routes: node states and advance reservations, on 8 nodes.

Times are offsets from T0; every schedule is worked out by hand in the comments.
"""

from __future__ import annotations

import pytest

from api_helpers import NODES, T0, Api, jid, node, nodes, serve, site_config, widths_at
from batchd.server.admin_schemas import ReservationList, ReservationOut
from batchd.server.node_schemas import NodeList, NodeOut

ALL = nodes(*range(1, NODES + 1))

# --------------------------------------------------------------------------------------------
# Nodes


async def test_list_and_show_nodes(api: Api) -> None:
    await api.submit("alice", nodes=3)
    body = await api.call("bob", "GET", "/nodes")
    listing = NodeList.model_validate(body)
    assert (listing.server, listing.now) == ("mini", T0)
    assert [n.name for n in listing.nodes] == ALL
    assert [n.index for n in listing.nodes] == list(range(NODES))
    assert [n.state for n in listing.nodes] == ["job-exclusive"] * 3 + ["free"] * 5
    assert listing.nodes[0].jobs == ["1.mini"] and listing.nodes[3].jobs == []
    body = await api.call("bob", "GET", "/nodes/node002")
    one = NodeOut.model_validate(body)
    assert (one.name, one.index, one.machine, one.state) == ("node002", 1, "mini", "job-exclusive")
    assert (one.jobs, one.reservation, one.comment) == (["1.mini"], None, None)
    await api.error("bob", "GET", "/nodes/node009", status=404, code="not_found", says="'node009'")


async def test_offline_free_node_lowers_capacity(api: Api) -> None:
    body = await api.call("oper", "PATCH", "/nodes/node008", {"state": "offline", "comment": "fan"})
    NodeOut.model_validate(body)
    assert (body["name"], body["state"], body["comment"], body["jobs"]) == (
        "node008", "offline", "fan", [],
    )  # fmt: skip
    # 7 nodes in service: a job for 8 waits, with no planned start, while smaller ones run.
    wide = await api.submit("alice", nodes=8, walltime=100)
    assert (wide["state"], wide["est_start"]) == ("Q", None)
    small = await api.submit("bob", nodes=7, walltime=100)
    assert (small["state"], small["exec_host"]) == ("R", nodes(*range(1, 8)))
    api.at(100)
    assert (await api.job(1))["state"] == "Q"  # still no room for 8
    assert (await api.node_states())["node008"] == "offline"
    # Back online: the wide job starts at once, on node008 too.
    api.at(150)
    body = await api.call("oper", "PATCH", "/nodes/node008", {"state": "online"})
    assert (body["state"], body["comment"], body["jobs"]) == ("job-exclusive", None, ["1.mini"])
    wide = await api.job(1)
    assert (wide["state"], wide["stime"], wide["exec_host"]) == ("R", T0 + 150, ALL)


async def test_offline_busy_node_drains(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("bob", nodes=2, walltime=100)
    api.at(10)
    body = await api.call("boss", "PATCH", "/nodes/node001", {"state": "offline"})
    assert (body["state"], body["jobs"]) == ("offline,job-exclusive", ["1.mini"])
    assert (await api.job(1))["state"] == "R"  # it keeps running
    # t=100: job 1 ends; node001 stays out, job 2 gets the lowest nodes in service.
    api.at(100)
    states = await api.node_states()
    assert states == {node(1): "offline", node(2): "job-exclusive", node(3): "job-exclusive"} | {
        node(i): "free" for i in range(4, 9)
    }
    two = await api.job(2)
    assert (two["stime"], two["exec_host"]) == (T0 + 100, nodes(2, 3))
    wide = await api.submit("alice", nodes=8)
    assert (wide["state"], wide["est_start"]) == ("Q", None)


async def test_down_busy_node_requeues_its_job(api: Api) -> None:
    # J1 4 nodes [0, 200) on node001-004 (walltime 300); J2 4 nodes [0, 500) on node005-008.
    await api.submit("alice", nodes=4, walltime=300, runtime=200)
    await api.submit("bob", nodes=4, walltime=500)
    api.at(50)
    body = await api.call("oper", "PATCH", "/nodes/node001", {"state": "down", "comment": "dead"})
    assert (body["state"], body["jobs"], body["comment"]) == ("down", [], "dead")
    job = await api.job(1)
    # Back in the queue, as if it never ran: 3 nodes free, so it waits for J2's end at 500.
    assert job["state"] == "Q"
    assert (job["stime"], job["end_time"], job["elapsed"]) == (None, None, None)
    assert (job["exec_host"], job["started_by"], job["outcome"]) == ([], None, None)
    assert (job["etime"], job["est_start"]) == (T0 + 50, T0 + 500)
    assert "Requeued" in job["comment"]
    states = await api.node_states()
    assert [states[node(i)] for i in range(1, 9)] == ["down"] + ["free"] * 3 + ["job-exclusive"] * 4
    # t=500: J2 ends; J1 runs again from the start on node002-005 for its 200 s.
    api.at(500)
    job = await api.job(1)
    assert (job["state"], job["stime"], job["exec_host"]) == ("R", T0 + 500, nodes(2, 3, 4, 5))
    assert job["started_by"] == "fcfs-easy"
    api.at(700)
    job = await api.job(1)
    assert (job["state"], job["end_time"], job["outcome"]) == ("F", T0 + 700, "ok")
    body = await api.call("oper", "PATCH", "/nodes/node001", {"state": "online"})
    assert body["state"] == "free"


async def test_down_busy_node_kills_its_job_when_configured(tmp_path) -> None:
    async with serve(tmp_path, site_config(node_fail="kill")) as api:
        assert (await api.call("alice", "GET", "/server"))["node_fail"] == "kill"
        await api.submit("alice", nodes=4, walltime=300)
        await api.submit("bob", nodes=8, walltime=100)  # waits for all 8
        api.at(50)
        body = await api.call("oper", "PATCH", "/nodes/node003", {"state": "down"})
        assert body["state"] == "down"
        job = await api.job(1)
        assert (job["state"], job["outcome"], job["end_time"]) == ("F", "node_fail", T0 + 50)
        assert job["exit_status"] is None  # emulated: no process ran, no exit status
        assert job["comment"] == (
            "Job killed: a node it ran on went down (no process ran: the job was emulated)"
        )
        assert (await api.job(2))["est_start"] is None  # 7 nodes in service
        await api.call("oper", "PATCH", "/nodes/node003", {"state": "online"})
        job = await api.job(2)
        assert (job["state"], job["stime"]) == ("R", T0 + 50)


async def test_node_changes_need_an_operator(api: Api) -> None:
    before = await api.state()
    await api.error(
        "alice", "PATCH", "/nodes/node001", {"state": "offline"}, status=403, code="forbidden",
        says=("alice", "operators"),
    )  # fmt: skip
    await api.error(
        "oper", "PATCH", "/nodes/node001", {"state": "broken"}, status=400, code="bad_request",
        says="state",
    )  # fmt: skip
    await api.error(
        "oper", "PATCH", "/nodes/node042", {"state": "offline"}, status=404, code="not_found",
        says="node042",
    )  # fmt: skip
    assert await api.state() == before


# --------------------------------------------------------------------------------------------
# Reservations


async def test_reservation_now_opens_at_once_and_closes(api: Api) -> None:
    req = {"start": "now", "duration": 600, "nodes": 4, "name": "maint"}
    body = await api.call("boss", "POST", "/reservations", req, status=201)
    resv = ReservationOut.model_validate(body)
    assert (resv.id, resv.name, resv.owner, resv.state) == ("R1.mini", "maint", "boss", "RN")
    assert (resv.start, resv.end, resv.duration, resv.nodes) == (T0, T0 + 600, 600, 4)
    assert resv.node_list == nodes(1, 2, 3, 4)
    one = NodeOut.model_validate(await api.call("alice", "GET", "/nodes/node001"))
    assert (one.state, one.reservation, one.jobs) == ("resv-exclusive", "R1.mini", [])

    # 4 nodes left: an 8-node job waits for the window to close, a 4-node one runs beside it.
    wide = await api.submit("alice", nodes=8, walltime=100)
    assert (wide["state"], wide["est_start"]) == ("Q", T0 + 600)
    narrow = await api.submit("bob", nodes=4, walltime=100)
    assert (narrow["state"], narrow["exec_host"]) == ("R", nodes(5, 6, 7, 8))

    listing = ReservationList.model_validate(await api.call("bob", "GET", "/reservations"))
    assert [r.id for r in listing.reservations] == ["R1.mini"]
    api.at(600)
    body = await api.call("bob", "GET", "/reservations/R1.mini")
    assert ReservationOut.model_validate(body).state == "FN"
    assert (await api.call("bob", "GET", "/reservations/1"))["id"] == "R1.mini"
    wide = await api.job(1)
    assert (wide["state"], wide["stime"]) == ("R", T0 + 600)


async def test_reservation_asap_and_backfill_around_it(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=1000)  # J1 [0, 1000)
    req = {"start": "asap", "duration": 500, "nodes": 4}
    body = await api.call("boss", "POST", "/reservations", req, status=201)
    assert (body["state"], body["start"], body["end"], body["node_list"]) == (
        "CO", T0 + 1000, T0 + 1500, [],
    )  # fmt: skip
    assert body["name"] == "NULL"
    # J2 8 nodes x 100 cannot overlap [1000, 1500) on 4 nodes: planned 1500.
    # J3 4 nodes x 400 fits beside the reservation at 1000 and ends before 1500.
    j2 = await api.submit("bob", nodes=8, walltime=100)
    j3 = await api.submit("alice", nodes=4, walltime=400)
    assert (j2["est_start"], j3["est_start"]) == (T0 + 1500, T0 + 1000)
    api.at(1000)
    resv = await api.call("alice", "GET", "/reservations/R1")
    assert (resv["state"], resv["node_list"]) == ("RN", nodes(1, 2, 3, 4))
    j3 = await api.job(3)
    assert (j3["state"], j3["stime"], j3["exec_host"]) == ("R", T0 + 1000, nodes(5, 6, 7, 8))
    states = await api.node_states()
    assert [states[n] for n in ALL] == ["resv-exclusive"] * 4 + ["job-exclusive"] * 4
    api.at(1500)
    assert (await api.call("alice", "GET", "/reservations/R1"))["state"] == "FN"
    j2 = await api.job(2)
    assert (j2["state"], j2["stime"]) == ("R", T0 + 1500)


async def test_reservation_in_the_future_and_conflicts(api: Api) -> None:
    req = {"start": T0 + 2000, "duration": "00:01:40", "nodes": 8}
    body = await api.call("boss", "POST", "/reservations", req, status=201)
    assert (body["state"], body["start"], body["end"], body["duration"]) == (
        "CO", T0 + 2000, T0 + 2100, 100,
    )  # fmt: skip
    # A job of 2100 s starting now would run into the window: it goes after it.
    long = await api.submit("alice", nodes=1, walltime=2100)
    assert (long["state"], long["est_start"]) == ("Q", T0 + 2100)
    short = await api.submit("alice", nodes=8, walltime=2000)  # ends exactly at 2000
    assert (short["state"], short["stime"]) == ("R", T0)

    before = await api.state()
    clash = {"start": T0 + 2050, "duration": 100, "nodes": 1}
    await api.error(
        "boss", "POST", "/reservations", clash, status=409, code="conflict", says="asap"
    )
    busy = {"start": "now", "duration": 100, "nodes": 1}  # all 8 nodes run job 2
    await api.error("boss", "POST", "/reservations", busy, status=409, code="conflict")
    past = {"start": T0 - 1, "duration": 100, "nodes": 1}
    await api.error(
        "boss", "POST", "/reservations", past, status=400, code="bad_request", says="past"
    )
    wide = {"start": "asap", "duration": 100, "nodes": 9}
    await api.error(
        "boss", "POST", "/reservations", wide, status=400, code="bad_request", says="9 nodes"
    )
    for bad, says in [
        ({"start": "later", "duration": 100, "nodes": 1}, "start"),
        ({"start": "asap", "duration": "abc", "nodes": 1}, "duration"),
        ({"start": "asap", "duration": 0, "nodes": 1}, "duration"),
        ({"start": "asap", "duration": 100, "nodes": 0}, "nodes"),
        ({"start": "asap", "nodes": 1}, "duration: required"),
        ({"start": "asap", "duration": 100, "nodes": 1, "where": "x"}, "where: unknown field"),
    ]:
        await api.error(
            "boss", "POST", "/reservations", bad, status=400, code="bad_request", says=says
        )
    assert await api.state() == before

    api.at(2000)
    body = await api.call("alice", "GET", "/reservations/R1.mini")
    assert (body["state"], body["node_list"]) == ("RN", ALL)
    assert (await api.job(2))["end_time"] == T0 + 2000
    api.at(2100)
    assert (await api.call("alice", "GET", "/reservations/R1.mini"))["state"] == "FN"
    assert (await api.job(1))["stime"] == T0 + 2100


async def test_delete_reservation_returns_its_nodes(api: Api) -> None:
    req = {"start": "now", "duration": 900, "nodes": 6}
    await api.call("boss", "POST", "/reservations", req, status=201)
    waiting = await api.submit("alice", nodes=4, walltime=100)
    assert (waiting["state"], waiting["est_start"]) == ("Q", T0 + 900)
    api.at(30)
    before = await api.state()
    await api.error(
        "alice", "DELETE", "/reservations/R1.mini", status=403, code="forbidden",
        says="owned by boss",
    )  # fmt: skip
    assert await api.state() == before
    body = await api.call("boss", "DELETE", "/reservations/R1.mini")
    ReservationOut.model_validate(body)
    assert body["state"] == "FN"
    job = await api.job(1)
    assert (job["state"], job["stime"], job["exec_host"]) == ("R", T0 + 30, nodes(1, 2, 3, 4))
    assert "resv-exclusive" not in (await api.node_states()).values()
    await api.error(
        "boss", "DELETE", "/reservations/R1.mini", status=409, code="conflict",
        says="already finished",
    )  # fmt: skip
    await api.error("boss", "DELETE", "/reservations/R7", status=404, code="not_found", says="R7")
    await api.error(
        "boss", "GET", "/reservations/job3", status=400, code="bad_request",
        says="not a reservation id",
    )  # fmt: skip
    # A future one, deleted before it opens.
    req = {"start": T0 + 500, "duration": 50, "nodes": 8}
    await api.call("boss", "POST", "/reservations", req, status=201)
    body = await api.call("boss", "DELETE", "/reservations/R2")
    assert (body["state"], body["node_list"]) == ("FN", [])
    late = await api.submit("alice", nodes=8, walltime=1000)
    assert late["est_start"] == T0 + 130  # after job 1 only: the window is gone


async def test_any_user_reserves_and_its_owner_deletes(api: Api) -> None:
    """As with PBS's pbs_rsub: every user may reserve; the owner, operators and managers
    delete a reservation, other users may not."""
    req = {"start": "now", "duration": 60, "nodes": 1}
    body = await api.call("alice", "POST", "/reservations", req, status=201)
    assert (body["id"], body["owner"], body["select"]) == ("R1.mini", "alice", "1:ncpus=1")
    before = await api.state()
    await api.error(
        "bob", "DELETE", "/reservations/R1.mini", status=403, code="forbidden",
        says=("bob may not delete reservation R1.mini", "owned by alice"),
    )  # fmt: skip
    # Its queue takes its owner's jobs only (Authorized_Users, as pbs_rstat shows it)
    await api.error(
        "bob", "POST", "/jobs", {"queue": "R1", "nodes": 1}, status=403, code="forbidden",
        says="Unauthorized Request: queue R1 takes only the jobs of reservation R1's "
        "Authorized_Users (alice)",
    )  # fmt: skip
    assert await api.state() == before
    await api.submit("bob", nodes=1, walltime=60, hold=True)
    await api.error(
        "bob", "POST", "/jobs/1/move", {"queue": "R1"}, status=403, code="forbidden",
        says="Unauthorized Request",
    )  # fmt: skip
    await api.error(
        "bob", "PATCH", "/jobs/1", {"queue": "R1"}, status=403, code="forbidden",
        says="Unauthorized Request",
    )  # fmt: skip
    inside = await api.submit("alice", queue="R1", nodes=1, walltime=30)
    assert inside["queue"] == "R1"
    assert (await api.call("alice", "DELETE", "/reservations/R1.mini"))["state"] == "FN"
    await api.call("bob", "POST", "/reservations", req, status=201)
    assert (await api.call("oper", "DELETE", "/reservations/R2.mini"))["state"] == "FN"


async def test_a_reservation_keeps_its_select_as_given(api: Api) -> None:
    chunks = [{"count": 2, "ncpus": 1}, {"count": 1, "ncpus": 1, "mem": "1gb"}]
    req = {"start": "now", "duration": 60, "nodes": 3, "select": chunks}
    body = await api.call("alice", "POST", "/reservations", req, status=201)
    assert body["select"] == "2:ncpus=1+1:ncpus=1:mem=1gb"
    assert (await api.call("bob", "GET", "/reservations/R1.mini"))["select"] == body["select"]
    before = await api.state()
    await api.error(
        "alice", "POST", "/reservations", {**req, "nodes": 2}, status=400, code="bad_request",
        says="3 chunks; nodes says 2",
    )  # fmt: skip
    await api.error(
        "alice", "POST", "/reservations", {**req, "select": [{"count": 3, "ncpus": 2}]},
        status=400, code="bad_request", says="ncpus=2; a node has 1",
    )  # fmt: skip
    assert await api.state() == before


# A mixed workload submitted at t=0 next to a 5-node reservation over [300, 700).
# (nodes, walltime, runtime)
WORKLOAD = [
    (3, 500, 500),
    (3, 200, 200),
    (6, 100, 100),
    (2, 800, 800),
    (1, 250, 250),
    (8, 50, 50),
    (3, 300, 100),
    (2, 350, 350),
    (5, 120, 60),
    (1, 40, 40),
]
RESV = (300, 700, 5)


@pytest.mark.parametrize("policy", ["fcfs", "fcfs-easy", "fcfs-cons", "sjf-cons", "dynp"])
async def test_jobs_never_overlap_a_reservation(tmp_path, policy: str) -> None:
    start, end, width = RESV
    async with serve(tmp_path, site_config(policy=policy)) as api:
        req = {"start": T0 + start, "duration": end - start, "nodes": width}
        await api.call("boss", "POST", "/reservations", req, status=201)
        for i, (w, wall, run) in enumerate(WORKLOAD):
            await api.submit("alice" if i % 2 else "bob", nodes=w, walltime=wall, runtime=run)
        # Plans made with the reservation in view never overlap it either.
        for j in await api.jobs("state=Q"):
            s = j["est_start"] - T0
            assert s >= end or s + j["walltime"] <= start or j["nodes"] + width <= NODES, j
        api.at(start)
        resv = await api.call("alice", "GET", "/reservations/R1")
        assert resv["state"] == "RN" and len(resv["node_list"]) == width
        states = await api.node_states()
        assert [n for n, s in states.items() if s == "resv-exclusive"] == resv["node_list"]
        api.at(5000)
        jobs = await api.jobs()
        assert (await api.call("alice", "GET", "/reservations/R1"))["state"] == "FN"

    assert all(j["state"] == "F" and j["outcome"] == "ok" for j in jobs), jobs
    events = {j["stime"] for j in jobs} | {j["end_time"] for j in jobs}
    events |= {T0 + start, T0 + end - 1}
    for t in sorted(events):
        held = width if T0 + start <= t < T0 + end else 0
        assert widths_at(jobs, t) + held <= NODES, (policy, t - T0)
    for j in jobs:
        if j["stime"] < T0 + end and j["end_time"] > T0 + start:
            assert not set(j["exec_host"]) & set(resv["node_list"]), (policy, j["id"])
    # Something did run beside the reservation, so the check is not empty.
    assert any(j["stime"] < T0 + end and j["end_time"] > T0 + start for j in jobs)
    assert jid(len(WORKLOAD)) in {j["id"] for j in jobs}
