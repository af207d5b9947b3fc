"""Moldable jobs over the API (Sabin et al.'s moldable paper): a width range and a speedup model at qsub and
qalter, the width moldable-greedy chooses and the runtime the model gives, the fields a
job shows, refusals that change nothing, a restart, and the live metrics."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from api_helpers import NODES, T0, Api, new_service, serve, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.replay import ReplayOptions, run_replay
from batchd.server.service import BatchService
from batchd.server.store import Store

GREEDY = site_config(policy="moldable-greedy")


@pytest.fixture
async def greedy(tmp_path: Path):  # type: ignore[no-untyped-def]
    async with serve(tmp_path, GREEDY) as api:
        yield api


async def test_greedy_runs_a_job_on_the_width_it_chooses_for_the_models_runtime(
    greedy: Api,
) -> None:
    # Downey with A = 8, sigma = 0: S(n) = n up to 8 nodes. 1600 s on 2 nodes is 400 s
    # on 8; the walltime 2000 s on 2 nodes is 500 s on 8. The machine is empty: 8 nodes
    # end it soonest.
    job = await greedy.submit(
        nodes=2, nodes_max=8, speedup="downey:8:0", walltime=2000, runtime=1600
    )
    assert (job["state"], job["nodes"], job["walltime"]) == ("R", 8, 500)
    assert (job["nodes_min"], job["nodes_max"], job["speedup"]) == (2, 8, "downey:8:0")
    assert job["planned_nodes"] is None  # it is no longer waiting
    assert job["runtime"] == 1600  # BATCHD_RUNTIME as given, on the requested width
    greedy.at(400)
    done = await greedy.job(job["seq"])
    assert (done["state"], done["outcome"]) == ("F", "ok")
    assert done["end_time"] - done["stime"] == 400 and done["nodes"] == 8
    assert len(done["exec_host"]) == 8


async def test_a_fixed_range_takes_its_narrowest_width_and_keeps_its_walltime(
    greedy: Api,
) -> None:
    job = await greedy.submit(nodes=3, nodes_max=8, speedup="fixed", walltime=600)
    assert (job["state"], job["nodes"], job["walltime"]) == ("R", 3, 600)
    # No speedup given: fixed.
    other = await greedy.submit(nodes=1, nodes_max=5, walltime=600)
    assert (other["speedup"], other["nodes"]) == ("fixed", 1)


async def test_a_waiting_job_shows_the_width_it_is_planned_with(greedy: Api) -> None:
    await greedy.submit(nodes=8, walltime=1000)  # the whole machine until T0 + 1000
    job = await greedy.submit(nodes=2, nodes_max=8, speedup="downey:8:0", walltime=8000)
    # Every width starts at T0 + 1000; 8 nodes end it soonest (8000 x 2 / 8 = 2000 s).
    assert (job["state"], job["nodes"], job["walltime"]) == ("Q", 2, 8000)
    assert job["planned_nodes"] == 8 and job["est_start"] == T0 + 1000
    brief = (await greedy.call("alice", "GET", "/jobs?brief=true"))["jobs"]
    assert [j["nodes"] for j in brief] == [8, 2]  # the width in use or requested
    greedy.at(1000)
    started = await greedy.job(job["seq"])
    assert (started["state"], started["nodes"], started["walltime"]) == ("R", 8, 2000)


async def test_other_policies_run_a_moldable_job_on_its_requested_width(api: Api) -> None:
    await api.submit(nodes=8, walltime=1000)
    job = await api.submit(nodes=2, nodes_max=8, speedup="downey:8:0", walltime=800)
    assert (job["state"], job["planned_nodes"]) == ("Q", 2)
    api.at(1000)
    assert (await api.job(job["seq"]))["nodes"] == 2


async def test_rigid_jobs_show_no_range(api: Api) -> None:
    job = await api.submit(nodes=2, walltime=60)
    assert [job[k] for k in ("nodes_min", "nodes_max", "speedup", "planned_nodes")] == [None] * 4


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"nodes": 4, "nodes_max": 2}, "nodes_max 2 is less than nodes 4"),
        ({"nodes": 1, "nodes_max": NODES + 1}, f"{NODES + 1} nodes requested; machine mini has"),
        ({"nodes": 1, "nodes_max": 10**30}, "nodes requested; machine mini has 8"),
        ({"nodes": 1, "nodes_max": 0}, "nodes_max"),
        ({"nodes_max": 4, "queue": "small"}, "exceed the limit of queue small"),
        ({"nodes_max": 4, "speedup": "downey:0.5:1"}, "A is 0.5; it must be at least 1"),
        ({"nodes_max": 4, "speedup": "amdahl:0.9"}, "'amdahl:0.9': use downey:A:SIGMA or fixed"),
        ({"nodes_max": 4, "speedup": "downey:4"}, "use downey:A:SIGMA or fixed"),
        ({"nodes_max": 4, "speedup": "downey:4:-1"}, "sigma '-1' is not a decimal number"),
        ({"nodes_max": 4, "speedup": " fixed"}, "' fixed': give downey:A:SIGMA"),
        ({"nodes_max": 4, "speedup": "downey:01:1"}, "A without a leading zero"),
        ({"nodes_max": 4, "speedup": "downey:1e9:1"}, "A '1e9' is not a decimal number"),
        ({"nodes_max": 4, "speedup": "downey:" + "9" * 80 + ":1"}, "at most 64 characters"),
        ({"nodes_max": 4, "speedup": 3}, "speedup"),
        ({"nodes_max": "4"}, "nodes_max"),
    ],
)
async def test_a_bad_range_or_model_is_refused_and_changes_nothing(
    api: Api, fields: dict[str, Any], says: str
) -> None:
    await api.submit(nodes=2, walltime=60)
    before = await api.state()
    await api.error("alice", "POST", "/jobs", fields, status=400, code="bad_request", says=says)
    assert await api.state() == before


async def test_alter_changes_the_range_and_the_model(greedy: Api) -> None:
    job = await greedy.submit(hold=True, nodes=2, nodes_max=8, speedup="downey:8:0", walltime=800)
    path = f"/jobs/{job['seq']}"
    body = await greedy.call("alice", "PATCH", path, {"nodes_max": 4})
    assert (body["nodes_min"], body["nodes_max"], body["speedup"]) == (2, 4, "downey:8:0")
    body = await greedy.call("alice", "PATCH", path, {"speedup": "fixed", "walltime": 300})
    assert (body["speedup"], body["walltime"], body["nodes"]) == ("fixed", 300, 2)
    # nodes alone asks for that many nodes: the range closes on it.
    body = await greedy.call("alice", "PATCH", path, {"nodes": 3})
    assert (body["nodes_min"], body["nodes_max"], body["nodes"]) == (3, 3, 3)
    body = await greedy.call("alice", "PATCH", path, {"nodes": 1, "nodes_max": 6})
    assert (body["nodes_min"], body["nodes_max"], body["nodes"]) == (1, 6, 1)
    before = await greedy.state()
    for fields, says in (
        ({"nodes_max": 9}, "9 nodes requested; machine mini has 8"),
        ({"nodes_max": 3, "nodes": 5}, "nodes_max 3 is less than nodes 5"),
        ({"speedup": "downey:0:0"}, "A is 0; it must be at least 1"),
    ):
        await greedy.error(
            "alice", "PATCH", path, fields, status=400, code="bad_request", says=says
        )
    assert await greedy.state() == before
    # A rigid job given a model or a top of range becomes moldable.
    rigid = await greedy.submit(hold=True, nodes=2, walltime=60)
    body = await greedy.call("alice", "PATCH", f"/jobs/{rigid['seq']}", {"nodes_max": 5})
    assert (body["nodes_min"], body["nodes_max"], body["speedup"]) == (2, 5, "fixed")
    # Released, greedy chooses again: fixed takes its narrowest width.
    await greedy.call("alice", "POST", f"{path}/release", {"types": "u"})
    assert (await greedy.job(job["seq"]))["nodes"] == 1


async def test_the_document_describes_the_fields(api: Api) -> None:
    doc = await api.call(None, "GET", "/openapi.json")
    schemas = doc["components"]["schemas"]
    for model in ("JobSubmit", "JobAlter"):
        props = schemas[model]["properties"]
        assert "downey" in str(props["speedup"]) and "maxLength" in str(props["speedup"])
        assert "minimum" in str(props["nodes_max"])
    for field in ("nodes_min", "nodes_max", "speedup", "planned_nodes"):
        assert field in schemas["JobOut"]["properties"]


async def test_a_restart_keeps_ranges_models_and_chosen_widths(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path, GREEDY)) as api:
        await api.submit(nodes=4, walltime=1000)
        running = await api.submit(nodes=1, nodes_max=8, speedup="downey:4:0.5", walltime=900)
        waiting = await api.submit(nodes=2, nodes_max=8, speedup="downey:8:1.7", walltime=4000)
        held = await api.submit(hold=True, nodes=1, nodes_max=3, runtime=50, walltime=100)
        before = {j["seq"]: j for j in await api.jobs()}
    assert running["state"] == "R" and waiting["state"] == "Q"
    svc = BatchService(GREEDY, VirtualClock(T0), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        after = {j["seq"]: j for j in await api.jobs()}
        assert after == before  # same widths, walltimes, hosts, plan and planned widths
        api.at(5000)
        ended = {j["seq"]: j for j in await api.jobs()}
    # The running job ends on the runtime of the width it was given before the restart.
    r = ended[running["seq"]]
    assert r["end_time"] - r["stime"] == running["walltime"] and r["nodes"] == running["nodes"]
    w = ended[waiting["seq"]]
    assert w["nodes"] == before[waiting["seq"]]["planned_nodes"]
    assert ended[held["seq"]]["nodes_max"] == 3


def write_trace(path: Path, jobs: list[tuple[int, int, int, int, int, str | None]]) -> None:
    """(submit, runtime, estimate, min, max, speedup) per job; field 8 the minimum. A job
    without a speedup is rigid on its minimum and has no tokens."""
    lines = []
    for i, (t, run, est, low, high, model) in enumerate(jobs, 1):
        fields = [i, t, -1, run, low, -1, -1, low, est, -1, 1, 1, -1, 1, 1, -1, -1, -1]
        tokens = "" if model is None else f" nodes={low}-{high} speedup={model}"
        lines.append(" ".join(map(str, fields)) + tokens)
    path.write_text("\n".join(lines) + "\n")


# Each moldable policy, with parameters that make its choices differ from the defaults'.
MOLDABLE_POLICIES = [
    ("moldable-greedy", {}),
    ("moldable-iterative", {}),
    ("moldable-fairshare", {}),
    ("moldable-fairshare", {"obf": "2"}),
    ("moldable-efficiency", {"obf": "4", "ef": "1"}),
]


@pytest.mark.parametrize(("policy", "params"), MOLDABLE_POLICIES)
async def test_the_daemon_chooses_the_widths_and_times_the_replay_chooses(
    tmp_path: Path, policy: str, params: dict[str, str]
) -> None:
    rng = random.Random(5)  # a trace on which every policy here molds some job
    jobs: list[tuple[int, int, int, int, int, str | None]] = []
    t = 0
    for _ in range(16):
        t += rng.randint(1, 400)
        low = rng.randint(1, 4)
        high = rng.randint(low, NODES)
        model = rng.choice(
            [None, "fixed", f"downey:{rng.randint(1, 12)}:{rng.choice([0, 0.4, 1, 1.6])}"]
        )
        est = rng.randint(60, 2000)
        run = rng.randint(30, est + 200)  # some are killed at their walltime
        jobs.append((t, run, est, low, high, model))
    trace = tmp_path / "m.swf"
    write_trace(trace, jobs)
    replay = run_replay(ReplayOptions(trace=str(trace), policy=policy, params=params, nodes=NODES))
    expected = {
        j.id: (j.start, j.end, j.width, j.result.outcome or "ok")
        for j in sorted(replay.jobs, key=lambda j: j.id)
    }
    async with serve(tmp_path, site_config(policy=policy, policy_params=params)) as api:
        for t, run, est, low, high, model in jobs:
            api.at(t)
            if model is None:
                await api.submit(nodes=low, walltime=est, runtime=run)
            else:
                await api.submit(
                    nodes=low, nodes_max=high, speedup=model, walltime=est, runtime=run
                )
        api.at(t + 100_000)
        live = {
            j["seq"]: (j["stime"] - T0, j["end_time"] - T0, j["nodes"], j["outcome"])
            for j in await api.jobs()
        }
    assert live == expected
    # The policy did choose: some moldable jobs run on another width than they asked for.
    assert any(w != job[3] for (_, _, w, _), job in zip(live.values(), jobs, strict=True) if job[5])
    assert any(job[5] is None for job in jobs)  # and rigid jobs ran beside them


@pytest.mark.parametrize(("policy", "params"), MOLDABLE_POLICIES[2:])
async def test_switching_to_and_from_a_fair_share_policy_live(
    api: Api, policy: str, params: dict[str, str]
) -> None:
    # Under fcfs-easy two moldable jobs wait behind a full machine at their requested width.
    await api.submit(nodes=8, walltime=1000)
    first = await api.submit(nodes=1, nodes_max=8, speedup="downey:8:0", walltime=4000)
    second = await api.submit(nodes=1, nodes_max=8, speedup="downey:8:0", walltime=4000)
    assert [(await api.job(j["seq"]))["planned_nodes"] for j in (first, second)] == [1, 1]
    before = await api.state()
    await api.error(
        "boss", "PATCH", "/scheduler", {"policy": policy, "params": {"obf": "0"}},
        status=400, code="bad_request", says="parameter obf='0'",
    )  # fmt: skip
    assert await api.state() == before
    api.at(10)
    body = await api.call("boss", "PATCH", "/scheduler", {"policy": policy, "params": params})
    assert (body["policy"], body["params"]) == (policy, params)
    # Equal weights: a limit of obf x 4 nodes each; each is planned on it from 1000.
    limit = min(NODES, 4 * int(float(params.get("obf", "1"))))
    for job in (first, second):
        waiting = await api.job(job["seq"])
        assert (waiting["state"], waiting["planned_nodes"]) == ("Q", limit)
    api.at(1000)
    started = await api.job(first["seq"])
    assert (started["state"], started["nodes"], started["walltime"]) == ("R", limit, 4000 // limit)
    # Back to fcfs-easy: the jobs still waiting are planned at their requested widths (the
    # second one too, when it was reserved on 8 nodes).
    await api.call("boss", "PATCH", "/scheduler", {"policy": "fcfs-easy", "params": {}})
    later = await api.submit(nodes=2, nodes_max=8, speedup="downey:8:0", walltime=600)
    waiting = [j for j in await api.jobs() if j["state"] == "Q"]
    assert later["seq"] in [j["seq"] for j in waiting]
    assert all(j["planned_nodes"] == j["nodes_min"] for j in waiting)


@pytest.mark.parametrize("policy", ["moldable-greedy", "moldable-fairshare", "moldable-efficiency"])
async def test_the_metrics_count_chosen_widths(tmp_path: Path, policy: str) -> None:
    async with serve(tmp_path, site_config(policy=policy)) as greedy:
        await _count_widths(greedy)


async def _count_widths(greedy: Api) -> None:
    await greedy.submit(nodes=2, nodes_max=8, speedup="downey:8:0", walltime=800)  # 8 nodes
    greedy.at(300)
    await greedy.submit(nodes=1, nodes_max=4, walltime=100)  # fixed: 1 node
    await greedy.submit(nodes=1, walltime=100)  # rigid: not counted
    text = await greedy.call(None, "GET", "/metrics")

    def sample(name: str) -> float:
        line = next(x for x in text.splitlines() if x.startswith(f'{name}{{pool="mini"}}'))
        return float(line.split()[-1])

    assert sample("batchd_moldable_width_nodes_count") == 2
    assert sample("batchd_moldable_width_nodes_sum") == 9
    assert sample("batchd_moldable_width_ratio_sum") == 8 / 2 + 1


async def test_moldable_iterative_plans_a_waiting_job_on_its_width_in_jobs_and_plan(
    tmp_path: Path,
) -> None:
    async with serve(tmp_path, site_config(policy="moldable-iterative")) as api:
        await api.submit(nodes=NODES, walltime=1000)
        # Linear to 8 nodes: 800 s on one node is 100 s on all 8, once the rigid job ends.
        job = await api.submit(nodes=1, nodes_max=8, speedup="downey:8:0", walltime=800)
        assert (job["state"], job["planned_nodes"], job["nodes"]) == ("Q", 8, 1)
        body = await api.call("alice", "GET", "/plan")
        row = next(
            dict(zip(body["fields"], r, strict=True)) for r in body["jobs"] if r[0] == job["seq"]
        )
        assert (row["nodes"], row["walltime"], row["start"]) == (8, 100, T0 + 1000)
        api.at(1000)
        started = await api.job(job["seq"])
        assert (started["state"], started["nodes"], started["walltime"]) == ("R", 8, 100)
