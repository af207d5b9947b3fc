"""A real Dask cluster on loopback for the tests: ``dask scheduler`` and ``dask worker``
processes on free ports, each in its own process group, always torn down."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from paths import ROOT

DASK = Path(sys.executable).parent / "dask"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"dask scheduler exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"dask scheduler not listening on {port} after {timeout} s")


@dataclass
class Cluster:
    address: str
    workdir: Path  # the processes' working directory; TMPDIR is its tmp
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def kill_worker(self, i: int) -> None:
        os.killpg(self.workers[i].pid, signal.SIGKILL)
        self.workers[i].wait()


def start(args: list[str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "daemon"), str(ROOT / "client")])
    env["TMPDIR"] = str(cwd / "tmp")  # where a worker keeps the trace bytes it was sent
    (cwd / "tmp").mkdir(exist_ok=True)
    with open(log, "ab") as out:
        return subprocess.Popen(
            [str(DASK), *args], cwd=cwd, env=env, stdout=out, stderr=out, start_new_session=True
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextmanager
def dask_cluster(workdir: Path, workers: int = 2) -> Iterator[Cluster]:
    """A scheduler and ``workers`` workers (one thread, no nanny) running in ``workdir``."""
    from distributed import Client

    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "dask.log"
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    scheduler = start(
        ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], workdir, log
    )
    cluster = Cluster(address, workdir, scheduler)
    try:
        wait_for_port(port, scheduler)
        for _ in range(workers):
            cluster.workers.append(
                start(
                    ["worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                     "--host", "127.0.0.1", "--local-directory", str(workdir)],
                    workdir,
                    log,
                )
            )  # fmt: skip
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(workers, timeout=60)
        yield cluster
    finally:
        for proc in [*cluster.workers, scheduler]:
            stop(proc)
