"""scancel against a real ``batchd serve``: ids, array tasks, filters, signals, and
the refusals in Slurm's words."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchclient.slurm.command import SlurmError
from batchclient.slurm.scancel import signal_name
from daemon_proc import Daemon
from local_daemon import LocalDaemon, wait_until
from slurm_commands_query import TINY_SITE, ok, run, submit

SITE = TINY_SITE


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """1 runs on three nodes, 2 waits for two, array 3 runs task 1 and waits with 2-5,
    4 is held, 5 waits in queue short."""
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    with Daemon(tmp_path, "--speed", "1", config=str(conf)) as d:
        submit(d, name="big", nodes=3, walltime=7200)
        submit(d, name="wide", nodes=2, walltime=600)
        submit(d, name="arr", nodes=1, walltime=600, array_indices="1-5")
        submit(d, name="held", nodes=1, walltime=60, hold=True)
        submit(d, name="quick", nodes=1, walltime=60, queue="short")
        yield d


def states(d: Daemon) -> dict[str, str]:
    out = ok(d, "squeue", "-h", "-r", "-t", "all", "-o", "%i %t")
    return dict(line.split() for line in out.splitlines())


def test_ids_tasks_and_whole_arrays(daemon: Daemon) -> None:
    assert ok(daemon, "scancel", "1", "3_[2-3]") == ""
    after = states(daemon)
    assert (after["1"], after["3_2"], after["3_3"]) == ("CA", "CA", "CA")
    # 3_4 is left alone: waiting, or started on the nodes 1 gave back if a scheduling
    # pass ran before squeue asked (a loaded host).
    assert after["3_4"] in ("PD", "R"), after
    assert ok(daemon, "scancel", "3") == ""  # every unfinished task of the array
    after = states(daemon)
    assert {after[f"3_{i}"] for i in range(1, 6)} == {"CA"}


def test_unknown_and_ended_jobs_are_named(daemon: Daemon) -> None:
    out = run(daemon, "scancel", "99", "3_9", "2")
    assert out.returncode == 1
    assert out.stderr.splitlines() == [
        "scancel: error: Kill job error on job id 99: Invalid job id specified",
        "scancel: error: Kill job error on job id 3_9: Invalid job id specified",
    ]
    assert states(daemon)["2"] == "CA"  # the good id is still cancelled
    again = run(daemon, "scancel", "2")
    assert (again.returncode, again.stderr) == (
        1, "scancel: error: Kill job error on job id 2: Job/step already completing or completed\n",
    )  # fmt: skip
    quiet = run(daemon, "scancel", "-Q", "2")
    assert (quiet.returncode, quiet.stderr) == (1, "")


def test_filters(daemon: Daemon) -> None:
    # An id and filters: the id only if the filters select it.
    assert ok(daemon, "scancel", "-t", "R", "2") == ""
    assert states(daemon)["2"] == "PD"
    assert ok(daemon, "scancel", "-n", "held") == ""
    assert ok(daemon, "scancel", "-p", "short", "--me") == ""
    assert ok(daemon, "scancel", "-u", "root", "-t", "R", "-n", "big") == ""
    after = states(daemon)
    assert (after["4"], after["5"], after["1"], after["3_1"]) == ("CA", "CA", "CA", "R")


def test_signals(daemon: Daemon) -> None:
    pending = run(daemon, "scancel", "-s", "9", "2")
    assert (pending.returncode, pending.stderr) == (
        1, "scancel: error: Kill job error on job id 2: Job is pending execution\n",
    )  # fmt: skip
    assert states(daemon)["2"] == "PD"
    assert ok(daemon, "scancel", "-s", "USR1", "1") == ""
    assert states(daemon)["1"] == "R"  # recorded, the job goes on
    assert ok(daemon, "scancel", "--signal=KILL", "1") == ""
    assert states(daemon)["1"] == "CA"


def test_refusals_change_nothing(daemon: Daemon) -> None:
    before = states(daemon)
    for argv, says in [
        ((), "No job identification provided"),
        (("-s", "NOPE", "1"), "Unknown job signal: NOPE"),
        (("-i", "1"), "--interactive is not supported: name the jobs to cancel"),
        (("12x",), "Invalid job id: 12x"),
        (("-t", "RUNNNG", "1"), "Invalid job state specified: RUNNNG"),
        (("--bogus", "1"), "unrecognized option '--bogus'"),
    ]:
        out = run(daemon, "scancel", *argv)
        assert (out.returncode, out.stderr) == (1, f"scancel: error: {says}\n"), argv
    assert states(daemon) == before


def test_the_tools_invocations(daemon: Daemon) -> None:
    # dask-jobqueue, Parsl, submitit and Nextflow run `scancel ID [ID...]`; Snakemake's
    # executor plugin adds --clusters=all.
    assert ok(daemon, "scancel", "1", "2") == ""
    assert ok(daemon, "scancel", "4", "--clusters=all") == ""
    after = states(daemon)
    assert (after["1"], after["2"], after["4"]) == ("CA", "CA", "CA")


@pytest.mark.parametrize(("text", "name"), [("usr1", "USR1"), ("SIGTERM", "TERM"), ("9", "KILL")])
def test_signal_names(text: str, name: str) -> None:
    assert signal_name(text) == name


@pytest.mark.parametrize("bad", ["0", "32", "SIGNOPE", ""])
def test_bad_signals_are_named(bad: str) -> None:
    with pytest.raises(SlurmError, match="Unknown job signal"):
        signal_name(bad)


def test_a_signal_goes_to_the_steps_unless_b_or_f_says_otherwise(local_daemon: LocalDaemon) -> None:  # fmt: skip
    """A job from sbatch whose script and step each trap SIGUSR1 and say so: scancel -s
    reaches the step only, -b the script only, -f both."""
    d = local_daemon
    out = d.work / "said.txt"
    step = f"trap 'echo step >> {out}' USR1; while :; do sleep 0.1; done"
    script = (
        f"#!/bin/sh\ntrap 'echo script >> {out}' USR1\nsh -c \"{step}\" &\n"
        f"echo ready >> {out}\nwhile :; do sleep 0.1; done\n"
    )
    (d.work / "job.sh").write_text(script)
    job = ok(d, "sbatch", "--parsable", "-D", str(d.work), str(d.work / "job.sh")).strip()
    wait_until(lambda: out.read_text() if out.exists() else "", lambda t: "ready" in t, 30)

    def said_after(*argv: str) -> list[str]:
        before = out.read_text().splitlines()
        ok(d, "scancel", "-s", "USR1", *argv, job)
        return wait_until(
            lambda: out.read_text().splitlines()[len(before):], lambda new: new != [], 10
        )  # fmt: skip

    assert said_after() == ["step"]
    assert said_after("-b") == ["script"]
    both = said_after("-f")
    time.sleep(0.5)
    assert sorted(out.read_text().splitlines()[-2:]) == ["script", "step"], both
    ok(d, "scancel", job)
