"""sbatch against a real daemon: what a user types and sees, and what the daemon holds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from batchclient.slurm import hostlist
from daemon_proc import ROOT, Daemon
from local_daemon import LocalDaemon

SITE = """
[[machine]]
name = "tiny"
nodes = 4
cores_per_node = 8

[server]
policy = "fcfs-easy"

[[queue]]
name = "workq"
default_walltime = "01:00:00"
max_walltime = "02:00:00"
"""


def slurm(d: Daemon, *argv: str, stdin: str = "", cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:  # fmt: skip
    env = dict(os.environ, BATCHD_SOCKET=str(d.socket))
    env.pop("BATCHD_URL", None)
    return subprocess.run(
        [sys.executable, "-m", f"batchclient.slurm.{argv[0]}", *argv[1:]], input=stdin,
        capture_output=True, text=True, env=env, cwd=cwd, timeout=60,
    )  # fmt: skip


@pytest.fixture
def daemon(tmp_path: Path):
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        yield d


def job_count(d: Daemon) -> int:
    return len(d.call("GET", "/jobs")[1]["jobs"])


def test_submitted_jobs_show_in_qstat_and_the_api(daemon: Daemon) -> None:
    script = "#!/bin/sh\n#SBATCH -J fromline\n#SBATCH -N 2 --ntasks-per-node=3\nsleep 100\n"
    done = slurm(daemon, "sbatch", "-t", "30", stdin=script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Submitted batch job ")
    seq = done.stdout.split()[-1]
    job = daemon.call("GET", f"/jobs/{seq}")[1]
    assert (job["name"], job["walltime"]) == ("fromline", 1800)
    assert job["resource_list"]["select"] == "2:ncpus=3:mpiprocs=3"
    assert job["resource_list"]["place"] == "scatter"
    qstat = subprocess.run(
        [sys.executable, "-m", "batchclient.qstat", seq], capture_output=True, text=True,
        env=dict(os.environ, BATCHD_SOCKET=str(daemon.socket)), timeout=30,
    )  # fmt: skip
    assert "fromline" in qstat.stdout
    if "front_end" in job:
        assert job["front_end"] == "slurm" and job["slurm"]["ntasks"] == 6


def test_parsable_prints_the_id_alone(daemon: Daemon) -> None:
    done = slurm(daemon, "sbatch", "--parsable", "--wrap", "sleep 10")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().isdigit()
    assert daemon.call("GET", f"/jobs/{done.stdout.strip()}")[1]["name"] == "wrap"


def test_unlimited_time_is_the_partitions_maximum(daemon: Daemon) -> None:
    done = slurm(daemon, "sbatch", "--parsable", "-t", "UNLIMITED", "--wrap", "true")
    assert done.returncode == 0, done.stderr
    assert daemon.call("GET", f"/jobs/{done.stdout.strip()}")[1]["walltime"] == 7200


def test_a_dependency_names_the_daemons_job(daemon: Daemon) -> None:
    first = slurm(daemon, "sbatch", "--parsable", "--wrap", "sleep 50").stdout.strip()
    done = slurm(daemon, "sbatch", "--parsable", "-d", f"afterok:{first}", "--wrap", "true")
    assert done.returncode == 0, done.stderr
    job = daemon.call("GET", f"/jobs/{done.stdout.strip()}")[1]
    assert job["depend"].startswith(f"afterok:{first}")
    assert job["state"] == "H"
    unknown = slurm(daemon, "sbatch", "-d", "afterok:999", "--wrap", "true")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("sbatch: error: ") and "999" in unknown.stderr


def test_test_only_and_refusals_change_nothing(daemon: Daemon) -> None:
    before = job_count(daemon)
    done = slurm(daemon, "sbatch", "--test-only", "-N", "2", "--wrap", "true")
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    said = re.fullmatch(
        r"sbatch: Job (\d+) to start at (\S+) using 2 processors on nodes (\S+) in partition (\S+)\n",
        done.stderr,
    )  # fmt: skip
    assert said is not None, done.stderr
    number, _, nodes, partition = said.groups()
    assert partition == daemon.call("GET", "/queues")[1]["queues"][0]["name"]
    # The number the job would get: the next submission gets it.
    again = slurm(daemon, "sbatch", "--parsable", "-H", "--wrap", "true")
    assert again.stdout.strip() == number
    assert len(hostlist.expand(nodes)) == 2
    before += 1
    bad = slurm(daemon, "sbatch", "--qos=high", "--wrap", "true")
    assert (bad.returncode, bad.stderr) == (1, "sbatch: error: --qos: not supported by batchd\n")
    assert job_count(daemon) == before


def test_wait_exits_with_the_jobs_exit_code(local_daemon: LocalDaemon) -> None:
    d = local_daemon
    (d.work / "job.sh").write_text('#!/bin/sh\n#SBATCH -J waiter\necho "args $1 $2"\nexit $1\n')
    done = slurm(d, "sbatch", "--wait", "-o", str(d.work / "out.txt"), "job.sh", "3", "x y", cwd=d.work)  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert done.stdout.startswith("Submitted batch job ")
    assert (d.work / "out.txt").read_text() == "args 3 x y\n"
    ok = slurm(d, "sbatch", "-W", "--wrap", "true", cwd=d.work)
    assert ok.returncode == 0, ok.stderr
