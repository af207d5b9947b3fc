"""qselect, qstat -w/-n1, qrerun, qmove, qsig, tracejob, qsub -W block, pbs_rsub,
pbs_rstat, pbs_rdel and qmgr's queues against a real ``batchd serve``, through a
restart. The commands run as ``python -m batchclient.X``: they may not be installed."""

from __future__ import annotations

import json
import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

import pytest

from daemon_proc import ROOT, Daemon
from pbs_commands import ok, run

SITE = """
[[machine]]
name = "tiny"
nodes = 4

[server]
policy = "fcfs-easy"

[[queue]]
name = "workq"
default_walltime = "01:00:00"

[[queue]]
name = "short"
max_nodes = 2
max_walltime = "00:30:00"
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    return conf


def test_selecting_moving_signalling_and_tracing_jobs(tmp_path: Path, site: Path) -> None:
    with Daemon(tmp_path, "--speed", "1", config=str(site)) as d:
        assert (
            ok(d, "qsub", "-l", "nodes=2,walltime=02:00:00", "-N", "big", stdin="x") == "1.tiny\n"
        )
        ok(d, "qsub", "-l", "nodes=2,walltime=00:10:00", "-N", "small", "-r", "n", stdin="x")
        ok(d, "qsub", "-l", "nodes=4,walltime=00:20:00", "-N", "wide", stdin="x")
        ok(d, "qsub", "-l", "nodes=1,walltime=00:20:00", "-N", "wait", stdin="x")

        assert ok(d, "qselect") == "1.tiny\n2.tiny\n3.tiny\n4.tiny\n"
        assert ok(d, "qselect", "-s", "R") == "1.tiny\n2.tiny\n"
        assert ok(d, "qselect", "-s", "Q", "-l", "nodect.ge.2") == "3.tiny\n"
        assert ok(d, "qselect", "-l", "walltime.gt.00:15:00", "-N", "wide") == "3.tiny\n"
        assert ok(d, "qselect", "-u", "nobody") == ""
        bad = run(d, "qselect", "-l", "walltime.after.1")
        assert bad.returncode == 2 and bad.stderr.startswith("qselect: illegal -l value")

        wide = ok(d, "qstat", "-w").splitlines()
        assert wide[0].startswith("Job id                         Name            User")
        assert wide[2].startswith("1.tiny                         big             ")
        n1 = ok(d, "qstat", "-n1", "1.tiny").splitlines()
        assert re.search(r"^1\.tiny .* R \d\d:\d\d node001/0\+node002/0$", n1[-1])

        # -t lists what plain qstat lists when there are no arrays (Time Use may tick).
        def no_time(text: str) -> str:
            return re.sub(r"\d+:\d\d:\d\d", "T", text)

        assert no_time(ok(d, "qstat", "-t")) == no_time(ok(d, "qstat"))
        assert run(d, "qstat", "-1").returncode == 2

        # qmove: a waiting job to the short queue; the wide one does not fit there.
        ok(d, "qmove", "short@tiny", "4.tiny")
        assert "    queue = short\n" in ok(d, "qstat", "-f", "4.tiny")
        refused = run(d, "qmove", "short", "3.tiny")
        assert refused.returncode == 1 and "resources_max.nodect = 2" in refused.stderr
        running = run(d, "qmove", "short", "1.tiny")
        assert "Request invalid for state of job 1.tiny" in running.stderr

        # qrerun: job 2 was submitted with -r n.
        assert run(d, "qrerun", "2.tiny").stderr.startswith("qrerun: job is not rerunnable 2.tiny")
        ok(d, "qrerun", "1.tiny")

        # qsig: recorded; KILL ends the job, emulated: no process ran, no exit status.
        ok(d, "qsig", "-s", "USR1", "1.tiny")
        assert ok(d, "qselect", "-s", "R") == "1.tiny\n2.tiny\n"
        ok(d, "qsig", "-s", "SIGKILL", "2.tiny")
        killed = ok(d, "qstat", "-x", "-f", "2.tiny")
        assert "    job_state = F\n" in killed and "Exit_status" not in killed
        assert "    Hold_Types = n\n    Rerunable = False\n" in killed  # qsub -r n
        as_json = json.loads(ok(d, "qstat", "-x", "-f", "-F", "json", "2.tiny"))["Jobs"]["2.tiny"]
        assert "Exit_status" not in as_json
        assert as_json["comment"] == "Job killed by signal 9 (no process ran: the job was emulated)"
        assert as_json["Variable_List"]["PBS_O_QUEUE"] == "workq"
        ended = ok(d, "tracejob", "-w", "0", "2").splitlines()
        assert any(t[26:].startswith("run emulated resources_used.walltime=") for t in ended)
        assert not any("Exit_status" in t for t in ended)
        unknown = run(d, "qsig", "99.tiny")
        assert (unknown.returncode, unknown.stderr) == (153, "qsig: Unknown Job Id 99.tiny\n")
        illegal = run(d, "qsig", "-s", "SIGWHAT", "1.tiny")
        assert "Unknown/illegal signal name" in illegal.stderr

        trace = ok(d, "tracejob", "-w", "0", "1").splitlines()
        assert trace[:3] == ["", "Job: 1.tiny", ""]
        assert all(re.match(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d  [SLMA]    ", t) for t in trace[3:])
        said = [t[26:] for t in trace[3:]]
        me = f"{pwd.getpwuid(os.getuid()).pw_name}@tiny"
        assert said[:3] == [
            "enqueuing into workq, state 1 hop 1",
            f"Job Queued at request of {me}, owner = {me}, job name = big, queue = workq",
            "queue=workq",
        ]
        assert f"Job Rerun at request of {me}" in said
        assert f"Job sent signal SIGUSR1 at request of {me}" in said
        missing = run(d, "tracejob", "77")
        assert missing.returncode == 1
        assert "tracejob: Couldn't find Job Id 77.tiny in logs of past 1 day" in missing.stderr

        # qsub -W block=true: the job id first, then the job's exit status (an emulated job
        # has none: 3, as for a job that never ran).
        blocked = subprocess.Popen(
            [sys.executable, "-m", "batchclient.qsub", "-W", "block=true", "-l", "nodes=4"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, BATCHD_SOCKET=str(d.socket)), cwd=ROOT,
        )  # fmt: skip
        assert blocked.stdin is not None and blocked.stdout is not None
        blocked.stdin.write("x")
        blocked.stdin.close()
        jid = blocked.stdout.readline().strip()
        assert jid == "5.tiny"
        assert blocked.poll() is None  # still waiting for its job
        ok(d, "qdel", jid)
        assert blocked.wait(timeout=30) == 3  # deleted before it ran: PBS's 3
        done = run(d, "qsub", "-W", "block=true", "-v", "BATCHD_RUNTIME=1", "-l", "nodes=1",
                   "-q", "short", "-l", "walltime=00:00:05", stdin="x")  # fmt: skip
        # One node is free: it runs at once and ends 1 s later, emulated: no exit status.
        assert (done.returncode, done.stdout) == (3, "6.tiny\n")
        six = json.loads(ok(d, "qstat", "-x", "-f", "-F", "json", "6.tiny"))["Jobs"]["6.tiny"]
        assert (six["job_state"], six["resources_used"]["walltime"]) == ("F", "00:00:01")
        assert six["comment"] == "Job run and finished (no process ran: the job was emulated)"
        assert "Exit_status" not in six


def test_reservations_and_queues_through_a_restart(tmp_path: Path, site: Path) -> None:
    d = Daemon(tmp_path, "--speed", "1", config=str(site)).start()
    try:
        rsub = ok(d, "pbs_rsub", "-D", "02:00:00", "-l", "select=2", "-N", "maint")
        assert rsub == "R1.tiny CONFIRMED\n"
        table = ok(d, "pbs_rstat").splitlines()
        assert table[0].startswith("Resv ID    Queue    User     State")
        assert re.match(r"R1\.tiny    R1       \S+ +RN +Today \d\d:\d\d / 7200 / ", table[2])
        assert ok(d, "pbs_rstat", "-B") == "Resv ID: R1.tiny\n"
        full = ok(d, "pbs_rstat", "-f", "R1")
        assert "reserve_state = RESV_RUNNING\n" in full and "queue = R1\n" in full
        assert "resv_nodes = (node001:ncpus=1)+(node002:ncpus=1)\n" in full

        assert ok(d, "qsub", "-q", "R1", "-l", "nodes=2", stdin="x") == "1.tiny\n"
        assert "    exec_host = node001/0+node002/0\n" in ok(d, "qstat", "-f", "1.tiny")
        too_wide = run(d, "qsub", "-q", "R1", "-l", "nodes=3", stdin="x")
        assert too_wide.returncode == 1 and "resources_max.nodect = 2" in too_wide.stderr

        ok(d, "qmgr", "-c", "create queue big")
        ok(d, "qmgr", "-c", "set queue big enabled = True, started = true, "
                          "resources_max.walltime = 04:00:00")  # fmt: skip
        exists = run(d, "qmgr", "-c", "create queue big")
        assert exists.stderr == (
            "qmgr obj=big svr=default: Queue already exists: big\n"
            "qmgr: Error (15025) returned from server\n"
        )
        unknown = run(d, "qmgr", "-c", "delete queue nosuch")
        assert unknown.stderr == (
            "qmgr obj=nosuch svr=default: Unknown queue nosuch\n"
            "qmgr: Error (15018) returned from server\n"
        )
        ok(d, "qsub", "-q", "big", "-l", "nodes=1", stdin="x")
        busy = run(d, "qmgr", "-c", "delete queue big")
        assert busy.returncode == 1 and "Cannot delete busy object" in busy.stderr
        ok(d, "qmgr", "-c", "delete queue short")
    finally:
        d.stop()
    with Daemon(tmp_path, "--speed", "1", config=str(site)) as d:
        printed = ok(d, "qmgr", "-c", "print queue big")
        assert printed.splitlines()[:4] == ["#", "# Create and define queue big", "#",
                                            "create queue big"]  # fmt: skip
        assert "set queue big resources_max.walltime = 04:00:00\n" in printed
        assert "set queue big enabled = True\n" in printed
        names = [line.split()[0] for line in ok(d, "qstat", "-Q").splitlines()[2:]]
        assert names == ["workq", "big", "R1"]
        assert "R1" not in ok(d, "qmgr", "-c", "print server")
        assert ok(d, "qselect", "-q", "R1") == "1.tiny\n"
        trace = ok(d, "tracejob", "1.tiny")
        assert "Job Queued at request of" in trace and "queue = R1" in trace
        ok(d, "pbs_rdel", "R1.tiny")
        assert ok(d, "pbs_rstat") == ""
        ended = json.loads(ok(d, "qstat", "-x", "-f", "-F", "json", "1.tiny"))["Jobs"]["1.tiny"]
        assert ended["job_state"] == "F" and "Exit_status" not in ended  # emulated: none
        assert ended["comment"] == (
            "Job killed: its reservation ended (no process ran: the job was emulated)"
        )
        gone = run(d, "pbs_rdel", "R1.tiny")
        assert gone.returncode == 1 and "R1.tiny" in gone.stderr
        assert run(d, "pbs_rdel", "nonsense").stderr == (
            "pbs_rdel: illegally formed reservation identifier: nonsense\n"
        )
