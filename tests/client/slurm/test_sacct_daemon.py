"""sacct against a real daemon: emulated jobs on an accelerated clock, a script that runs
for real (its batch step), and the exact calls of submitit and Snakemake's Slurm plugin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon_proc import ROOT, Daemon

START = "2026-11-19T10:00:00"


def sacct(d: Daemon, *argv: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, BATCHD_SOCKET=str(d.socket), TZ="UTC")
    env.pop("BATCHD_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "batchclient.slurm.sacct", *argv],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=60,
    )  # fmt: skip


def ok(d: Daemon, *argv: str) -> str:
    out = sacct(d, *argv)
    assert out.returncode == 0, (argv, out.stderr)
    return out.stdout


def submit(d: Daemon, **body: Any) -> str:
    status, job = d.call("POST", "/jobs", dict({"script": "true\n", "walltime": 600}, **body))
    assert status == 201, job
    return str(job["id"])


def wait_finished(d: Daemon, job_id: str, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, job = d.call("GET", f"/jobs/{job_id}")
        assert status == 200, job
        if job["state"] in ("F", "X"):
            return dict(job)
        time.sleep(0.1)
    raise AssertionError(f"{job_id} did not finish within {timeout} s")


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """Jobs 1 (done, 2 nodes), 2 (timed out), 3 (cancelled while queued), 4 (running)."""
    tmp = tmp_path_factory.mktemp("sacct")
    with Daemon(tmp, "--speed", "200", "--start", START, env={"TZ": "UTC"}) as d:
        runtime = {"variables": {"BATCHD_RUNTIME": "60"}}
        done = submit(d, name="snk-run-1", nodes=2, **runtime)
        late = submit(d, name="late", walltime=60, variables={"BATCHD_RUNTIME": "6000"})
        gone = submit(d, name="gone", hold=True)
        assert d.call("DELETE", f"/jobs/{gone}")[0] == 200
        submit(d, name="long", walltime=86400, variables={"BATCHD_RUNTIME": "80000"})
        wait_finished(d, done)
        wait_finished(d, late)
        yield d


def test_default_table(emulated: Daemon) -> None:
    lines = ok(emulated).splitlines()
    assert lines[0] == (
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode "
    )
    assert (
        lines[1] == "------------ ---------- ---------- ---------- ---------- ---------- -------- "
    )
    assert [ln.split() for ln in lines[2:]] == [
        ["1", "snk-run-1", "workq", "2", "COMPLETED", "0:0"],
        ["2", "late", "workq", "1", "TIMEOUT", "0:0"],
        ["3", "gone", "workq", "0", "CANCELLED", "0:0"],
        ["4", "long", "workq", "1", "RUNNING", "0:0"],
    ]


def test_submitits_call(emulated: Daemon) -> None:
    # submitit: sacct -o JobID,State,NodeList --parsable2 -j ID[,ID...]
    out = ok(emulated, "-o", "JobID,State,NodeList", "--parsable2", "-j", "1,2,4")
    assert out.splitlines() == [
        "JobID|State|NodeList",
        "1|COMPLETED|node[001-002]",
        "2|TIMEOUT|node003",
        "4|RUNNING|node004",
    ]


def test_snakemakes_call(emulated: Daemon) -> None:
    # snakemake-executor-plugin-slurm: the run's jobs by name, since the run began
    out = ok(emulated, "-X", "--parsable2", "--noheader", "--format=JobIdRaw,State",
             "--starttime", "2026-11-19T09:00", "--endtime", "now", "--name", "snk-run-1")  # fmt: skip
    assert out == "1|COMPLETED\n"
    before = ok(emulated, "-X", "-P", "-n", "--format=JobIdRaw,State", "--starttime",
                "2026-11-18T09:00", "--endtime", "2026-11-18T10:00", "--name", "snk-run-1")  # fmt: skip
    assert before == ""


def test_options_select(emulated: Daemon) -> None:
    assert ok(emulated, "-n", "-P", "-o", "jobid", "-s", "CA,TO") == "2\n3\n"
    assert ok(emulated, "-n", "-p", "-o", "jobid,user", "-u", "root", "-j", "4") == "4|root|\n"
    assert ok(emulated, "-n", "-P", "-o", "jobid", "-r", "nosuch") == ""
    assert ok(emulated, "-b", "-n", "-P", "-j", "1") == "1|COMPLETED|0:0\n"
    doc = json.loads(ok(emulated, "--json", "-j", "2"))
    assert [j["state"]["current"] for j in doc["jobs"]] == [["TIMEOUT"]]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["-o", "JobID,NoSuchField"], 'sacct: error: Invalid field requested: "NoSuchField"'),
        (["-j", "1,x"], "sacct: error: Invalid job id: x"),
        (["-s", "nope"], "sacct: error: Invalid job state specified: nope"),
        (["-S", "garbage"], "sacct: error: Invalid time specification: garbage"),
        (["-M", "elsewhere"], "sacct: error: Problem talking to database: cluster elsewhere"),
        (["--qos", "normal"], "sacct: error: batchd keeps no QOS"),
        (["--bogus"], "sacct: error: unrecognized option '--bogus'"),
    ],
)
def test_refusals(emulated: Daemon, argv: list[str], words: str) -> None:
    out = sacct(emulated, *argv)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(words), out.stderr


def workstation(tmp: Path) -> Path:
    """conf/workstation.toml; under a root test run, root's jobs allowed."""
    text = (ROOT / "conf" / "workstation.toml").read_text()
    if os.geteuid() == 0:
        text = text.replace("[server]\n", '[server]\nacl_roots = ["root"]\n', 1)
    path = tmp / "workstation.toml"
    path.write_text(text)
    return path


def test_a_script_that_ran_has_its_batch_step(tmp_path: Path) -> None:
    with Daemon(tmp_path, config=str(workstation(tmp_path))) as d:
        job_id = submit(d, name="real", script="#!/bin/sh\nexit 3\n", walltime=60)
        wait_finished(d, job_id)
        seq = job_id.split(".")[0]
        out = ok(d, "-j", seq, "-P", "-o", "JobID,JobName,State,ExitCode")
        assert out.splitlines() == [
            "JobID|JobName|State|ExitCode",
            f"{seq}|real|FAILED|3:0",
            f"{seq}.batch|batch|FAILED|3:0",
        ]
        assert ok(d, "-X", "-j", seq, "-n", "-P", "-o", "JobID") == f"{seq}\n"
        assert ok(d, "-j", f"{seq}.batch", "-n", "-P", "-o", "JobID") == f"{seq}.batch\n"
