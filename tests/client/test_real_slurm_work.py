"""dask-jobqueue, Parsl and submitit get real work done through batchd's Slurm commands.

A daemon on conf/workstation.toml (one node of this host's cores, shared, executor
"local"), with sbatch, squeue, sacct and scancel first on PATH as the libraries run
them: dask-jobqueue's SLURMCluster scales to two workers that connect and compute;
Parsl's SlurmProvider (which polls with sacct) starts a block whose worker runs an app;
submitit's AutoExecutor(cluster="slurm") runs a function and returns its result through
its own pickles, polling sacct; Snakemake's Slurm executor runs a two-rule workflow, each
rule a job. Success is the work done.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_daemon import LocalDaemon, daemon_dir, wait_until
from paths import ROOT as ROOT_DIR

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfds")

BIN = Path(sys.executable).parent
HERE = Path(__file__).resolve().parent
ROOT = os.geteuid() == 0


def workstation(folder: Path) -> Path:
    """conf/workstation.toml as shipped; under a root test run, root's jobs allowed."""
    text = (ROOT_DIR / "conf" / "workstation.toml").read_text()
    if ROOT:
        text = text.replace("[server]\n", '[server]\nacl_roots = ["root"]\n', 1)
    path = folder / "workstation.toml"
    path.write_text(text)
    return path


@pytest.fixture
def daemon(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalDaemon]:
    folder = daemon_dir()
    with LocalDaemon(folder, workstation(folder)) as d:
        monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("BATCHD_SOCKET", str(d.socket))
        monkeypatch.delenv("BATCHD_URL", raising=False)
        for name in [n for n in os.environ if n.startswith("SLURM_")]:
            monkeypatch.delenv(name)
        monkeypatch.chdir(d.work)
        yield d


def test_dask_jobqueue_slurm_cluster_computes(daemon: LocalDaemon) -> None:
    dask_jobqueue = pytest.importorskip("dask_jobqueue", reason="pip install '.[test]'")
    from dask.distributed import Client

    with (
        dask_jobqueue.SLURMCluster(
            cores=1,
            memory="1GB",
            processes=1,
            walltime="00:05:00",
            scheduler_options={"dashboard_address": ":0"},
        ) as cluster,
        Client(cluster) as client,
    ):
        cluster.scale(2)
        client.wait_for_workers(2, timeout=120)
        assert client.submit(lambda: 6 * 7).result(timeout=60) == 42
        jobs = [job.job_id for job in cluster.workers.values()]
        assert len(jobs) == 2 and all(j.isdigit() for j in jobs)
        for job in jobs:
            assert daemon.job(job)["job_state"] == "R"
    for job in jobs:  # scancel ended them
        assert daemon.wait(job, timeout=30)["job_state"] == "F"


def test_parsl_slurm_provider_runs_an_app(daemon: LocalDaemon, tmp_path: Path) -> None:
    pytest.importorskip("parsl", reason="pip install '.[test]'")
    import parsl
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.providers import SlurmProvider

    provider = SlurmProvider(
        nodes_per_block=1,
        init_blocks=1,
        max_blocks=1,
        walltime="00:05:00",
        exclusive=False,
        worker_init=f"export PATH={BIN}:$PATH PYTHONPATH={HERE}:{HERE.parent}",
    )
    config = Config(
        executors=[
            HighThroughputExecutor(
                label="batchd", address="127.0.0.1", provider=provider, max_workers_per_node=1
            )
        ],
        run_dir=str(tmp_path / "runinfo"),
        strategy="none",
    )

    @parsl.python_app
    def add(a: int, b: int) -> int:
        return a + b

    began = time.monotonic()
    with parsl.load(config):
        assert add(40, 2).result(timeout=180) == 42
        blocks = list(provider.resources)
        assert blocks and daemon.job(blocks[0])["job_state"] == "R"
    assert time.monotonic() - began < 180
    for block in blocks:
        assert daemon.wait(block, timeout=30)["job_state"] == "F"


def test_submitit_returns_a_functions_result(daemon: LocalDaemon, tmp_path: Path) -> None:
    submitit = pytest.importorskip("submitit", reason="pip install '.[test]'")
    executor = submitit.AutoExecutor(folder=tmp_path / "submitit", cluster="slurm")
    executor.update_parameters(
        timeout_min=5, slurm_partition="workq", cpus_per_task=1, mem_gb=1, nodes=1
    )
    job = executor.submit(pow, 12, 2)  # a builtin: the job's Python imports no test module
    assert job.job_id.isdigit()
    assert job.result() == 144
    # The result is written before the job ends; submitit's sacct then says COMPLETED.
    wait_until(lambda: daemon.job(job.job_id)["job_state"], lambda s: s == "F", 30)
    assert wait_until(lambda: job.state, lambda s: s != "RUNNING", 60) == "COMPLETED"


SNAKEFILE = """
rule all:
    input: "b.txt"

rule a:
    output: "a.txt"
    shell: "echo hello > {output}"

rule b:
    input: "a.txt"
    output: "b.txt"
    shell: "tr a-z A-Z < {input} > {output}"
"""


def test_snakemake_slurm_executor_runs_a_two_rule_workflow(daemon: LocalDaemon) -> None:
    """snakemake-executor-plugin-slurm: each rule a job from sbatch (its own Snakemake
    run through srun inside), polled with sacct; the second rule reads the first's file."""
    pytest.importorskip("snakemake", reason="pip install '.[test]'")
    pytest.importorskip("snakemake_executor_plugin_slurm", reason="pip install '.[test]'")
    work = daemon.work / "workflow"
    work.mkdir()
    (work / "Snakefile").write_text(SNAKEFILE)
    done = subprocess.run(
        [str(BIN / "snakemake"), "--executor", "slurm", "--jobs", "2", "--latency-wait", "10",
         "--default-resources", "slurm_partition=workq", "runtime=5", "mem_mb=1000",
         "--slurm-init-seconds-before-status-checks", "1"],
        cwd=work, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert (work / "b.txt").read_text() == "HELLO\n"
    ran = subprocess.run(
        [str(BIN / "sacct"), "-X", "-n", "-P", "-o", "JobName,State"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    states = [line.split("|")[1] for line in ran.stdout.splitlines()]
    assert states == ["COMPLETED", "COMPLETED"], ran.stdout
