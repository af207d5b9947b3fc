"""The daemon may die; the jobs do not: each running job is held by a supervisor of its
own, and a restarted daemon finds each again, or its end recorded meanwhile."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from local_daemon import LocalDaemon, daemon_dir, wait_until, write_site

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")

SCRIPT = """cd "$PBS_O_WORKDIR"
seq=${PBS_JOBID%%.*}
echo "start $PBS_JOBID" >> starts
while [ ! -e release ]; do sleep 0.1; done
sleep $(( 1 + (seq % 2) * 3 ))
echo "output of $PBS_JOBID"
exit $(( seq % 4 ))
"""


def states(d: LocalDaemon) -> list[str]:
    return [j["state"] for j in d.call("GET", "/jobs?brief=true")[1]["jobs"]]


def test_kill_9_while_twenty_run_and_twenty_wait() -> None:
    """Jobs that end while the daemon is down are recorded with their real end and exit
    status; the others are watched again; the waiting ones run after the restart: each
    job runs and ends exactly once, with its whole output."""
    folder = daemon_dir()
    site = write_site(folder, cores=20, kill_delay=2)
    try:
        d = LocalDaemon(folder, site).start()
        # /bin/sh: root's login bash of a test host may spend seconds in its profile (pyenv)
        body = {"name": "job", "script": SCRIPT, "select": [{"ncpus": 1}], "shell": "/bin/sh",
                "variables": {"PBS_O_WORKDIR": str(d.work)}}  # fmt: skip
        ids = [d.call("POST", "/jobs", body)[1]["id"] for _ in range(40)]  # as qsub sends it
        wait_until(lambda: states(d).count("R"), lambda n: n == 20, 60)
        starts = d.work / "starts"
        wait_until(lambda: starts.exists() and starts.read_text().count("start"), lambda n: n == 20)
        d.crash()  # kill -9
        (d.work / "release").touch()
        time.sleep(1.5)  # the short jobs (1 s) end while nobody watches
        d.start()
        wait_until(lambda: states(d), lambda got: not set(got) & set("QRE"), 120)
        assert d.job(ids[0])["Exit_status"] == int(ids[0].split(".")[0]) % 4  # qstat says so
        lines = starts.read_text().splitlines()
        for job_id in ids:
            seq = int(job_id.split(".")[0])
            attrs = d.call("GET", f"/jobs/{job_id}")[1]
            assert attrs["state"] == "F", (job_id, attrs["comment"])
            assert attrs["exit_status"] == seq % 4, (job_id, attrs)
            assert lines.count(f"start {job_id}") == 1, job_id  # ran once
            out = folder / "work" / f"job.o{seq}"
            assert out.read_text() == f"output of {job_id}\n", job_id  # whole output
        d.stop()
    finally:
        d.__exit__(None, None, None)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_stopped_daemon_leaves_its_jobs_running(tmp_path: Path) -> None:
    folder = daemon_dir()
    try:
        d = LocalDaemon(folder, write_site(folder)).start()
        # The job runs until the test releases it (a loaded host may take seconds to
        # restart the daemon), and at most five minutes.
        release = d.work / "release-long"
        script = (
            f"i=0; while [ ! -e {release} ] && [ $i -lt 3000 ]; do sleep 0.1; i=$((i+1)); done\n"
            'echo "$PBS_JOBID survived"\nexit 7\n'
        )
        job = d.qsub(script, "-N", "long", "-S", "/bin/sh")
        d.wait(job, "R")
        assert d.stop() == 0  # SIGTERM: the daemon stops cleanly, the job goes on
        time.sleep(0.5)
        d.start()
        assert d.job(job)["job_state"] == "R"  # found again, still running
        release.touch()
        ended = d.wait(job, timeout=30)
        assert ended["Exit_status"] == 7
        assert (d.work / f"long.o{job.split('.')[0]}").read_text() == f"{job} survived\n"
    finally:
        d.__exit__(None, None, None)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_state_of_real_jobs_is_refused_by_an_emulated_site() -> None:
    """Running jobs with processes cannot go on under a config that emulates their
    machine: the restart is refused, naming the state and what it was saved for."""
    folder = daemon_dir()
    site = write_site(folder)
    d = LocalDaemon(folder, site).start()
    d.stop()
    site.write_text(site.read_text().replace('executor = "local"', 'executor = "emulate"'))
    with pytest.raises(RuntimeError, match="the state was saved by server ws for machines"):
        d.start()
