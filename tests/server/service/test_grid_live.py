"""The daemon serving a grid site (docs/grid.md, "Live"): placements computed by hand,
the machine a job shows, live changes of the structure, and the restore of every job
on its machine.

The grid: machine ``a`` with 4 nodes (a001..a004) and ``b`` with 8 (b001..b008). Every
job runs exactly its walltime unless BATCHD_RUNTIME says otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from api_helpers import T0, Api, new_service, serve, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.admin_schemas import SchedulerOut
from batchd.server.node_schemas import NodeList
from batchd.server.service import BatchService
from batchd.server.store import Store
from batchd.site.config import SiteConfig


def grid_site(structure: str, **params: str) -> SiteConfig:
    return SiteConfig.model_validate(
        {
            "machine": [
                {"name": "a", "nodes": 4, "node_prefix": "a"},
                {"name": "b", "nodes": 8, "node_prefix": "b"},
            ],
            "server": {"name": "g"},
            "auth": {"operators": ["oper"], "managers": ["boss"]},
            "queue": [{"name": "workq", "default_walltime": 3600}],
            "grid": {"structure": structure, "params": params},
        }
    )


def hosts(machine: str, *numbers: int) -> list[str]:
    return [f"{machine}/{machine}{i:03d}" for i in numbers]


async def placed(api: Api) -> dict[int, tuple[str, str | None, list[str], int | None]]:
    """Every job: state, machine, exec_host and start (offset from T0)."""
    out = {}
    for j in await api.jobs():
        start = j["stime"] - T0 if j["stime"] is not None else None
        out[j["seq"]] = (j["state"], j["machine"], j["exec_host"], start)
    return out


async def test_central_easy_bestfit_free_by_hand(tmp_path: Path) -> None:
    """Central EASY over M_free with bestfit: a 2-node job goes to a (2 left, not 6), a
    4-node job to b (a has 2 free), an 8-node job waits in the central queue with no
    machine and a reservation on b at T0+100, and a 3-node job that ends by then
    backfills on b."""
    site = grid_site("central", scheduler="easy", select="bestfit-free")
    async with serve(tmp_path, site) as api:
        for n in (2, 4, 8, 3):
            await api.submit(nodes=n, walltime=100)
        assert await placed(api) == {
            1: ("R", "a", hosts("a", 1, 2), 0),
            2: ("R", "b", hosts("b", 1, 2, 3, 4), 0),
            3: ("Q", None, [], None),
            4: ("R", "b", hosts("b", 5, 6, 7), 0),
        }
        api.at(100)
        got = await placed(api)
        assert got[3] == ("R", "b", hosts("b", *range(1, 9)), 100)
        assert got[1][0] == got[2][0] == got[4][0] == "F"
        assert got[1][1] == "a" and got[1][2] == hosts("a", 1, 2)  # finished: still shown
        # Wider than the widest machine: refused at submission, naming it.
        await api.error(
            "alice", "POST", "/jobs", {"nodes": 9}, status=400, code="bad_request",
            says=("9 nodes requested", "widest machine of the grid, b, has 8"),
        )  # fmt: skip


async def hierarchical_scene(api: Api) -> None:
    """Hierarchical, equalutil-max, local fcfs-easy: j1 (4 nodes, long) ties at utilization
    0 and goes to a; j2 (8 nodes) fits only b; j3 (2 nodes) ties at 1.0 and goes to a,
    where it waits; then j2 is deleted: b is empty, and j3 stays assigned to a."""
    await api.submit(nodes=4, walltime=5000)
    await api.submit(nodes=8, walltime=5000)
    await api.submit(nodes=2, walltime=100)
    api.at(10)
    await api.call("alice", "DELETE", "/jobs/2")


async def test_hierarchical_by_hand(tmp_path: Path) -> None:
    site = grid_site("hierarchical", select="equalutil-max", local="fcfs-easy")
    async with serve(tmp_path, site) as api:
        await hierarchical_scene(api)
        got = await placed(api)
        assert got[1] == ("R", "a", hosts("a", 1, 2, 3, 4), 0)
        assert got[3] == ("Q", "a", [], None)
        assert got[2][0] == "F" and got[2][1] == "b"
        # a 4th job: a is 4 nodes over (util 2.0), b empty: b, at once.
        await api.submit(nodes=6, walltime=100)
        assert (await placed(api))[4] == ("R", "b", hosts("b", *range(1, 7)), 10)
        # The machine's local policy is its own: planned start of j3 at a's free time.
        j3 = await api.job(3)
        assert j3["est_start"] == T0 + 5000


async def test_restart_gives_every_job_back_its_machine(tmp_path: Path) -> None:
    """After a stop without a word (the store as the last commit left it), the running
    job is back on a with its nodes, and j3 waits on a again, although a new choice would
    now pick the empty b: the assignment was saved with the job."""
    site = grid_site("hierarchical", select="equalutil-max")
    path = tmp_path / "state.db"
    svc = new_service(path, site)
    async with start_api(svc) as api:
        await hierarchical_scene(api)
        before = await placed(api)
    clock = VirtualClock(T0 + 20)
    again = BatchService(site, clock, Store(path), daemon_user="batchd")
    again.restore(again.store.load())
    async with start_api(again) as api:
        after = await placed(api)
        assert after == before
        assert after[3] == ("Q", "a", [], None)
        running = await api.call("alice", "GET", "/nodes")
        busy = {n["name"] for n in running["nodes"] if n["jobs"]}
        assert busy == {"a001", "a002", "a003", "a004"}


async def test_live_change_of_structure(tmp_path: Path) -> None:
    """Central -> hierarchical: the running jobs run on where they are, the waiting job
    moves to the new layer and gets a machine; saved, shown, and a refused change (a bad
    parameter, a local policy on central) changes nothing."""
    site = grid_site("central", scheduler="fcfs", select="bestfit-free")
    async with serve(tmp_path, site) as api:
        await api.submit(nodes=4, walltime=1000)  # a (bestfit)
        await api.submit(nodes=8, walltime=1000)  # b
        await api.submit(nodes=2, walltime=100)  # waits for any machine
        assert (await placed(api))[3] == ("Q", None, [], None)
        before = await api.state()
        for body, says in (
            ({"grid": {"params": {"select": "best"}}}, "select='best'"),
            ({"grid": {"structure": "ring"}}, "unknown grid structure 'ring'"),
            ({"policy": "fcfs"}, "unknown parameter 'local'"),
            ({"params": {"x": "1"}}, "params: a grid's local policies"),
            ({"grid": {"params": {"local.zz": "fcfs"}}}, "unknown parameter 'local.zz'"),
        ):
            await api.error("boss", "PATCH", "/scheduler", body, status=400, code="bad_request",
                            says=says)  # fmt: skip
        await api.error("alice", "PATCH", "/scheduler", {"grid": {"structure": "pool"}},
                        status=403, code="forbidden")  # fmt: skip
        assert await api.state() == before
        api.at(5)
        body = await api.call(
            "boss", "PATCH", "/scheduler",
            {"grid": {"structure": "hierarchical", "params": {"select": "bestfit-max"}}},
        )  # fmt: skip
        SchedulerOut.model_validate(body)
        assert body["grid"]["structure"] == "hierarchical"
        assert body["grid"]["in_force"] == {"select": "bestfit-max", "local": "fcfs-easy"}
        assert body["switches"][-1]["from"] == "central"
        got = await placed(api)
        assert got[1] == ("R", "a", hosts("a", 1, 2, 3, 4), 0)
        assert got[2] == ("R", "b", hosts("b", *range(1, 9)), 0)
        assert got[3] == ("Q", "a", [], None)  # bestfit-max: a leaves 4 - 2 = 2, b 6
        # A machine's local policy, live; then back to central, where j3 has no machine.
        body = await api.call("boss", "PATCH", "/scheduler", {"machine": "b", "policy": "fcfs"})
        assert body["machines"][1]["policy"] == "fcfs"
        assert body["grid"]["params"]["local.b"] == "fcfs"
        await api.call("boss", "PATCH", "/scheduler", {"grid": {"structure": "central"}})
        assert (await placed(api))[3] == ("Q", None, [], None)
        assert api.svc.meta["grid"] == {"structure": "central", "params": {}}


async def test_nodes_and_metrics_by_machine(tmp_path: Path) -> None:
    site = grid_site("central")
    async with serve(tmp_path, site) as api:
        await api.submit(nodes=3, walltime=100)  # bestfit-free: a (1 left)
        body = await api.call("alice", "GET", "/nodes")
        NodeList.model_validate(body)
        assert body["grid"] == "central"
        assert [n["machine"] for n in body["nodes"]] == ["a"] * 4 + ["b"] * 8
        _, text = await api.raw(None, "GET", "/metrics")
        assert 'batchd_grid_jobs_started_total{pool="a",structure="central"} 1.0' in text
        assert 'batchd_grid_jobs_started_total{pool="b",structure="central"} 0.0' in text


async def test_a_site_without_grid_refuses_a_grid_change(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        sched = await api.call("alice", "GET", "/scheduler")
        assert sched["grid"] is None
        job: dict[str, Any] = await api.submit(nodes=1)
        assert job["machine"] == "mini"
        await api.error("boss", "PATCH", "/scheduler", {"grid": {"structure": "central"}},
                        status=400, code="bad_request", says="runs no grid structure")  # fmt: skip


async def est_starts(api: Api) -> dict[int, int | None]:
    """Every waiting job's planned start, as an offset from T0 (None: none)."""
    return {
        j["seq"]: (j["est_start"] - T0 if j["est_start"] is not None else None)
        for j in await api.jobs("")
        if j["state"] == "Q"
    }


