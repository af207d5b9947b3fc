"""qrerun, qmove, qsig and tracejob through the API, on the 8-node test site."""

from __future__ import annotations

from pathlib import Path

from api_helpers import T0, Api, jid, node, serve
from batchd.server.cmd_schemas import JobEvents


async def _events(api: Api, seq: int) -> list[tuple[int, str, str]]:
    body = JobEvents.model_validate(await api.call("alice", "GET", f"/jobs/{seq}/events"))
    assert body.id == jid(seq)
    return [(e.time - T0, e.source, e.message) for e in body.events]


async def test_rerun_puts_a_running_job_back_and_it_runs_again(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=8, walltime=1000)
        await api.submit("bob", nodes=2, walltime=100)
        api.at(50)
        job = await api.call("bob", "POST", "/jobs/1/rerun", status=403)
        job = await api.call("alice", "POST", "/jobs/1/rerun")
        # Back in the queue behind nobody: FCFS by submission, it starts again at once.
        assert (job["state"], job["stime"]) == ("R", T0 + 50)
        assert job["comment"].startswith("Job run at")
        two = await api.job(2)
        assert two["state"] == "Q"
        metrics = (await api.raw(None, "GET", "/metrics"))[1]
        assert 'batchd_jobs_requeued_total{queue="workq",reason="rerun"} 1.0' in metrics
        lines = await _events(api, 1)
        assert (50, "S", "Job Rerun at request of alice@mini") in lines
        assert (50, "S", "Job requeued: rerun by alice") in lines
        runs = [t for t, src, msg in lines if msg.startswith("Job Run at request of Scheduler")]
        assert runs == [0, 50]


async def test_rerun_refusals_change_nothing(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=4, walltime=1000, rerunable=False)
        await api.submit("alice", nodes=8, walltime=100)
        before = await api.state()
        await api.error(
            "alice", "POST", "/jobs/1/rerun", status=409, code="conflict",
            says=("job is not rerunnable 1.mini", "qsub -r n"),
        )  # fmt: skip
        await api.error(
            "alice", "POST", "/jobs/2/rerun", status=409, code="conflict",
            says=("Request invalid for state of job 2.mini", "it is queued"),
        )  # fmt: skip
        await api.error("alice", "POST", "/jobs/99/rerun", status=404, code="not_found",
                        says="Unknown Job Id 99.mini")  # fmt: skip
        assert await api.state() == before
        full = await api.job(1)
        assert full["state"] == "R"


async def test_move_a_waiting_job_to_another_queue(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=8, walltime=1000)
        await api.submit("alice", nodes=2, walltime=600)
        await api.submit("alice", nodes=4, walltime=600)
        moved = await api.call("alice", "POST", "/jobs/2/move", {"queue": "small"})
        assert (moved["queue"], moved["state"]) == ("small", "Q")
        before = await api.state()
        await api.error("alice", "POST", "/jobs/1/move", {"queue": "small"}, status=409,
                        code="conflict", says="Request invalid for state of job 1.mini")  # fmt: skip
        await api.error("alice", "POST", "/jobs/3/move", {"queue": "nosuch"}, status=404,
                        code="not_found", says="Unknown queue nosuch")  # fmt: skip
        await api.error("alice", "POST", "/jobs/3/move", {"queue": "small"}, status=400,
                        code="bad_request", says="resources_max.nodect = 2")  # fmt: skip
        await api.error("bob", "POST", "/jobs/3/move", {"queue": "small"}, status=403,
                        code="forbidden")  # fmt: skip
        assert await api.state() == before
        # The moved job runs when job 1 ends, from its new queue.
        api.at(1000)
        two = await api.job(2)
        assert (two["state"], two["queue"]) == ("R", "small")
        assert (0, "S", "Job moved from workq to small at request of alice@mini") in (
            await _events(api, 2)
        )


async def test_qsig_records_signals_and_kill_ends_the_job(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=4, walltime=1000)
        await api.submit("alice", nodes=4, walltime=1000)
        await api.submit("alice", nodes=4, walltime=1000)
        api.at(10)
        usr1 = await api.call("alice", "POST", "/jobs/1/signal", {"signal": "SIGUSR1"})
        assert usr1["state"] == "R"
        before = await api.state()
        await api.error("alice", "POST", "/jobs/1/signal", {"signal": "SIGNOPE"}, status=400,
                        code="bad_request", says="Unknown/illegal signal name")  # fmt: skip
        await api.error("alice", "POST", "/jobs/1/signal", {"signal": "suspend"}, status=409,
                        code="conflict", says="does not emulate suspended jobs")  # fmt: skip
        await api.error("alice", "POST", "/jobs/3/signal", {"signal": "KILL"}, status=409,
                        code="conflict", says="Request invalid for state of job 3.mini")  # fmt: skip
        await api.error("bob", "POST", "/jobs/1/signal", {"signal": "KILL"}, status=403,
                        code="forbidden")  # fmt: skip
        assert await api.state() == before
        killed = await api.call("alice", "POST", "/jobs/1/signal", {"signal": "9"})
        # Emulated: no process ran, so no exit status (256 + 9 were it real).
        assert (killed["state"], killed["exit_status"], killed["outcome"]) == ("F", None, "signal")
        assert killed["comment"] == "Job killed by signal 9 (no process ran: the job was emulated)"
        # No body: SIGTERM.
        termed = await api.call("oper", "POST", "/jobs/2/signal")
        assert (termed["state"], termed["exit_status"], termed["outcome"]) == ("F", None, "signal")
        assert termed["comment"] == (
            "Job killed by signal 15 (no process ran: the job was emulated)"
        )
        assert (await api.job(3))["state"] == "R"  # took the freed nodes
        lines = await _events(api, 1)
        assert (10, "S", "Job sent signal SIGUSR1 at request of alice@mini") in lines
        assert (10, "M", "Terminated by signal SIGKILL") in lines
        assert (10, "S", "run emulated resources_used.walltime=00:00:10") in lines
        assert not any("Exit_status" in message for _, _, message in lines)


async def test_events_tell_a_jobs_life_in_order(tmp_path: Path) -> None:
    async with serve(tmp_path) as api:
        await api.submit("alice", nodes=2, walltime=100, runtime=150, hold=True, name="lu")
        api.at(5)
        await api.call("alice", "POST", "/jobs/1/release")
        api.at(200)
        lines = await _events(api, 1)
        assert lines == [
            (0, "S", "enqueuing into workq, state 2 hop 1"),
            (0, "S", "Job Queued at request of alice@mini, owner = alice@mini, "
                     "job name = lu, queue = workq"),
            (0, "A", "queue=workq"),
            (5, "S", "Holds u released at request of alice@mini"),
            (5, "L", "Job run"),
            (5, "S", "Job Run at request of Scheduler@mini on exec_vnode "
                     f"({node(1)}:ncpus=1)+({node(2)}:ncpus=1)"),
            (5, "M", "Started"),
            (105, "M", "walltime 00:01:40 exceeded limit 00:01:40"),
            (105, "S", "run emulated resources_used.walltime=00:01:40"),
            (105, "A", f"user=alice queue=workq ctime={T0} qtime={T0} etime={T0 + 5} "
                       f"start={T0 + 5} end={T0 + 105} run emulated "
                       "resources_used.walltime=00:01:40"),
        ]  # fmt: skip
        await api.error("alice", "GET", "/jobs/77/events", status=404, code="not_found",
                        says="Unknown Job Id 77.mini")  # fmt: skip
