"""qmgr's queues (created, set, deleted, kept across a restart) and jobs inside advance
reservations, through the API on the 8-node test site."""

from __future__ import annotations

from pathlib import Path

from api_helpers import T0, new_service, node, nodes, serve, site_config, start_api
from batchd.engine.clock import VirtualClock
from batchd.server.admin_schemas import QueueOut
from batchd.server.service import BatchService
from batchd.server.store import Store


async def test_queues_are_created_set_and_deleted_and_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        await api.error("alice", "POST", "/queues", {"name": "big"}, status=403, code="forbidden")
        made = QueueOut.model_validate(
            await api.call("boss", "POST", "/queues", {"name": "big"}, status=201)
        )
        # PBS creates a queue neither enabled nor started.
        assert (made.enabled, made.started, made.max_nodes) == (False, False, None)
        await api.error("alice", "POST", "/jobs", {"queue": "big"}, status=400,
                        code="bad_request", says="Queue is not enabled: queue big takes no new jobs")  # fmt: skip
        body = {"enabled": True, "started": True, "max_nodes": 6, "max_walltime": "02:00:00"}
        big = await api.call("boss", "PATCH", "/queues/big", body)
        assert (big["enabled"], big["max_nodes"], big["max_walltime"]) == (True, 6, 7200)
        await api.submit("alice", queue="big", nodes=6, walltime=3600)
        before = await api.state()
        await api.error("boss", "POST", "/queues", {"name": "big"}, status=409,
                        code="queue_exists", says="Queue already exists")  # fmt: skip
        await api.error("boss", "POST", "/queues", {"name": "R7"}, status=409,
                        code="queue_exists", says="belong to advance reservations")  # fmt: skip
        await api.error("boss", "POST", "/queues", {"name": "x" * 16}, status=400,
                        code="bad_request", says="at most 15 characters")  # fmt: skip
        await api.error("boss", "PATCH", "/queues/nosuch", {"enabled": True}, status=404,
                        code="unknown_queue", says="Unknown queue nosuch")  # fmt: skip
        await api.error("boss", "PATCH", "/queues/big", {"machine": "other"}, status=400,
                        code="bad_value", says="unknown machine")  # fmt: skip
        await api.error("boss", "PATCH", "/queues/big", {"max_walltime": "1:99:00"}, status=400,
                        code="bad_request")  # fmt: skip
        await api.error("boss", "DELETE", "/queues/big", status=409, code="queue_busy",
                        says="Cannot delete busy object")  # fmt: skip
        await api.error("boss", "DELETE", "/queues/workq", status=409, code="queue_busy",
                        says="default queue")  # fmt: skip
        await api.error("boss", "DELETE", "/queues/nosuch", status=404,
                        code="unknown_queue")  # fmt: skip
        assert await api.state() == before
        await api.call("boss", "POST", "/queues", {"name": "scratch", "enabled": True}, status=201)
        await api.call("boss", "DELETE", "/queues/small")
        names = [q["name"] for q in (await api.call("alice", "GET", "/queues"))["queues"]]
        assert names == ["workq", "big", "scratch"]
    svc = BatchService(site_config(), VirtualClock(T0 + 10), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        queues = {q["name"]: q for q in (await api.call("alice", "GET", "/queues"))["queues"]}
        assert list(queues) == ["workq", "big", "scratch"]
        assert (queues["big"]["max_nodes"], queues["big"]["counts"]["R"]) == (6, 1)
        assert (queues["scratch"]["enabled"], queues["scratch"]["started"]) == (True, False)
        await api.error("alice", "POST", "/jobs", {"queue": "small"}, status=400,
                        code="bad_request", says="unknown queue 'small'")  # fmt: skip


async def test_jobs_of_a_reservation_run_in_its_window_on_its_nodes(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("bob", nodes=4, walltime=10_000)  # node001-004 until 10,000
        req = {"start": T0 + 100, "duration": 1000, "nodes": 3}
        resv = await api.call("alice", "POST", "/reservations", req, status=201)
        assert (resv["id"], resv["queue"]) == ("R1.mini", "R1")
        queue = await api.call("alice", "GET", "/queues/R1")
        assert (queue["max_nodes"], queue["default_walltime"]) == (3, 1000)
        short = await api.submit("alice", queue="R1", nodes=2, walltime=300)
        assert short["state"] == "Q"  # before the window: it waits
        await api.submit("alice", queue="R1", nodes=2, walltime=5000)  # runs past the end
        await api.submit("alice", queue="R1", nodes=3, walltime=100)  # never fits: deleted
        await api.error("alice", "POST", "/jobs", {"queue": "R1", "nodes": 4}, status=400,
                        code="bad_request", says="resources_max.nodect = 3")  # fmt: skip
        api.at(100)
        one = await api.job(2)
        assert (one["state"], one["stime"]) == ("R", T0 + 100)
        resv = await api.call("alice", "GET", "/reservations/R1.mini")
        assert resv["state"] == "RN"
        assert set(one["exec_host"]) <= set(resv["node_list"])
        assert (await api.job(3))["state"] == "Q"  # 1 reserved node free: 2 do not fit
        api.at(400)
        assert (await api.job(2))["state"] == "F"
        three = await api.job(3)
        assert (three["state"], three["stime"]) == ("R", T0 + 400)
        assert (await api.job(4))["state"] == "Q"
        api.at(1100)
        three = await api.job(3)
        # Emulated: no process ran, no exit status.
        assert (three["state"], three["end_time"], three["exit_status"], three["outcome"]) == (
            "F", T0 + 1100, None, "resv_end",
        )  # fmt: skip
        assert three["comment"] == (
            "Job killed: its reservation ended (no process ran: the job was emulated)"
        )
        four = await api.job(4)
        assert (four["state"], four["outcome"], four["comment"]) == (
            "F", "resv_end", "Job deleted: its reservation R1 ended",
        )  # fmt: skip
        await api.error("alice", "POST", "/jobs", {"queue": "R1"}, status=400,
                        code="bad_request", says="unknown queue 'R1'")  # fmt: skip
        assert [q["name"] for q in (await api.call("alice", "GET", "/queues"))["queues"]] == [
            "workq", "small",
        ]  # fmt: skip


async def test_deleting_a_reservation_ends_its_jobs(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        req = {"start": "now", "duration": 1000, "nodes": 4}
        await api.call("alice", "POST", "/reservations", req, status=201)
        await api.submit("alice", queue="R1", nodes=4, walltime=500)
        await api.submit("alice", queue="R1", nodes=1, walltime=500, hold=True)
        assert (await api.job(1))["exec_host"] == nodes(1, 2, 3, 4)
        api.at(10)
        await api.call("boss", "DELETE", "/reservations/R1.mini")
        one, two = await api.job(1), await api.job(2)
        assert (one["state"], one["outcome"], one["end_time"]) == ("F", "resv_end", T0 + 10)
        assert (two["state"], two["outcome"]) == ("F", "resv_end")
        # The nodes are the machine's again.
        await api.submit("alice", nodes=8, walltime=10)
        assert (await api.job(3))["state"] == "R"


async def test_a_reservation_and_its_running_job_survive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    async with start_api(new_service(path)) as api:
        req = {"start": T0 + 10, "duration": 1000, "nodes": 2}
        await api.call("alice", "POST", "/reservations", req, status=201)
        await api.submit("alice", queue="R1", nodes=2, walltime=5000)
        await api.submit("alice", queue="R1", nodes=1, walltime=100)
        await api.submit("bob", nodes=6, walltime=5000)
        api.at(20)
        assert (await api.job(1))["state"] == "R"
        hosts = (await api.job(1))["exec_host"]
    svc = BatchService(site_config(), VirtualClock(T0 + 30), Store(path), daemon_user="batchd")
    svc.restore(Store(path).load())
    async with start_api(svc) as api:
        one = await api.job(1)
        assert (one["state"], one["exec_host"]) == ("R", hosts)
        assert (await api.job(2))["state"] == "Q"
        await api.submit("bob", nodes=1, walltime=100)  # no node is free outside
        assert (await api.job(4))["state"] == "Q"
        api.at(1010)
        assert (await api.job(1))["outcome"] == "resv_end"
        assert (await api.job(2))["outcome"] == "resv_end"
        assert (await api.job(4))["state"] == "R"
        assert node(1) in (await api.job(3))["exec_host"] + (await api.job(4))["exec_host"]


async def test_a_disabled_queue_refuses_a_move_saying_how_it_is_enabled(tmp_path: Path) -> None:
    site = site_config()
    closed = site.queue[0].model_copy(update={"name": "closed", "enabled": False})
    site = site.model_copy(update={"queue": [*site.queue, closed]})
    async with start_api(new_service(tmp_path / "state.db", site)) as api:
        await api.submit("alice", nodes=8, walltime=600)
        assert (await api.submit("alice", nodes=1, walltime=600))["state"] == "Q"
        doc = await api.call(None, "GET", "/openapi.json")
        assert "400" in doc["paths"]["/jobs/{id}/move"]["post"]["responses"]
        from_file = await api.error(
            "alice", "POST", "/jobs/2/move", {"queue": "closed"}, status=400, code="bad_request",
            says=("Queue is not enabled: queue closed takes no new jobs",
                  "enabled = true in the site file, then SIGHUP"),
        )  # fmt: skip
        assert 'qmgr -c "set queue closed enabled = True"' in from_file
        # A queue made live (PBS makes it disabled) is enabled live: no file to edit.
        await api.call("boss", "POST", "/queues", {"name": "made"}, status=201)
        made = await api.error(
            "alice", "POST", "/jobs/2/move", {"queue": "made"}, status=400, code="bad_request",
            says='a manager enables it: qmgr -c "set queue made enabled = True"',
        )  # fmt: skip
        assert "SIGHUP" not in made and "site file" not in made
        # A file's queue a manager disabled live is enabled live too.
        await api.call("boss", "PATCH", "/queues/small", {"enabled": False})
        live = await api.error(
            "alice", "POST", "/jobs/2/move", {"queue": "small"}, status=400, code="bad_request",
            says='qmgr -c "set queue small enabled = True"',
        )  # fmt: skip
        assert "SIGHUP" not in live
        assert (await api.job(2))["queue"] == "workq"
