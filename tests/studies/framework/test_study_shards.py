"""Studies in shards (batchd_studies.framework: runs, stored, files; ``--shard``, ``--collect``).

Each finished run is a record in OUT/runs at once; a pass that writes the outputs
combines the records into results.json and removes them. Shards of an array job run
their share and write no outputs; ``--collect`` writes them from the records.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from batchd.cli import main
from batchd.sweep.shard import Shard
from batchd_studies.dynp.configs import Config, config_set
from batchd_studies.dynp.runs import Task
from batchd_studies.dynp.runs import make_entry as dynp_entry
from batchd_studies.dynp.runs import results_file as dynp_results
from batchd_studies.framework import StudyError
from batchd_studies.framework.cli import Scope
from batchd_studies.framework.files import write_in_place
from batchd_studies.framework.results import ResultsFile, run_key
from batchd_studies.framework.runs import run_missing
from paths import ROOT

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
CONFIG = Config("fcfs-cons", "fcfs-cons", ())
TASK = Task("KTH_syn", "out/jobsets/KTH_syn.swf", "b9a5af4e50a11ec8", 100, 1.0, CONFIG, False, 1.0)


# --------------------------------------------------------------------------- without replays


def tasks() -> list[Task]:
    """Six runs: two shrink factors x the three single policies."""
    return [
        dataclasses.replace(TASK, shrink=shrink, config=config)
        for shrink in (1.0, 0.8)
        for config in config_set("basic")
    ]


def results(out: Path) -> ResultsFile:
    return dynp_results(out, ["KTH_syn"], ["fcfs-cons", "sjf-cons", "ljf-cons"])


def fake_replay(task: Task) -> dict[str, Any]:
    """A results entry without a replay: the summary names the task."""
    return dynp_entry(task, {"jobs": 1, "made_for": task.label()}, 0.25)


STOP_AFTER = [0]  # fake_replay_then_stop: runs before Ctrl-C; 0: never


def fake_replay_then_stop(task: Task) -> dict[str, Any]:
    if STOP_AFTER[0] == 0:
        raise KeyboardInterrupt
    STOP_AFTER[0] -= 1
    return fake_replay(task)


def run(out: Path, scope: Scope = Scope(), runs: list[Task] | None = None) -> Any:  # noqa: B008
    return run_missing(
        tasks() if runs is None else runs, fake_replay, results(out), scope=scope, workers=1,
        desc="test",
    )  # fmt: skip


def test_runs_are_stored_as_they_finish_and_a_stopped_study_resumes(tmp_path: Path) -> None:
    STOP_AFTER[0] = 3
    with pytest.raises(KeyboardInterrupt):
        run_missing(tasks(), fake_replay_then_stop, results(tmp_path), workers=1, desc="test")
    records = sorted((tmp_path / "runs").iterdir())
    assert [p.name for p in records] == sorted(f"{run_key(t.identity())}.json" for t in tasks()[:3])
    assert not (tmp_path / "results.json").exists()
    record = json.loads(records[0].read_text())
    assert set(record) == {"key", "entry"} and record["entry"]["summary"]["jobs"] == 1

    again = run(tmp_path)
    assert (again.new, again.reused, again.collected, again.missing) == (3, 3, 3, 0)
    assert [e["summary"]["made_for"] for e in again.results] == [t.label() for t in tasks()]
    # Combined into results.json, the records are gone, and the folder with them.
    assert len(json.loads((tmp_path / "results.json").read_text())) == 6
    assert not (tmp_path / "runs").exists()
    third = run(tmp_path)
    assert (third.new, third.reused, third.collected) == (0, 6, 0)


def test_shards_write_records_only_and_collect_gives_the_full_run(tmp_path: Path) -> None:
    full = run(tmp_path / "full")
    sharded = tmp_path / "sharded"
    done = [run(sharded, Scope(shard=Shard(i, 4))) for i in range(4)]
    assert [(d.new, d.reused, d.total) for d in done] == [
        (2, 0, 6),
        (2, 0, 6),
        (1, 0, 6),
        (1, 0, 6),
    ]
    assert [d.missing for d in done] == [4, 2, 1, 0]
    assert [p.name for p in sharded.iterdir()] == ["runs"]  # no results.json from a shard
    assert len(list((sharded / "runs").glob("*.json"))) == 6
    again = run(sharded, Scope(shard=Shard(1, 4)))
    assert (again.new, again.reused) == (0, 2)

    collected = run(sharded, Scope(collect=True))
    assert (collected.new, collected.reused, collected.collected) == (0, 6, 6)
    assert collected.results == full.results
    assert (sharded / "results.json").read_bytes() == (
        tmp_path / "full" / "results.json"
    ).read_bytes()
    assert not (sharded / "runs").exists()


def test_collect_with_a_shard_missing_names_it_and_writes_nothing(tmp_path: Path) -> None:
    run(tmp_path, Scope(shard=Shard(0, 2)))
    stored = sorted((tmp_path / "runs").iterdir())
    missing = tasks()[1]  # position 1: shard 1's first run
    with pytest.raises(StudyError) as failed:
        run(tmp_path, Scope(collect=True))
    message = str(failed.value)
    assert message.startswith("--collect: 3 of the 6 runs have no record in ")
    assert f"(e.g. {missing.label()})" in message and "run the shards that lack them" in message
    assert not (tmp_path / "results.json").exists()
    assert sorted((tmp_path / "runs").iterdir()) == stored


def test_an_old_results_file_alone_is_reused_and_left_as_it_is(tmp_path: Path) -> None:
    """A results.json written before the records existed (the committed studies')."""
    old = [fake_replay(t) for t in tasks()]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(old, indent=1) + "\n")
    before = path.stat().st_mtime_ns
    done = run(tmp_path)
    assert (done.new, done.reused, done.collected, done.results) == (0, 6, 0, old)
    shard = run(tmp_path, Scope(shard=Shard(0, 2)))
    assert (shard.new, shard.reused, shard.missing) == (0, 3, 0)
    collected = run(tmp_path, Scope(collect=True))
    assert (collected.new, collected.reused) == (0, 6)
    assert path.stat().st_mtime_ns == before  # nothing gained, nothing rewritten
    assert not (tmp_path / "runs").exists()

    # A new run is added to the old file, which keeps its entries as they were.
    extra = dataclasses.replace(TASK, shrink=0.6)
    grown = run(tmp_path, runs=[*tasks(), extra])
    assert (grown.new, grown.reused) == (1, 6)
    saved = json.loads(path.read_text())
    assert all(e in saved for e in old) and len(saved) == 7


