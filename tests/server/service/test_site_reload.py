"""Re-reading the site file (SIGHUP) never strands a job: a queue that holds jobs stays
until they are gone, as qmgr keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from api_helpers import new_service, site_config, start_api
from batchd.site.config import SiteConfig


def without_small() -> SiteConfig:
    site = site_config()
    return site.model_copy(update={"queue": [q for q in site.queue if q.name != "small"]})


async def test_a_reload_that_drops_a_queue_with_jobs_is_refused(tmp_path: Path) -> None:
    async with start_api(new_service(tmp_path / "state.db")) as api:
        await api.submit("alice", queue="small", nodes=2, walltime=600)  # runs
        await api.submit("alice", nodes=8, walltime=600)  # waits for the whole machine
        await api.submit("alice", queue="small", nodes=1, walltime=600)  # waits behind it
        before = await api.state()
        with pytest.raises(ValueError) as err:
            api.svc.reload(without_small())
        assert str(err.value).startswith(
            "Cannot delete busy object: queue small, which the file no longer has, holds 2 "
            "unfinished jobs"
        )
        assert await api.state() == before
        names = [q["name"] for q in (await api.call("alice", "GET", "/queues"))["queues"]]
        assert names == ["workq", "small"]
        api.at(1300)  # both of small's jobs have ended
        assert [j["state"] for j in await api.jobs()] == ["F", "F", "F"]
        api.svc.reload(without_small())
        names = [q["name"] for q in (await api.call("alice", "GET", "/queues"))["queues"]]
        assert names == ["workq"]


async def test_a_queue_a_manager_made_stays_through_a_reload(tmp_path: Path) -> None:
    async with start_api(new_service(tmp_path / "state.db")) as api:
        await api.call("boss", "POST", "/queues", {"name": "live", "enabled": True}, status=201)
        await api.submit("alice", queue="live", nodes=1, walltime=600)
        api.svc.reload(without_small())  # the file never had "live": it is not dropped
        names = [q["name"] for q in (await api.call("alice", "GET", "/queues"))["queues"]]
        assert names == ["workq", "live"]
