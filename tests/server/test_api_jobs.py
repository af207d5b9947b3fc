"""The job routes of the HTTP API: qsub, qstat, qdel, qhold, qrls and qalter on 8 nodes.

Every schedule is worked out by hand in the comments; times are offsets from T0.
"""

from __future__ import annotations

import pytest

from api_helpers import T0, Api, jid, nodes, serve, site_config
from batchd.server.admin_schemas import SchedulerOut
from batchd.server.schemas import JobList, JobOut

# --------------------------------------------------------------------------------------------
# qsub and qstat


async def test_submit_answers_201_with_the_full_job(api: Api) -> None:
    api.at(5)
    body = await api.submit("alice", name="first", nodes=3, walltime="00:10:00", runtime=60)
    job = JobOut.model_validate(body)
    assert job.id == "1.mini" and job.seq == 1
    assert (job.name, job.owner, job.queue, job.nodes) == ("first", "alice", "workq", 3)
    assert (job.walltime, job.runtime, job.priority) == (600, 60, 0)
    assert job.state == "R"  # the machine is empty: it starts at once
    assert job.ctime == job.qtime == job.etime == job.stime == job.est_start == T0 + 5
    assert job.exec_host == nodes(1, 2, 3)
    assert job.elapsed == 0 and job.end_time is None
    assert job.hold_types == "" and job.depend is None and job.exec_time is None
    assert job.exit_status is None and job.outcome is None
    assert job.started_by == "fcfs-easy"
    assert job.variables == {"BATCHD_RUNTIME": "60", "PBS_O_QUEUE": "workq"}

    # Defaults: one node, the queue's default walltime (workq: 3600), the default queue.
    body = await api.submit("bob")
    assert (body["id"], body["nodes"], body["walltime"], body["queue"]) == (
        "2.mini",
        1,
        3600,
        "workq",
    )
    assert body["runtime"] is None and body["name"] == "STDIN"
    assert body["exec_host"] == nodes(4)

    # The small queue: max_walltime 01:00:00 caps its default walltime too.
    body = await api.submit("bob", queue="small", nodes=2)
    assert (body["queue"], body["walltime"], body["exec_host"]) == ("small", 3600, nodes(5, 6))

    api.at(65)  # job 1 ended at 5 + 60
    done = await api.job(1)
    assert (done["state"], done["end_time"], done["elapsed"]) == ("F", T0 + 65, 60)
    assert (done["outcome"], done["exit_status"]) == ("ok", None)  # emulated: no status
    assert done["comment"] == "Job run and finished (no process ran: the job was emulated)"
    assert done["est_start"] is None
    running = await api.job("2.mini")
    assert running["elapsed"] == 60  # started at 5, now 65


async def test_submit_walltime_forms(api: Api) -> None:
    cases = [("90", 90), ("01:30", 90), ("1:00:00", 3600), (45, 45), ("100:00:00", 360000)]
    for value, seconds in cases:
        body = await api.submit("alice", walltime=value)
        assert body["walltime"] == seconds, value


async def test_runtime_longer_than_walltime_is_killed_at_walltime(api: Api) -> None:
    await api.submit("alice", nodes=2, walltime=100, runtime=250)
    api.at(99)
    assert (await api.job(1))["state"] == "R"
    api.at(100)
    job = await api.job(1)
    assert (job["state"], job["end_time"], job["outcome"]) == ("F", T0 + 100, "walltime")
    assert job["exit_status"] is None  # emulated: no process ran, no exit status
    assert job["comment"] == "Job killed at its walltime (no process ran: the job was emulated)"


async def test_list_jobs_filters(api: Api) -> None:
    # 1 alice 8 nodes runs; 2 bob waits; 3 alice in small waits; 4 bob held; 5 alice ends at 0.
    await api.submit("alice", nodes=7, walltime=1000)
    await api.submit("bob", nodes=8, walltime=100)
    await api.submit("alice", queue="small", nodes=2, walltime=100)
    await api.submit("bob", hold=True)
    await api.submit("alice", nodes=1, walltime=100, runtime=0)

    def ids(jobs: list[dict]) -> list[str]:
        return sorted(j["id"] for j in jobs)

    body = await api.call("bob", "GET", "/jobs")
    listing = JobList.model_validate(body)
    assert (listing.server, listing.now) == ("mini", T0)
    # Finished jobs only with history=true (qstat -x).
    assert ids(body["jobs"]) == ["1.mini", "2.mini", "3.mini", "4.mini"]
    assert ids(await api.jobs("history=true")) == [jid(i) for i in range(1, 6)]
    assert ids(await api.jobs("history=false")) == [jid(i) for i in range(1, 5)]
    assert ids(await api.jobs("user=alice")) == ["1.mini", "3.mini"]
    assert ids(await api.jobs("user=alice&history=true")) == ["1.mini", "3.mini", "5.mini"]
    assert ids(await api.jobs("state=Q")) == ["2.mini", "3.mini"]
    assert ids(await api.jobs("state=RH")) == ["1.mini", "4.mini"]
    assert ids(await api.jobs("state=F")) == ["5.mini"]  # asking for F shows them
    assert ids(await api.jobs("queue=small")) == ["3.mini"]
    assert ids(await api.jobs("queue=workq&state=Q&user=bob")) == ["2.mini"]
    assert ids(await api.jobs("user=nobody")) == []