def test_a_record_that_is_not_its_runs_entry_is_named(tmp_path: Path) -> None:
    run(tmp_path, Scope(shard=Shard(0, 2)))
    first, second = tasks()[0], tasks()[2]
    record = tmp_path / "runs" / f"{run_key(first.identity())}.json"
    record.write_text(json.dumps({"key": run_key(first.identity()), "entry": fake_replay(second)}))
    with pytest.raises(StudyError, match=rf"{record.name}: not a results entry of run"):
        run(tmp_path)
    record.write_text("{")
    with pytest.raises(ValueError, match=rf"{record.name}: cannot read this run's record"):
        run(tmp_path)


def test_an_input_file_is_replaced_whole_or_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "set.swf"
    assert write_in_place(path, lambda p: p.write_text("a\n")) == 2
    inode = path.stat().st_ino
    write_in_place(path, lambda p: p.write_text("a\n"))
    assert path.stat().st_ino == inode  # the same bytes: the file stays
    write_in_place(path, lambda p: p.write_text("b\n"))
    assert path.read_text() == "b\n" and path.stat().st_ino != inode

    def fail(p: Path) -> None:
        p.write_text("half")
        raise ValueError("no job numbered 9")

    with pytest.raises(ValueError, match="no job numbered 9"):
        write_in_place(path, fail)
    assert path.read_text() == "b\n" and [p.name for p in tmp_path.iterdir()] == ["set.swf"]


