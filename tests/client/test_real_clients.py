"""Real PBS clients against a running daemon: the job scripts dask-jobqueue's PBSCluster
and Parsl's PBSProProvider write, submitted unchanged through batchd's qsub, their job
ids found by the libraries' own parsing, and Parsl polling (qstat -f -F json) and
cancelling (qdel) as the emulated jobs queue, run and finish.

The libraries only submit: batchd emulates jobs and runs no script, so no dask worker
or Parsl worker ever connects.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon_proc import ROOT, Daemon

dask_jobqueue = pytest.importorskip("dask_jobqueue", reason="dask-jobqueue: pip install '.[test]'")
pytest.importorskip("parsl", reason="parsl: pip install '.[test]'")

from parsl.jobs.states import JobState  # noqa: E402
from parsl.launchers import SimpleLauncher  # noqa: E402
from parsl.providers import PBSProProvider  # noqa: E402

BIN = Path(sys.executable).parent
SPEED = 60  # one wall second is a minute: a 3-minute walltime runs 3 seconds

SITE = """
[[machine]]
name = "tiny"
nodes = 2
cores_per_node = 4
mem_per_node = "8gb"

[server]
policy = "fcfs-easy"

[[queue]]
name = "workq"
default_walltime = "00:10:00"
"""


@pytest.fixture
def daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daemon]:
    """A daemon at 60x, with qsub, qstat and qdel first on PATH and its socket set, as
    the libraries run them (through a shell or asyncio subprocesses)."""
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("BATCHD_URL", raising=False)
    with Daemon(tmp_path, "--speed", str(SPEED), config=str(conf)) as d:
        monkeypatch.setenv("BATCHD_SOCKET", str(d.socket))
        yield d


def qsub(*argv: str, stdin: str = "true\n") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["qsub", *argv], input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=30
    )


def qstat_f(job_id: str) -> dict[str, str]:
    out = subprocess.run(
        ["qstat", "-x", "-f", job_id], capture_output=True, text=True, timeout=30, check=True
    )
    attrs: dict[str, str] = {}
    key = ""
    for line in out.stdout.splitlines()[1:]:
        if line.startswith("\t"):  # qstat -f breaks long values near column 78
            attrs[key] += line[1:]
        elif line.strip():
            key, _, value = line.strip().partition(" = ")
            attrs[key] = value
    return attrs


def wait_for(what: Callable[[], Any], want: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def test_dask_jobqueue_scripts_submit_unchanged(daemon: Daemon, tmp_path: Path) -> None:
    with dask_jobqueue.PBSCluster(
        cores=2,
        memory="3GB",
        processes=1,
        walltime="00:05:00",
        scheduler_options={"dashboard_address": ":0"},
    ) as cluster:
        script = cluster.job_script()
        job = cluster._dummy_job  # the job object whose script and parsing the cluster uses
        asked = re.search(r"^#PBS -l select=1:ncpus=2:mem=(\d+)MB$", script, re.MULTILINE)
        assert asked is not None, script
        mem = f"{asked.group(1)}mb"  # PBS's units are powers of 1024, case-insensitive
        path = tmp_path / "dask-worker.sh"
        path.write_text(script)
        done = qsub(str(path))
        assert done.returncode == 0, done.stderr
        job_id = job._job_id_from_submit_output(done.stdout)
        assert re.fullmatch(r"\d+", job_id) and done.stdout == f"{job_id}.tiny\n"
        attrs = qstat_f(job_id)
        assert attrs["Job_Name"] == "dask-worker"
        assert attrs["Resource_List.select"] == f"1:ncpus=2:mem={mem}"
        assert (attrs["Resource_List.ncpus"], attrs["Resource_List.mem"]) == ("2", mem)
        assert attrs["Resource_List.walltime"] == "00:05:00"
        # A worker job of the cluster's own: submitted with qsub and cancelled with qdel
        # by dask-jobqueue itself.
        worker = cluster.job_cls(
            scheduler=cluster.scheduler_address, name="w0", **cluster._job_kwargs
        )
        asyncio.run(worker.start())
        assert qstat_f(worker.job_id)["job_state"] in ("Q", "R")
        asyncio.run(worker.close())
        assert wait_for(lambda: qstat_f(worker.job_id)["job_state"], "F") == "F"


def test_parsl_pbspro_provider_submits_polls_and_cancels(daemon: Daemon, tmp_path: Path) -> None:
    provider = PBSProProvider(
        nodes_per_block=2,
        cpus_per_node=4,
        select_options="mem=2gb",
        walltime="00:03:00",
        launcher=SimpleLauncher(),
    )
    provider.script_dir = str(tmp_path)
    # A job of our own holds both nodes for 3 emulated minutes: Parsl's block waits.
    blocker = qsub("-l", "select=2:ncpus=1,walltime=00:03:00", "-N", "blocker")
    assert blocker.returncode == 0, blocker.stderr

    block = provider.submit("process_worker_pool.py --dummy", tasks_per_node=1)
    assert re.fullmatch(r"\d+\.tiny", block)  # the id Parsl parsed from qsub's output
    script = next(p for p in tmp_path.iterdir() if p.name.startswith("parsl."))
    assert "#PBS -l select=2:ncpus=4:mem=2gb" in script.read_text()
    attrs = qstat_f(block)
    assert attrs["Resource_List.select"] == "2:ncpus=4:mem=2gb"
    assert attrs["Resource_List.nodect"] == "2" and attrs["Resource_List.mem"] == "4gb"

    def state() -> JobState:
        return provider.status([block])[0].state

    assert state() == JobState.PENDING
    assert wait_for(state, JobState.RUNNING) == JobState.RUNNING
    running = qstat_f(block)
    assert (
        running["exec_vnode"] == "(node001:ncpus=4:mem=2097152kb)+(node002:ncpus=4:mem=2097152kb)"
    )
    assert running["exec_host"] == "node001/0*4+node002/0*4"
    # Killed at its walltime, it finishes (F), which Parsl counts as completed.
    assert wait_for(state, JobState.COMPLETED) == JobState.COMPLETED
    assert qstat_f(block)["job_state"] == "F"

    later = provider.submit("process_worker_pool.py --dummy", tasks_per_node=1)
    assert state_of(provider, later) in (JobState.PENDING, JobState.RUNNING)
    assert provider.cancel([later]) == [True]
    assert wait_for(lambda: qstat_f(later)["job_state"], "F") == "F"
    assert state_of(provider, later) == JobState.COMPLETED


def state_of(provider: PBSProProvider, job_id: str) -> JobState:
    status = provider.status([job_id])[0]
    state: JobState = status.state
    return state