async def test_show_job_by_seq_or_full_id(api: Api) -> None:
    await api.submit("alice")
    a = await api.job("1", who="bob")  # anyone may look (query_other_jobs is on)...
    b = await api.job("1.mini", who="oper")
    assert a == {**b, "variables": {}} and a["id"] == "1.mini"  # ...but not at its variables
    assert b["variables"] == {"PBS_O_QUEUE": "workq"}


# --------------------------------------------------------------------------------------------
# Schedules by hand


async def test_easy_schedule_by_hand(api: Api) -> None:
    # t=0  A 6 nodes, walltime 1000, runs 300      -> R on node001-006, ends 300
    #      B 4 nodes, walltime 1000, runs 500      -> Q: 2 free; planned at A's estimated end 1000
    #      C 2 nodes, walltime  500, runs 200      -> EASY backfill: 0+500 <= 1000, fits the 2 free
    #      D 4 nodes, walltime  600, runs 600      -> Q behind B; planned 1000 beside B (4 + 4)
    a = await api.submit("alice", nodes=6, walltime=1000, runtime=300)
    b = await api.submit("bob", nodes=4, walltime=1000, runtime=500)
    assert (b["state"], b["est_start"]) == ("Q", T0 + 1000)
    c = await api.submit("alice", nodes=2, walltime=500, runtime=200)
    d = await api.submit("bob", nodes=4, walltime=600, runtime=600)
    assert (a["state"], a["stime"], a["exec_host"]) == ("R", T0, nodes(1, 2, 3, 4, 5, 6))
    assert (c["state"], c["stime"], c["exec_host"]) == ("R", T0, nodes(7, 8))
    assert d["state"] == "Q"

    # qstat -T: the planned starts of the waiting jobs.
    est = {j["id"]: j["est_start"] for j in await api.jobs("state=Q")}
    assert est == {"2.mini": T0 + 1000, "4.mini": T0 + 1000}

    # t=200 C ends: 2 free nodes, B (4) still does not fit and D (4) may not pass it.
    api.at(200)
    jobs = {j["id"]: j for j in await api.jobs()}
    assert (jobs["3.mini"]["state"], jobs["3.mini"]["end_time"]) == ("F", T0 + 200)
    assert jobs["2.mini"]["state"] == jobs["4.mini"]["state"] == "Q"
    assert jobs["2.mini"]["est_start"] == T0 + 1000

    # t=300 A ends early: B and D start in order, on the lowest free nodes.
    api.at(300)
    jobs = {j["id"]: j for j in await api.jobs()}
    assert (jobs["1.mini"]["state"], jobs["1.mini"]["end_time"]) == ("F", T0 + 300)
    assert (jobs["2.mini"]["state"], jobs["2.mini"]["stime"]) == ("R", T0 + 300)
    assert jobs["2.mini"]["exec_host"] == nodes(1, 2, 3, 4)
    assert (jobs["4.mini"]["state"], jobs["4.mini"]["stime"]) == ("R", T0 + 300)
    assert jobs["4.mini"]["exec_host"] == nodes(5, 6, 7, 8)
    assert jobs["2.mini"]["est_start"] == T0 + 300  # a running job shows its start

    # t=900: B ended at 800, D at 900.
    api.at(900)
    jobs = {j["id"]: j for j in await api.jobs()}
    ends = {k: (v["state"], v["stime"] - T0, v["end_time"] - T0) for k, v in jobs.items()}
    assert ends == {
        "1.mini": ("F", 0, 300),
        "2.mini": ("F", 300, 800),
        "3.mini": ("F", 0, 200),
        "4.mini": ("F", 300, 900),
    }
    assert all(j["outcome"] == "ok" for j in jobs.values())


