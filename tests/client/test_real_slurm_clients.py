"""Real Slurm clients against an accelerated daemon with emulated jobs: the job scripts
dask-jobqueue's SLURMCluster, Parsl's SlurmProvider and submitit write, submitted
unchanged through batchd's sbatch, their ids found by the libraries' own parsing, and
the libraries polling (sacct) and cancelling (scancel) as the jobs queue, run and end.

Nothing runs: the machine emulates, so no worker ever connects, submitit never gets a
result and Snakemake's rules make no files; what is tested is the cycle the libraries
drive (Snakemake's: submit, poll, and scancel when interrupted).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from daemon_proc import ROOT, Daemon

BIN = Path(sys.executable).parent
SPEED = 60  # one wall second is a minute: a 3-minute time limit runs 3 seconds

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
    conf = tmp_path / "tiny.toml"
    conf.write_text(SITE)
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("BATCHD_URL", raising=False)
    for name in [n for n in os.environ if n.startswith("SLURM_")]:
        monkeypatch.delenv(name)
    with Daemon(tmp_path, "--speed", str(SPEED), config=str(conf)) as d:
        monkeypatch.setenv("BATCHD_SOCKET", str(d.socket))
        yield d


def slurm(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), input=stdin, capture_output=True, text=True, cwd=ROOT,
                          timeout=30)  # fmt: skip


def sacct_state(job_id: str) -> str:
    done = slurm("sacct", "-X", "-n", "-P", "-o", "State", "-j", job_id)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def wait_for(what: Callable[[], Any], want: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if got == want or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def test_dask_jobqueue_slurm_scripts_submit_unchanged(daemon: Daemon) -> None:
    dask_jobqueue = pytest.importorskip("dask_jobqueue", reason="pip install '.[test]'")
    with dask_jobqueue.SLURMCluster(
        cores=2, memory="3GB", processes=1, walltime="00:05:00",
        scheduler_options={"dashboard_address": ":0"},
    ) as cluster:  # fmt: skip
        worker = cluster.job_cls(
            scheduler=cluster.scheduler_address, name="w0", **cluster._job_kwargs
        )
        asyncio.run(worker.start())  # sbatch, the id parsed by dask-jobqueue
        assert re.fullmatch(r"\d+", worker.job_id)
        shown = slurm("squeue", "-h", "-j", worker.job_id, "-o", "%j %C %l %m")
        assert shown.stdout.split()[:3] == ["dask-worker", "2", "5:00"], shown
        assert sacct_state(worker.job_id) in ("PENDING", "RUNNING")
        asyncio.run(worker.close())  # scancel
        assert wait_for(lambda: sacct_state(worker.job_id), "CANCELLED") == "CANCELLED"


def test_parsl_slurm_provider_submits_polls_and_cancels(daemon: Daemon, tmp_path: Path) -> None:
    pytest.importorskip("parsl", reason="pip install '.[test]'")
    from parsl.jobs.states import JobState
    from parsl.launchers import SimpleLauncher
    from parsl.providers import SlurmProvider

    provider = SlurmProvider(
        nodes_per_block=2, walltime="00:03:00", launcher=SimpleLauncher(), exclusive=False
    )
    provider.script_dir = str(tmp_path)
    assert provider._cmd.startswith("sacct")  # 'sacct -X' answered: Parsl polls with sacct
    blocker = slurm("sbatch", "-N", "2", "-t", "3", "-J", "blocker", "--wrap", "true")
    assert blocker.returncode == 0, blocker.stderr

    block = provider.submit("process_worker_pool.py --dummy", tasks_per_node=1)
    assert re.fullmatch(r"\d+", block)

    def state() -> JobState:
        return provider.status([block])[0].state

    assert state() == JobState.PENDING
    assert wait_for(state, JobState.RUNNING) == JobState.RUNNING
    nodes = slurm("squeue", "-h", "-j", block, "-o", "%D %N").stdout.split()
    assert nodes == ["2", "node[001-002]"]
    # An emulated job runs for its time limit and completes.
    assert wait_for(state, JobState.COMPLETED) == JobState.COMPLETED

    later = provider.submit("process_worker_pool.py --dummy", tasks_per_node=1)
    assert provider.status([later])[0].state in (JobState.PENDING, JobState.RUNNING)
    assert provider.cancel([later]) == [True]
    assert wait_for(lambda: sacct_state(later), "CANCELLED") == "CANCELLED"


def test_submitit_submits_polls_and_cancels(daemon: Daemon, tmp_path: Path) -> None:
    submitit = pytest.importorskip("submitit", reason="pip install '.[test]'")
    executor = submitit.AutoExecutor(folder=tmp_path / "submitit", cluster="slurm")
    executor.update_parameters(timeout_min=10, slurm_partition="workq", nodes=2)
    first = executor.submit(sum, [1, 2])
    second = executor.submit(sum, [3, 4])  # waits for the first: both want the 2 nodes
    assert first.job_id.isdigit() and int(second.job_id) == int(first.job_id) + 1

    def state(job: Any) -> str:
        """What submitit reads from sacct now (its own polling slows down as a job ages)."""
        return str(job.get_info(mode="force").get("State"))

    assert wait_for(lambda: state(first), "RUNNING") == "RUNNING"
    assert state(second) == "PENDING"
    second.cancel()
    assert wait_for(lambda: state(second), "CANCELLED") == "CANCELLED"
    assert wait_for(lambda: state(first), "COMPLETED") == "COMPLETED"


def test_snakemake_submits_polls_and_cancels(daemon: Daemon, tmp_path: Path) -> None:
    """Snakemake's Slurm executor on the emulated machine: its rule's job queues and runs
    (sacct polled), and interrupted, Snakemake cancels it (scancel)."""
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="pip install '.[test]'")
    (tmp_path / "Snakefile").write_text(
        'rule a:\n    output: "a.txt"\n    shell: "touch {output}"\n'
    )
    flow = subprocess.Popen(
        [str(BIN / "snakemake"), "--executor", "slurm", "--jobs", "1",
         "--default-resources", "slurm_partition=workq", "runtime=600", "mem_mb=100",
         "--slurm-init-seconds-before-status-checks", "1"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=(tmp_path / "snakemake.log").open("w"),
        start_new_session=True,
    )  # fmt: skip
    try:

        def running() -> list[str]:
            shown = slurm("squeue", "-h", "-t", "R", "-o", "%i")
            return shown.stdout.split()

        jobs: list[str] = []
        deadline = time.monotonic() + 90
        while not jobs and time.monotonic() < deadline:
            time.sleep(0.5)
            jobs = running()
        assert len(jobs) == 1, slurm("squeue").stdout
        # Snakemake counts a job as its own once sbatch has answered and it has written
        # the job down; on a busy host that comes a moment after the job runs.
        time.sleep(3)
        flow.send_signal(signal.SIGINT)  # as a user's Ctrl-C
        flow.wait(timeout=60)
    finally:
        if flow.poll() is None:
            flow.kill()
    log = (tmp_path / "snakemake.log").read_text()
    assert wait_for(lambda: sacct_state(jobs[0]), "CANCELLED") == "CANCELLED", log[-2000:]
