"""Job arrays through the API (qsub -J), on the 8-node test site (fcfs-easy)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from api_helpers import T0, Api, new_service, serve, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.arrays import subjob_key
from batchd.server.cmd_schemas import JobEvents
from batchd.server.schemas import JobList
from batchd.server.service import BatchService
from batchd.server.service.arrays import THROTTLED
from batchd.server.store import Store


async def subjobs(api: Api, query: str = "subjobs=true") -> dict[str, str]:
    """Every listed id with its state letter."""
    body = await api.call("alice", "GET", f"/jobs?{query}")
    JobList.model_validate(body)
    return {j["id"]: j["state"] for j in body["jobs"]}


async def starts(api: Api) -> dict[str, int | None]:
    body = await api.call("alice", "GET", "/jobs?subjobs=true&history=true")
    return {j["id"]: (None if j["stime"] is None else j["stime"] - T0) for j in body["jobs"]}


async def test_an_array_runs_its_subjobs_and_finishes(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        arr = await api.submit(nodes=2, walltime=1000, runtime=100, array_indices="1-4")
        assert (arr["id"], arr["seq"], arr["state"], arr["array"]) == ("1[].mini", 1, "B", True)
        assert await subjobs(api, "") == {"1[].mini": "B"}
        assert await subjobs(api) == {
            "1[].mini": "B", "1[1].mini": "R", "1[2].mini": "R", "1[3].mini": "R",
            "1[4].mini": "R",
        }  # fmt: skip
        full = await api.job("1[]")
        assert full["array_indices_submitted"] == "1-4"
        assert full["array_indices_remaining"] == "-"
        assert full["array_state_count"] == "Queued:0 Running:4 Exiting:0 Expired:0"
        sub = await api.job("1[3].mini")
        assert (sub["id"], sub["seq"], sub["array_id"], sub["array_index"]) == (
            "1[3].mini",
            1,
            "1[].mini",
            3,
        )
        assert sub["variables"]["PBS_ARRAY_INDEX"] == "3"
        assert sub["variables"]["PBS_ARRAY_ID"] == "1[].mini"
        assert sub["variables"]["PBS_JOBID"] == "1[3].mini"
        assert sub["variables"]["BATCHD_RUNTIME"] == "100"
        assert len(sub["exec_host"]) == 2
        # The next job is 2: the array took one number.
        two = await api.submit(nodes=1, walltime=10)
        assert two["id"] == "2.mini"
        api.at(100)
        assert await subjobs(api) == {"2.mini": "R"}  # the array has finished: -x shows it
        done = await api.job("1[]")
        # An emulated array ran no process: no exit status, as none of its subjobs has one.
        assert (done["state"], done["exit_status"], done["end_time"]) == ("F", None, T0 + 100)
        assert (done["outcome"], done["comment"]) == ("ok", "Job Array finished")
        assert done["array_state_count"] == "Queued:0 Running:0 Exiting:0 Expired:4"
        hist = await subjobs(api, "subjobs=true&history=true")
        assert [hist[f"1[{i}].mini"] for i in range(1, 5)] == ["F"] * 4
        assert (await api.job("1[2]"))["state"] == "F"
        sub = await api.job("1[2]")
        assert (sub["outcome"], sub["exit_status"]) == ("ok", None)
        assert sub["comment"] == "Job run and finished (no process ran: the job was emulated)"


async def test_subjobs_are_scheduled_as_jobs_submitted_together(tmp_path: Path) -> None:
    """The same starts as six jobs submitted in the same second, in index order."""
    shapes = [(3, 300), (3, 300), (2, 100)]
    found: list[list[int | None]] = []
    for kind in ("array", "jobs"):
        async with serve(tmp_path / kind) as api:
            for nodes, wall in shapes:
                await api.submit(nodes=nodes, walltime=wall, runtime=wall // 2)
            if kind == "array":
                await api.submit(nodes=5, walltime=400, array_indices="0-10:2")
            else:
                for _ in range(6):
                    await api.submit(nodes=5, walltime=400)
            await api.submit(nodes=1, walltime=50)
            api.at(5000)
            got = await starts(api)
            found.append([got[k] for k in sorted(got, key=_order) if "[]" not in k])
    assert found[0] == found[1]
    assert found[0][3:9] == [150, 550, 950, 1350, 1750, 2150]


def _order(job_id: str) -> tuple[int, int]:
    seq, _, rest = job_id.partition("[")
    seq = seq.split(".")[0]
    index = rest.partition("]")[0]
    return int(seq), int(index) if index else -1


async def test_max_run_limits_running_subjobs(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        arr = await api.submit(nodes=1, walltime=1000, runtime=100, array_indices="1-6",
                               max_run_subjobs=2)  # fmt: skip
        assert arr["max_run_subjobs"] == 2
        assert arr["comment"].startswith(THROTTLED)
        assert await subjobs(api) == {
            "1[].mini": "B", "1[1].mini": "R", "1[2].mini": "R", "1[3].mini": "Q",
            "1[4].mini": "Q", "1[5].mini": "Q", "1[6].mini": "Q",
        }  # fmt: skip
        waiting = await api.job("1[5]")
        assert (waiting["state"], waiting["comment"]) == ("Q", THROTTLED)
        assert (await api.job("1[]"))["array_indices_remaining"] == "3-6"
        api.at(1000)
        got = await starts(api)
        assert [got[f"1[{i}].mini"] for i in range(1, 7)] == [0, 0, 100, 100, 200, 200]
        assert (await api.job("1[]"))["state"] == "F"


async def test_qdel_of_subjobs_and_of_the_array(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit(nodes=2, walltime=1000, runtime=500, array_indices="0-9",
                         max_run_subjobs=5)  # fmt: skip
        await api.call("alice", "DELETE", "/jobs/1[0]")  # running: killed
        await api.call("alice", "DELETE", "/jobs/1[9].mini")  # not made yet: expires
        got = await subjobs(api)
        assert (got["1[0].mini"], got["1[9].mini"]) == ("X", "X")
        # 4 took 0's nodes; 5 was made in 0's place (the limit is 5), no node for it yet.
        assert [got[f"1[{i}].mini"] for i in (1, 2, 3, 4)] == ["R"] * 4
        assert (got["1[5].mini"], got["1[6].mini"]) == ("Q", "Q")
        assert (await api.job("1[5]"))[
            "comment"
        ] == "Not Running: Insufficient amount of resource: nodes"
        assert (await api.job("1[6]"))["comment"] == THROTTLED
        killed = await api.job("1[0]")
        assert (killed["exit_status"], killed["outcome"]) == (None, "cancelled")  # emulated
        await api.error("alice", "DELETE", "/jobs/1[0]", status=409, code="conflict",
                        says="has already finished")  # fmt: skip
        await api.error("bob", "DELETE", "/jobs/1[]", status=403, code="forbidden")
        await api.error("alice", "DELETE", "/jobs/1[10]", status=404, code="not_found",
                        says="Unknown Job Id 1[10].mini")  # fmt: skip
        await api.error("alice", "DELETE", "/jobs/1", status=404, code="not_found",
                        says="Unknown Job Id 1.mini")  # fmt: skip
        api.at(10)
        await api.call("alice", "DELETE", "/jobs/1[]")
        assert await subjobs(api) == {}
        arr = await api.job("1[]")
        assert arr["state"] == "F"
        assert arr["array_state_count"] == "Queued:0 Running:0 Exiting:0 Expired:10"
        # Emulated: no exit status; its subjobs were killed, so it did not end "ok".
        assert (arr["exit_status"], arr["outcome"]) == (None, "cancelled")
        nodes = await api.call("alice", "GET", "/nodes")
        assert {n["state"] for n in nodes["nodes"]} == {"free"}


async def test_hold_and_release_the_array_not_a_subjob(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit(nodes=4, walltime=1000, runtime=100, array_indices="1-4")
        await api.call("alice", "POST", "/jobs/1[]/hold", {})
        got = await subjobs(api)
        assert got == {
            "1[].mini": "B", "1[1].mini": "R", "1[2].mini": "R", "1[3].mini": "H",
            "1[4].mini": "H",
        }  # fmt: skip
        before = await api.state()
        for action in ("hold", "release"):
            await api.error(
                "alice", "POST", f"/jobs/1[3]/{action}", status=400, code="bad_request",
                says=("Invalid request 1[3].mini", "not on subjobs"),
            )  # fmt: skip
        await api.error("alice", "PATCH", "/jobs/1[3]", {"walltime": 10}, status=400,
                        code="bad_request", says="Invalid request 1[3].mini")  # fmt: skip
        await api.error("alice", "PATCH", "/jobs/1[]", {"walltime": 10}, status=409,
                        code="conflict", says="Request invalid for state of job 1[].mini")  # fmt: skip
        assert await api.state() == before
        api.at(200)  # the running two ended; the held two stay
        assert (await subjobs(api))["1[3].mini"] == "H"
        await api.call("alice", "POST", "/jobs/1[]/release", {})
        assert (await subjobs(api))["1[3].mini"] == "R"
        api.at(400)
        assert (await api.job("1[]"))["state"] == "F"


async def test_a_held_array_is_altered_whole(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit(nodes=1, walltime=1000, array_indices="1-3", hold=True)
        assert await subjobs(api) == {
            "1[].mini": "H", "1[1].mini": "H", "1[2].mini": "H", "1[3].mini": "H",
        }  # fmt: skip
        await api.call("alice", "PATCH", "/jobs/1[]", {"walltime": 60, "name": "sweep"})
        sub = await api.job("1[2]")
        assert (sub["walltime"], sub["name"]) == (60, "sweep")
        await api.call("alice", "POST", "/jobs/1[]/release", {})
        api.at(60)
        got = await api.call("alice", "GET", "/jobs?subjobs=true&history=true")
        ends = {j["id"]: j["end_time"] - T0 for j in got["jobs"] if j["id"] != "1[].mini"}
        assert ends == {"1[1].mini": 60, "1[2].mini": 60, "1[3].mini": 60}


async def test_bad_arrays_are_refused_and_change_nothing(tmp_path: Path) -> None:
    async with serve(tmp_path, site_config(max_array_size=10)) as api:
        await api.submit(nodes=1, walltime=100)
        before = await api.state()
        cases: list[tuple[dict[str, Any], str]] = [
            ({"array_indices": "5-1"}, "illegal -J value"),
            ({"array_indices": "5-5"}, "illegal -J value"),
            ({"array_indices": "1-5:0"}, "the step must be at least 1"),
            ({"array_indices": "a-b"}, "is neither X-Y[:Z]"),
            ({"array_indices": "1-2000000"}, "indices go up to 1048575"),
            ({"array_indices": "1-11"}, "Array job exceeds server or queue size limit"),
            ({"array_indices": "1-3", "rerunable": False}, "non-rerunable Array Job"),
            ({"array_indices": "1-3", "depend": "afterok:1"}, "take no dependencies"),
            ({"max_run_subjobs": 2}, "only a job array"),
            ({"array_indices": "1-3", "max_run_subjobs": 0}, "max_run_subjobs"),
            ({"array_indices": "1-3", "nodes": 9}, "nodes"),
        ]
        for fields, words in cases:
            await api.error("alice", "POST", "/jobs", fields, status=400, code="bad_request",
                            says=words)  # fmt: skip
        assert await api.state() == before
        ok = await api.submit(nodes=1, walltime=100, array_indices="1-10")
        assert ok["id"] == "2[].mini"


async def test_tracejob_of_a_subjob(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit(nodes=1, walltime=100, runtime=30, array_indices="1-2")
        api.at(30)
        body = await api.call("alice", "GET", "/jobs/1[2]/events")
        events = JobEvents.model_validate(body)
        assert events.id == "1[2].mini"
        messages = [e.message for e in events.events]
        assert "Job run" in messages
        assert "run emulated resources_used.walltime=00:00:30" in messages
        assert not any("Exit_status" in m for m in messages)
        accounting = [e.message for e in events.events if e.source == "A"][-1]
        assert f"end={T0 + 30} run emulated resources_used.walltime=00:00:30" in accounting
        whole = JobEvents.model_validate(await api.call("alice", "GET", "/jobs/1[]/events"))
        assert whole.id == "1[].mini"
        assert any("Job Queued at request of alice@mini" in e.message for e in whole.events)


async def test_an_array_survives_a_restart(tmp_path: Path) -> None:
    """Stopped mid-array (two running, two done, two not made): back with its states, the
    running ones on their nodes, and the rest run as they would have."""
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        await api.submit(nodes=3, walltime=1000, runtime=100, array_indices="1-6",
                         max_run_subjobs=2)  # fmt: skip
        await api.submit(nodes=2, walltime=1000, runtime=100, array_indices="0-3")
        api.at(150)
        before = await subjobs(api, "subjobs=true&history=true")
        running = {j: (await api.job(j.replace(".mini", "")))["exec_host"]
                   for j, s in before.items() if s == "R"}  # fmt: skip
        arr_before = await api.job("1[]")
    assert before["1[3].mini"] == "R" and before["1[1].mini"] == "X"
    assert before["1[5].mini"] == "Q"
    svc = BatchService(site_config(), VirtualClock(T0 + 150), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        assert await subjobs(api, "subjobs=true&history=true") == before
        for j, hosts in running.items():
            assert (await api.job(j.replace(".mini", "")))["exec_host"] == hosts
        arr = await api.job("1[]")
        for key in ("array_state_count", "array_indices_remaining", "state", "stime"):
            assert arr[key] == arr_before[key]
        api.at(1000)
        got = await starts(api)
        assert [got[f"1[{i}].mini"] for i in range(1, 7)] == [0, 0, 100, 100, 200, 200]
        assert (await api.job("1[]"))["state"] == "F"
        assert (await api.job("2[]"))["state"] == "F"


async def test_subjob_keys_stay_exact_in_json() -> None:
    assert subjob_key(2**32 - 1, 2**20 - 1) < 2**53
    assert subjob_key(1, 5) < subjob_key(1, 6) < subjob_key(2, 0)


async def test_signal_and_rerun_act_on_running_subjobs(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit(nodes=2, walltime=1000, runtime=500, array_indices="1-5")
        api.at(10)
        await api.call("alice", "POST", "/jobs/1[]/rerun")
        again = await api.job("1[2]")
        assert (again["state"], again["stime"]) == ("R", T0 + 10)  # back in line, first again
        assert (await api.job("1[5]"))["state"] == "Q"
        await api.call("alice", "POST", "/jobs/1[]/signal", {"signal": "KILL"})
        got = await subjobs(api)
        assert [got[f"1[{i}].mini"] for i in range(1, 5)] == ["X"] * 4
        assert got["1[5].mini"] == "R"  # it took the freed nodes
        killed = await api.job("1[1]")
        assert (killed["outcome"], killed["exit_status"]) == ("signal", None)
        assert killed["comment"] == (
            "Job killed by signal 9 (no process ran: the job was emulated)"
        )
        await api.error("alice", "POST", "/jobs/1[4]/signal", {"signal": "KILL"}, status=409,
                        code="conflict", says="Request invalid for state of job 1[4].mini")  # fmt: skip
        api.at(600)
        done = await api.job("1[]")
        # Emulated: no exit status; four subjobs were killed, so it did not end "ok".
        assert (done["state"], done["exit_status"], done["outcome"]) == ("F", None, "cancelled")
        await api.error("alice", "POST", "/jobs/1[]/rerun", status=409, code="conflict")


async def test_an_array_in_a_reservation_ends_with_it(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        req = {"start": T0 + 100, "duration": 100, "nodes": 2}
        await api.call("alice", "POST", "/reservations", req, status=201)
        await api.submit(queue="R1", nodes=1, walltime=60, runtime=60, array_indices="1-10",
                         max_run_subjobs=3)  # fmt: skip
        api.at(100)
        got = await subjobs(api)
        assert [got[f"1[{i}].mini"] for i in (1, 2, 3)] == ["R", "R", "Q"]
        api.at(300)
        arr = await api.job("1[]")
        assert arr["state"] == "F"
        assert arr["array_state_count"] == "Queued:0 Running:0 Exiting:0 Expired:10"
        left = await api.job("1[9]")
        assert left["state"] == "F" and left["stime"] is None
        first = await api.job("1[1]")
        assert (first["outcome"], first["exit_status"], first["end_time"]) == ("ok", None, T0 + 160)
        assert first["comment"] == "Job run and finished (no process ran: the job was emulated)"


async def test_an_array_of_listed_indices(api: Api) -> None:
    """Slurm's --array=1,3,5-7 (and a single index): the subjobs are those indices."""
    made = await api.submit("alice", array_indices="1,3,5-7", nodes=1, walltime=60)
    assert made["array_indices_submitted"] == "1,3,5-7"
    subjobs = await api.call("alice", "GET", "/jobs?subjobs=true")
    indices = sorted(j["array_index"] for j in subjobs["jobs"] if j.get("array_index") is not None)
    assert indices == [1, 3, 5, 6, 7]
    one = await api.submit("alice", array_indices="4", nodes=1, walltime=60)
    assert one["array_indices_submitted"] == "4"
    for bad in ("3-1,5", "1,,2", "x", "5-5"):
        await api.error("alice", "POST", "/jobs", {"array_indices": bad}, status=400,
                        code="bad_request")  # fmt: skip
