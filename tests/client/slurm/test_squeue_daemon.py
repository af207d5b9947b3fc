"""squeue against a real ``batchd serve``: what a user and the workflow tools (Nextflow,
Parsl) type and read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from daemon_proc import Daemon
from slurm_commands_query import TINY_SITE, ok, run
from slurm_commands_query import submit as submit_job

SITE = TINY_SITE


def submit(d: Daemon, **body: object) -> str:
    return str(submit_job(d, **body)["id"])


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """Speed 1: nothing ends on its own. 1 runs on three nodes, 2 waits for two nodes,
    array 3 runs its task 1 on the last node and waits with 2-5, 4 is held, 5 (queue
    short) was cancelled."""
    tmp = tmp_path_factory.mktemp("squeue")
    conf = tmp / "tiny.toml"
    conf.write_text(SITE)
    with Daemon(tmp, "--speed", "1", config=str(conf)) as d:
        submit(d, name="big", nodes=3, walltime=7200)
        submit(d, name="wide", nodes=2, walltime=600)
        submit(d, name="arr", nodes=1, walltime=600, array_indices="1-5")
        submit(d, name="held", nodes=1, walltime=60, hold=True)
        gone = submit(d, name="gone", nodes=1, walltime=60, queue="short")
        assert d.call("DELETE", f"/jobs/{gone}")[0] == 200
        yield d


def table(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines()]


def test_the_default_listing(daemon: Daemon) -> None:
    out = table(ok(daemon, "squeue"))
    assert out[0] == ["JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES",
                      "NODELIST(REASON)"]  # fmt: skip
    ids_states = [(row[0], row[4], row[7]) for row in out[1:]]
    # Pending before running within the partition; the array's waiting tasks on one line.
    assert ids_states == [
        ("2", "PD", ids_states[0][2]),
        ("3_[2-5]", "PD", ids_states[1][2]),
        ("4", "PD", "(JobHeldUser)"),
        ("1", "R", "node[001-003]"),
        ("3_1", "R", "node004"),
    ]
    assert ids_states[0][2] in ("(Priority)", "(Resources)")


def test_one_line_per_task_and_no_header(daemon: Daemon) -> None:
    ids = [row[0] for row in table(ok(daemon, "squeue", "-r", "-h"))]
    assert ids == ["2", "3_2", "3_3", "3_4", "3_5", "4", "1", "3_1"]


def test_states_filter_and_all(daemon: Daemon) -> None:
    assert [r[0] for r in table(ok(daemon, "squeue", "-h", "-t", "R"))] == ["1", "3_1"]
    every = table(ok(daemon, "squeue", "-h", "--states=all", "-o", "%i %t %P"))
    assert ["5", "CA", "short"] in every  # a cancelled job stays in view for a while
    assert ["5", "CA", "short"] not in table(ok(daemon, "squeue", "-h", "-o", "%i %t %P"))
    bad = run(daemon, "squeue", "-t", "RUNNNG")
    assert (bad.returncode, bad.stderr) == (
        1,
        "squeue: error: Invalid job state specified: RUNNNG\n",
    )


def test_jobs_users_partitions_names(daemon: Daemon) -> None:
    assert ok(daemon, "squeue", "-h", "-o", "%i", "-j", "3_4,1") == "3_4\n1\n"
    assert ok(daemon, "squeue", "-h", "-o", "%i", "--jobs=3") == "3_[2-5]\n3_1\n"
    assert ok(daemon, "squeue", "-h", "-o", "%i", "-j", "5") == "5\n"  # any state with -j
    assert ok(daemon, "squeue", "-h", "-o", "%i", "-n", "wide,held") == "2\n4\n"
    assert ok(daemon, "squeue", "-h", "-o", "%i", "-p", "short", "-t", "all") == "5\n"
    assert ok(daemon, "squeue", "-h", "-o", "%i", "-u", "root", "-t", "R") == "1\n3_1\n"
    assert ok(daemon, "squeue", "-h", "-o", "%i", "--me", "-t", "R") == "1\n3_1\n"
    assert ok(daemon, "squeue", "-h", "-o", "%i", "-w", "node004") == "3_1\n"
    missing = run(daemon, "squeue", "-j", "99")
    assert (missing.returncode, missing.stderr) == (
        1, "squeue: error: slurm_load_jobs error: Invalid job id specified\n",
    )  # fmt: skip
    nobody = run(daemon, "squeue", "-h", "-u", "no-such-user")
    assert (nobody.returncode, nobody.stdout, nobody.stderr) == (
        0, "", "squeue: error: Invalid user: no-such-user\n",
    )  # fmt: skip


def test_planned_starts(daemon: Daemon) -> None:
    out = table(ok(daemon, "squeue", "--start"))
    assert out[0] == ["JOBID", "PARTITION", "NAME", "USER", "ST", "START_TIME", "NODES",
                      "SCHEDNODES", "NODELIST(REASON)"]  # fmt: skip
    assert [r[0] for r in out[1:]] == ["3_[2-5]", "2", "4"]  # by planned start; held last
    assert out[-1][5] == "N/A"


def test_format_conflicts_are_refused(daemon: Daemon) -> None:
    both = run(daemon, "squeue", "-o", "%i", "-O", "JobID")
    assert (both.returncode, both.stderr) == (
        1, "squeue: error: -O (--Format) is incompatible with -o (--format)\n",
    )  # fmt: skip
    assert run(daemon, "squeue", "-l", "-o", "%i").returncode == 1


def test_json(daemon: Daemon) -> None:
    doc = json.loads(ok(daemon, "squeue", "--json"))
    assert doc["errors"] == [] and doc["meta"]["slurm"]["cluster"] == "tiny"
    states = {(j["job_id"], j["array_task_id"]["number"] if j["array_task_id"]["set"] else None,
               j["array_task_string"]): j["job_state"] for j in doc["jobs"]}  # fmt: skip
    assert states[(3, None, "2-5")] == ["PENDING"] and states[(3, 1, "")] == ["RUNNING"]


def test_nextflow_and_parsl_invocations(daemon: Daemon) -> None:
    # Nextflow's SlurmExecutor.queueStatusCommand, then its parse: id and compact state.
    nextflow = ok(daemon, "squeue", "--noheader", "-o", "%i %t", "-t", "all", "-p", "workq",
                  "-u", "root")  # fmt: skip
    assert nextflow.splitlines() == ["2 PD", "3_[2-5] PD", "4 PD", "1 R", "3_1 R"]
    # Parsl's SlurmProvider._status: --format='%i %t' --job 'ID,ID'.
    parsl = ok(daemon, "squeue", "--noheader", "--format=%i %t", "--job", "1,2,5")
    assert parsl.splitlines() == ["5 CA", "2 PD", "1 R"]  # by partition: short, workq


def test_format_from_the_environment(daemon: Daemon, tmp_path: Path) -> None:
    out = ok(daemon, "squeue", "-h", "-t", "R", env={"SQUEUE_FORMAT": "%i:%D"})
    assert out == "1:3\n3_1:1\n"
