"""A site of two machines in one daemon: jobs reach a machine through their queue, and
every node, policy and reservation operation names its machine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from api_helpers import T0, Api, serve
from batchd.server.admin_schemas import ReservationOut, SchedulerOut, ServerOut
from batchd.server.node_schemas import NodeList
from batchd.site.config import SiteConfig


def two_machines(**queue_b: Any) -> SiteConfig:
    return SiteConfig.model_validate(
        {
            "machine": [
                {"name": "small", "nodes": 4, "node_prefix": "s"},
                {"name": "big", "nodes": 8, "node_prefix": "b"},
            ],
            "server": {"name": "grid", "policy": "fcfs-easy"},
            "auth": {"operators": ["oper"], "managers": ["boss"]},
            "queue": [{"name": "workq"}, {"name": "wide", "machine": "big", **queue_b}],
        }
    )


@pytest.fixture
async def grid(tmp_path: Path) -> Any:
    async with serve(tmp_path, two_machines()) as api:
        yield api


async def test_jobs_run_on_the_machine_of_their_queue(grid: Api) -> None:
    a = await grid.call("alice", "POST", "/jobs", {"nodes": 4}, status=201)
    b = await grid.call("alice", "POST", "/jobs", {"nodes": 8, "queue": "wide"}, status=201)
    assert (a["state"], b["state"]) == ("R", "R")
    assert a["exec_host"] == ["s001", "s002", "s003", "s004"]
    assert b["exec_host"] == [f"b{i:03d}" for i in range(1, 9)]
    # The small machine's limit is its own: 5 nodes do not fit there, 8 fit on the big one.
    await grid.error(
        "alice", "POST", "/jobs", {"nodes": 5}, status=400, code="bad_request",
        says=("machine small has 4", "queues that take it: wide"),
    )  # fmt: skip
    # qalter to the other machine's queue moves a waiting job there.
    c = await grid.call("alice", "POST", "/jobs", {"nodes": 2}, status=201)
    assert c["state"] == "Q"
    moved = await grid.call("alice", "PATCH", f"/jobs/{c['seq']}", {"queue": "wide"})
    assert moved["queue"] == "wide" and moved["state"] == "Q"
    nodes = NodeList.model_validate(await grid.call("alice", "GET", "/nodes"))
    assert [(n.machine, n.name) for n in nodes.nodes][:5] == [
        ("small", "s001"), ("small", "s002"), ("small", "s003"), ("small", "s004"), ("big", "b001"),
    ]  # fmt: skip
    server = ServerOut.model_validate(await grid.call("alice", "GET", "/server"))
    assert server.machines == [{"name": "small", "nodes": 4}, {"name": "big", "nodes": 8}]


async def test_each_machine_has_its_own_policy(grid: Api) -> None:
    body = await grid.call("boss", "PATCH", "/scheduler", {"policy": "sjf-cons", "machine": "big"})
    out = SchedulerOut.model_validate(body)
    assert [(m.name, m.policy, m.order) for m in out.machines] == [
        ("small", "fcfs-easy", "FCFS"),
        ("big", "sjf-cons", "SJF"),
    ]
    assert out.switches[-1]["machine"] == "big"
    body = await grid.call("boss", "PATCH", "/scheduler", {"policy": "fcfs"})
    assert [m["policy"] for m in body["machines"]] == ["fcfs", "fcfs"]
    before = await grid.state()
    await grid.error(
        "boss", "PATCH", "/scheduler", {"policy": "dynp", "machine": "nope"},
        status=400, code="bad_request", says="unknown machine 'nope'; machines: small, big",
    )  # fmt: skip
    assert await grid.state() == before


async def test_a_reservation_holds_nodes_of_one_machine(grid: Api) -> None:
    req = {"start": "now", "duration": 600, "nodes": 6, "machine": "big"}
    resv = ReservationOut.model_validate(
        await grid.call("boss", "POST", "/reservations", req, status=201)
    )
    assert resv.machine == "big" and resv.node_list == [f"b{i:03d}" for i in range(1, 7)]
    job = await grid.call("alice", "POST", "/jobs", {"nodes": 3, "queue": "wide"}, status=201)
    assert job["state"] == "Q"  # 2 of big's nodes are free
    small = await grid.call("alice", "POST", "/jobs", {"nodes": 4}, status=201)
    assert small["state"] == "R"  # the small machine is untouched
    await grid.error(
        "boss", "POST", "/reservations", {**req, "nodes": 5, "machine": "small"},
        status=400, code="bad_request", says="of machine small are in service",
    )  # fmt: skip
    grid.at(600)
    assert (await grid.job(job["seq"]))["state"] == "R"


async def test_a_reload_may_not_move_a_queue_to_another_machine(grid: Api) -> None:
    site = two_machines()
    moved = site.model_copy(deep=True)
    moved.queue[1].machine = "small"
    with pytest.raises(ValueError, match="queue wide: its machine cannot change"):
        grid.svc.reload(moved)
    grid.svc.reload(site)  # the same file again is fine
    assert grid.svc.now == T0
