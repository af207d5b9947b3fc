"""Sweeps on a real Dask cluster: a scheduler and two workers on loopback, in processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from batchd.sweep.driver import SweepOptions, SweepOutcome, run_sweep
from batchd.sweep.files import sha256_file
from batchd.sweep.spec import ExecutorSpec
from batchd.sweep.store import RunStore
from dask_cluster import Cluster, dask_cluster
from sweep_files import write_experiment, write_trace

pytest.importorskip("distributed")

NAMES = ("results.csv", "results.parquet", "summary.md")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with dask_cluster(tmp_path_factory.mktemp("dask")) as running:
        yield running


def on_dask(exp: Path, out: Path, address: str) -> SweepOutcome:
    return run_sweep(SweepOptions(exp, out, ExecutorSpec(dask=address)))


def files(out: Path) -> list[bytes]:
    return [(out / name).read_bytes() for name in NAMES]


def test_workers_without_the_file_get_the_bytes_and_the_results_are_local_ones(
    cluster: Cluster, small_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = run_sweep(SweepOptions(small_sweep, tmp_path / "local", ExecutorSpec(workers=1)))
    monkeypatch.chdir(small_sweep.parent)  # trace paths relative: not there for the workers
    remote = on_dask(Path("exp.toml"), tmp_path / "dask", cluster.address)
    assert (local.new, remote.new, remote.failures) == (8, 8, [])
    assert files(tmp_path / "local")[:2] == files(tmp_path / "dask")[:2]  # summary: exp path
    sent = {p.parent.name for p in cluster.workdir.glob("tmp/batchd-sweep-files/*/*.swf")}
    assert sent == {sha256_file(small_sweep.parent / n) for n in ("a.swf", "b.swf")}


def test_an_interrupted_sweep_resumes_on_the_cluster(
    cluster: Cluster, small_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    put = RunStore.put

    def put_then_stop(self: RunStore, record: dict) -> bool:
        written = put(self, record)
        if self.written == 3:
            raise KeyboardInterrupt
        return written

    monkeypatch.setattr(RunStore, "put", put_then_stop)
    with pytest.raises(KeyboardInterrupt):
        on_dask(small_sweep, tmp_path / "out", cluster.address)
    monkeypatch.setattr(RunStore, "put", put)
    first = {p: p.stat().st_mtime_ns for p in (tmp_path / "out" / "runs").glob("*.json")}
    again = on_dask(small_sweep, tmp_path / "out", cluster.address)
    assert len(first) == 3 and (again.new, again.reused) == (5, 3)
    assert all(p.stat().st_mtime_ns == t for p, t in first.items())


def test_a_changed_trace_is_known_by_its_checksum(
    cluster: Cluster, small_sweep: Path, tmp_path: Path
) -> None:
    on_dask(small_sweep, tmp_path / "out", cluster.address)
    write_trace(small_sweep.parent / "b.swf", seed=11)
    again = on_dask(small_sweep, tmp_path / "out", cluster.address)
    assert (again.new, again.reused, again.stale) == (4, 4, 4)


def test_a_killed_worker_does_not_stop_the_sweep(tmp_path: Path) -> None:
    exp = write_experiment(
        tmp_path / "exp.toml",
        'traces = "synthetic:10000"\nnodes = [64, 96]\npolicies = "fcfs-easy"\n'
        "shrink = [1.0, 0.8, 0.6, 0.5]\n",
    )
    out = tmp_path / "out"
    with dask_cluster(tmp_path / "dask") as running:
        killer = threading.Thread(target=kill_after_first_runs, args=(running, out), daemon=True)
        killer.start()
        outcome = on_dask(exp, out, running.address)
        killer.join()
        assert running.workers[0].returncode is not None  # it was killed mid-sweep
    assert (outcome.new, outcome.failures, outcome.missing) == (8, [], 0)
    assert len(list((out / "runs").glob("*.json"))) == 8
    keys = [line.rsplit(",", 3)[1] for line in (out / "results.csv").read_text().splitlines()[1:]]
    assert len(set(keys)) == 8


def kill_after_first_runs(cluster: Cluster, out: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(list((out / "runs").glob("*.json"))) >= 2:
            cluster.kill_worker(0)
            return
        time.sleep(0.02)