async def test_fcfs_does_not_backfill_and_plans_in_order(tmp_path) -> None:
    # Plain fcfs: C (2 nodes) would fit the 2 free nodes but must wait behind B.
    # A 6 nodes [0, 1000); B 4 nodes planned 1000; C 2 nodes planned 1000 next to B.
    async with serve(tmp_path, site_config(policy="fcfs")) as api:
        await api.submit("alice", nodes=6, walltime=1000)
        await api.submit("bob", nodes=4, walltime=1000)
        c = await api.submit("alice", nodes=2, walltime=500)
        assert c["state"] == "Q"
        est = {j["id"]: j["est_start"] for j in await api.jobs("state=Q")}
        # qstat -T must not promise C a start before B's: fcfs never lets it pass.
        assert est == {"2.mini": T0 + 1000, "3.mini": T0 + 1000}
        api.at(999)
        assert (await api.job(3))["state"] == "Q"
        api.at(1000)
        assert (await api.job(3))["stime"] == T0 + 1000


async def test_policy_switch_replans_the_waiting_queue(api: Api) -> None:
    # A 8 nodes [0, 1000); B 8 nodes walltime 1000 and C 8 nodes walltime 100 wait.
    await api.submit("alice", nodes=8, walltime=1000)
    await api.submit("bob", nodes=8, walltime=1000)
    await api.submit("alice", nodes=8, walltime=100)

    async def planned() -> dict[str, int]:
        return {j["id"]: j["est_start"] - T0 for j in await api.jobs("state=Q")}

    assert await planned() == {"2.mini": 1000, "3.mini": 2000}  # FCFS: B then C

    api.at(10)
    body = await api.call("boss", "PATCH", "/scheduler", {"policy": "sjf-easy"})
    SchedulerOut.model_validate(body)
    assert body["policy"] == "sjf-easy" and body["params"] == {}
    assert body["switches"] == [
        {
            "time": T0 + 10,
            "machine": "mini",
            "from": "fcfs-easy",
            "to": "sjf-easy",
            "params": {},
            "by": "boss",
        }
    ]
    assert await planned() == {"3.mini": 1000, "2.mini": 1100}  # SJF: C (100 s) first

    api.at(20)
    body = await api.call("boss", "PATCH", "/scheduler", {"policy": "fcfs-cons"})
    assert body["policy"] == "fcfs-cons"
    assert await planned() == {"2.mini": 1000, "3.mini": 2000}

    api.at(30)
    change = {"policy": "dynp", "params": {"decider": "advanced"}}
    body = await api.call("boss", "PATCH", "/scheduler", change)
    # dynP plans FCFS, SJF and LJF; ARTwW: FCFS ends 2000 + 2100, SJF 1100 + 2100: SJF wins.
    assert await planned() == {"3.mini": 1000, "2.mini": 1100}

    sched = await api.call("alice", "GET", "/scheduler")
    SchedulerOut.model_validate(sched)
    assert {"fcfs", "fcfs-easy", "fcfs-cons", "sjf-easy", "sjf-cons", "dynp"} <= {
        p["name"] for p in sched["policies"]
    }
    assert (sched["policy"], sched["params"]) == ("dynp", {"decider": "advanced"})
    assert [(s["time"] - T0, s["from"], s["to"]) for s in sched["switches"]] == [
        (10, "fcfs-easy", "sjf-easy"),
        (20, "sjf-easy", "fcfs-cons"),
        (30, "fcfs-cons", "dynp"),
    ]
    assert sched["switches"][-1]["params"] == {"decider": "advanced"}
    assert "dynp" in sched["report"]
    server = await api.call("alice", "GET", "/server")
    assert server["policy"] == "dynp"

    # The new plan is the one that runs: C at 1000, B after it at 1100.
    api.at(1100)
    jobs = {j["id"]: j for j in await api.jobs()}
    assert (jobs["3.mini"]["stime"], jobs["3.mini"]["end_time"]) == (T0 + 1000, T0 + 1100)
    assert (jobs["2.mini"]["state"], jobs["2.mini"]["stime"]) == ("R", T0 + 1100)
    assert jobs["1.mini"]["started_by"] == "fcfs-easy"


