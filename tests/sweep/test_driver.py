"""Sweeps on this machine: the same outputs serially and in a pool, resumed, in shards."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

import batchd.replay
from batchd.cli import main
from batchd.replay import ReplayOptions, ReplayResult
from batchd.sweep import SweepError
from batchd.sweep.driver import Shard, SweepOptions, run_sweep
from batchd.sweep.spec import ExecutorSpec
from batchd.sweep.store import RunStore
from sweep_files import write_trace


def sweep(exp: Path, out: Path, workers: int = 1, **kw: object) -> object:
    return run_sweep(SweepOptions(exp, out, ExecutorSpec(workers=workers), **kw))  # type: ignore[arg-type]


def outputs(out: Path) -> tuple[bytes, bytes, bytes]:
    return tuple(  # type: ignore[return-value]
        (out / name).read_bytes() for name in ("results.csv", "results.parquet", "summary.md")
    )


def test_serial_and_pool_give_the_same_files(small_sweep: Path, tmp_path: Path) -> None:
    serial = sweep(small_sweep, tmp_path / "serial")
    pooled = sweep(small_sweep, tmp_path / "pool", workers=2)
    assert (serial.new, pooled.new, serial.failures) == (8, 8, [])  # type: ignore[attr-defined]
    assert outputs(tmp_path / "serial") == outputs(tmp_path / "pool")
    rows = list(csv.DictReader((tmp_path / "serial" / "results.csv").open()))
    assert [(r["trace"], r["policy"], r["params.quality"], r["shrink"]) for r in rows[:4]] == [
        ("a.swf", "fcfs-easy", "", "1.0"),
        ("a.swf", "fcfs-easy", "", "0.7"),
        ("a.swf", "dynp", "artww", "1.0"),
        ("a.swf", "dynp", "artww", "0.7"),
    ]
    assert "wall_seconds" not in rows[0] and "dynp.tuning_seconds_max" not in rows[0]
    assert rows[0]["batchd_version"] and len(rows[0]["trace_sha256"]) == 64
    assert int(rows[0]["jobs"]) == 120


def test_an_interrupted_sweep_resumes_without_rerunning(
    small_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    put = RunStore.put

    def put_then_stop(self: RunStore, record: dict) -> bool:
        written = put(self, record)
        if self.written == 3:
            raise KeyboardInterrupt
        return written

    monkeypatch.setattr(RunStore, "put", put_then_stop)
    with pytest.raises(KeyboardInterrupt):
        sweep(small_sweep, out)
    monkeypatch.setattr(RunStore, "put", put)
    stored = {p: p.stat().st_mtime_ns for p in (out / "runs").iterdir()}
    assert len(stored) == 3 and not (out / "results.csv").exists()
    again = sweep(small_sweep, out)
    assert (again.new, again.reused) == (5, 3)  # type: ignore[attr-defined]
    assert all(p.stat().st_mtime_ns == t for p, t in stored.items())
    assert outputs(out) == outputs_of_fresh(small_sweep, tmp_path)


def outputs_of_fresh(exp: Path, tmp_path: Path) -> tuple[bytes, bytes, bytes]:
    sweep(exp, tmp_path / "fresh")
    return outputs(tmp_path / "fresh")


def test_shards_then_collect_give_the_whole_sweep(small_sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(SweepError, match=r"--collect: 8 of the 8 runs have no record"):
        sweep(small_sweep, out, collect=True)
    counts = [sweep(small_sweep, out, shard=Shard(i, 3)).runs for i in range(3)]  # type: ignore[attr-defined]
    assert counts == [3, 3, 2] and not (out / "results.csv").exists()
    collected = sweep(small_sweep, out, collect=True)
    assert (collected.new, collected.reused) == (0, 8)  # type: ignore[attr-defined]
    assert outputs(out) == outputs_of_fresh(small_sweep, tmp_path)


def test_a_changed_trace_is_run_again_and_its_old_runs_noted(
    small_sweep: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "out")
    assert main(["sweep", str(small_sweep), "--out", out, "--workers", "1"]) == 0
    write_trace(small_sweep.parent / "a.swf", seed=7)
    capsys.readouterr()
    assert main(["sweep", str(small_sweep), "--out", out, "--workers", "1"]) == 0
    captured = capsys.readouterr()
    assert "8 runs (4 new, 4 reused, 0 failed)" in captured.out
    assert "4 stored runs in" in captured.err and "belong to no run of this sweep" in captured.err


def test_bad_options_are_one_line(small_sweep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sweep", str(small_sweep), "--out", "x", "--shard", "3/3"]) == 2
    assert "--shard '3/3': expected I/N with 0 <= I < N" in capsys.readouterr().err


def test_a_failed_run_is_reported_and_left_for_the_next_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    exp = tmp_path / "e.toml"
    exp.write_text(
        '[sweep]\ntraces = "synthetic:20"\nnodes = 4\npolicies = "fcfs-easy"\nfirst = [5, 10]\n'
    )
    original = batchd.replay.run_replay

    def fail_on_ten(opts: ReplayOptions, progress: object = None) -> ReplayResult:
        if opts.first == 10:
            raise ValueError("boom")
        return original(opts)

    monkeypatch.setattr(batchd.replay, "run_replay", fail_on_ten)
    out = str(tmp_path / "o")
    assert main(["sweep", str(exp), "--out", out, "--workers", "1"]) == 1
    captured = capsys.readouterr()
    assert "run failed: synthetic:20 4 nodes fcfs-easy" in captured.err and "boom" in captured.err
    assert "2 runs (1 new, 0 reused, 1 failed)" in captured.out
    assert "## Failed runs" in (tmp_path / "o" / "summary.md").read_text()
    monkeypatch.setattr(batchd.replay, "run_replay", original)
    assert main(["sweep", str(exp), "--out", out, "--workers", "1"]) == 0
    assert "2 runs (1 new, 1 reused, 0 failed)" in capsys.readouterr().out
