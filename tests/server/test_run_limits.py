"""Run and queued limits (max_run, max_user_run, max_queued, max_user_queued) and the
server's scheduling switch, through the API, under every family of policy.

The 8-node test site (api_helpers); jobs of 1 node and a 1000 s walltime run their
walltime unless told otherwise, so what runs at T0 is decided by the limits alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from api_helpers import T0, serve, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.service.facade import BatchService
from batchd.server.store import Store
from batchd.site.config import SiteConfig

# One policy of each family: in order, EASY backfilling, conservative (a full plan),
# self-tuning dynP (three plans a step).
POLICIES = ("fcfs", "fcfs-easy", "sjf-cons", "dynp")


def limited_site(policy: str = "fcfs-easy", **queue: Any) -> Any:
    site = site_config(policy=policy)
    workq = site.queue[0].model_copy(update=queue)
    return site.model_copy(update={"queue": [workq, *site.queue[1:]]})


async def states(api: Any) -> dict[str, str]:
    return {j["id"]: j["state"] for j in await api.jobs("")}


@pytest.mark.parametrize("policy", POLICIES)
async def test_queue_max_run_holds_the_rest_back_from_starts_and_plans(
    tmp_path: Path, policy: str
) -> None:
    async with serve(tmp_path, limited_site(policy, max_run=2)) as api:
        for _ in range(4):
            await api.submit(nodes=1, walltime=1000, runtime=100)
        assert await states(api) == {"1.mini": "R", "2.mini": "R", "3.mini": "Q", "4.mini": "Q"}
        held = await api.job(3)
        assert held["comment"] == "Not Running: Queue workq job limit has been reached."
        assert held["est_start"] is None  # held back: no planned start, as it may not start
        queues = await api.call("alice", "GET", "/queues/workq")
        assert queues["max_run"] == 2
        api.at(100)  # the first two end: the next two start, never more than two at once
        assert await states(api) == {"3.mini": "R", "4.mini": "R"}


@pytest.mark.parametrize("policy", POLICIES)
async def test_max_user_run_counts_each_user(tmp_path: Path, policy: str) -> None:
    async with serve(tmp_path, limited_site(policy, max_user_run=1)) as api:
        for _ in range(2):
            await api.submit("alice", nodes=1, walltime=1000)
        await api.submit("bob", nodes=1, walltime=1000)
        assert await states(api) == {"1.mini": "R", "2.mini": "Q", "3.mini": "R"}
        second = await api.job(2)
        assert second["comment"] == "Not Running: User has reached queue workq running job limit."


async def test_a_job_too_wide_to_start_takes_no_slot(tmp_path: Path) -> None:
    # max_run 2. Job 2 needs 6 nodes, 4 are free: it cannot start now and takes no slot,
    # so job 3 behind it gets the second one (EASY backfills it, as it ends before job
    # 2's planned start). Then both slots are taken: jobs 2 and 4 wait for the limit.
    async with serve(tmp_path, limited_site("fcfs-easy", max_run=2)) as api:
        await api.submit(nodes=4, walltime=1000)
        await api.submit(nodes=6, walltime=500)
        await api.submit(nodes=1, walltime=100)
        assert await states(api) == {"1.mini": "R", "2.mini": "Q", "3.mini": "R"}
        await api.submit(nodes=1, walltime=100)
        assert await states(api) == {"1.mini": "R", "2.mini": "Q", "3.mini": "R", "4.mini": "Q"}
        limit = "Not Running: Queue workq job limit has been reached."
        assert (await api.job(2))["comment"] == limit
        assert (await api.job(4))["comment"] == limit
        api.at(100)  # job 3 ends: a slot, but job 2 still does not fit; job 4 takes it
        assert await states(api) == {"1.mini": "R", "2.mini": "Q", "4.mini": "R"}


async def test_server_limits_are_set_live_shown_and_removed(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.error("alice", "PATCH", "/server", {"max_run": 1}, status=403, code="forbidden")
        await api.error(
            "boss", "PATCH", "/server", {"max_run": -1}, status=400, code="bad_request",
            says="max_run",
        )  # fmt: skip
        server = await api.call("boss", "PATCH", "/server", {"max_run": 1, "max_user_run": 1})
        assert (server["max_run"], server["max_user_run"]) == (1, 1)
        await api.submit("alice", nodes=1, walltime=1000)
        await api.submit("bob", queue="small", nodes=1, walltime=1000)
        assert await states(api) == {"1.mini": "R", "2.mini": "Q"}
        assert (await api.job(2))["comment"] == "Not Running: Server job limit has been reached."
        await api.call("boss", "PATCH", "/server", {"max_run": None})
        assert await states(api) == {"1.mini": "R", "2.mini": "R"}
        assert (await api.call("alice", "GET", "/server"))["max_run"] is None


async def test_scheduling_off_starts_nothing_and_outlasts_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with serve(tmp_path) as api:
        await api.submit(nodes=1, walltime=1000, runtime=50)
        server = await api.call("boss", "PATCH", "/server", {"scheduling": False})
        assert server["scheduling"] is False
        await api.submit(nodes=1, walltime=1000)
        assert await states(api) == {"1.mini": "R", "2.mini": "Q"}  # running goes on
        assert (await api.job(2))["comment"] == (
            "Not Running: Scheduling is turned off (server attribute scheduling = False)"
        )
        api.at(60)
        assert await states(api) == {"2.mini": "Q"}  # job 1 ended; nothing started
    svc = BatchService(site_config(), VirtualClock(T0 + 100), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        assert (await api.call("alice", "GET", "/server"))["scheduling"] is False
        assert await states(api) == {"2.mini": "Q"}
        await api.call("boss", "PATCH", "/server", {"scheduling": True})
        assert await states(api) == {"2.mini": "R"}


async def test_queued_limits_refuse_at_submission_in_pbs_words(tmp_path: Path) -> None:
    async with serve(tmp_path, limited_site(max_queued=2, max_user_queued=1)) as api:
        await api.submit("alice", nodes=1, walltime=1000)
        before = await api.state()
        await api.error(
            "alice", "POST", "/jobs", {"nodes": 1}, status=409, code="max_queued",
            says="would exceed queue generic's per-user limit",
        )  # fmt: skip
        assert await api.state() == before  # nothing changed
        await api.submit("bob", nodes=1, walltime=1000)
        message = await api.error(
            "oper", "POST", "/jobs", {"nodes": 1}, status=409, code="max_queued"
        )
        assert message == "Maximum number of jobs already in queue workq"
        # a move into the full queue is refused too
        await api.submit("oper", queue="small", nodes=1, walltime=60, hold=True)
        await api.error(
            "oper", "POST", "/jobs/3/move", {"queue": "workq"}, status=409, code="max_queued"
        )
        # the server's, set live
        await api.call("boss", "PATCH", "/server", {"max_queued": 3})
        message = await api.error(
            "boss", "POST", "/jobs", {"queue": "small", "nodes": 1}, status=409, code="max_queued"
        )
        assert message == "Maximum number of jobs already in complex"


async def test_queue_limits_are_set_with_qmgr_fields_and_removed_with_null(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.call("boss", "PATCH", "/queues/workq", {"max_run": 1, "max_user_queued": 5})
        q = await api.call("alice", "GET", "/queues/workq")
        assert (q["max_run"], q["max_user_queued"]) == (1, 5)
        await api.call("boss", "PATCH", "/queues/workq", {"max_run": None})
        q = await api.call("alice", "GET", "/queues/workq")
        assert (q["max_run"], q["max_user_queued"]) == (None, 5)


@pytest.mark.parametrize("structure", ["central", "hierarchical"])
async def test_scheduling_off_holds_a_grid_too(tmp_path: Path, structure: str) -> None:
    site = SiteConfig.model_validate(
        {
            "machine": [
                {"name": "a", "nodes": 4, "node_prefix": "a"},
                {"name": "b", "nodes": 8, "node_prefix": "b"},
            ],
            "server": {"name": "g"},
            "auth": {"managers": ["boss"]},
            "queue": [{"name": "workq", "default_walltime": 3600}],
            "grid": {"structure": structure, "params": {}},
        }
    )
    async with serve(tmp_path, site) as api:
        await api.submit(nodes=2, walltime=100)
        await api.call("boss", "PATCH", "/server", {"scheduling": False})
        await api.submit(nodes=2, walltime=100)
        assert await states(api) == {"1.g": "R", "2.g": "Q"}
        await api.call("boss", "PATCH", "/server", {"scheduling": True})
        assert await states(api) == {"1.g": "R", "2.g": "R"}
