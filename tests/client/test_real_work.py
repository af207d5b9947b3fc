"""dask-jobqueue and Parsl get real work done through batchd on this host.

A daemon on conf/workstation.toml (one node of this host's cores, shared, executor
"local"): dask-jobqueue's PBSCluster scales to two workers, which run as jobs
and connect to the test's scheduler, and a task's result comes back; Parsl's
HighThroughputExecutor starts a block through PBSProProvider and a Python app's result
comes back. Success is the work done; afterwards no worker is left.

Jobs of root (CI runs as root) run under /bin/sh (local_daemon.ROOT_SHELL): a test
host's root login bash may run pyenv, which stalls concurrent login shells.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from local_daemon import ROOT_SHELL, LocalDaemon, daemon_dir, wait_until
from paths import ROOT as ROOT_DIR

dask_jobqueue = pytest.importorskip("dask_jobqueue", reason="dask-jobqueue: pip install '.[test]'")
pytest.importorskip("parsl", reason="parsl: pip install '.[test]'")
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
    """The daemon on the workstation site, with qsub, qstat and qdel first on PATH and its
    socket set, as the libraries run them; the test works in the daemon's work directory."""
    folder = daemon_dir()
    with LocalDaemon(folder, workstation(folder)) as d:
        monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        monkeypatch.setenv("BATCHD_SOCKET", str(d.socket))
        monkeypatch.delenv("BATCHD_URL", raising=False)
        monkeypatch.chdir(d.work)
        yield d


def shell_directive() -> list[str]:
    return [f"-S {ROOT_SHELL}"] if ROOT else []


def workers_of(address: str) -> str:
    done = subprocess.run(
        ["pgrep", "-f", f"distributed.cli.dask_worker {address}"], capture_output=True, text=True
    )
    return done.stdout.strip()


def test_dask_jobqueue_gets_a_result_from_two_workers(daemon: LocalDaemon) -> None:
    from dask.distributed import Client

    with dask_jobqueue.PBSCluster(
        cores=1,
        memory="1GB",
        processes=1,
        walltime="00:05:00",
        scheduler_options={"dashboard_address": ":0"},
        job_extra_directives=shell_directive(),
    ) as cluster:
        address = cluster.scheduler_address
        with Client(cluster) as client:
            cluster.scale(2)
            client.wait_for_workers(2, timeout=120)
            assert client.submit(lambda: 1 + 1).result(timeout=60) == 2
            hosts = {w["host"] for w in client.scheduler_info()["workers"].values()}
            assert len(client.scheduler_info()["workers"]) == 2 and hosts
            jobs = [job.job_id for job in cluster.workers.values()]
            assert len(jobs) == 2
            for job in jobs:
                attrs = daemon.job(job)
                assert attrs["job_state"] == "R" and attrs["Job_Name"] == "dask-worker"
    # cluster.close() deleted both jobs (qdel): they end, and no worker process is left.
    for job in jobs:
        assert daemon.wait(job, timeout=30)["job_state"] == "F"
    wait_until(lambda: workers_of(address), lambda left: left == "", 30)


def test_parsl_gets_an_apps_result(daemon: LocalDaemon, tmp_path: Path) -> None:
    import parsl
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.providers import PBSProProvider

    provider = PBSProProvider(
        nodes_per_block=1,
        cpus_per_node=1,
        init_blocks=1,
        max_blocks=1,
        walltime="00:05:00",
        # The worker pool's command is on the venv's PATH, and the app's module (this
        # test's) on PYTHONPATH: as a site activates its environment in worker_init.
        worker_init=f"export PATH={BIN}:$PATH PYTHONPATH={HERE}:{HERE.parent}",
        scheduler_options="\n".join(f"#PBS {d}" for d in shell_directive()),
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
