"""The ``batchd replay`` command: errors, outputs, options and metrics worked out by hand."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from batchd.cli import main
from batchd.metrics.schedule import SUMMARY_KEYS, schedule_metrics
from batchd.model.job import Job
from batchd.replay import ReplayError, ReplayOptions, run_replay
from batchd.sched.registry import policy_names
from batchd.workload import iter_swf
from paths import DATA, ROOT

METRICS_SWF = DATA / "sched_metrics.swf"
KILL_SWF = DATA / "sched_kill.swf"
HPCLINE = ROOT / "conf" / "hpcline96.toml"

EXPECTED_KEYS = {
    "jobs",
    "skipped",
    "killed",
    "utilization",
    "makespan",
    "awt",
    "art",
    "artww",
    "sldww60",
    "sldww300",
    "bsld10",
    "wait_p50",
    "wait_p90",
    "wait_p99",
    "policy",
    "nodes",
    "wall_seconds",
}
REPORTING = ("primetime", "ga", "moldable-iterative")  # add an object of their own
NON_DYNP = [p for p in policy_names() if not p.startswith("dynp") and p not in REPORTING]


def batchd_command() -> list[str]:
    script = Path(sys.executable).parent / "batchd"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "batchd.cli"]


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*batchd_command(), *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
    )


def summary_of(tmp_path: Path, *args: str, name: str = "s.json") -> dict[str, Any]:
    out = tmp_path / name
    assert main(["replay", *args, "--summary-json", str(out)]) == 0
    return json.loads(out.read_text())


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# --------------------------------------------------------------------------------------------
# Usage errors: exit code 2 and one line on stderr (through the installed script)


def test_unknown_policy_names_it_and_lists_choices() -> None:
    proc = run_cli("replay", str(METRICS_SWF), "--policy", "no-such-policy", "--nodes", "4")
    assert proc.returncode == 2
    line = one_error_line(proc.stderr)
    assert "'no-such-policy'" in line
    for name in policy_names():
        assert name in line
    assert proc.stdout == ""


def test_missing_trace_file() -> None:
    proc = run_cli("replay", "no/such/trace.swf", "--policy", "fcfs", "--nodes", "4")
    assert proc.returncode == 2
    assert "no/such/trace.swf" in one_error_line(proc.stderr)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--nodes", "-3"], ["--nodes", "-3"]),
        (["--nodes", "4", "--shrink", "0"], ["--shrink", "0"]),
        (["--nodes", "4", "--shrink", "abc"], ["--shrink", "abc"]),
        (["--nodes", "4", "--first", "0"], ["--first", "0"]),
    ],
)
def test_bad_numbers(args: list[str], words: list[str]) -> None:
    proc = run_cli("replay", str(METRICS_SWF), "--policy", "fcfs", *args)
    assert proc.returncode == 2
    line = one_error_line(proc.stderr)
    for word in words:
        assert word in line


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--nodes", "-3"], ["--nodes", "-3"]),
        (["--nodes", "4", "--shrink", "0"], ["--shrink"]),
        (["--nodes", "4", "--shrink", "abc"], ["--shrink", "abc"]),
        (["--nodes", "4", "--shrink", "nan"], ["--shrink"]),
        (["--nodes", "4", "--first", "0"], ["--first"]),
        (["--nodes", "4", "--first", "2.5"], ["--first"]),
    ],
)
def test_bad_numbers_in_process(
    args: list[str], words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["replay", str(METRICS_SWF), "--policy", "fcfs", *args])
    assert exc.value.code == 2
    line = one_error_line(capsys.readouterr().err)
    for word in words:
        assert word in line


@pytest.mark.parametrize(
    ("policy", "param", "words"),
    [
        ("fcfs-cons", "colour=red", ["'colour'", "replan"]),
        ("fcfs-cons", "replan=sideways", ["replan", "'sideways'"]),
        ("sjf-cons", "replan=", ["replan"]),
        ("fcfs", "replan=rebuild", ["'replan'", "none"]),
        ("fcfs-cons", "replan", ["KEY=VALUE"]),
    ],
)
def test_bad_params(
    policy: str, param: str, words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["replay", str(METRICS_SWF), "--policy", policy, "--nodes", "4", "--param", param])
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    for word in words:
        assert word in line


def test_bad_param_exit_code_through_the_script() -> None:
    proc = run_cli(
        "replay",
        str(METRICS_SWF),
        "--policy",
        "fcfs-cons",
        "--nodes",
        "4",
        "--param",
        "replan=sideways",
    )
    assert proc.returncode == 2
    assert "sideways" in one_error_line(proc.stderr)


# --------------------------------------------------------------------------------------------
# Machine configuration files


def test_machine_config_works(tmp_path: Path) -> None:
    summary = summary_of(tmp_path, str(METRICS_SWF), "--policy", "fcfs", "--machine", str(HPCLINE))
    assert summary["nodes"] == 96
    assert summary["jobs"] == 3
    # --nodes overrides the size of the configured machine.
    summary = summary_of(
        tmp_path, str(METRICS_SWF), "--policy", "fcfs", "--machine", str(HPCLINE), "--nodes", "5"
    )
    assert summary["nodes"] == 5


def test_machine_config_relative_path_through_the_script(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    proc = run_cli(
        "replay",
        str(METRICS_SWF),
        "--policy",
        "fcfs-easy",
        "--machine",
        "conf/hpcline96.toml",
        "--summary-json",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["nodes"] == 96


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[[machine]]\nname = "x"\nnodes = -1\n', ["nodes", "-1"]),
        ("[[machine]\nname = \n", ["not valid TOML"]),
        ('[[machine]]\nname = "x"\nnodes = 4\ncolour = "red"\n', ["colour"]),
        ('description = "no machines"\n', ["machine"]),
    ],
    ids=["negative-nodes", "invalid-toml", "unknown-key", "no-machine"],
)
def test_broken_machine_config(
    tmp_path: Path, text: str, words: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    conf = tmp_path / "broken.toml"
    conf.write_text(text)
    code = main(["replay", str(METRICS_SWF), "--policy", "fcfs", "--machine", str(conf)])
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    assert str(conf) in line
    for word in words:
        assert word in line


def test_broken_machine_config_through_the_script(tmp_path: Path) -> None:
    conf = tmp_path / "neg.toml"
    conf.write_text('[[machine]]\nname = "x"\nnodes = -1\n')
    proc = run_cli("replay", str(METRICS_SWF), "--policy", "fcfs", "--machine", str(conf))
    assert proc.returncode == 2
    line = one_error_line(proc.stderr)
    assert "neg.toml" in line and "nodes" in line


def test_missing_machine_config(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", str(METRICS_SWF), "--policy", "fcfs", "--machine", "conf/nope.toml"])
    assert code == 2
    assert "conf/nope.toml" in one_error_line(capsys.readouterr().err)


TWO_MACHINES = """
[[machine]]
name = "a"
nodes = 4
node_prefix = "a"