async def test_scheduler_params_alone_update_and_refusals(api: Api) -> None:
    await api.call(
        "boss", "PATCH", "/scheduler", {"policy": "dynp", "params": {"decider": "simple"}}
    )
    body = await api.call("boss", "PATCH", "/scheduler", {"params": {"quality": "awt"}})
    assert body["params"] == {"decider": "simple", "quality": "awt"}
    before = await api.state()
    for who in ("alice", "oper"):
        await api.error(
            who, "PATCH", "/scheduler", {"policy": "fcfs"}, status=403, code="forbidden",
            says=(who, "managers"),
        )  # fmt: skip
    await api.error(
        "boss", "PATCH", "/scheduler", {"policy": "nosuch"}, status=400, code="bad_request",
        says="'nosuch'",
    )  # fmt: skip
    await api.error(
        "boss", "PATCH", "/scheduler", {"params": {"decider": "psychic"}}, status=400,
        code="bad_request", says="decider",
    )  # fmt: skip
    await api.error(
        "boss", "PATCH", "/scheduler", {"params": {"colour": "red"}}, status=400,
        code="bad_request", says="'colour'",
    )  # fmt: skip
    assert await api.state() == before


# --------------------------------------------------------------------------------------------
# Holds


async def _blocked(api: Api) -> None:
    """A runs on all 8 nodes [0, 1000); B (alice) and C (bob), 8 nodes x 500 s, wait."""
    await api.submit("alice", nodes=8, walltime=1000)
    await api.submit("alice", nodes=8, walltime=500)
    await api.submit("bob", nodes=8, walltime=500)


async def test_hold_rights_by_type(api: Api) -> None:
    await _blocked(api)
    body = await api.call("alice", "POST", "/jobs/2/hold", {"types": "u"})
    JobOut.model_validate(body)
    assert (body["state"], body["hold_types"], body["est_start"]) == ("H", "u", None)
    assert (await api.job(3))["est_start"] == T0 + 1000  # C moved up into B's slot

    # Refusals, each leaving the job as it was.
    before = await api.job(2)
    refused = [
        ("bob", {"types": "u"}, "bob may not hold job 2.mini, owned by alice"),
        ("alice", {"types": "o"}, "operators and managers"),
        ("alice", {"types": "uo"}, "type o"),
        ("oper", {"types": "s"}, "managers only"),
    ]
    for who, req, says in refused:
        await api.error(who, "POST", "/jobs/2/hold", req, status=403, code="forbidden", says=says)
    assert await api.job(2) == before

    body = await api.call("oper", "POST", "/jobs/2/hold", {"types": "o"})
    assert body["hold_types"] == "uo"
    body = await api.call("boss", "POST", "/jobs/2.mini/hold", {"types": "s"})
    assert body["hold_types"] == "uos"

    # qrls: the same rules; the job stays held until no hold is left.
    before = await api.job(2)
    refused = [
        ("bob", {"types": "u"}, "owned by alice"),
        ("alice", {"types": "o"}, "type o"),
        ("oper", {"types": "s"}, "type s"),
    ]
    for who, req, says in refused:
        await api.error(
            who, "POST", "/jobs/2/release", req, status=403, code="forbidden", says=says
        )
    assert await api.job(2) == before
    body = await api.call("alice", "POST", "/jobs/2/release", {"types": "u"})
    assert (body["state"], body["hold_types"]) == ("H", "os")
    body = await api.call("oper", "POST", "/jobs/2/release", {"types": "o"})
    assert (body["state"], body["hold_types"]) == ("H", "s")
    body = await api.call("boss", "POST", "/jobs/2/release", {"types": "s"})
    JobOut.model_validate(body)
    # Back in its place, ahead of C: submitted first, it is planned first.
    assert (body["state"], body["hold_types"], body["est_start"]) == ("Q", "", T0 + 1000)
    assert (await api.job(3))["est_start"] == T0 + 1500


async def test_held_job_never_starts_and_release_requeues(api: Api) -> None:
    await _blocked(api)
    await api.call("alice", "POST", "/jobs/2/hold", {})  # default: a user hold
    assert (await api.job(2))["hold_types"] == "u"
    # t=1000: A ends; B is held, so C takes the machine [1000, 1500).
    api.at(1000)
    b, c = await api.job(2), await api.job(3)
    assert (b["state"], b["stime"]) == ("H", None)
    assert (c["state"], c["stime"]) == ("R", T0 + 1000)
    api.at(1200)
    body = await api.call("alice", "POST", "/jobs/2/release", {})
    assert (body["state"], body["est_start"], body["etime"]) == ("Q", T0 + 1500, T0 + 1200)
    api.at(1500)
    b = await api.job(2)
    assert (b["state"], b["stime"], b["exec_host"]) == ("R", T0 + 1500, nodes(*range(1, 9)))


