"""The machine a replay sizes from a trace header, and what finished jobs keep."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from batchd.cli import main
from batchd.replay import ReplayOptions, run_replay
from paths import TRACES

KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"

# id submit wait runtime procs cpu mem req_procs req_time ...
ROW = "{id} {submit} -1 10 {w} -1 -1 {w} 10 -1 1 1 -1 -1 -1 -1 -1 -1"


def trace(tmp_path: Path, header: str, widths: list[int]) -> Path:
    rows = [ROW.format(id=i + 1, submit=i, w=w) for i, w in enumerate(widths)]
    path = tmp_path / "t.swf"
    path.write_text(header + "\n".join(rows) + "\n")
    return path


def test_widths_wider_than_maxnodes_count_processors(tmp_path: Path) -> None:
    """A job wider than MaxNodes: the widths count processors, so the machine has
    MaxProcs units and the job runs (it was skipped as wider than the machine)."""
    path = trace(tmp_path, "; MaxNodes: 4\n; MaxProcs: 16\n", [2, 12, 16])
    summary = run_replay(ReplayOptions(str(path), policy="fcfs-easy")).summary
    assert (summary["nodes"], summary["nodes_from"]) == (16, "MaxProcs")
    assert summary["jobs"] == 3
    assert summary["skipped"]["wider_than_machine"] == 0


def test_no_job_wider_than_maxnodes_keeps_maxnodes(tmp_path: Path) -> None:
    path = trace(tmp_path, "; MaxNodes: 4\n; MaxProcs: 16\n", [2, 4, 3])
    result = run_replay(ReplayOptions(str(path), policy="fcfs-easy"))
    assert (result.summary["nodes"], result.summary["nodes_from"]) == (4, "MaxNodes")
    assert result.grid.machines[0].nodes == 4
    # On 4 nodes the 4-wide job waits for the first: what a 16-unit machine would not do.
    assert [j.start for j in result.jobs] == [0, 10, 20]


def test_one_size_in_the_header_is_the_size(tmp_path: Path) -> None:
    procs = trace(tmp_path, "; MaxProcs: 8\n", [2])
    assert run_replay(ReplayOptions(str(procs), policy="fcfs")).summary["nodes_from"] == "MaxProcs"
    (tmp_path / "n").mkdir()
    nodes = trace(tmp_path / "n", "; MaxNodes: 8\n; MaxProcs: 8\n", [2])
    assert run_replay(ReplayOptions(str(nodes), policy="fcfs")).summary["nodes_from"] == "MaxNodes"


def test_a_size_given_is_not_said_to_come_from_the_header(tmp_path: Path) -> None:
    path = trace(tmp_path, "; MaxNodes: 4\n; MaxProcs: 16\n", [2, 12])
    summary = run_replay(ReplayOptions(str(path), policy="fcfs", nodes=20)).summary
    assert summary["nodes"] == 20 and "nodes_from" not in summary


def test_the_replay_prints_where_the_size_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = trace(tmp_path, "; MaxNodes: 4\n; MaxProcs: 16\n", [2, 12])
    assert main(["replay", str(path), "--policy", "fcfs"]) == 0
    assert "nodes_from" in capsys.readouterr().out


def test_finished_jobs_drop_their_nodes_unless_asked(tmp_path: Path) -> None:
    path = trace(tmp_path, "; MaxNodes: 8\n", [2, 3, 8])
    kept = run_replay(ReplayOptions(str(path), policy="fcfs-easy")).jobs
    assert [j.units for j in kept] == [[0, 1], [2, 3, 4], list(range(8))]
    dropped = run_replay(ReplayOptions(str(path), policy="fcfs-easy", hosts=False)).jobs
    assert [j.units for j in dropped] == [[], [], []]
    assert [(j.start, j.end) for j in dropped] == [(j.start, j.end) for j in kept]


def test_jobs_csv_still_names_the_nodes(tmp_path: Path) -> None:
    path = trace(tmp_path, "; MaxNodes: 8\n", [2, 3])
    out = tmp_path / "jobs.csv"
    assert main(["replay", str(path), "--policy", "fcfs", "--out-jobs-csv", str(out)]) == 0
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["allocated_resources"] for r in rows] == ["0-1", "2-4"]


def test_summary_json_says_where_the_size_came_from(tmp_path: Path) -> None:
    path = trace(tmp_path, "; MaxNodes: 4\n; MaxProcs: 16\n", [2, 12])
    out = tmp_path / "s.json"
    assert main(["replay", str(path), "--policy", "fcfs", "--summary-json", str(out)]) == 0
    assert json.loads(out.read_text())["nodes_from"] == "MaxProcs"


@pytest.mark.parametrize("policy", ["fcfs", "fcfs-easy", "sjf-cons", "dynp", "primetime"])
def test_nodes_held_by_count_give_the_same_schedule(policy: str) -> None:
    """Without ids (hosts=False) the jobs hold nodes by count; the policies see the same
    free nodes, so every job starts and ends as with ids."""
    if not KTH.is_file():
        pytest.skip(f"real traces not found: {KTH}")
    opts = {"trace": str(KTH), "policy": policy, "nodes": 100, "first": 3000}
    with_ids = run_replay(ReplayOptions(**opts))  # type: ignore[arg-type]
    by_count = run_replay(ReplayOptions(**opts, hosts=False))  # type: ignore[arg-type]
    assert all(j.units for j in with_ids.jobs)
    assert all(not j.units for j in by_count.jobs)
    assert [(j.id, j.start, j.end, j.result.outcome) for j in by_count.jobs] == [
        (j.id, j.start, j.end, j.result.outcome) for j in with_ids.jobs
    ]
    assert timeless(by_count.summary) == timeless(with_ids.summary)


def timeless(value: object) -> object:
    """A summary without the times it took (wall seconds, tuning seconds)."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if "seconds" not in k}
    return value
