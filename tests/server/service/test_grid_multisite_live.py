"""The daemon serving multisite (docs/grid.md, "Live"): one record per job, its parts on
several machines, computed by hand.

The grid of test_grid_live: machine ``a`` with 4 nodes (a001..a004), ``b`` with 8
(b001..b008). Multisite with bestfit-free, min_part 2, overhead model 3 (``(1 + p) * f``)
and p 0.25: a job split in two runs 2.5 times as long as asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_grid_live import grid_site, hosts, placed

from api_helpers import T0, Api, new_service, serve, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.service import BatchService
from batchd.server.store import Store


def multisite() -> Any:
    return grid_site("multisite", select="bestfit-free", min_part="2", overhead="3", p="0.25")


async def scene(api: Api) -> None:
    """j1 (2 nodes, 100 s) fits a (bestfit: 2 left there, 6 on b). j2 (9 nodes, 100 s) fits
    no machine: split over the machines with at least 2 free, most free first: b 8, then a
    1 more, below min_part: b gives a 1, so b 7 + a 2, both from T0, for 100 * 2.5 = 250 s
    (walltime too). j3 (1 node) fits b's last node."""
    for n in (2, 9, 1):
        await api.submit(nodes=n, walltime=100)


WIDE = hosts("a", 3, 4) + hosts("b", *range(1, 8))


async def test_a_job_split_over_two_machines_by_hand(tmp_path: Path) -> None:
    async with serve(tmp_path, multisite()) as api:
        await scene(api)
        assert await placed(api) == {
            1: ("R", "a", hosts("a", 1, 2), 0),
            2: ("R", "a", WIDE, 0),
            3: ("R", "b", hosts("b", 8), 0),
        }
        j2 = await api.job(2)
        assert (j2["nodes"], j2["walltime"], j2["runtime"]) == (9, 250, None)
        assert "multi-site on a+b" in j2["comment"]
        api.at(100)
        assert (await placed(api))[2][0] == "R"  # stretched: runs on after its 100 s
        api.at(250)
        jobs = await api.jobs()
        assert [j["seq"] for j in jobs] == [1, 2, 3]  # the history shows it once
        j2 = next(j for j in jobs if j["seq"] == 2)
        assert (j2["state"], j2["outcome"], j2["exit_status"]) == ("F", "ok", None)  # emulated
        assert j2["comment"] == "Job run and finished (no process ran: the job was emulated)"
        assert (j2["stime"], j2["end_time"]) == (T0, T0 + 250)
        assert j2["exec_host"] == WIDE
        nodes = await api.call("alice", "GET", "/nodes")
        assert not any(n["jobs"] for n in nodes["nodes"])
        # Wider than the whole grid: refused, naming the grid's nodes.
        await api.error(
            "alice", "POST", "/jobs", {"nodes": 13}, status=400, code="bad_request",
            says=("13 nodes requested", "12 in all"),
        )  # fmt: skip


async def test_a_finished_split_job_leaves_nothing_behind_in_the_layer(tmp_path: Path) -> None:
    # A daemon runs for months: once a split job is in the history, neither its record
    # nor the layer's note of it (the job as submitted) stays in memory.
    async with serve(tmp_path, multisite()) as api:
        await scene(api)
        layer = api.svc.scheduler.layer
        assert layer is not None and 2 in layer.parents  # type: ignore[attr-defined]
        api.at(250)
        assert (await api.job(2))["state"] == "F"
        assert 2 not in api.svc.records
        assert 2 not in layer.parents  # type: ignore[attr-defined]


async def test_qdel_ends_every_part(tmp_path: Path) -> None:
    async with serve(tmp_path, multisite()) as api:
        await scene(api)
        api.at(10)
        await api.call("alice", "DELETE", "/jobs/2")
        j2 = await api.job(2)
        assert (j2["state"], j2["outcome"], j2["end_time"]) == ("F", "cancelled", T0 + 10)
        assert j2["exec_host"] == WIDE
        nodes = await api.call("alice", "GET", "/nodes")
        busy = {n["name"] for n in nodes["nodes"] if n["jobs"]}
        assert busy == {"a001", "a002", "b008"}


