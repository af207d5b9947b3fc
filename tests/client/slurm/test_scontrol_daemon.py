"""scontrol against a real ``batchd serve``: show, hold, release, requeue, update, ping,
the calls Snakemake's Slurm plugin makes, and the refusals in Slurm's words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from daemon_proc import Daemon
from slurm_commands_query import TINY_SITE, ok, run
from slurm_commands_query import submit as submit_job

SITE = TINY_SITE


def submit(d: Daemon, **body: object) -> int:
    return int(submit_job(d, **body)["seq"])


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """Speed 1: 1 runs on three nodes, 2 waits for four nodes, 3 runs on the last
    node; jobs submitted later wait."""
    tmp = tmp_path_factory.mktemp("scontrol")
    conf = tmp / "tiny.toml"
    conf.write_text(SITE)
    with Daemon(tmp, "--speed", "1", config=str(conf)) as d:
        submit(d, name="big", nodes=3, walltime=7200)
        submit(d, name="wide", nodes=4, walltime=600)
        submit(d, name="rq", nodes=1, walltime=600)
        yield d


def pairs(text: str) -> dict[str, str]:
    return dict(word.split("=", 1) for word in text.split() if "=" in word)


def test_show_job_by_id_and_all(daemon: Daemon) -> None:
    one = ok(daemon, "scontrol", "show", "job", "1")
    assert one.startswith("JobId=1 JobName=big\n   UserId=root(0) GroupId=root(0) MCS_label=N/A\n")
    assert one.endswith("\n   \n\n")
    got = pairs(one)
    assert got["JobState"] == "RUNNING" and got["NodeList"] == "node[001-003]"
    assert got["TimeLimit"] == "02:00:00" and got["Partition"] == "workq"
    every = ok(daemon, "scontrol", "show", "jobs")
    assert [line.split()[0] for line in every.splitlines() if line.startswith("JobId=")][:2] == [
        "JobId=1",
        "JobId=2",
    ]
    line = ok(daemon, "scontrol", "-o", "show", "job", "2")
    assert line.count("\n") == 1 and pairs(line)["JobState"] == "PENDING"


def test_unknown_ids_and_entities_are_refused(daemon: Daemon) -> None:
    out = run(daemon, "scontrol", "show", "job", "99")
    assert (out.returncode, out.stdout) == (1, "")
    assert out.stderr == "scontrol: error: slurm_load_jobs error: Invalid job id specified\n"
    out = run(daemon, "scontrol", "show", "reservation")
    assert out.returncode == 1
    assert out.stderr == "scontrol: error: invalid entity:reservation for keyword:show\n"
    out = run(daemon, "scontrol", "show", "node", "node009")
    assert out.stderr == "scontrol: error: Node node009 not found\n"
    out = run(daemon, "scontrol", "reboot", "node001")
    assert out.stderr == "scontrol: error: invalid keyword: reboot\n"


def test_snakemakes_partition_and_config_reading(daemon: Daemon) -> None:
    partitions = pytest.importorskip("snakemake_executor_plugin_slurm.partitions")
    parsed = partitions.parse_scontrol_partition_output(ok(daemon, "scontrol", "show", "partition"))
    assert set(parsed) == {"workq", "short"}
    assert parsed["short"]["MaxTime"] == "00:30:00" and parsed["workq"]["TotalNodes"] == "4"
    limits = partitions.extract_partition_limits(parsed["short"])
    assert limits["max_runtime"] == "00:30:00" and limits["max_threads"] == 1
    config = ok(daemon, "scontrol", "show", "config")
    line = next(x for x in config.splitlines() if x.strip().startswith("MinJobAge"))
    assert line == "MinJobAge               = 300 sec"
    assert "ClusterName             = tiny" in config.splitlines()


def test_hold_release_and_update_a_pending_job(daemon: Daemon) -> None:
    seq = submit(daemon, name="later", nodes=1, walltime=600)
    assert ok(daemon, "scontrol", "hold", str(seq)) == ""
    assert pairs(ok(daemon, "scontrol", "show", "job", str(seq)))["Reason"] == "JobHeldUser"
    assert daemon.call("GET", f"/jobs/{seq}")[1]["hold_types"] == "u"
    ok(daemon, "scontrol", "update", f"JobId={seq}", "TimeLimit=20", "JobName=renamed",
       "Partition=short")  # fmt: skip
    view = daemon.call("GET", f"/jobs/{seq}")[1]
    assert (view["walltime"], view["name"], view["queue"]) == (1200, "renamed", "short")
    assert ok(daemon, "scontrol", "release", str(seq)) == ""
    assert daemon.call("GET", f"/jobs/{seq}")[1]["hold_types"] == ""


def test_update_refusals_change_nothing(daemon: Daemon) -> None:
    seq = submit(daemon, name="keep", nodes=1, walltime=600)
    out = run(daemon, "scontrol", "update", f"JobId={seq}", "TimeLimit=5", "StartTime=now")
    assert out.returncode == 1
    assert (
        out.stderr == "scontrol: error: Update of this parameter is not supported: StartTime=now\n"
    )
    out = run(daemon, "scontrol", "update", f"JobId={seq}", "TimeLimit=1:00:00", "Partition=short")
    assert out.returncode == 1 and "short" in out.stderr
    view = daemon.call("GET", f"/jobs/{seq}")[1]
    assert (view["walltime"], view["queue"]) == (600, "workq")
    out = run(daemon, "scontrol", "update", "JobId=1", "TimeLimit=5")
    assert out.stderr == "scontrol: error: Job is no longer pending execution for job 1\n"
    out = run(daemon, "scontrol", "hold", "1", "77")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "scontrol: error: Job is no longer pending execution for job 1",
        "scontrol: error: Invalid job id specified for job 77",
    ]


def test_requeue_puts_a_running_job_back(daemon: Daemon) -> None:
    seq = 3
    assert daemon.call("GET", f"/jobs/{seq}")[1]["state"] == "R"
    assert ok(daemon, "scontrol", "requeue", str(seq)) == ""
    assert pairs(ok(daemon, "scontrol", "show", "job", str(seq)))["JobState"] in (
        "PENDING",
        "RUNNING",
    )
    pending = run(daemon, "scontrol", "requeue", "2")
    assert pending.stderr == "scontrol: error: Job is pending execution for job 2\n"


def test_ping(daemon: Daemon) -> None:
    assert ok(daemon, "scontrol", "ping") == "Slurmctld(primary) at tiny is UP\n"
