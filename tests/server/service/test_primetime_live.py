"""The primetime policy in the live daemon, on the emulated clock.

The 8-node test site at T0 = Monday 1970-01-12 13:46:40 UTC (prime time until
19:00 = T0 + 18,800); prime limits 4 nodes and 1 h.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from api_helpers import T0, serve, site_config

PRIME_ENDS = 1_018_800 - T0  # 19:00 UTC, as an offset from T0
NIGHT_ENDS = PRIME_ENDS + 11 * 3600  # Tuesday 06:00


def primetime_site(**params: str):  # type: ignore[no-untyped-def]
    return site_config(
        policy="primetime",
        timezone="UTC",
        policy_params={"prime_nodes": "4", "prime_runtime": "01:00:00", **params},
    )


async def test_a_large_job_waits_for_non_prime_time_with_its_reason(tmp_path: Path) -> None:
    async with serve(tmp_path, primetime_site()) as api:
        big = await api.submit("alice", nodes=6, walltime=7200)
        small = await api.submit("bob", nodes=2, walltime=1800)
        assert big["state"] == "Q" and small["state"] == "R"
        assert big["comment"] == (
            "Not Running: it runs in nonprime time, which opens at 1970-01-12 19:00:00 UTC"
        )
        api.at(PRIME_ENDS - 1)
        assert (await api.job(1))["state"] == "Q"
        api.at(PRIME_ENDS)
        job = await api.job(1)
        assert job["state"] == "R" and job["stime"] == T0 + PRIME_ENDS


async def test_overflow_requeue_in_the_daemon(tmp_path: Path) -> None:
    site = primetime_site(must_fit="false", overflow="requeue")
    async with serve(tmp_path, site) as api:
        api.at(PRIME_ENDS)
        await api.submit("alice", nodes=6, walltime=20 * 3600)
        assert (await api.job(1))["state"] == "R"
        api.at(NIGHT_ENDS)
        job = await api.job(1)
        assert job["state"] == "Q" and job["stime"] is None
        # Back in the queue, it waits for the next non-prime time, as the comment says.
        assert job["comment"] == (
            "Not Running: it runs in nonprime time, which opens at 1970-01-13 19:00:00 UTC"
        )
        text = (await api.raw(None, "GET", "/metrics"))[1]
        requeued = {
            tuple(sorted(s.labels.items())): s.value
            for f in text_string_to_metric_families(text)
            for s in f.samples
            if s.name == "batchd_jobs_requeued_total"
        }
        assert requeued[(("queue", "workq"), ("reason", "overflow"))] == 1


async def test_overflow_kill_in_the_daemon(tmp_path: Path) -> None:
    async with serve(tmp_path, primetime_site(must_fit="false")) as api:
        api.at(PRIME_ENDS)
        await api.submit("alice", nodes=6, walltime=20 * 3600)
        api.at(NIGHT_ENDS)
        job = await api.job(1)
        assert job["state"] == "F" and job["outcome"] == "overflow"
        assert job["end_time"] == T0 + NIGHT_ENDS and job["exit_status"] is None  # emulated
        assert "non-prime time ended" in job["comment"]
        assert job["comment"].endswith("(overflow) (no process ran: the job was emulated)")