async def test_submit_held_and_hold_refusals(api: Api) -> None:
    held = await api.submit("alice", hold=True, nodes=2)
    assert (held["state"], held["hold_types"], held["stime"]) == ("H", "u", None)
    assert held["etime"] is None
    await api.submit("alice", nodes=2, walltime=100)  # job 2 runs
    await api.error(
        "alice", "POST", "/jobs/2/hold", {}, status=409, code="conflict", says="running"
    )
    assert (await api.job(2))["state"] == "R"
    await api.error(
        "alice", "POST", "/jobs/2/release", {}, status=409, code="conflict", says="not held"
    )
    api.at(100)
    await api.error(
        "alice", "POST", "/jobs/2/hold", {}, status=409, code="conflict", says="finished"
    )
    await api.error(
        "alice", "POST", "/jobs/1/hold", {"types": "x"}, status=400, code="bad_request",
        says="types",
    )  # fmt: skip
    body = await api.call("alice", "POST", "/jobs/1/release", {"types": "u"})
    assert (body["state"], body["stime"]) == ("R", T0 + 100)


async def test_exec_time_waits_in_state_w(api: Api) -> None:
    body = await api.submit("alice", nodes=2, walltime=100, exec_time=T0 + 500)
    assert (body["state"], body["exec_time"], body["est_start"]) == ("W", T0 + 500, None)
    assert body["etime"] is None
    # A job of the past's execution time queues at once.
    past = await api.submit("bob", nodes=2, walltime=100, exec_time=T0 - 50)
    assert (past["state"], past["stime"]) == ("R", T0)
    api.at(499)
    assert (await api.job(1))["state"] == "W"
    assert [j["id"] for j in await api.jobs("state=W")] == ["1.mini"]
    api.at(500)
    job = await api.job(1)
    assert (job["state"], job["stime"], job["etime"]) == ("R", T0 + 500, T0 + 500)

    # W then held: released before its time it waits again, after its time it queues.
    await api.submit("alice", nodes=8, walltime=100, exec_time=T0 + 900)  # job 3
    await api.call("alice", "POST", "/jobs/3/hold", {})
    assert (await api.job(3))["state"] == "H"
    api.at(800)
    body = await api.call("alice", "POST", "/jobs/3/release", {})
    assert body["state"] == "W"
    api.at(900)
    job = await api.job(3)
    assert (job["state"], job["stime"]) == ("R", T0 + 900)

    # A waiting job deleted before its time never comes back.
    await api.submit("bob", nodes=1, walltime=10, exec_time=T0 + 1000)  # job 4
    body = await api.call("bob", "DELETE", "/jobs/4")
    assert (body["state"], body["outcome"], body["end_time"]) == ("F", "cancelled", T0 + 900)
    api.at(1000)
    job = await api.job(4)
    assert (job["state"], job["stime"]) == ("F", None)


async def test_exec_time_becomes_q_when_machine_busy(api: Api) -> None:
    await api.submit("alice", nodes=8, walltime=1000)
    await api.submit("bob", nodes=1, walltime=100, exec_time=T0 + 300)
    api.at(300)
    job = await api.job(2)
    assert (job["state"], job["etime"], job["est_start"]) == ("Q", T0 + 300, T0 + 1000)


# --------------------------------------------------------------------------------------------
# Dependencies


async def test_afterok_runs_after_the_parent_ends_ok(api: Api) -> None:
    await api.submit("alice", nodes=4, walltime=200, runtime=100)  # P: [0, 100) ok
    child = await api.submit("alice", nodes=4, walltime=100, depend="afterok:1")
    # Held by the system although 4 nodes are free.
    assert (child["state"], child["hold_types"], child["depend"]) == ("H", "s", "afterok:1")
    assert child["comment"] == "waiting for dependencies"
    grand = await api.submit("bob", nodes=8, walltime=100, depend="afterok:2.mini")
    assert grand["state"] == "H"
    api.at(99)
    assert (await api.job(2))["state"] == "H"
    api.at(100)
    child = await api.job(2)
    assert (child["state"], child["stime"], child["hold_types"]) == ("R", T0 + 100, "")
    assert (await api.job(3))["state"] == "H"
    api.at(200)  # child ended ok at 200: the grandchild runs
    grand = await api.job(3)
    assert (grand["state"], grand["stime"]) == ("R", T0 + 200)