# --------------------------------------------------------------------------- the command


def toy_trace(path: Path, count: int = 120, nodes: int = 8) -> Path:
    rng = np.random.default_rng(5)
    submit = np.cumsum(rng.exponential(300.0, count)).astype(int)
    width = np.minimum(2 ** rng.integers(0, 4, count), nodes)
    runtime = np.maximum(1, rng.lognormal(7.0, 1.2, count)).astype(int)
    lines = ["; Version: 2.2", "; Computer: toy", f"; MaxNodes: {nodes}", f"; MaxProcs: {nodes}"]
    for i in range(count):
        fields = [i + 1, submit[i], -1, runtime[i], width[i], -1, -1, width[i], 2 * runtime[i]]
        lines.append(" ".join(str(int(f)) for f in [*fields, -1, 1] + [-1] * 7))
    path.write_text("\n".join(lines) + "\n")
    return path


def grid_site(path: Path, sizes: list[int]) -> Path:
    lines = [f'description = "test grid {sizes}"']
    for i, n in enumerate(sizes, start=1):
        lines += ["", "[[machine]]", f'name = "m{i}"', f"nodes = {n}", f'node_prefix = "m{i}n"']
    path.write_text("\n".join(lines) + "\n")
    return path


def grid_argv(tmp_path: Path, out: Path) -> list[str]:
    trace = tmp_path / "TOY-1.swf"
    site = tmp_path / "grid-pair.toml"
    if not trace.exists():
        toy_trace(trace)
        grid_site(site, [4, 8])
    return ["report", "grid", "--trace", str(trace), "--config", str(site),
            "--jobs-per-node", "2", "--workers", "1", "--out", str(out)]  # fmt: skip


def without_seconds(path: Path) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "seconds"} for e in json.loads(path.read_text())]


def report_body(path: Path) -> list[str]:
    """report.md's sections but the header (the invocation) and the run times (wall clock)."""
    sections = path.read_text().split("\n## ")[1:]
    return [s for s in sections if not s.startswith("Run times")]


def test_parallel_grid_shards_then_collect_equal_a_full_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sharded, full = tmp_path / "study", tmp_path / "full"  # one OUT: entries name their files
    assert main(grid_argv(tmp_path, sharded)) == 0
    runs = len(json.loads((sharded / "results.json").read_text()))
    assert f"{runs} runs ({runs} new, 0 reused, 0 failed), 4 figures" in capsys.readouterr().out
    sharded.rename(full)

    # Two shard processes at once in one OUT: both write the job sets, each its records.
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "daemon"), str(ROOT / "client")]),
    }
    shards = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "batchd.cli",
                *grid_argv(tmp_path, sharded),
                "--shard",
                f"{i}/2",
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for i in range(2)
    ]
    said = [p.communicate(timeout=120) for p in shards]
    assert [p.returncode for p in shards] == [0, 0], said
    half = (runs + 1) // 2
    assert f"shard 0/2: {half} of the {runs} runs ({half} new, 0 reused, 0 failed)" in said[0][0]
    assert "no outputs written" in said[1][0] and "--collect instead of --shard 1/2" in said[1][0]
    assert sorted(p.name for p in sharded.iterdir()) == ["jobsets", "runs"]
    assert len(list((sharded / "runs").glob("*.json"))) == runs

    assert main([*grid_argv(tmp_path, sharded), "--collect"]) == 0
    assert f"{runs} runs (0 new, {runs} reused, 0 failed), 4 figures" in capsys.readouterr().out
    assert not (sharded / "runs").exists()
    assert without_seconds(sharded / "results.json") == without_seconds(full / "results.json")
    assert report_body(sharded / "report.md") == report_body(full / "report.md")
    header = (sharded / "report.md").read_text().split("\n## ")[0]
    assert f"- {runs} runs taken from the records in runs/" in header
    for name in ("fig_art.png", "fig_makespan.png", "fig_utilization.png"):
        assert (sharded / name).read_bytes() == (full / name).read_bytes()
        assert (sharded / name).read_bytes().startswith(PNG_MAGIC)
    made = sorted(p.name for p in (sharded / "jobsets").iterdir())
    assert made == sorted(p.name for p in (full / "jobsets").iterdir())  # no partial files
    for name in made:
        assert (sharded / "jobsets" / name).read_bytes() == (full / "jobsets" / name).read_bytes()

    # A full run after the shards replays nothing and leaves results.json as it is.
    before = (sharded / "results.json").read_bytes()
    assert main(grid_argv(tmp_path, sharded)) == 0
    assert f"{runs} runs (0 new, {runs} reused, 0 failed)" in capsys.readouterr().out
    assert (sharded / "results.json").read_bytes() == before


