"""What the API gives the Slurm commands: a job's front end, working directory, account
and request, Slurm's pending reasons, ``singleton`` and ``after`` dependencies, and
submissions tried without being made (``POST /plan``). 8 nodes, fcfs-easy; times are
offsets from T0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from api_helpers import T0, Api, new_service, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.schemas import JobBriefList, TrialOut
from batchd.server.service import BatchService
from batchd.server.store import Store

SLURM = {"ntasks": 8, "cpus_per_task": 2, "ntasks_per_node": None, "mem_per_node_mb": 1024,
         "mem_per_cpu_mb": None, "exclusive": False,
         "signal": {"number": 12, "before": 90, "script": False}, "open_mode": "append",
         "comment": "fit run 3"}  # fmt: skip


def sbatch(**fields: Any) -> dict[str, Any]:
    return {"front_end": "slurm", "workdir": "/tmp/w", "account": "proj1", **fields}


async def reasons(api: Api) -> dict[str, str | None]:
    return {j["id"]: j["pending_reason"] for j in await api.jobs("")}


async def test_a_slurm_job_keeps_what_it_was_submitted_with_across_a_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        job = await api.submit("alice", **sbatch(slurm=SLURM, nodes=2, walltime=600))
        assert (job["front_end"], job["workdir"], job["account"]) == ("slurm", "/tmp/w", "proj1")
        assert job["slurm"] == SLURM
        assert job["term_signal"] is None and job["pending_reason"] is None  # it runs
        assert "PBS_O_QUEUE" not in job["variables"]  # no PBS_* of the daemon's own
        pbs = await api.submit("bob", account="grant7")
        assert (pbs["front_end"], pbs["account"], pbs["slurm"]) == ("pbs", "grant7", None)
        brief = await api.call("alice", "GET", "/jobs?brief=true")
        JobBriefList.model_validate(brief)
        first = brief["jobs"][0]
        assert (first["front_end"], first["account"], first["slurm"]) == ("slurm", "proj1", SLURM)
        before = await api.jobs()
    svc = BatchService(site_config(), VirtualClock(T0 + 10), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        after = await api.jobs()
        keys = ("front_end", "workdir", "account", "slurm", "pending_reason", "term_signal")
        assert [{k: j[k] for k in keys} for j in after] == [{k: j[k] for k in keys} for j in before]
        api.at(700)  # both end; the finished views keep the fields
        done = await api.job(1)
        assert (done["state"], done["front_end"], done["account"]) == ("F", "slurm", "proj1")


async def test_refusals_name_the_field(api: Api) -> None:
    await api.error("alice", "POST", "/jobs", sbatch(workdir="rel/dir"), status=400,
                    code="bad_request", says=("workdir", "absolute"))  # fmt: skip
    await api.error("alice", "POST", "/jobs", {"front_end": "lsf"}, status=400,
                    code="bad_request", says="front_end")  # fmt: skip
    await api.error("alice", "POST", "/jobs", sbatch(output_path="out-%q.txt"), status=400,
                    code="bad_request", says=("--output", "'%q'"))  # fmt: skip
    await api.error("alice", "POST", "/jobs", sbatch(error_path="e-%"), status=400,
                    code="bad_request", says=("--error", "'%'"))  # fmt: skip
    await api.error("alice", "POST", "/jobs", sbatch(slurm={**SLURM, "ntasks": 0}), status=400,
                    code="bad_request", says="slurm.ntasks")  # fmt: skip
    await api.error("alice", "POST", "/jobs", {"depend": "singleton:3"}, status=400,
                    code="bad_request", says="singleton takes no job id")  # fmt: skip
    assert await api.jobs() == []
    # Known patterns pass, a backslash turns them off.
    await api.submit("alice", **sbatch(output_path="o-%x-%4j-%A_%a-%N-%n-%t-%s-%u-%%.out"))
    await api.submit("alice", **sbatch(output_path="\\o-%q"))


async def test_singleton_waits_for_every_earlier_job_of_the_owner_and_name(api: Api) -> None:
    """1 alice "pipe" runs [0, 100); 2 alice "pipe" singleton waits for 1; 3 bob "pipe"
    singleton and 4 alice "other" singleton have no earlier job of theirs: they run; 5 alice
    "pipe" singleton waits for 1 and 2."""
    await api.submit("alice", name="pipe", walltime=100)
    two = await api.submit("alice", name="pipe", walltime=100, depend="singleton")
    three = await api.submit("bob", name="pipe", walltime=100, depend="singleton")
    four = await api.submit("alice", name="other", walltime=100, depend="singleton")
    five = await api.submit("alice", name="pipe", walltime=100, depend="singleton")
    assert (two["state"], two["depend"], two["pending_reason"]) == ("H", "singleton", "dependency")
    assert (three["state"], four["state"], five["state"]) == ("R", "R", "H")
    api.at(100)  # 1 ended: 2 starts, 5 still waits for 2
    assert [(await api.job(n))["state"] for n in (2, 5)] == ["R", "H"]
    api.at(200)
    assert (await api.job(5))["state"] == "R"


async def test_singleton_follows_a_deleted_earlier_job(api: Api) -> None:
    await api.submit("alice", name="x", nodes=8, walltime=100)
    await api.submit("alice", name="x", nodes=8, walltime=100)  # queued behind 1
    three = await api.submit("alice", name="x", walltime=100, depend="singleton")
    assert three["state"] == "H"
    await api.call("alice", "DELETE", "/jobs/1")
    await api.call("alice", "DELETE", "/jobs/2")
    assert (await api.job(3))["state"] == "R"


async def test_after_waits_for_the_start_not_the_end(api: Api) -> None:
    """1 takes all 8 nodes [0, 100); 2 waits for its start behind it; 3 after:2."""
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("alice", nodes=4, walltime=500)
    three = await api.submit("alice", nodes=1, walltime=50, depend="after:2")
    assert (three["state"], three["pending_reason"]) == ("H", "dependency")
    api.at(100)  # 2 started at 100: 3 released and started beside it
    three = await api.job(3)
    assert (three["state"], three["stime"]) == ("R", T0 + 100)
    # A job already running meets after: at once.
    four = await api.submit("alice", nodes=1, walltime=50, depend="after:2")
    assert four["state"] == "R"


async def test_after_is_met_by_a_job_deleted_unrun(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("alice", nodes=1, walltime=100, depend="after:2")
    await api.call("alice", "DELETE", "/jobs/2")
    assert (await api.job(3))["state"] == "Q"  # released, behind job 1


async def test_pending_reasons(api: Api) -> None:
    """1 runs on 6 nodes; 2 (4 nodes) is next in line: resources; 3 behind it: priority;
    4 held by its owner, 5 by an operator, 6 waits for 1, 7 for its begin time, 8 asks
    more nodes than are in service once node001-003 are offline... (9 nodes: refused), so
    8 takes 6 and waits with the machine short of nodes."""
    await api.submit("alice", nodes=6, walltime=1000)
    await api.submit("alice", nodes=4, walltime=100)
    await api.submit("alice", nodes=4, walltime=100)
    await api.submit("alice", hold=True)
    await api.submit("alice", nodes=8, walltime=100)
    await api.call("oper", "POST", "/jobs/5/hold", {"types": "o"})
    await api.submit("alice", depend="afterok:1")
    await api.submit("alice", exec_time=T0 + 5000)
    got = await reasons(api)
    assert got == {
        "1.mini": None, "2.mini": "resources", "3.mini": "priority", "4.mini": "held_user",
        "5.mini": "held_admin", "6.mini": "dependency", "7.mini": "begin_time",
    }  # fmt: skip
    for n in (1, 2, 3):
        await api.call("oper", "PATCH", f"/nodes/node00{n}", {"state": "offline"})
    await api.call("alice", "DELETE", "/jobs/1")
    await api.call("alice", "DELETE", "/jobs/3")
    await api.submit("alice", nodes=6, walltime=100)  # 8: 6 nodes, 5 in service
    got = await reasons(api)
    assert (got["2.mini"], got["8.mini"]) == (None, "node_not_avail")


async def test_pending_reasons_of_the_queue(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("alice", queue="small", nodes=2, walltime=100)
    await api.call("boss", "PATCH", "/queues/small", {"started": False})
    assert (await api.job(2))["pending_reason"] == "partition_down"
    await api.call("boss", "PATCH", "/queues/small", {"enabled": False})
    assert (await api.job(2))["pending_reason"] == "partition_inactive"
    await api.call("boss", "PATCH", "/queues/small", {"enabled": True, "started": True})
    await api.call("boss", "PATCH", "/queues/small", {"max_walltime": 50})
    assert (await api.job(2))["pending_reason"] == "partition_time_limit"
    await api.call("boss", "PATCH", "/queues/small", {"max_walltime": 3600, "max_nodes": 1})
    assert (await api.job(2))["pending_reason"] == "partition_node_limit"


async def test_test_only_plans_and_changes_nothing(api: Api) -> None:
    """1 runs on 6 nodes until 1000 at the latest; a 4-node job would start then, a
    2-node one now."""
    await api.submit("alice", nodes=6, walltime=1000)
    before = await api.state()
    for _ in range(2):  # tried twice: the first changed nothing
        body = await api.call("alice", "POST", "/plan", {"nodes": 4, "walltime": 60})
        TrialOut.model_validate(body)
        assert body == {"est_start": T0 + 1000, "nodes": [], "now": T0, "seq": 2, "queue": "workq"}
    body = await api.call("alice", "POST", "/plan", {"nodes": 2, "walltime": 60})
    assert body == {"est_start": T0, "nodes": ["node007", "node008"], "now": T0, "seq": 2,
                    "queue": "workq"}  # fmt: skip
    held = await api.call("alice", "POST", "/plan", {"hold": True})
    assert held["est_start"] is None
    later = await api.call("alice", "POST", "/plan", {"exec_time": T0 + 50})
    assert later["est_start"] == T0 + 50
    # Refused as a submission is, with nothing changed either way.
    await api.error("alice", "POST", "/plan", {"nodes": 9}, status=400,
                    code="bad_request")  # fmt: skip
    await api.error("alice", "POST", "/plan", {"queue": "nosuch"}, status=400,
                    code="bad_request")  # fmt: skip
    assert await api.state() == before
    job = await api.submit("alice", nodes=2, walltime=60)
    assert job["id"] == "2.mini"  # no number was used


async def test_test_only_waits_behind_the_plan(api: Api) -> None:
    """Every planned job keeps its start: 1 runs 8 nodes to 100, 2 (8 nodes) is planned at
    100 to 200, so a 1-node job would start at 200."""
    await api.submit("alice", nodes=8, walltime=100)
    await api.submit("alice", nodes=8, walltime=100)
    body = await api.call("bob", "POST", "/plan", {"walltime": 10})
    assert body["est_start"] == T0 + 200


async def test_after_met_just_before_a_stop_is_met_after_the_restart(tmp_path: Path) -> None:
    """Releasing job 1 starts it and saves that at once; its after: dependent is released
    a moment later. A daemon stopped in between releases the dependent at its restart."""
    path = tmp_path / "state.db"
    svc = new_service(path)
    async with start_api(svc) as api:
        await api.submit("alice", nodes=4, walltime=100, hold=True)
        await api.submit("alice", nodes=1, walltime=100, depend="after:1")
        await api.call("alice", "POST", "/jobs/1/release", {})
        saved = {r["seq"]: r["state"] for r in Store(path).load().jobs}
        assert saved == {1: "R", 2: "H"}  # the moment in between, as the state file has it
    svc = BatchService(site_config(), VirtualClock(T0), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        two = await api.job(2)
        assert (two["state"], two["hold_types"]) == ("R", "")