async def test_a_dependency_met_while_others_wait(api: Api) -> None:
    await api.submit("alice", nodes=2, walltime=100, runtime=10)  # 1: ok at 10
    await api.submit("alice", nodes=2, walltime=100, runtime=50)  # 2: ok at 50
    await api.submit("bob", nodes=1, walltime=100, depend="afterok:1:2")  # 3
    api.at(20)
    assert (await api.job(3))["state"] == "H"
    assert api.svc.records[3].depend == [("afterok", 2)]  # 1 is met: judged and dropped
    api.at(50)
    job = await api.job(3)
    assert (job["state"], job["stime"], job["depend"]) == ("R", T0 + 50, "afterok:1:2")


async def test_dependency_met_keeps_a_user_hold(api: Api) -> None:
    await api.submit("alice", nodes=2, walltime=100, runtime=50)  # 1: ok at 50
    body = await api.submit("alice", nodes=2, walltime=100, hold=True, depend="afterok:1")
    assert (body["state"], body["hold_types"]) == ("H", "us")
    api.at(50)
    body = await api.job(2)
    assert (body["state"], body["hold_types"]) == ("H", "u")  # the user's hold stays
    api.at(70)
    body = await api.call("alice", "POST", "/jobs/2/release", {})
    assert (body["state"], body["stime"]) == ("R", T0 + 70)


async def test_afterok_child_removed_when_parent_killed_at_walltime(api: Api) -> None:
    await api.submit("alice", nodes=2, walltime=200, runtime=300)  # P killed at 200
    await api.submit("alice", nodes=2, depend="afterok:1")
    await api.submit("alice", nodes=2, depend="afterok:2")  # grandchild: cascade
    await api.submit("alice", nodes=2, depend="afterany:1")
    api.at(200)
    jobs = {j["id"]: j for j in await api.jobs()}
    assert jobs["1.mini"]["outcome"] == "walltime"
    for child in ("2.mini", "3.mini"):
        job = jobs[child]
        assert (job["state"], job["outcome"], job["stime"]) == ("F", "dependency", None)
        assert job["end_time"] == T0 + 200
    # afterany does not care how the parent ended.
    assert (jobs["4.mini"]["state"], jobs["4.mini"]["stime"]) == ("R", T0 + 200)
    assert [j["id"] for j in await api.jobs("")] == ["4.mini"]


async def test_afterok_child_removed_when_parent_deleted(api: Api) -> None:
    await api.submit("bob", nodes=8, walltime=1000)  # blocker
    await api.submit("alice", nodes=2, walltime=100)  # P waits
    await api.submit("alice", nodes=2, depend="afterok:2")
    await api.submit("alice", nodes=2, depend="afternotok:2")
    api.at(10)
    body = await api.call("alice", "DELETE", "/jobs/2")
    assert (body["state"], body["outcome"]) == ("F", "cancelled")
    c, n = await api.job(3), await api.job(4)
    assert (c["state"], c["outcome"], c["end_time"]) == ("F", "dependency", T0 + 10)
    # afternotok: a cancelled parent did not end ok, so the child is released; it waits
    # behind the blocker.
    assert (n["state"], n["est_start"]) == ("Q", T0 + 1000)


async def test_afternotok(api: Api) -> None:
    await api.submit("alice", nodes=2, walltime=100, runtime=50)  # 1: ok at 50
    await api.submit("alice", nodes=2, walltime=100, runtime=500)  # 2: killed at 100
    await api.submit("alice", nodes=2, depend="afternotok:1")  # 3: removed at 50
    await api.submit("alice", nodes=2, walltime=10, depend="afternotok:2")  # 4: runs at 100
    api.at(50)
    job = await api.job(3)
    assert (job["state"], job["outcome"], job["end_time"]) == ("F", "dependency", T0 + 50)
    assert (await api.job(4))["state"] == "H"
    api.at(100)
    job = await api.job(4)
    assert (job["state"], job["stime"]) == ("R", T0 + 100)


async def test_several_dependencies(api: Api) -> None:
    await api.submit("alice", nodes=2, walltime=300, runtime=100)  # 1 ok at 100
    await api.submit("alice", nodes=2, walltime=300, runtime=200)  # 2 ok at 200
    await api.submit("alice", nodes=2, walltime=100, runtime=400)  # 3 killed at 100
    both = await api.submit("alice", nodes=1, walltime=10, depend="afterok:1:2.mini")  # 4
    mixed = await api.submit("alice", nodes=1, walltime=10, depend="afterok:1,afterany:3")  # 5
    assert both["state"] == mixed["state"] == "H"
    api.at(100)  # 1 and 3 ended: 5 has all it needs, 4 still waits for 2
    assert (await api.job(5))["stime"] == T0 + 100
    assert (await api.job(4))["state"] == "H"
    api.at(200)
    assert (await api.job(4))["stime"] == T0 + 200