async def test_planned_starts_of_a_central_easy_queue_by_hand(tmp_path: Path) -> None:
    """Central EASY, bestfit-free: j1 (2 nodes, 300 s) and j2 (4, 100 s) start on a and b,
    j3 (3, 50 s) on b; j4 (8) waits: the head job, planned at its reservation, b at T0+100
    (b's 4 + 3 nodes come back at 100 and 50, 8 are free from 100; a never has 8). j5 (4
    nodes) waits behind it: EASY plans nothing for it. Under cons j5 is planned too, at its
    earliest start: a has 4 free at 300 (when j1 ends), b at 200 (after j4), so b at 200.
    The random scheduler plans nothing."""
    site = grid_site("central", scheduler="easy", select="bestfit-free")
    async with serve(tmp_path, site) as api:
        for n, wall in ((2, 300), (4, 100), (3, 50), (8, 100), (4, 100)):
            await api.submit(nodes=n, walltime=wall)
        assert await est_starts(api) == {4: 100, 5: None}
        plan = await api.call("alice", "GET", "/jobs/4")
        assert plan["machine"] is None  # it waits for any machine; planned on b
        await api.call("boss", "PATCH", "/scheduler", {"grid": {"params": {"scheduler": "cons"}}})
        assert await est_starts(api) == {4: 100, 5: 200}
        await api.call("boss", "PATCH", "/scheduler", {"grid": {"params": {"scheduler": "random"}}})
        assert await est_starts(api) == {4: None, 5: None}


async def test_the_run_event_names_the_hosts_as_the_job_shows_them(tmp_path: Path) -> None:
    """tracejob's exec_vnode on a grid carries the machine before each host, as qstat -f's."""
    site = grid_site("central", scheduler="easy", select="bestfit-free")
    async with serve(tmp_path, site) as api:
        await api.submit(nodes=2, walltime=100)
        shown = (await api.job(1))["exec_vnode"]
        assert shown == "(a/a001:ncpus=1)+(a/a002:ncpus=1)"
        events = await api.call("alice", "GET", "/jobs/1/events")
        runs = [e["message"] for e in events["events"] if "Job Run" in e["message"]]
        assert runs == [f"Job Run at request of Scheduler@g on exec_vnode {shown}"]
