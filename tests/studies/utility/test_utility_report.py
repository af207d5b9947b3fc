"""The utility study (batchd report utility): its measures by hand, a tiny study end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from batchd.cli import main
from batchd.model.job import Job
from batchd.replay import ReplayOptions, run_replay
from batchd_studies.utility.claims import Setting, heavy_accuracy, ranking
from batchd_studies.utility.index import Index, aggregate, wait
from batchd_studies.utility.measures import (
    earned_like_seed,
    from_log_start,
    seed_columns,
    trimmed,
    trimmed_bsld,
)
from batchd_studies.utility.plan import BASE, EXACT, USERS, Scenario, scenarios
from batchd_studies.utility.tables import aggregate_table

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NODES = 16


def test_earned_percentiles_in_the_seeds_direction() -> None:
    # Ascending: 0, 20, 40, 60, 100. The seed's q %ile is what q % of the jobs earned at
    # least: its 25 is the ascending 75th (60), its 98 the ascending 2nd (0.08 of the way
    # from 0 to 20), its 100 the least any job earned.
    got = earned_like_seed([60.0, 0.0, 100.0, 40.0, 20.0])
    assert got == {"p25": 60.0, "p50": 40.0, "p75": 20.0, "p98": pytest.approx(1.6), "p100": 0.0}
    values = np.array([60.0, 0.0, 100.0, 40.0, 20.0])
    for q in (25, 50, 75):
        assert np.mean(values >= got[f"p{q}"]) >= q / 100  # at least q % earned that much


def test_trimming_as_the_seeds_note_on_14() -> None:
    # First N // 101 and last N % 100 left out: 4,809 jobs -> the first 47 and the last 9.
    items = list(range(4809))
    kept = trimmed(items)
    assert kept[0] == 47 and kept[-1] == 4799 and len(kept) == 4809 - 47 - 9
    assert list(trimmed(list(range(250)))) == list(range(2, 200))
    assert list(trimmed([1, 2, 3])) == []  # 3 % 100 = 3: nothing left


def test_trimmed_bsld_and_seed_columns_by_hand() -> None:
    # 101 jobs, runtime 100 s each, job i waits i s: the first (101 // 101 = 1) and the
    # last (101 % 100 = 1) are left out in submit order.
    jobs = [Job(i + 1, 1000 + i, 1, 100, 100) for i in range(101)]
    for i, job in enumerate(jobs):
        job.start, job.end = job.submit + i, job.submit + i + 100
    # Kept: waits 1..99, bounded slowdown (100 + w) / 100.
    assert trimmed_bsld(list(reversed(jobs))) == pytest.approx(1 + 50 / 100)
    columns = seed_columns(jobs)
    assert columns["first_submit"] == 1000 and columns["earned_like_seed"] is None


def test_from_log_start() -> None:
    # Factor 1: the log's first 100 s come before the schedule of 100 s at 0.5.
    assert from_log_start(100, 0.5, 100, 1.0) == (200, 0.25)
    span, util = from_log_start(100, 0.5, 100, 0.5)
    assert span == 150 and util == pytest.approx(1 / 3)


def test_scenarios_cover_the_tables_and_figures() -> None:
    got = scenarios([1.0, 0.9, 0.7], [1.0, 2.0, 3.0], 0.7)
    assert got[0] == BASE and got[1] == Scenario(EXACT, 1.0, 2.0)
    assert Scenario(USERS, 0.9, 2.0) in got and Scenario(USERS, 1.0, 3.0) in got
    assert Scenario(EXACT, 0.7, 2.0) in got and len(got) == len(set(got)) == 7
    both = scenarios([1.0], [2.0], 0.7, ["formula", "priority"])
    assert both[-1] == Scenario(USERS, 1.0, 2.0, "priority") and len(both) == 5
    assert both[-1].key == "users/f1/d2/priority" and BASE.key == "users/f1/d2"
    moved = scenarios([1.0], [2.0], 0.7, ["formula"], ["submit", "start"])
    assert moved[-1] == Scenario(USERS, 1.0, 2.0, "formula", "start") and len(moved) == 5
    assert moved[-1].key == "users/f1/d2/from-start"


def _entry(scenario: Scenario, policy: str, total: float, **extra: Any) -> dict[str, Any]:
    return {
        "estimates": scenario.estimates,
        "factor": scenario.factor,
        "deadline": scenario.deadline,
        "values": scenario.values,
        "policy": policy,
        "summary": {
            "utilization": 0.7,
            "utility": {"aggregate": total, "start_values": 4e8, **extra},
        },
    }


def test_trials_are_averaged_and_gains_computed() -> None:
    heavy = Scenario(USERS, 0.7, 2.0)
    results = [
        _entry(BASE, "fcfs-cons", 100.0, wait={"p50": 10.0}),
        _entry(BASE, "fcfs-cons", 200.0, wait={"p50": 30.0}),
        _entry(BASE, "fcfs-easy", 160.0),
        _entry(BASE, "prio-fifo", 180.0),
        *(_entry(BASE, "ga", v) for v in (190.0, 200.0, 210.0, 200.0)),
        _entry(heavy, "prio-fifo", 100.0),
        _entry(heavy, "ga", 104.0),
        _entry(Scenario(EXACT, 0.7, 2.0), "prio-fifo", 110.0),
        _entry(Scenario(EXACT, 0.7, 2.0), "ga", 130.0),
    ]
    index = Index(results)
    assert index.mean(BASE, "fcfs-cons", aggregate) == 150.0
    assert index.mean(BASE, "fcfs-cons", wait(50)) == 20.0
    assert index.mean(BASE, "ga", aggregate) == 200.0
    assert index.mean(BASE, "utility-easy", aggregate) is None
    table = aggregate_table(index, BASE, {}, ["fcfs-cons", "fcfs-easy", "ga"])
    assert "| Cons | - | - | 1.500e+02 | 0.0 % | +33.3 % | 2 |" in table
    assert "| GA | - | - | 2.000e+02 | 0.0 % | - | 4 |" in table
    setting = Setting([1.0, 0.7], [2.0], 0.7)
    assert ranking(index, setting) == (
        True,
        "GA > Prio > EASY > Cons; GA over Cons +33.3 %, EASY +25.0 %, Prio +11.1 %",
    )
    holds, detail = heavy_accuracy(index, setting) or (False, "")
    assert holds and "GA over Prio +4.0 %" in detail and "Prio +10.0 %, GA +25.0 %" in detail


def _toy_trace(path: Path, count: int = 40) -> Path:
    rng = np.random.default_rng(3)
    submit = np.cumsum(rng.exponential(200.0, count)).astype(int)
    width = np.minimum(2 ** rng.integers(0, 4, count), NODES)
    runtime = np.maximum(1, rng.lognormal(6.0, 1.0, count)).astype(int)
    waits = rng.integers(0, 3000, count)
    queues = rng.integers(0, 6, count)
    lines = [
        "; Version: 2.2",
        "; Installation: SDSC Blue Horizon (toy)",
        f"; MaxNodes: {NODES // 8}",
        f"; MaxProcs: {NODES}",
    ]
    for i in range(count):
        fields = [i + 1, submit[i], waits[i], runtime[i], width[i], -1, -1, width[i]]
        fields += [2 * runtime[i], -1, 1, 1 + i % 3, -1, -1, queues[i], -1, -1, -1]
        lines.append(" ".join(str(int(f)) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_tiny_study_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _toy_trace(tmp_path / "TOY-1.swf")
    out = tmp_path / "study"
    argv = ["report", "utility", "--trace", str(trace), "--jobs", "5-34", "--seeds", "1"]
    argv += ["--ga-seeds", "1", "--factors", "1", "--deadline-factors", "2", "--heavy", "1"]
    argv += ["--schedulers", "fcfs-easy,ga", "--generations", "2", "--population", "4"]
    argv += ["--workers", "1", "--out", str(out)]
    assert main(argv) == 0
    # Four scenarios (the users' and exact runtimes, values by priority, deadlines from the
    # start) x EASY and one GA trial.
    assert "8 runs (8 new, 0 reused, 0 failed), 6 figures" in capsys.readouterr().out
    report = (out / "report.md").read_text()
    assert report.startswith("# Utility functions and the GA scheduler")
    assert "- Command: `batchd report utility --trace " in report
    assert "the jobs numbered 5 to 34 of `TOY-1.swf`" in report and "on 16 processors" in report
    for name in ("fig5_decay.png", "fig9_accuracy.png", "fig_values.png"):
        assert (out / name).read_bytes().startswith(PNG_MAGIC)
    for heading in ("## Table 1", "## Table 2", "## The seed's claims", "## Start values"):
        assert heading in report
    claims = report.split("## The seed's claims")[1].split("## Figures")[0]
    rows = [line for line in claims.splitlines() if line.startswith("| ")][2:]
    held = [row for row in rows if "| **holds** (" in row]
    tested = [row for row in rows if not row.endswith("| - |")]
    assert f"Claims that hold: {len(held)} of the {len(tested)} tested" in claims

    # An entry's numbers are a replay's of its workload.
    results = json.loads((out / "results.json").read_text())
    assert len(results) == 8
    entry = next(r for r in results if r["policy"] == "ga" and r["estimates"] == "exact")
    assert entry["params"] == {"seed": "1", "generations": "2", "population": "4"}
    workload = out / "workloads" / entry["workload"]
    result = run_replay(
        ReplayOptions(
            trace=str(workload),
            policy="ga",
            params=entry["params"],
            nodes=NODES,
            perfect_estimates=True,
        )
    )
    assert entry["summary"]["utility"]["aggregate"] == pytest.approx(
        result.summary["utility"]["aggregate"]
    )
    assert entry["columns"] == json.loads(json.dumps(seed_columns(result.jobs)))
    assert entry["summary"]["jobs"] == 30
    # Values by priority: the same draws, mirrored bins (class 0 highest per minute).
    aligned = (out / "workloads" / "u1-d2-priority.swf").read_text()
    assert "--value-order priority" in aligned
    assert {r["workload"] for r in results if r["values"] == "priority"} == {"u1-d2-priority.swf"}
    rows = [  # the class table's (six cells; the setup table's rows have eleven)
        line for line in report.splitlines() if line.startswith("| `u1-d2") and line.count("|") == 7
    ]
    per_minute = {
        (r.split("|")[1].strip(), r.split("|")[2].strip()): float(r.split("|")[4]) for r in rows
    }
    assert per_minute[("`u1-d2.swf`", "0")] < per_minute[("`u1-d2.swf`", "5")]
    assert per_minute[("`u1-d2-priority.swf`", "0")] > per_minute[("`u1-d2-priority.swf`", "5")]

    # Deadlines from the start: the same draws moved by each job's runtime; EASY's schedule
    # does not depend on the values, so it earns at least as much with them.
    moved = (out / "workloads" / "u1-d2-from-start.swf").read_text()
    assert "--deadline-from start" in moved
    started = [r for r in results if r.get("deadline_from") == "start"]
    assert {r["workload"] for r in started} == {"u1-d2-from-start.swf"} and len(started) == 2
    assert all("deadline_from" not in r for r in results if r not in started)
    easy = [r for r in results if r["policy"] == "fcfs-easy" and r["estimates"] == "users"]
    by_origin = {r.get("deadline_from", "submit"): r for r in easy if r["values"] == "formula"}
    moved_sum = by_origin["start"]["summary"]["utility"]["aggregate"]
    assert moved_sum >= by_origin["submit"]["summary"]["utility"]["aggregate"]
    assert by_origin["start"]["summary"]["makespan"] == by_origin["submit"]["summary"]["makespan"]
    assert "## Deadlines counted from the start" in report
    assert "deadline factor 2, deadline from the job's start; the seed's rows" in report

    # A second run replays nothing; a new GA parameter replays only the GA runs.
    before = (out / "results.json").read_text()
    (out / "discussion.md").write_text("GA wins on TOY.\n")
    assert main(argv) == 0
    assert "8 runs (0 new, 8 reused, 0 failed)" in capsys.readouterr().out
    assert (out / "results.json").read_text() == before
    again = (out / "report.md").read_text()
    assert "GA wins on TOY." in again and "Report written again from results.json" in again
    assert main([*argv[:-4], "--generations", "3", "--workers", "1", "--out", str(out)]) == 0
    assert "8 runs (4 new, 4 reused, 0 failed)" in capsys.readouterr().out
    assert main([*argv, "--deadline-from", "submit"]) == 0
    assert "6 runs (0 new, 6 reused, 0 failed)" in capsys.readouterr().out


def test_study_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _toy_trace(tmp_path / "TOY-1.swf", count=10)
    argv = ["report", "utility", "--trace", str(trace), "--out", str(tmp_path / "o")]
    for extra, message in (
        (["--jobs", "9-3"], "--jobs: job range '9-3': the first job number is above the last"),
        (["--jobs", "50-60"], "no job numbered 50 to 60"),
        (["--schedulers", "fcfs-easy,sjf"], "--schedulers: 'sjf' not in the study's schedulers"),
        (["--heavy", "0.7,0.8"], "--heavy: one inter-arrival factor"),
        (["--factors", "1,0"], "--factors: each number must be in 0.05..10, got 0"),
        (["--seeds", "1,x"], "--seeds: expected seeds like 1,2"),
        (["--deadline-from", "end"], "--deadline-from: end is not where a deadline counts from"),
    ):
        assert main([*argv, *extra]) == 2
        assert message in capsys.readouterr().err
    out = ["--out", str(tmp_path / "nothing")]
    assert main(["report", "utility", "--trace", str(tmp_path / "nope.swf"), *out]) == 2
    assert "no such trace file" in capsys.readouterr().err
    other = tmp_path / "OTHER.swf"
    other.write_text(trace.read_text().replace("SDSC Blue Horizon", "elsewhere"))
    assert main(["report", "utility", "--trace", str(other), "--jobs", "1-5", *out]) == 2
    assert "give --map FILE" in capsys.readouterr().err
    assert not (tmp_path / "nothing").exists()  # nothing made before the options are checked
    bad_map = tmp_path / "map.txt"
    bad_map.write_text("0 0\n1 2\n")
    assert main(["report", "utility", "--trace", str(other), "--map", str(bad_map), *out]) == 2
    assert "priorities must be 0..N-1 with none left out; no queue has 1" in capsys.readouterr().err