async def test_dependency_on_finished_jobs(api: Api) -> None:
    await api.submit("alice", nodes=1, walltime=100, runtime=10)  # 1 ok at 10
    await api.submit("alice", nodes=1, walltime=10, runtime=20)  # 2 killed at 10
    api.at(10)
    # Satisfied already: queued (and here started) at once.
    body = await api.submit("alice", depend="afterok:1")
    assert (body["state"], body["hold_types"]) == ("R", "")
    body = await api.submit("alice", depend="afternotok:2")
    assert body["state"] == "R"
    before = await api.state()
    await api.error(
        "alice", "POST", "/jobs", {"depend": "afterok:2"}, status=400, code="bad_request",
        says=("afterok:2.mini", "never", "walltime"),
    )  # fmt: skip
    await api.error(
        "alice", "POST", "/jobs", {"depend": "afternotok:1"}, status=400, code="bad_request",
        says="never",
    )  # fmt: skip
    await api.error(
        "alice", "POST", "/jobs", {"depend": "afterok:99"}, status=400, code="bad_request",
        says="99.mini",
    )  # fmt: skip
    assert await api.state() == before


# --------------------------------------------------------------------------------------------
# qdel


async def test_delete_queued_job(api: Api) -> None:
    await _blocked(api)
    api.at(5)
    body = await api.call("alice", "DELETE", "/jobs/2")
    JobOut.model_validate(body)
    assert (body["state"], body["outcome"], body["end_time"]) == ("F", "cancelled", T0 + 5)
    assert body["stime"] is None and body["exec_host"] == []
    assert "alice" in body["comment"]
    assert [j["id"] for j in await api.jobs("")] == ["1.mini", "3.mini"]
    assert (await api.job(3))["est_start"] == T0 + 1000  # C moved up
    assert (await api.call("alice", "GET", "/server"))["jobs"]["F"] == 1


async def test_delete_running_job_frees_its_nodes_at_once(api: Api) -> None:
    await _blocked(api)
    api.at(50)
    body = await api.call("alice", "DELETE", "/jobs/1.mini")
    assert (body["state"], body["outcome"], body["end_time"]) == ("F", "cancelled", T0 + 50)
    assert body["exit_status"] is None  # emulated: no process ran, no exit status
    assert body["comment"] == "Job deleted while running (no process ran: the job was emulated)"
    assert body["elapsed"] == 50 and body["exec_host"] == nodes(*range(1, 9))
    b = await api.job(2)
    assert (b["state"], b["stime"], b["exec_host"]) == ("R", T0 + 50, nodes(*range(1, 9)))
    states = await api.node_states()
    assert set(states.values()) == {"job-exclusive"}


async def test_delete_rights(api: Api) -> None:
    await _blocked(api)
    before = await api.state()
    for path in ("/jobs/1", "/jobs/2"):
        await api.error("bob", "DELETE", path, status=403, code="forbidden", says="owned by alice")
    assert await api.state() == before
    body = await api.call("oper", "DELETE", "/jobs/2")  # operators may
    assert body["outcome"] == "cancelled"
    body = await api.call("boss", "DELETE", "/jobs/3")  # and managers
    assert body["outcome"] == "cancelled"
    await api.error(
        "alice", "DELETE", "/jobs/2", status=409, code="conflict", says="already finished"
    )


# --------------------------------------------------------------------------------------------
# qalter