[[machine]]
name = "b"
nodes = 8
node_prefix = "b"

[server]
policy = "fcfs"
{default}

[[queue]]
name = "small"

[[queue]]
name = "big"
machine = "b"
"""


@pytest.mark.parametrize(("default", "nodes"), [("", 4), ('default_queue = "big"', 8)])
def test_trace_jobs_run_on_the_machine_of_the_default_queue(
    tmp_path: Path, default: str, nodes: int
) -> None:
    conf = tmp_path / "two.toml"
    conf.write_text(TWO_MACHINES.format(default=default))
    result = run_replay(ReplayOptions(trace=str(METRICS_SWF), machine=str(conf)))
    assert result.summary["policy"] == "fcfs" and result.summary["nodes"] == nodes
    machine = 0 if nodes == 4 else 1
    assert {j.machine for j in result.jobs} == {machine}
    assert all(max(j.units) < nodes for j in result.jobs)


def test_machines_with_clashing_node_names_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = tmp_path / "two.toml"
    conf.write_text('[[machine]]\nname = "a"\nnodes = 4\n\n[[machine]]\nname = "b"\nnodes = 8\n')
    code = main(["replay", str(METRICS_SWF), "--policy", "fcfs", "--machine", str(conf)])
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    assert "machine[1].node_prefix: node node001 of machine b" in line


def test_size_from_the_trace_header(tmp_path: Path) -> None:
    # sched_metrics.swf says MaxNodes: 4.
    assert summary_of(tmp_path, str(METRICS_SWF), "--policy", "fcfs")["nodes"] == 4


# --------------------------------------------------------------------------------------------
# Outputs


@pytest.mark.parametrize("policy", NON_DYNP)
def test_summary_json_keys(tmp_path: Path, policy: str) -> None:
    summary = summary_of(tmp_path, str(METRICS_SWF), "--policy", policy, "--nodes", "4")
    assert set(summary) == EXPECTED_KEYS
    assert set(SUMMARY_KEYS) == EXPECTED_KEYS
    assert summary["policy"] == policy
    assert summary["skipped"] == {"width<=0": 0, "runtime<0": 0, "wider_than_machine": 0}


def test_summary_json_keys_ga(tmp_path: Path) -> None:
    summary = summary_of(tmp_path, str(METRICS_SWF), "--policy", "ga", "--nodes", "4")
    assert set(summary) == EXPECTED_KEYS | {"ga"}
    assert set(summary["ga"]) == {
        "searches", "generations", "budget_stops", "improved_share", "avg_jobs",
        "search_seconds_mean", "search_seconds_max",
    }  # fmt: skip


def test_summary_json_keys_moldable_iterative(tmp_path: Path) -> None:
    summary = summary_of(
        tmp_path, str(METRICS_SWF), "--policy", "moldable-iterative", "--nodes", "4"
    )
    assert set(summary) == EXPECTED_KEYS | {"moldable_iterative"}
    assert set(summary["moldable_iterative"]) == {
        "steps", "avg_queue", "trials", "accepted", "step_seconds_mean", "step_seconds_max",
    }  # fmt: skip
    assert summary["moldable_iterative"]["steps"] > 0


def test_summary_json_keys_primetime(tmp_path: Path) -> None:
    summary = summary_of(
        tmp_path, str(METRICS_SWF), "--policy", "primetime", "--param", "prime_nodes=50%",
        "--nodes", "4",
    )  # fmt: skip
    assert set(summary) == EXPECTED_KEYS | {"windows", "primetime"}
    assert set(summary["primetime"]) == {
        "limits", "discipline", "overflow_mode", "prime", "nonprime", "all",
        "success_rate", "overflow_rate", "overflow_share_all", "overflow_killed",
        "overflow_requeued", "jobs",
    }  # fmt: skip
    for group in ("prime", "nonprime", "all"):
        assert set(summary["primetime"][group]) == {
            "jobs", "art", "awt", "slowdown", "bounded_slowdown", "utilization",
        }  # fmt: skip


def test_summary_printed_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(METRICS_SWF), "--policy", "fcfs", "--nodes", "4"]) == 0
    out = capsys.readouterr().out
    assert "utilization" in out and "0.6532" in out
    assert "width<=0: 0" in out


def test_out_swf_consistent_with_summary(tmp_path: Path) -> None:
    swf = tmp_path / "out.swf"
    summary = summary_of(
        tmp_path, str(KILL_SWF), "--policy", "fcfs-easy", "--nodes", "2", "--out-swf", str(swf)
    )
    records = {rec[0]: rec for _, rec in iter_swf(swf)}
    assert sorted(records) == [1, 2, 3]
    waits = [rec[2] for rec in records.values()]
    runs = [rec[3] for rec in records.values()]
    assert sum(waits) / len(waits) == pytest.approx(summary["awt"])
    submits = [rec[1] for rec in records.values()]
    ends = [rec[1] + rec[2] + rec[3] for rec in records.values()]
    assert max(ends) - min(submits) == summary["makespan"]
    used = sum(rec[4] * rec[3] for rec in records.values())
    assert used / (2 * summary["makespan"]) == pytest.approx(summary["utilization"])
    # Case c of test_schedules.py: 1 [0,5) killed (status 0), 3 [1,3), 2 [5,8).
    assert {i: (r[1], r[2], r[3], r[10]) for i, r in records.items()} == {
        1: (0, 0, 5, 0),
        2: (0, 5, 3, 1),
        3: (1, 0, 2, 1),
    }
    assert runs == [5, 3, 2]
    text = swf.read_text()
    assert "; batchd replay: policy fcfs-easy, 2 nodes" in text
    assert "; MaxNodes: 2" in text  # the trace's header is kept


def test_out_swf_keeps_the_fields_the_run_does_not_change(tmp_path: Path) -> None:
    """A replay reads the records only to write them back: with --out-swf they are read."""
    trace = tmp_path / "in.swf"
    lines = [
        f"{i:3d} {10 * i:4d} -1 {5 * i:3d}  2 -1 -1  2 {9 * i:3d} -1  1 {40 + i:2d} 3 {70 + i:2d} 1 -1 -1 -1"
        for i in range(1, 7)
    ]
    trace.write_text("; MaxNodes: 4\n" + "\n".join(lines) + "\n")
    out = tmp_path / "out.swf"
    assert (
        main(["replay", str(trace), "--policy", "fcfs", "--nodes", "4", "--out-swf", str(out)]) == 0
    )
    written = {rec[0]: rec for _, rec in iter_swf(out)}
    assert {i: (r[11], r[12], r[13], r[14]) for i, r in written.items()} == {
        i: (40 + i, 3, 70 + i, 1) for i in range(1, 7)
    }


def test_out_jobs_csv_has_batsim_columns(tmp_path: Path) -> None:
    out = tmp_path / "jobs.csv"
    assert (
        main(
            [
                "replay",
                str(KILL_SWF),
                "--policy",
                "fcfs-easy",
                "--nodes",
                "2",
                "--out-jobs-csv",
                str(out),
            ]
        )
        == 0
    )
    with out.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    with out.open(newline="") as fh:
        header = next(csv.reader(fh))
    assert header == [
        "job_id",
        "submission_time",
        "requested_number_of_resources",
        "requested_time",
        "success",
        "starting_time",
        "execution_time",
        "finish_time",
        "waiting_time",
        "turnaround_time",
        "stretch",
        "allocated_resources",
    ]
    by_id = {int(r["job_id"]): r for r in rows}
    # job 1: 1 node, estimate 5, killed at 5 on node 0; job 2: 2 nodes [5,8) on 0-1.
    assert by_id[1]["success"] == "0"
    assert by_id[1]["allocated_resources"] == "0"
    assert (by_id[1]["starting_time"], by_id[1]["finish_time"]) == ("0", "5")
    assert by_id[2]["allocated_resources"] == "0-1"
    assert by_id[2]["waiting_time"] == "5" and by_id[2]["turnaround_time"] == "8"
    assert float(by_id[2]["stretch"]) == pytest.approx(8 / 3, rel=1e-5)  # "%.6g"
    assert by_id[3]["success"] == "1" and by_id[3]["allocated_resources"] == "1"


# --------------------------------------------------------------------------------------------
# Options


def test_first(tmp_path: Path) -> None:
    summary = summary_of(
        tmp_path, str(METRICS_SWF), "--policy", "fcfs", "--nodes", "4", "--first", "2"
    )
    assert summary["jobs"] == 2
    # Jobs 1 [0,100) on 2 nodes and 2 [100,150) on 4: makespan 150, util 400/600.
    assert summary["makespan"] == 150
    assert summary["utilization"] == pytest.approx(400 / 600)


def test_shrink(tmp_path: Path) -> None:
    swf = tmp_path / "out.swf"
    summary_of(
        tmp_path,
        str(METRICS_SWF),
        "--policy",
        "fcfs",
        "--nodes",
        "4",
        "--shrink",
        "0.5",
        "--out-swf",
        str(swf),
    )
    # Job 3's submit 40 becomes 0 + floor(40 * 0.5) = 20; it still starts at 150.
    records = {rec[0]: rec for _, rec in iter_swf(swf)}
    assert records[3][1] == 20
    assert records[3][1] + records[3][2] == 150


@pytest.mark.parametrize("flag", ["--no-kill", "--perfect-estimates"])
def test_no_kill_and_perfect_estimates(tmp_path: Path, flag: str) -> None:
    base = summary_of(tmp_path, str(KILL_SWF), "--policy", "fcfs", "--nodes", "2", name="a.json")
    assert base["killed"] == 1
    other = summary_of(
        tmp_path, str(KILL_SWF), "--policy", "fcfs", "--nodes", "2", flag, name="b.json"
    )
    assert other["killed"] == 0
    # Job 1 runs its full 10 s either way: 1 [0,10), 2 [10,13), 3 [13,15).
    assert other["makespan"] == 15
    assert base["makespan"] == 10


def test_replay_options_errors() -> None:
    trace = str(METRICS_SWF)
    with pytest.raises(ReplayError, match="--nodes must be a positive integer"):
        run_replay(ReplayOptions(trace=trace, policy="fcfs", nodes=0))
    with pytest.raises(ReplayError, match="--shrink must be > 0"):
        run_replay(ReplayOptions(trace=trace, policy="fcfs", nodes=4, shrink=0))
    with pytest.raises(ReplayError, match="--first must be a positive integer"):
        run_replay(ReplayOptions(trace=trace, policy="fcfs", nodes=4, first=0))
    with pytest.raises(ReplayError, match="no such trace file"):
        run_replay(ReplayOptions(trace=str(DATA / "nope.swf"), policy="fcfs", nodes=4))


# --------------------------------------------------------------------------------------------
# Metrics worked out by hand
#
# sched_metrics.swf on 4 nodes, fcfs: (id, submit, width, estimate = runtime)
#   1: (0, 2, 100)  2: (0, 4, 50)  3: (40, 1, 5)
# 1 [0,100); 2 needs all 4 nodes -> [100,150); 3 waits behind 2 (no backfilling) -> [150,155).
#   wait 0, 100, 110; response 100, 150, 115; run 100, 50, 5; widths 2, 4, 1 (sum 7).
# makespan = 155 - 0 = 155
# utilization = (2*100 + 4*50 + 1*5) / (4 * 155) = 405 / 620
# awt = 210 / 3 = 70; art = 365 / 3
# artww = (2*100 + 4*150 + 1*115) / 7 = 915 / 7
# sldww60: max(resp,60)/max(run,60) = 1, 150/60, 115/60 -> (2*1 + 4*2.5 + 115/60) / 7
# sldww300: every term 300/300 = 1 -> 1
# bsld10: max(1, resp/max(run,10)) = 1, 3, 11.5 -> 15.5 / 3
# wait percentiles of (0, 100, 110), linear: p50 = 100, p90 = 100 + 0.8*10 = 108,
#   p99 = 100 + 0.98*10 = 109.8
HAND_METRICS = {
    "jobs": 3,
    "killed": 0,
    "makespan": 155,
    "utilization": 405 / 620,
    "awt": 70.0,
    "art": 365 / 3,
    "artww": 915 / 7,
    "sldww60": (2 + 10 + 115 / 60) / 7,
    "sldww300": 1.0,
    "bsld10": 15.5 / 3,
    "wait_p50": 100.0,
    "wait_p90": 108.0,
    "wait_p99": 109.8,
}


def test_metrics_by_hand_through_the_cli(tmp_path: Path) -> None:
    summary = summary_of(tmp_path, str(METRICS_SWF), "--policy", "fcfs", "--nodes", "4")
    for key, value in HAND_METRICS.items():
        assert summary[key] == pytest.approx(value), key
    assert summary["nodes"] == 4 and summary["policy"] == "fcfs"


def test_metrics_by_hand_direct() -> None:
    jobs = []
    for i, submit, width, start, end in [
        (1, 0, 2, 0, 100),
        (2, 0, 4, 100, 150),
        (3, 40, 1, 150, 155),
    ]:
        j = Job(id=i, submit=submit, width=width, estimate=end - start, runtime=end - start)
        j.start, j.end = start, end
        jobs.append(j)
    got = schedule_metrics(jobs, 4)
    assert set(got) == set(HAND_METRICS)
    for key, value in HAND_METRICS.items():
        assert got[key] == pytest.approx(value), key
    assert schedule_metrics([], 4)["jobs"] == 0


def test_a_shared_machine_replays_the_widths_as_cores(tmp_path: Path) -> None:
    conf = tmp_path / "shared.toml"
    conf.write_text('[[machine]]\nname = "s"\nnodes = 2\ncores_per_node = 2\nshared = true\n')
    shared = run_replay(ReplayOptions(trace=str(METRICS_SWF), machine=str(conf), policy="fcfs"))
    whole = run_replay(ReplayOptions(trace=str(METRICS_SWF), nodes=4, policy="fcfs"))
    # Two nodes of two cores are four units: the same schedule as four whole nodes.
    assert shared.summary["nodes"] == 4
    assert [(j.start, j.units) for j in shared.jobs] == [(j.start, j.units) for j in whole.jobs]


def test_folded_hosts_give_the_same_jobs_csv_and_chart(tmp_path: Path) -> None:
    """``batchd replay --out-jobs-csv`` and ``--gantt`` keep a finished job's nodes as
    runs (``fold_hosts``): the file and the chart's data are those the ids give."""
    from batchd.model.machine import FOLD_FROM
    from batchd.ui.replay_chart import replay_chart
    from batchd.workload import write_jobs_csv

    kth = ROOT.parent / "shared" / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
    texts, charts = [], []
    for fold in (False, True):
        opts = ReplayOptions(str(kth), policy="fcfs-easy", first=3000, fold_hosts=fold)
        result = run_replay(opts)
        assert all((j.units == []) == (fold and j.width >= FOLD_FROM) for j in result.jobs)
        assert any(len(j.result.ran_on) > 2 for j in result.jobs) == fold  # runs apart
        out = tmp_path / f"jobs-{fold}.csv"
        write_jobs_csv(out, result.jobs)
        texts.append(out.read_text())
        charts.append(replay_chart(result.jobs, [("m", 100)], {}, title="t"))
    assert texts[0] == texts[1]
    assert charts[0] == charts[1]
    split = [r for r in csv.DictReader(texts[0].splitlines()) if " " in r["allocated_resources"]]
    assert split  # some jobs ran on nodes in more than one run
