"""A daemon whose machine runs job scripts for real, driven as ensemble managers and
workflow tools drive PBS: qsub, qstat -f -F json, qdel, qsig, qrerun, arrays, dependencies.

Success is judged by the work done (files the jobs wrote, their exit statuses), not only
by the states the jobs went through.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from local_daemon import LocalDaemon, daemon_dir, wait_until, write_site
from users import as_root

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")


def pgrep(pattern: str) -> str:
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.strip()


def test_a_driver_gets_its_work_done(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    work = d.work
    wrote = d.qsub('cd "$PBS_O_WORKDIR"\necho "made by $PBS_JOBID" > result.txt\n', "-N", "writer")
    fails = d.qsub("echo about to fail\nexit 42\n", "-N", "fails")
    wide = d.qsub('echo "$NCPUS $OMP_NUM_THREADS"\n', "-l", "select=1:ncpus=3")
    done = d.wait(wrote)
    assert (done["job_state"], done["Exit_status"]) == ("F", 0)
    assert (work / "result.txt").read_text() == f"made by {wrote}\n"
    assert (work / f"writer.o{wrote.split('.')[0]}").read_text() == ""
    failed = d.wait(fails)
    assert failed["Exit_status"] == 42
    assert failed["comment"] == "Job run and finished with exit status 42"
    assert (work / f"fails.o{fails.split('.')[0]}").read_text() == "about to fail\n"
    d.wait(wide)
    assert (work / f"STDIN.o{wide.split('.')[0]}").read_text() == "3 3\n"
    used = d.job(wide)["resources_used"]
    assert set(used) >= {"cput", "mem", "vmem", "walltime", "ncpus", "cpupercent"}
    trace = d.pbs("tracejob", fails).stdout
    assert "Exit_status=42 resources_used.walltime=" in trace and "run emulated" not in trace
    metrics = d.call("GET", "/metrics")[1]
    assert 'batchd_jobs_completed_total{outcome="failed",queue="workq"} 1.0' in metrics
    assert 'batchd_jobs_completed_total{outcome="ok",queue="workq"} 2.0' in metrics


def test_qdel_ends_a_running_job_within_the_kill_delay(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    job = d.qsub("sleep 61.25\n", "-N", "sleeper")
    d.wait(job, "R")
    wait_until(lambda: pgrep("sleep 61.25"), bool, 20)
    began = time.monotonic()
    assert d.pbs("qdel", job).returncode == 0
    ended = d.wait(job, timeout=20)
    assert time.monotonic() - began < 2 + 3  # the kill delay, and a margin
    assert ended["Exit_status"] == 256 + 15  # its shell killed by SIGTERM, as PBS reports it
    assert pgrep("sleep 61.25") == ""


def test_a_job_over_its_walltime_is_killed_and_told(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    job = d.qsub("echo started\nsleep 30\n", "-l", "walltime=00:00:02", "-N", "slow")
    ended = d.wait(job, timeout=20)
    assert ended["Exit_status"] == -29
    assert "walltime 2 exceeded limit 2" in ended["comment"]
    err = (d.work / f"slow.e{job.split('.')[0]}").read_text()
    assert "=>> PBS: job killed: walltime 2 exceeded limit 2" in err


def test_qsig_and_qrerun_act_on_the_processes(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    count = d.work / "runs"
    job = d.qsub(
        f'trap "echo usr1 >> {count}" USR1\necho run >> {count}\n'
        "while :; do sleep 0.1; done\n",
        "-S", "/bin/bash",
    )  # fmt: skip
    d.wait(job, "R")
    wait_until(lambda: count.exists() and count.read_text(), bool, 20)
    assert d.pbs("qsig", "-s", "USR1", job).returncode == 0
    wait_until(lambda: count.read_text(), lambda t: "usr1" in t, 20)
    assert d.pbs("qrerun", job).returncode == 0
    wait_until(lambda: count.read_text().count("run\n"), lambda n: n == 2, 30)
    assert d.job(job)["job_state"] == "R"
    d.pbs("qdel", job)
    assert d.wait(job, timeout=20)["job_state"] == "F"
    unrerunable = d.qsub("sleep 30\n", "-r", "n")
    d.wait(unrerunable, "R")
    refused = d.pbs("qrerun", unrerunable)
    assert refused.returncode != 0 and "not rerunnable" in refused.stderr


def test_an_array_of_twenty_writes_its_twenty_files(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    array = d.qsub(
        'cd "$PBS_O_WORKDIR"\necho "$PBS_ARRAY_INDEX of $PBS_ARRAY_ID" > out.$PBS_ARRAY_INDEX\n',
        "-J", "1-20", "-N", "arr", "-S", "/bin/sh",
    )  # fmt: skip
    seq = array.split("[")[0]
    done = d.wait(array, timeout=90)
    assert (done["job_state"], done["Exit_status"]) == ("F", 0)
    for i in range(1, 21):
        assert (d.work / f"out.{i}").read_text() == f"{i} of {array}\n"
        assert (d.work / f"arr.o{seq}.{i}").exists()


def test_afterok_waits_for_a_real_success(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    stamp = d.work / "chain"
    first = d.qsub(f"sleep 1\necho first >> {stamp}\nexit 0\n")
    second = d.qsub(f"echo second >> {stamp}\n", "-W", f"depend=afterok:{first}")
    failing = d.qsub("sleep 1\nexit 3\n")
    on_ok = d.qsub(f"echo never >> {stamp}\n", "-W", f"depend=afterok:{failing}")
    on_fail = d.qsub(f"echo rescue >> {stamp}\n", "-W", f"depend=afternotok:{failing}")
    d.wait(second)
    d.wait(on_fail)
    lines = stamp.read_text().splitlines()
    assert lines.index("first") < lines.index("second") and "never" not in lines
    assert "rescue" in lines
    assert d.job(second)["stime"] >= d.job(first)["obittime"]
    never = d.wait(on_ok)  # deleted when its dependency failed: it never ran
    assert never.get("stime") is None and "Exit_status" not in never
    assert d.job(failing)["Exit_status"] == 3


def test_qsub_block_exits_with_the_scripts_status(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    done = d.pbs("qsub", "-W", "block=true", stdin="exit 42\n")
    assert done.returncode == 42 and done.stdout.strip().endswith(".ws")


def test_refusals_that_change_nothing(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    runtime = d.pbs("qsub", "-v", "BATCHD_RUNTIME=60", stdin="true\n")
    assert runtime.returncode != 0 and "BATCHD_RUNTIME" in runtime.stderr
    elsewhere = d.pbs("qsub", "-o", "otherhost:/tmp/x", stdin="true\n")
    assert elsewhere.returncode != 0 and "not on otherhost" in elsewhere.stderr
    moldable = d.pbs("qsub", "-l", "nodes=1-2", stdin="true\n")
    assert moldable.returncode != 0
    assert d.pbs("qstat", "-x").stdout.strip() == ""  # nothing was made


def test_an_executing_machine_refuses_another_speed() -> None:
    folder = daemon_dir()
    site = write_site(folder)
    done = subprocess.run(
        [os.sys.executable, "-m", "batchd.cli", "serve", "--config", str(site), "--speed", "60",
         "--socket", str(folder / "s.sock"), "--state", str(folder / "state.db")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0
    assert "machine[0].executor" in done.stderr and "--speed 60" in done.stderr
    assert not (folder / "state.db").exists()


@pytest.mark.skipif(not as_root(), reason="root's own jobs: a root daemon")
def test_roots_jobs_need_acl_roots() -> None:
    folder = daemon_dir()
    with LocalDaemon(folder, write_site(folder, roots=())) as d:
        refused = d.pbs("qsub", stdin="true\n")
        assert refused.returncode != 0 and "acl_roots" in refused.stderr


def test_a_node_going_down_stops_its_job_and_requeues_it(local_daemon: LocalDaemon) -> None:
    """node_fail = "requeue" (the default): the job's processes are stopped, it waits
    again while its node is down, and runs again from the start once the node is back."""
    d = local_daemon
    runs = d.work / "runs"
    job = d.qsub(f"echo run >> {runs}\nsleep 31.75\n")
    wait_until(lambda: runs.exists() and runs.read_text(), bool, 20)
    status, body = d.call("PATCH", "/nodes/node001", {"state": "down"})
    assert status == 200, body
    waiting = d.wait(job, "Q", timeout=20)
    assert "a node it ran on went down" in waiting["comment"]
    assert pgrep("sleep 31.75") == ""  # stopped before it went back to its queue
    status, _ = d.call("PATCH", "/nodes/node001", {"state": "online"})
    assert status == 200
    wait_until(lambda: runs.read_text().count("run"), lambda n: n == 2, 20)
    d.pbs("qdel", job)
    d.wait(job, timeout=20)


def test_a_node_going_down_under_a_deleted_job_does_not_bring_it_back(
    local_daemon: LocalDaemon,
) -> None:
    """qdel first: the job is stopping to end (state E, its script ignores SIGTERM), and
    a node failure then asks a requeue of it, which does not change what it is told or
    what becomes of it: it ends, deleted, at the kill delay."""
    d = local_daemon
    job = d.qsub('#!/bin/sh\ntrap "" TERM\nsleep 62.5\n')  # the top process: the script
    wait_until(lambda: pgrep("sleep 62.5"), bool, 20)
    assert d.pbs("qdel", job).returncode == 0
    d.wait(job, "E", timeout=10)
    status, body = d.call("PATCH", "/nodes/node001", {"state": "down"})
    assert status == 200, body
    stopping = d.job(job)
    assert stopping["job_state"] == "E" and "requeue" not in stopping.get("comment", "")
    ended = d.wait(job, timeout=20)
    assert ended["Exit_status"] == 256 + 9  # killed at the kill delay
    assert ended["comment"] == "Job deleted while running"
    assert pgrep("sleep 62.5") == ""
    status, _ = d.call("PATCH", "/nodes/node001", {"state": "online"})
    assert status == 200


def test_trace_jobs_stay_emulated_beside_real_ones() -> None:
    """serve --replay on an executing machine: the trace's jobs queue and run there as
    emulated jobs (no process, no owner's account needed), real ones run their scripts."""
    folder = daemon_dir()
    with LocalDaemon(folder, write_site(folder, cores=64), "--replay", "synthetic:40") as d:
        running = wait_until(
            lambda: [j for j in d.call("GET", "/jobs")[1]["jobs"] if j["state"] == "R"],
            bool,
            30,
        )
        trace = running[0]
        assert trace["executed"] is False and trace["euser"] is None
        assert trace["output_path"] is None and not list(d.spool.iterdir())
        assert d.job(trace["id"]).get("Output_Path") is None