async def test_alter_queued_and_held_jobs(api: Api) -> None:
    await _blocked(api)
    change = {
        "walltime": "00:20:00",
        "priority": 5,
        "name": "renamed",
        "queue": "small",
        "nodes": 2,
    }
    body = await api.call("alice", "PATCH", "/jobs/2", change)
    JobOut.model_validate(body)
    assert (body["walltime"], body["priority"], body["name"]) == (1200, 5, "renamed")
    assert (body["queue"], body["nodes"], body["state"]) == ("small", 2, "Q")
    assert body["est_start"] == T0 + 1000
    assert (await api.job(2)) == body | {"est_start": T0 + 1000}

    await api.call("bob", "POST", "/jobs/3/hold", {})
    body = await api.call("bob", "PATCH", "/jobs/3", {"walltime": 50, "nodes": 6})
    assert (body["state"], body["walltime"], body["nodes"], body["hold_types"]) == (
        "H", 50, 6, "u",
    )  # fmt: skip
    body = await api.call("bob", "POST", "/jobs/3/release", {})
    # B: 2 nodes [1000, 2200); C: 6 nodes fits beside it at 1000.
    assert body["est_start"] == T0 + 1000
    api.at(1000)
    jobs = {j["id"]: j for j in await api.jobs()}
    assert jobs["2.mini"]["exec_host"] == nodes(1, 2)
    assert jobs["3.mini"]["exec_host"] == nodes(3, 4, 5, 6, 7, 8)
    api.at(1050)  # C: walltime 50, no runtime given: it runs its walltime
    assert (await api.job(3))["end_time"] == T0 + 1050


async def test_alter_refusals_change_nothing(api: Api) -> None:
    await _blocked(api)
    before = await api.state()
    refusals = [
        ("alice", "/jobs/1", {"priority": 3}, 409, "running"),
        ("bob", "/jobs/2", {"priority": 3}, 403, "owned by alice"),
        ("alice", "/jobs/2", {"queue": "small"}, 400, "resources_max.nodect = 2"),
        ("alice", "/jobs/2", {"nodes": 9}, 400, "machine mini has 8"),
        ("alice", "/jobs/2", {"nodes": 0}, 400, "nodes"),
        ("alice", "/jobs/2", {"queue": "nosuch"}, 400, "'nosuch'"),
        ("alice", "/jobs/2", {"walltime": "1:99:00"}, 400, "walltime"),
        ("alice", "/jobs/2", {"walltime": 0}, 400, "walltime"),
        ("alice", "/jobs/2", {"priority": 5000}, 400, "priority"),
        ("alice", "/jobs/2", {"user": "bob"}, 400, "user: unknown field"),
        ("alice", "/jobs/99", {"priority": 1}, 404, "99.mini"),
    ]
    for who, path, change, status, says in refusals:
        code = {400: "bad_request", 403: "forbidden", 404: "not_found", 409: "conflict"}[status]
        await api.error(who, "PATCH", path, change, status=status, code=code, says=says)
    assert await api.state() == before
    body = await api.call("alice", "PATCH", "/jobs/2", {"nodes": 2, "walltime": 1800})
    await api.error(
        "alice", "PATCH", "/jobs/2", {"queue": "small", "walltime": 7200}, status=400,
        code="bad_request", says="resources_max.walltime = 01:00:00",
    )  # fmt: skip
    assert await api.job(2) == body


async def test_priority_goes_first_under_fcfs(tmp_path) -> None:
    # fcfs: A 8 nodes [0, 1000); B (priority 0, t=0) and C (priority 10, t=10) want 8 nodes.
    async with serve(tmp_path, site_config(policy="fcfs")) as api:
        await api.submit("alice", nodes=8, walltime=1000)
        await api.submit("alice", nodes=8, walltime=100)
        api.at(10)
        c = await api.submit("bob", nodes=8, walltime=100, priority=10)
        assert c["est_start"] == T0 + 1000
        assert (await api.job(2))["est_start"] == T0 + 1100
        # qalter -p raises B above C: B goes first again.
        api.at(20)
        await api.call("alice", "PATCH", "/jobs/2", {"priority": 20})
        est = {j["id"]: j["est_start"] - T0 for j in await api.jobs("state=Q")}
        assert est == {"2.mini": 1000, "3.mini": 1100}
        api.at(1000)
        assert (await api.job(2))["stime"] == T0 + 1000
        assert (await api.job(3))["state"] == "Q"


@pytest.mark.parametrize("who", ["oper", "boss"])
async def test_operators_act_on_any_job(api: Api, who: str) -> None:
    await _blocked(api)
    body = await api.call(who, "PATCH", "/jobs/2", {"priority": 7})
    assert body["priority"] == 7
    body = await api.call(who, "POST", "/jobs/2/hold", {"types": "u"})
    assert body["hold_types"] == "u"
    body = await api.call(who, "POST", "/jobs/2/release", {"types": "u"})
    assert body["state"] == "Q"


async def test_manager_submits_for_another_user(api: Api) -> None:
    body = await api.submit("boss", user="carol")
    assert body["owner"] == "carol"
    assert [j["id"] for j in await api.jobs("user=carol")] == ["1.mini"]