async def test_a_failed_node_of_one_part_requeues_the_whole_job(tmp_path: Path) -> None:
    """node_fail = requeue (the default): b001 goes down under j2; both parts stop, j2 waits
    again as submitted (100 s walltime), and starts again split when it can."""
    async with serve(tmp_path, multisite()) as api:
        await scene(api)
        api.at(10)
        await api.call("oper", "PATCH", "/nodes/b001", {"state": "down"})
        j2 = await api.job(2)
        assert (j2["state"], j2["walltime"], j2["exec_host"]) == ("Q", 100, [])
        nodes = await api.call("alice", "GET", "/nodes")
        busy = {n["name"] for n in nodes["nodes"] if n["jobs"]}
        assert busy == {"a001", "a002", "b008"}
        # j1 and j3 end at 100: a has 4 free, b 7 (b001 down): b 7 + a 2, from T0+100.
        api.at(100)
        got = await placed(api)
        assert got[2] == ("R", "a", hosts("a", 1, 2) + hosts("b", *range(2, 9)), 100)
        assert (await api.job(2))["walltime"] == 250


async def test_restart_gives_every_part_back(tmp_path: Path) -> None:
    site = multisite()
    path = tmp_path / "state.db"
    svc = new_service(path, site)
    async with start_api(svc) as api:
        await scene(api)
        before = await placed(api)
    again = BatchService(site, VirtualClock(T0 + 20), Store(path), daemon_user="batchd")
    again.restore(again.store.load())
    async with start_api(again) as api:
        assert await placed(api) == before
        nodes = await api.call("alice", "GET", "/nodes")
        held = {n["name"]: n["jobs"] for n in nodes["nodes"] if n["jobs"]}
        assert {k for k, v in held.items() if v == ["2.g"]} == {
            "a003", "a004", *(f"b{i:03d}" for i in range(1, 8))
        }  # fmt: skip
        api.at(250)
        j2 = await api.job(2)
        assert (j2["state"], j2["end_time"], j2["exec_host"]) == ("F", T0 + 250, WIDE)


async def test_live_change_to_and_from_multisite(tmp_path: Path) -> None:
    """Central refuses a 9-node job; under multisite (changed live) a 6-node job is split
    (b's 4 free + a's 2) and a 12-node job waits for the whole grid; going back to central
    is refused while it waits (it fits no machine), changing nothing; once it is deleted,
    central again, and j3 runs on in its parts until it ends."""
    site = grid_site("central", scheduler="fcfs", select="bestfit-free")
    async with serve(tmp_path, site) as api:
        await api.submit(nodes=2, walltime=100)  # a
        await api.submit(nodes=4, walltime=100)  # b
        await api.error("alice", "POST", "/jobs", {"nodes": 9}, status=400,
                        code="bad_request", says="widest machine")  # fmt: skip
        await api.call(
            "boss", "PATCH", "/scheduler",
            {"grid": {"structure": "multisite", "params": {"min_part": "2"}}},
        )  # fmt: skip
        # j3: 6 nodes = b 4 + a 2, split at once (overhead 1, p 0: not stretched).
        await api.submit(nodes=6, walltime=100)
        got = await placed(api)
        assert got[3] == ("R", "a", hosts("a", 3, 4) + hosts("b", 5, 6, 7, 8), 0)
        await api.submit(nodes=12, walltime=100)  # the whole grid: waits
        before = await api.state()
        await api.error("boss", "PATCH", "/scheduler", {"grid": {"structure": "central"}},
                        status=400, code="bad_request",
                        says=("job 4", "wider than the widest machine"))  # fmt: skip
        assert await api.state() == before
        await api.call("alice", "DELETE", "/jobs/4")
        await api.call("boss", "PATCH", "/scheduler", {"grid": {"structure": "central"}})
        assert (await placed(api))[3][0] == "R"
        api.at(100)
        got = await placed(api)
        assert got[3] == ("F", "a", hosts("a", 3, 4) + hosts("b", 5, 6, 7, 8), 0)
        nodes = await api.call("alice", "GET", "/nodes")
        assert not any(n["jobs"] for n in nodes["nodes"])


async def test_a_job_no_split_can_run_is_refused_naming_min_part(tmp_path: Path) -> None:
    # min_part 5: only b (8 nodes) can hold a part, so a 10-node job could never run.
    site = grid_site("multisite", select="bestfit-free", min_part="5")
    async with serve(tmp_path, site) as api:
        before = await api.state()
        await api.error(
            "alice", "POST", "/jobs", {"nodes": 10}, status=400, code="bad_request",
            says=("10 nodes requested", "parts of at least 5 nodes (min_part)"),
        )  # fmt: skip
        assert await api.state() == before
        assert (await api.submit(nodes=8))["state"] == "R"  # one machine still takes 8
