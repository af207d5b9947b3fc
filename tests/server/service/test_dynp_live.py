"""dynP's FCFS candidate in the live daemon: from the site file and through PATCH /scheduler.

The schedule of tests/sched/policies/test_dynp_candidate.py on the 8-node test site, every
width times four: A (4 nodes) runs [0, 1000); B (8 nodes, 5000 s) arrives at 10,
C (8 nodes, 100 s) at 20, D (4 nodes, 500 s) at 30. Under the simple decider the
as-queued candidate makes t=30 case 6b, and the plan adopted is FCFS's sorted one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from api_helpers import T0, Api, serve, site_config


async def _submit_a_b_c_d(api: Api) -> dict[str, Any]:
    await api.submit("alice", nodes=4, walltime=1000)
    api.at(10)
    await api.submit("bob", nodes=8, walltime=5000)
    api.at(20)
    await api.submit("alice", nodes=8, walltime=100)
    api.at(30)
    d: dict[str, Any] = await api.submit("bob", nodes=4, walltime=500)
    return d


async def _planned(api: Api) -> dict[str, int]:
    return {j["id"]: j["est_start"] - T0 for j in await api.jobs("state=Q")}


async def test_as_queued_from_the_site_file(tmp_path: Path) -> None:
    params = {"decider": "simple", "fcfs_candidate": "as-queued"}
    async with serve(tmp_path, site_config(policy="dynp", policy_params=params)) as api:
        d = await _submit_a_b_c_d(api)
        assert (d["state"], d["started_by"]) == ("R", "FCFS")
        assert await _planned(api) == {"2.mini": 1000, "3.mini": 6000}  # B before C
        sched = await api.call("alice", "GET", "/scheduler")
        assert sched["params"] == params
        cases = {k: v for k, v in sched["report"]["dynp"]["cases"].items() if v}
        assert cases == {"7": 1, "6b": 1}


async def test_fcfs_candidate_through_patch_scheduler(api: Api) -> None:
    # Sorted (the default): t=30 is case 7 and SJF stays, C before B.
    await api.call("boss", "PATCH", "/scheduler", {"policy": "dynp", "params": {}})
    d = await _submit_a_b_c_d(api)
    assert d["started_by"] == "SJF"
    assert await _planned(api) == {"3.mini": 1000, "2.mini": 1100}
    before = await api.state()
    await api.error(
        "boss", "PATCH", "/scheduler", {"params": {"fcfs_candidate": "shuffled"}},
        status=400, code="bad_request", says="fcfs_candidate",
    )  # fmt: skip
    assert await api.state() == before
    body = await api.call(
        "boss", "PATCH", "/scheduler", {"params": {"fcfs_candidate": "as-queued-sjf"}}
    )
    assert body["params"] == {"fcfs_candidate": "as-queued-sjf"}