def primetime_trace(path: Path, count: int = 24) -> Path:
    """Jobs every 100 minutes from a Monday on 16 nodes."""
    lines = ["; Version: 2.2", "; UnixStartTime: 1704067200", "; TimeZoneString: UTC",
             "; MaxNodes: 16", "; MaxProcs: 16"]  # fmt: skip
    for i in range(count):
        width, runtime = (1, 2, 4, 8, 16, 3)[i % 6], (600, 3600, 7200, 20000)[i % 4]
        fields = [i + 1, 3600 + 6000 * i, -1, runtime, width, -1, -1, width, 2 * runtime]
        lines.append(" ".join(str(f) for f in [*fields, -1, 1] + [-1] * 7))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_primetime_collect_needs_every_shard_then_a_full_run_takes_the_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = primetime_trace(tmp_path / "TOY-hand-2024.swf")
    out = tmp_path / "study"
    argv = ["report", "primetime", "--trace", str(trace), "--limits", "30,100",
            "--workers", "1", "--out", str(out)]  # fmt: skip
    assert main([*argv, "--shard", "1/2"]) == 0
    assert "shard 1/2: 4 of the 8 runs (4 new, 0 reused, 0 failed)" in capsys.readouterr().out
    assert main([*argv, "--collect"]) == 2
    err = capsys.readouterr().err
    assert "--collect: 4 of the 8 runs have no record in" in err and "(e.g. TOY 16 " in err
    assert sorted(p.name for p in out.iterdir()) == ["runs"]  # no outputs

    # An unsharded run replays what the shards left and takes the rest from the records.
    assert main(argv) == 0
    assert "8 runs (4 new, 4 reused, 0 failed), 7 figures" in capsys.readouterr().out
    assert not (out / "runs").exists()
    header = (out / "report.md").read_text().split("\n## ")[0]
    assert "- Runs: 8; 4 replayed in 1 worker processes" in header
    assert "- 4 runs taken from the records in runs/" in header
    assert json.loads((out / "study.json").read_text())["collected"] == 4


STUDY_ARGS = {
    "dynp": ["--trace", "x.swf"],
    "primetime": ["--trace", "x.swf"],
    "grid": ["--trace", "x.swf"],
    "utility": ["--trace", "x.swf"],
    "moldable": ["--trace", "x.swf"],
}


@pytest.mark.parametrize("study", sorted(STUDY_ARGS))
@pytest.mark.parametrize("value", ["2/2", "0/0", "-1/2", "a/b", "1", "1/2/3", " 0/2"])
def test_bad_shards_are_refused_before_anything_is_made(
    study: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    argv = ["report", study, *STUDY_ARGS[study], "--out", str(out), f"--shard={value}"]
    assert main(argv) == 2
    assert f"--shard {value!r}: expected I/N with 0 <= I < N" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("other", [["--collect"], ["--report-only"]])
def test_a_shard_neither_collects_nor_only_reports(
    other: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["report", "grid", "--trace", "x.swf", "--shard", "0/2", *other])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
