"""``batchd report primetime`` (seed 001): Table 3, the rules of thumb, the command end to end."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from batchd.cli import main
from batchd_studies.framework import StudyError
from batchd_studies.primetime import tables as T
from batchd_studies.primetime.options import parse_disciplines, parse_limits, parse_nodes
from batchd_studies.primetime.rules import rule_prime, rule_thumb

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MONDAY = 1704067200  # 2024-01-01 00:00 UTC, a Monday: the trace starts in non-prime time
NODES = 16


# --------------------------------------------------------------------------- a hand-made trace


def write_trace(path: Path, count: int = 48) -> Path:
    """Jobs every 100 minutes from Monday 01:00 on 16 nodes: small, wide and long ones.

    At 30%/30% a job is large when wider than 4 nodes or asking for more than 3.9 h;
    every estimate fits in a weekday night (11 h).
    """
    widths = (1, 2, 4, 8, 16, 3)
    runtimes = (600, 3600, 7200, 20000, 30000)
    lines = [
        "; Version: 2.2",
        "; Computer: hand-made",
        f"; UnixStartTime: {MONDAY}",
        "; TimeZoneString: UTC",
        f"; MaxNodes: {NODES}",
        f"; MaxProcs: {NODES}",
    ]
    for i in range(count):
        width = widths[i % len(widths)]
        runtime = runtimes[i % len(runtimes)]
        estimate = min(int(runtime * 1.2), 36000)
        fields = [i + 1, 3600 + 6000 * i, -1, runtime, width, -1, -1, width, estimate]
        fields += [-1, 1] + [-1] * 7
        lines.append(" ".join(str(f) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(["report", "primetime", *argv])
    except SystemExit as exc:  # argparse's own usage errors
        rc = int(exc.code or 0)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def table_rows(report: str, heading: str) -> dict[str, list[str]]:
    """The rows of the first markdown table after ``heading``: first cell -> other cells."""
    part = report.split(heading, 1)[1]
    rows: dict[str, list[str]] = {}
    started = False
    for line in part.splitlines():
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not cells[0].startswith(":--"):
                rows.setdefault(cells[0], cells[1:])
        elif started:
            break
    return rows


# --------------------------------------------------------------------------- end to end


def test_sweep_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = write_trace(tmp_path / "TOY-hand-2024.swf")
    out = tmp_path / "study"
    began = time.perf_counter()
    rc, stdout, err = run_cli(capsys, "--trace", str(trace), "--limits", "30,100",
                              "--workers", "2", "--out", str(out))  # fmt: skip
    assert rc == 0, err
    assert time.perf_counter() - began < 30
    assert "8 runs (8 new, 0 reused, 0 failed)" in stdout

    results = json.loads((out / "results.json").read_text())
    assert len(results) == 8  # 2 runtime x 2 jobsize limits x 2 disciplines, one size
    assert {(e["discipline"], e["runtime_limit"], e["jobsize_limit"]) for e in results} == {
        (d, rt, js) for d in ("fcfs", "easy") for rt in (30, 100) for js in (30, 100)
    }
    for e in results:
        assert e["nodes"] == NODES and e["must_fit"] is True and e["trace"] == "TOY"
        assert e["params"]["prime_runtime"] == f"{e['runtime_limit']}%"
        assert e["summary"]["jobs"] == 48
        assert set(e["summary"]["primetime"]) >= {"prime", "nonprime", "all", "success_rate"}
        assert e["extra"]["backlog_at_last_submit"] >= 0
    single = next(e for e in results if (e["runtime_limit"], e["jobsize_limit"]) == (100, 100))
    assert single["summary"]["primetime"]["jobs"]["nonprime"] == 0  # one queue

    report = (out / "report.md").read_text()
    assert report.startswith("# Prime time vs non-prime time")
    assert f"- Command: `batchd report primetime --trace {trace}" in report
    figures = sorted(p.name for p in out.glob("*.png"))
    assert figures == [
        "TOY_fig1_resptime_prime.png",
        "TOY_fig2_resptime_nonprime.png",
        "TOY_fig3_util_prime.png",
        "TOY_fig3b_util_prime_submit_span.png",
        "TOY_fig4_util_nonprime.png",
        "TOY_fig4b_util_nonprime_submit_span.png",
        "TOY_fig5_slowdown_all.png",
    ]
    for name in figures:
        assert (out / name).read_bytes().startswith(PNG_MAGIC)
        assert f"]({name})" in report

    # Table 3 in the paper's shape, EASY first; 80-100 was not run.
    easy = table_rows(report, f"### Table 3: TOY at {NODES} nodes")
    assert easy["metric"] == ["30-100 ratio", "80-100 ratio", "100-100 ratio", "100-30 ratio"]
    assert list(easy)[1:7] == [name for name, _, _ in T.PT_RATIO_ROWS]
    assert easy["**metric**"][0] == "**30-100 percent**"
    assert easy["avg resptime-all"][1] == "- (5.17)"
    assert easy["utilization-prime"][1] == "- (78)"
    assert easy["avg resptime-non"][2] == "n/a (5.19)"  # no large jobs with one queue

    # The numbers match the results file.
    grid = {(e["runtime_limit"], e["jobsize_limit"]): e["summary"]
            for e in results if e["discipline"] == "easy"}  # fmt: skip
    arts = {k: s["primetime"]["all"]["art"] for k, s in grid.items()}
    ratio = arts[(30, 100)] / min(arts.values())
    assert easy["avg resptime-all"][0] == f"{ratio:,.2f} (1.81)"
    success = grid[(100, 100)]["primetime"]["success_rate"]["prime"]
    assert easy["success-prime"][2] == f"{100 * success:.1f} (69)"
    util = grid[(100, 30)]["primetime"]["nonprime"]["utilization"]
    assert easy["utilization-non"][3] == f"{100 * util:.1f}"
    fcfs = table_rows(report, "**FCFS**")
    fcfs_grid = {(e["runtime_limit"], e["jobsize_limit"]): e["summary"]
                 for e in results if e["discipline"] == "fcfs"}  # fmt: skip
    sld = {k: s["primetime"]["prime"]["slowdown"] for k, s in fcfs_grid.items()}
    assert fcfs["slowdown-prime"][2].startswith(f"{sld[(100, 100)] / min(sld.values()):,.2f} ")

    assert "## The paper's rules of thumb on these traces" in report
    assert "### FCFS vs EASY:" in report
    assert "## Differences from the paper's setup" in report

    assert "## Discussion\n\n_(Write discussion.md" in report

    # A report-only pass and a rerun replay nothing; a hand-written discussion is kept.
    before = (out / "results.json").read_text()
    (out / "discussion.md").write_text("Rule (1) holds on TOY.\n")
    rc, stdout, _ = run_cli(capsys, "--trace", str(trace), "--limits", "30,100",
                            "--out", str(out), "--report-only")  # fmt: skip
    assert rc == 0 and "8 runs (0 new, 8 reused, 0 failed)" in stdout
    assert (out / "results.json").read_text() == before
    report = (out / "report.md").read_text()
    assert f"- Command: `batchd report primetime --trace {trace}" in report
    assert "--workers 2" in report.split("\n- Date")[0]
    assert "- Report written again from results.json (no replays) by `batchd" in report
    assert (
        "(discussion.md, kept when the report is made again)._\n\nRule (1) holds on TOY." in report
    )
    rc, stdout, _ = run_cli(capsys, "--trace", str(trace), "--limits", "30,100",
                            "--disciplines", "easy", "--workers", "1", "--out", str(out))  # fmt: skip
    assert rc == 0 and "4 runs (0 new, 4 reused, 0 failed)" in stdout
    rc, stdout, _ = run_cli(
        capsys, "--trace", str(trace), "--limits", "30,100", "--out", str(out), "--resume"
    )
    assert rc == 0 and "8 runs (0 new, 8 reused, 0 failed)" in stdout
    assert (out / "results.json").read_text() == before


def test_report_only_without_results_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = write_trace(tmp_path / "toy.swf", count=6)
    rc, _, err = run_cli(capsys, "--trace", str(trace), "--limits", "30,100",
                         "--out", str(tmp_path / "o"), "--report-only")  # fmt: skip
    assert rc == 2
    assert err.count("\n") == 1 and "lacks 8 of the 8 runs" in err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--nodes", "16,abc", "--nodes: expected positive node counts"),
        ("--nodes", "16,-4", "--nodes: expected positive node counts"),
        ("--nodes", "", "--nodes: expected positive node counts"),
        ("--limits", "5,100", "--limits: each limit must be in 10..100"),
        ("--limits", "30,110", "--limits: each limit must be in 10..100"),
        ("--limits", "30,x", "--limits: expected whole percentages"),
        ("--disciplines", "easy,nope", "--disciplines: 'nope' is not a discipline"),
        ("--workers", "0", "expected an integer from 1 to 1,024"),
        ("--nodes", "16,9999999", "--nodes: expected positive node counts up to 1,000,000"),
    ],
)
def test_bad_options_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, message: str
) -> None:
    trace = write_trace(tmp_path / "toy.swf", count=6)
    rc, _, err = run_cli(capsys, "--trace", str(trace), option, value,
                         "--out", str(tmp_path / "o"))  # fmt: skip
    assert rc == 2
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "o" / "results.json").exists()


def test_missing_trace_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = run_cli(capsys, "--trace", str(tmp_path / "nope.swf"), "--out", str(tmp_path))
    assert rc == 2
    assert err.count("\n") == 1 and "nope.swf: no such trace file" in err


# --------------------------------------------------------------------------- options


def test_option_parsing() -> None:
    assert parse_limits("100,30, 30,10%") == [10, 30, 100]
    assert parse_nodes("64,128,64", None) == [128, 64]
    assert parse_nodes("100%,50%,75%", 128) == [128, 96, 64]
    assert parse_nodes(None, 100) == [100]
    with pytest.raises(StudyError, match="names no machine size"):
        parse_nodes(None, None)
    with pytest.raises(StudyError, match="names no machine size"):
        parse_nodes("50%", None)
    assert parse_disciplines("fcfs, easy,fcfs") == ["fcfs", "easy"]


# --------------------------------------------------------------------------- Table 3 by hand


def _summary(art: float, sld: float, prime_art: float, non_art: float | None,
             success: float = 0.9, util: float = 0.7) -> dict[str, Any]:  # fmt: skip
    def cls(value: float | None, slowdown: float) -> dict[str, Any]:
        jobs = 0 if value is None else 10
        return {"jobs": jobs, "art": value or 0.0, "awt": 0.0, "slowdown": slowdown,
                "bounded_slowdown": slowdown, "utilization": util}  # fmt: skip

    return {
        "primetime": {
            "all": cls(art, sld),
            "prime": cls(prime_art, sld / 2),
            "nonprime": cls(non_art, sld * 2),
            "success_rate": {"prime": success, "nonprime": 0.5, "all": 0.7},
            "overflow_rate": 0.25,
            "overflow_share_all": 0.05,
            "jobs": {"prime": 10, "nonprime": 0 if non_art is None else 10},
        }
    }


def test_table3_ratios_by_hand() -> None:
    grid = {
        (10, 10): _summary(100.0, 4.0, 50.0, 400.0),
        (30, 100): _summary(200.0, 5.0, 60.0, 800.0, success=0.98),
        (80, 100): _summary(500.0, 10.0, 300.0, 200.0),
        (100, 100): _summary(1000.0, 20.0, 1000.0, None, success=0.69, util=0.76),
    }
    assert T.pt_ratio(grid, (30, 100), "all", "art") == 2.0
    assert T.pt_best(grid, "nonprime", "art") == 200.0  # 100-100 has no large jobs
    assert T.pt_ratio(grid, (100, 100), "nonprime", "art") is None
    rows = table_rows("x\n" + T.pt_table3(grid, paper=False), "x")
    assert rows["metric"] == ["30-100 ratio", "80-100 ratio", "100-100 ratio"]
    assert rows["avg resptime-all"] == ["2.00", "5.00", "10.00"]
    assert rows["avg resptime-prime"] == ["1.20", "6.00", "20.00"]
    assert rows["avg resptime-non"] == ["4.00", "1.00", "n/a"]
    assert rows["slowdown-all"] == ["1.25", "2.50", "5.00"]
    assert rows["slowdown-non"] == ["1.25", "2.50", "n/a"]  # 10/8, 20/8
    assert rows["success-prime"] == ["98.0", "90.0", "69.0"]
    assert rows["overflow"] == ["5.0", "5.0", "5.0"]
    assert rows["utilization-all"] == ["70.0", "70.0", "76.0"]
    with_paper = table_rows("x\n" + T.pt_table3(grid, [(30, 100), (50, 50)]), "x")
    assert with_paper["avg resptime-all"] == ["2.00 (1.81)", "-"]
    assert with_paper["utilization-non"] == ["70.0 (79)", "-"]


def test_rules_of_thumb_verdicts() -> None:
    # Small jobs do well whenever one cutoff is at 30%, badly with both at 100%.
    grid = {
        (rt, js): _summary(300.0, 5.0, 100.0 if 30 in (rt, js) else 900.0, 500.0)
        for rt in (30, 100)
        for js in (30, 100)
    }
    grid[(100, 100)] = _summary(600.0, 9.0, 1000.0, None)
    verdict = rule_prime(grid)
    assert verdict.verdict == "holds"
    assert "first at runtime limit 100% (no jobsize limit) and at jobsize limit 100%" in (
        verdict.numbers
    )
    thumb = rule_thumb(grid)
    assert thumb.verdict == "holds" and "resptime-all ratio 30-100 1.00x" in thumb.numbers
    grid[(100, 100)] = _summary(150.0, 2.0, 1000.0, None)
    assert rule_thumb(grid).verdict.startswith("does not hold")
    grid[(100, 100)] = _summary(150.0, 2.0, 120.0, None)
    assert rule_prime(grid).verdict.startswith("does not apply: the limits hardly matter")
