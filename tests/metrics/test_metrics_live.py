"""The daemon's /metrics after a small hand-computed schedule: every metric, every value.

The 8-node test site, fcfs-easy, from T0 (Monday 1970-01-12 13:46:40 UTC, prime time):

    J1 alice workq 4 nodes, walltime 1000, runs 100 s   starts 0, ends 100
    J2 bob   workq 6 nodes, walltime 200,  runs 200 s   waits for J1: starts 100, ends 300
    J3 alice small 2 nodes, walltime 60,   runs 30 s    backfilled: starts 0, ends 30
    J4 alice workq held, deleted at 150                 never runs (cancelled)
    J5 bob   small 1 node,  walltime 60,   runs 120 s   starts 150, killed at 210 (walltime)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from api_helpers import NODES, T0, Api, serve, site_config
from batchd.metrics.catalog import METRICS, series_names
from batchd.sched.policies.dynp import DynP
from batchd.site.config import SiteConfig
from paths import ROOT

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
MONDAY_19H = 1_018_800  # 1970-01-12 19:00:00 UTC: prime time ends


def parse(text: str) -> Samples:
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


async def scrape(api: Api) -> Samples:
    status, text = await api.raw(None, "GET", "/metrics")
    assert status == 200, text
    return parse(text)


def value(m: Samples, name: str, **labels: str) -> float:
    return m[(name, tuple(sorted(labels.items())))]


def site(**extra: Any) -> SiteConfig:
    raw = site_config(timezone="UTC").model_dump(exclude_none=True)
    for key, val in extra.items():
        section, _, field = key.partition("__")
        if section == "machine":
            raw["machine"][0][field] = val
        else:
            raw.setdefault(section, {})[field] = val
    return SiteConfig.model_validate(raw)


async def run_schedule(api: Api) -> Samples:
    """Submit J1-J4 at T0 and return the scrape at T0 (plan gauges refreshed)."""
    await api.submit("alice", nodes=4, walltime=1000, runtime=100)
    await api.submit("bob", nodes=6, walltime=200)
    await api.submit("alice", queue="small", nodes=2, walltime=60, runtime=30)
    await api.submit("alice", hold=True)
    api.svc.refresh_plan_gauges()
    return await scrape(api)


async def test_values_at_submission(tmp_path: Path) -> None:
    async with serve(tmp_path, site()) as api:
        m = await run_schedule(api)
    jobs = {
        (q, s): value(m, "batchd_jobs", queue=q, state=s)
        for q in ("workq", "small")
        for s in ("queued", "held", "waiting", "running")
    }
    assert jobs == {
        ("workq", "queued"): 1, ("workq", "held"): 1, ("workq", "waiting"): 0,
        ("workq", "running"): 1, ("small", "queued"): 0, ("small", "held"): 0,
        ("small", "waiting"): 0, ("small", "running"): 1,
    }  # fmt: skip
    assert value(m, "batchd_backlog_node_seconds", queue="workq") == 6 * 200
    assert value(m, "batchd_backlog_node_seconds", queue="small") == 0
    nodes = {s: value(m, "batchd_nodes", pool="mini", state=s) for s in ("idle", "allocated")}
    assert nodes == {"idle": 2, "allocated": 6}
    assert value(m, "batchd_utilization_ratio", pool="mini") == 6 / NODES
    # J2 is the head: planned at J1's walltime end; the plan ends when J2 would.
    assert value(m, "batchd_queue_head_planned_start_timestamp_seconds", pool="mini") == T0 + 1000
    assert value(m, "batchd_queue_head_wait_seconds", pool="mini") == 0
    assert value(m, "batchd_plan_makespan_seconds", pool="mini") == 1200
    assert 0 <= value(m, "batchd_plan_age_seconds") < 5
    assert value(m, "batchd_jobs_submitted_total", queue="workq") == 3
    assert value(m, "batchd_jobs_submitted_total", queue="small") == 1
    assert value(m, "batchd_jobs_started_total", queue="workq", policy="fcfs-easy") == 1
    assert value(m, "batchd_jobs_started_total", queue="small", policy="fcfs-easy") == 1
    assert value(m, "batchd_scheduler_policy", pool="mini", policy="fcfs-easy") == 1
    assert value(m, "batchd_scheduler_policy", pool="mini", policy="dynp") == 0
    assert value(m, "batchd_scheduler_order", pool="mini", order="FCFS") == 1
    assert value(m, "batchd_scheduler_order", pool="mini", order="SJF") == 0
    assert value(m, "batchd_prime_time_window", window="prime") == 1
    assert value(m, "batchd_prime_time_window", window="nonprime") == 0
    assert value(m, "batchd_prime_time_next_change_timestamp_seconds") == MONDAY_19H
    assert value(m, "batchd_emulated_timestamp_seconds") == T0
    assert value(m, "batchd_clock_speed") == 1
    assert value(m, "batchd_scheduler_cycle_seconds_count") >= 4
    assert value(m, "process_resident_memory_bytes") > 0


async def test_values_after_the_schedule(tmp_path: Path) -> None:
    async with serve(tmp_path, site()) as api:
        await run_schedule(api)
        api.at(150)
        await api.call("alice", "DELETE", "/jobs/4.mini")
        await api.submit("bob", queue="small", nodes=1, walltime=60, runtime=120)
        api.at(250)
        mid = await scrape(api)
        api.at(400)
        api.svc.refresh_plan_gauges()
        m = await scrape(api)
    # At 250: J2 on 6 nodes; J5 ran 150-210.
    assert value(mid, "batchd_utilization_ratio", pool="mini") == 6 / NODES
    assert value(mid, "batchd_allocated_node_seconds_total", pool="mini") == (
        4 * 100 + 2 * 30 + 6 * 150 + 1 * 60
    )
    completed = {
        (q, o): value(m, "batchd_jobs_completed_total", queue=q, outcome=o)
        for q in ("workq", "small")
        for o in ("ok", "walltime", "cancelled", "overflow", "node_fail", "dependency")
    }
    assert {k: v for k, v in completed.items() if v} == {
        ("workq", "ok"): 2,
        ("workq", "cancelled"): 1,
        ("small", "ok"): 1,
        ("small", "walltime"): 1,
    }
    # Waits: J1 0, J2 100 (workq); J3 0, J5 0 (small).
    assert value(m, "batchd_job_wait_seconds_count", queue="workq") == 2
    assert value(m, "batchd_job_wait_seconds_sum", queue="workq") == 100
    assert value(m, "batchd_job_wait_seconds_bucket", queue="workq", le="60.0") == 1
    assert value(m, "batchd_job_wait_seconds_bucket", queue="workq", le="300.0") == 2
    # Responses: J1 100, J2 300; J3 30, J5 60. Slowdowns: J2 300/200, the rest 1.
    assert value(m, "batchd_job_response_seconds_sum", queue="workq") == 400
    assert value(m, "batchd_job_response_seconds_sum", queue="small") == 90
    assert value(m, "batchd_job_slowdown_sum", queue="workq") == 2.5
    assert value(m, "batchd_job_slowdown_bucket", queue="workq", le="1.0") == 1
    assert value(m, "batchd_job_slowdown_sum", queue="small") == 2
    assert value(m, "batchd_jobs_started_total", queue="small", policy="fcfs-easy") == 2
    busy = 4 * 100 + 2 * 30 + 6 * 200 + 1 * 60
    assert value(m, "batchd_allocated_node_seconds_total", pool="mini") == busy
    assert value(m, "batchd_utilization_window_ratio", pool="mini") == busy / (NODES * 400)
    assert value(m, "batchd_utilization_ratio", pool="mini") == 0
    assert all(
        value(m, "batchd_jobs", queue=q, state=s) == 0
        for q in ("workq", "small")
        for s in ("queued", "held", "waiting", "running")
    )
    assert value(m, "batchd_backlog_node_seconds", queue="workq") == 0
    assert math.isnan(value(m, "batchd_queue_head_planned_start_timestamp_seconds", pool="mini"))
    assert value(m, "batchd_queue_head_wait_seconds", pool="mini") == 0
    assert value(m, "batchd_plan_makespan_seconds", pool="mini") == 0


async def test_sliding_window(tmp_path: Path) -> None:
    async with serve(tmp_path, site(metrics__utilization_window=100)) as api:
        await run_schedule(api)
        api.at(150)
        await api.submit("bob", queue="small", nodes=1, walltime=60, runtime=120)
        api.at(250)
        m = await scrape(api)
        assert value(m, "batchd_utilization_window_seconds") == 100
        # [150, 250): J2 on 6 nodes throughout, J5 on 1 node for 60 s.
        assert value(m, "batchd_utilization_window_ratio", pool="mini") == (600 + 60) / 800
        api.at(400)
        m = await scrape(api)
        assert value(m, "batchd_utilization_window_ratio", pool="mini") == 0


async def test_every_documented_metric_is_exported(tmp_path: Path) -> None:
    extra = {"machine__cores_per_node": 2, "metrics__per_user": True}
    async with serve(tmp_path, site(**extra)) as api:
        await run_schedule(api)
        api.at(500)
        await api.call("boss", "PATCH", "/scheduler", {"policy": "sjf-easy"})
        m = await scrape(api)
    present = {name for name, _ in m}
    for metric in METRICS:
        if metric.name.startswith("batchd_grid_"):
            continue  # a grid site's only (tests/server/service/test_grid_live.py)
        if metric.name.startswith("batchd_connections_"):
            continue  # the daemon's listeners' (tests/server/test_connection_flood.py)
        for series in series_names(metric):
            assert series in present, f"{series} is documented but not exported"
    documented = {s for metric in METRICS for s in series_names(metric)}
    ours = {n for n in present if n.startswith("batchd_")}
    assert ours <= documented, f"exported but not in the catalog: {ours - documented}"
    for (name, _labels), v in m.items():
        if name.startswith("batchd_") and name.endswith(("_total", "_count", "_bucket")):
            assert v >= 0 and not math.isnan(v), name
    assert value(m, "batchd_cores", pool="mini", state="idle") == 2 * NODES
    docs = (ROOT / "docs" / "monitoring.md").read_text()
    for metric in METRICS:
        assert f"`{metric.name}`" in docs, f"{metric.name} is not in docs/monitoring.md"


async def test_per_user_metrics_are_capped(tmp_path: Path) -> None:
    async with serve(tmp_path, site(metrics__per_user=True, metrics__max_users=1)) as api:
        await api.submit("alice", nodes=8, walltime=100)
        await api.submit("bob", nodes=1)
        await api.submit("oper", nodes=1)
        m = await scrape(api)
    assert value(m, "batchd_user_jobs", user="alice", state="running") == 1
    assert value(m, "batchd_user_jobs", user="_other", state="queued") == 2
    assert value(m, "batchd_user_jobs_submitted_total", user="_other") == 2
    assert not any(dict(labels).get("user") == "bob" for _, labels in m)


async def test_no_user_labels_without_opt_in(api: Api) -> None:
    await api.submit("alice", nodes=1)
    m = await scrape(api)
    assert not any(name.startswith("batchd_user_") for name, _ in m)
    assert not any("user" in dict(labels) for _, labels in m)


async def test_requeue_and_switches(tmp_path: Path) -> None:
    async with serve(tmp_path, site()) as api:
        await api.submit("alice", nodes=8, walltime=1000)
        await api.call("oper", "PATCH", "/nodes/node003", {"state": "down"})
        await api.call("boss", "PATCH", "/scheduler", {"policy": "sjf-cons"})
        await api.call("boss", "PATCH", "/scheduler", {"policy": "sjf-cons"})  # no switch
        m = await scrape(api)
    assert value(m, "batchd_jobs_requeued_total", queue="workq", reason="node_fail") == 1
    assert value(m, "batchd_nodes", pool="mini", state="down") == 1
    assert value(m, "batchd_utilization_ratio", pool="mini") == 0
    switch = {"pool": "mini", "from": "fcfs-easy", "to": "sjf-cons"}
    assert value(m, "batchd_policy_switches_total", **switch) == 1
    assert value(m, "batchd_scheduler_policy", pool="mini", policy="sjf-cons") == 1
    assert value(m, "batchd_scheduler_order", pool="mini", order="SJF") == 1


async def test_dynp_decider_cases_and_switches(tmp_path: Path) -> None:
    async with serve(tmp_path, site(server__policy="dynp")) as api:
        await api.submit("alice", nodes=8, walltime=1000)
        for walltime in (500, 100, 900, 50, 700):
            await api.submit("bob", nodes=3, walltime=walltime)
        api.at(1000)
        m = await scrape(api)
        policy = api.svc.engine.machines[0].policy.find(DynP)
        assert policy is not None
        calls = policy.decider_calls
        switched = sum(policy.switches.values())
    cases = sum(v for (n, _), v in m.items() if n == "batchd_dynp_decider_calls_total")
    assert calls > 0 and cases == calls
    assert value(m, "batchd_dynp_tuning_seconds_count") == calls
    switches = sum(v for (n, _), v in m.items() if n == "batchd_policy_switches_total")
    assert switched > 0 and switches == switched
    started = sum(
        v for (n, labels), v in m.items()
        if n == "batchd_jobs_started_total" and dict(labels)["policy"] in ("FCFS", "SJF", "LJF")
    )  # fmt: skip
    # J1 (8 nodes) ends at 1000; two of the 3-node jobs fit beside each other then.
    assert started == 3


async def test_scrape_does_not_walk_the_jobs(api: Api) -> None:
    """Counts come from the tally: a record changed behind the service's back stays uncounted."""
    for _ in range(3):
        await api.submit("alice", nodes=8, walltime=100)
    m = await scrape(api)
    assert value(m, "batchd_jobs", queue="workq", state="queued") == 2
    api.svc.records[3].job.queue = "small"  # not through the service: no record change
    m = await scrape(api)
    assert value(m, "batchd_jobs", queue="workq", state="queued") == 2
    assert value(m, "batchd_jobs", queue="small", state="queued") == 0


async def test_utilization_by_window(tmp_path: Path) -> None:
    """T0 is Monday 13:46:40 UTC; prime time ends at 19:00 (MONDAY_19H)."""
    async with serve(tmp_path, site()) as api:
        await api.submit("alice", nodes=4, walltime=30_000)  # runs T0 .. T0 + 30,000
        api.at(MONDAY_19H - T0 + 1000)
        m = await scrape(api)
    prime = MONDAY_19H - T0
    assert value(m, "batchd_window_seconds_total", window="prime") == prime
    assert value(m, "batchd_window_seconds_total", window="nonprime") == 1000
    alloc = {
        w: value(m, "batchd_window_allocated_node_seconds_total", pool="mini", window=w)
        for w in ("prime", "nonprime")
    }
    assert alloc == {"prime": 4 * prime, "nonprime": 4 * 1000}
