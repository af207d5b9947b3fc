"""A job's utility function over the API: submitted, shown with what it earns now,
altered, refused when it breaks a rule, kept across a restart (Lee's utility paper, sec. 3.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from api_helpers import T0, Api, new_service, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.service import BatchService
from batchd.server.store import Store

POINTS = [[0, 1000], [3600, 800], [7200, 0]]


async def test_submit_shows_the_function_and_what_it_earns_now(api: Api) -> None:
    body = await api.submit("alice", nodes=8, walltime=100, runtime=50, utility=POINTS)
    assert body["utility"] == POINTS
    assert body["utility_now"] == 1000
    held = await api.submit("alice", hold=True, utility=POINTS)
    plain = await api.submit("alice", hold=True)
    assert (plain["utility"], plain["utility_now"]) == (None, None)
    api.at(1800)
    # Waiting 1800 s: half way from 1000 to 800.
    assert (await api.job(held["seq"]))["utility_now"] == 900
    # Finished at T0 + 50: what it earned then, 1000 - 200 x 50 / 3600.
    done = await api.job(body["seq"])
    assert done["state"] == "F"
    assert done["utility_now"] == pytest.approx(1000 - 200 * 50 / 3600)
    api.at(9000)
    assert (await api.job(held["seq"]))["utility_now"] == 0


async def test_alter_changes_the_function(api: Api) -> None:
    job = await api.submit("alice", hold=True, utility=POINTS)
    api.at(100)
    body = await api.call("alice", "PATCH", f"/jobs/{job['seq']}", {"utility": [[0, 50], [200, 0]]})
    assert body["utility"] == [[0, 50], [200, 0]]
    assert body["utility_now"] == 25
    body = await api.call("alice", "PATCH", f"/jobs/{job['seq']}", {"priority": 3})
    assert body["utility"] == [[0, 50], [200, 0]]  # unchanged when not given
    body = await api.call("alice", "PATCH", f"/jobs/{job['seq']}", {"utility": None})
    assert body["utility"] is None and body["utility_now"] is None  # taken away
    assert (await api.job(job["seq"]))["utility"] is None


@pytest.mark.parametrize(
    ("points", "says"),
    [
        ([[0, 10], [60, 12]], "point 2 (60:12): values must never increase"),
        ([[5, 10], [60, 0]], "point 1 (5:10): the first time must be 0"),
        ([[0, 10], [60, 5], [60, 0]], "point 3 (60:0): times must strictly increase"),
        ([[0, 10]], "utility"),
        ([[0, 10], [60, -1]], "utility"),
        ([[0, 10], [60, True]], "utility"),
        ("0:10,60:0", "utility"),
        ([[0, 10], [60, 10**400]], "utility"),
    ],
)
async def test_a_function_breaking_a_rule_is_refused(api: Api, points: object, says: str) -> None:
    before = await api.state()
    await api.error(
        "alice", "POST", "/jobs", {"utility": points}, status=400, code="bad_request", says=says
    )
    job = await api.submit("alice", hold=True, utility=POINTS)
    await api.error(
        "alice",
        "PATCH",
        f"/jobs/{job['seq']}",
        {"utility": points},
        status=400,
        code="bad_request",
        says=says,
    )
    assert (await api.job(job["seq"]))["utility"] == POINTS
    assert before["seq"] + 1 == api.svc.seq


async def test_the_document_describes_the_points(api: Api) -> None:
    doc = await api.call(None, "GET", "/openapi.json")
    schemas = doc["components"]["schemas"]
    for model in ("JobSubmit", "JobAlter"):
        text = str(schemas[model]["properties"]["utility"])
        assert "'minItems': 2" in text and "'minimum': 0" in text
    assert "utility_now" in schemas["JobOut"]["properties"]


async def test_restart_keeps_the_function(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        await api.submit("alice", hold=True, utility=[[0, 10], [0.5, 9.25], [100, 0]])
    svc = BatchService(site_config(), VirtualClock(T0 + 50), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        job = await api.job(1)
        assert job["utility"] == [[0, 10], [0.5, 9.25], [100, 0]]
        # 50 s: on the segment from (0.5, 9.25) to (100, 0), 50 s before its end.
        assert job["utility_now"] == pytest.approx(9.25 * 50 / 99.5)


async def test_a_replayed_trace_brings_its_jobs_utility_functions(api: Api, tmp_path: Path) -> None:
    # serve --replay: a job whose SWF line carries utility= arrives with that function;
    # one without stays without.
    from batchd.server.feed import ReplayFeed

    trace = tmp_path / "u.swf"
    std = "-1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1"  # fields 6 to 18
    trace.write_text(f"1 0 -1 50 1 {std} utility=0:1000,3600:800,7200:0\n2 10 -1 50 1 {std}\n")
    feed = ReplayFeed(api.svc, str(trace), origin=T0)
    api.svc.replay = feed
    feed.start()
    api.at(20)
    jobs = {j["name"]: j for j in await api.jobs()}
    assert jobs["swf1"]["utility"] == POINTS
    assert jobs["swf2"]["utility"] is None


async def test_the_metrics_count_utility_earned_and_lost(api: Api) -> None:
    # Ends 50 s after submission on a line from 1000 at 0 to 800 at 3600: earns
    # 1000 - 200 * 50 / 3600 = 997.22, loses 2.78.
    await api.submit("alice", nodes=1, walltime=100, runtime=50, utility=POINTS)
    api.at(60)
    await api.job(1)
    text = await api.call(None, "GET", "/metrics")

    def sample(name: str) -> float:
        line = next(x for x in text.splitlines() if x.startswith(f'{name}{{queue="workq"}}'))
        return float(line.split()[-1])

    assert sample("batchd_utility_earned_total") == pytest.approx(1000 - 200 * 50 / 3600)
    assert sample("batchd_utility_lost_total") == pytest.approx(200 * 50 / 3600)


async def test_a_replayed_trace_brings_priority_classes_kept_across_a_restart(
    tmp_path: Path,
) -> None:
    # serve --replay: the priority_class= token (batchd utility writes it) rides with the
    # job into the daemon, where prio-fifo ranks by it, and is saved with it.
    from batchd.server.feed import ReplayFeed

    path = tmp_path / "state.db"
    trace = tmp_path / "p.swf"
    std = "-1 -1 1 100 -1 1 1 1 -1 1 -1 -1 -1"  # fields 6 to 18
    trace.write_text(f"1 0 -1 50 1 {std} priority_class=4\n2 10 -1 50 1 {std}\n")
    async with start_api(new_service(path)) as api:
        await api.submit("alice", nodes=8, walltime=1000)  # keeps the trace jobs waiting
        feed = ReplayFeed(api.svc, str(trace), origin=T0)
        api.svc.replay = feed
        feed.start()
        api.at(20)
        assert {j["name"]: j["state"] for j in await api.jobs()}["swf1"] == "Q"
    svc = BatchService(site_config(), VirtualClock(T0 + 30), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    classes = {rec.job.name: rec.job.priority_class for rec in svc.records.values()}
    assert classes == {"STDIN": 0, "swf1": 4, "swf2": 0}
