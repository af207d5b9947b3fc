"""The moldable study (batchd report moldable): claims by hand, a tiny study end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from batchd.cli import main
from batchd.replay import ReplayOptions, run_replay
from batchd_studies.moldable.claims import CLAIMS, Setting, check_claims, claims_count
from batchd_studies.moldable.index import Index
from batchd_studies.moldable.plan import ITERATIVE, fairshare, schedulers
from batchd_studies.moldable.tables import turnaround_table

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NODES = 16
LOADS = (0.5, 0.9)
GRID = [fairshare(o, e) for o in (1.0, 4.0) for e in (0.0, 1.0)]


def _entry(a: str, load: float, key: str, tat: float, small: float | None = None) -> dict[str, Any]:
    """Turnarounds in hours."""
    small_s = 3600 * (small if small is not None else tat)
    by_size = {
        "200-3200": {"jobs": 3, "turnaround": small_s},
        "3200-100000": {"jobs": 2, "turnaround": small_s},
        ">2000000": {"jobs": 1, "turnaround": 3600 * tat},
    }
    return {
        "a": a,
        "load": load,
        "scheduler": key,
        "summary": {"moldable": {"turnaround": 3600 * tat, "turnaround_by_size": by_size}},
    }


def _results(system: dict[str, float], random: dict[str, float]) -> list[dict[str, Any]]:
    """Turnarounds per scheduler key; the heavier load doubles each one."""
    out = []
    for a, values in (("system", system), ("random", random)):
        for key, tat in values.items():
            out += [_entry(a, 0.5, key, tat), _entry(a, 0.9, key, 2 * tat)]
    return out


def test_schedulers_and_policies() -> None:
    got = schedulers([1.0, 4.0], [0.0, 0.5], ["iterative", "rigid-easy"])
    assert [s.key for s in got] == [
        "fs-o1-e0",
        "fs-o1-e0.5",
        "fs-o4-e0",
        "fs-o4-e0.5",
        "iterative",
        "rigid-easy",
    ]
    assert (got[0].policy, got[0].params) == ("moldable-fairshare", (("obf", "1"),))
    assert (got[1].policy, got[1].params) == ("moldable-efficiency", (("obf", "1"), ("ef", "0.5")))
    assert got[-1].policy == "fcfs-easy" and not got[-1].fairshare


def test_claims_hold_as_the_seed_says() -> None:
    o1e0, o1e1, o4e0, o4e1 = (s.key for s in GRID)
    # A = system size: ObF 4 EF 1 best, EF 1 hurts at ObF 1, iterative lower still.
    system = {o1e0: 100.0, o1e1: 110.0, o4e0: 95.0, o4e1: 90.0, ITERATIVE: 80.0}
    # A random: ObF 1 EF 0 best, overbooking hurts at both EFs, iterative lowest.
    random = {o1e0: 100.0, o1e1: 105.0, o4e0: 130.0, o4e1: 120.0, ITERATIVE: 95.0}
    checked = {
        c.key: v for c, v in check_claims(Index(_results(system, random)), Setting(LOADS, GRID))
    }
    assert all(v is not None and v[0] for v in checked.values()), checked
    assert checked["fig2-best"] == (True, "best ObF 4, EF 1 (135.00 h); ObF 4, EF 1: 135.00 h")
    assert checked["fig9-iterative"] is not None
    assert "(-5.0 %); lowest at 2 of 2 loads" in checked["fig9-iterative"][1]
    assert len(checked) == len(CLAIMS)
    counted = claims_count(check_claims(Index(_results(system, random)), Setting(LOADS, GRID)))
    assert counted == "Claims that hold: 8 of the 8 tested."


def test_claims_fail_when_the_numbers_disagree() -> None:
    o1e0, o1e1, o4e0, o4e1 = (s.key for s in GRID)
    system = {o1e0: 90.0, o1e1: 80.0, o4e0: 95.0, o4e1: 100.0, ITERATIVE: 85.0}
    random = {o1e0: 100.0, o1e1: 105.0, o4e0: 99.0, o4e1: 120.0, ITERATIVE: 101.0}
    results = _results(system, random)
    # The iterative scheme's small jobs wait 10 % longer than the best setting's, once.
    results.append(_entry("random", 0.9, ITERATIVE, 202.0, small=1.1 * 198.0))
    checked = {c.key: v for c, v in check_claims(Index(results), Setting(LOADS, GRID))}
    assert checked["fig2-best"] is not None and not checked["fig2-best"][0]
    assert checked["fig2-low-obf"] == (False, "ObF 1, EF 1 120.00 h against ObF 1, EF 0 135.00 h")
    assert checked["fig4-best"] is not None and not checked["fig4-best"][0]
    assert checked["fig5-overbooking"] == (
        False,
        "EF 0: 150.00 -> 148.50 h; EF 1: 157.50 -> 180.00 h",
    )
    assert checked["fig7-iterative"] is not None and not checked["fig7-iterative"][0]
    small = checked["fig8-10-small"]
    assert small is not None and not small[0]
    # A = system size: the best setting is ObF 1, EF 1 (120 h); iterative 127.5 h.
    assert checked["fig8-large"] == (
        False,
        "against ObF 1, EF 1: worse at 0.5 (85.00 h against 80.00 h), 0.9 (170.00 h against 160.00 h)",
    )
    assert "worse in 200-3200 at 0.9, 3200-100000 at 0.9" in small[1]
    assert claims_count(check_claims(Index(results), Setting(LOADS, GRID))) == (
        "Claims that hold: 0 of the 8 tested."
    )


def test_claims_without_runs_are_not_judged() -> None:
    checked = check_claims(Index([]), Setting(LOADS, GRID))
    assert all(v is None for _, v in checked)
    assert claims_count(checked) == (
        "Claims that hold: 0 of the 0 tested (8 not tested: their schedulers did not run)."
    )


def test_turnaround_table_marks_the_lowest() -> None:
    o1e0 = GRID[0]
    index = Index([_entry("system", 0.5, o1e0.key, 2.0), _entry("system", 0.5, ITERATIVE, 1.0)])
    table = turnaround_table(
        index, "system", [0.5], {0.5: 0.45}, [o1e0, schedulers([], [], ["iterative"])[0]]
    )
    assert "| 0.5 | 0.450 | 2.00 | **1.00** |" in table
    assert "| mean |  | 2.00 | 1.00 |" in table


def _toy_trace(path: Path, count: int = 40) -> Path:
    rng = np.random.default_rng(5)
    submit = np.cumsum(rng.exponential(300.0, count)).astype(int)
    width = np.minimum(2 ** rng.integers(0, 4, count), NODES)
    runtime = np.maximum(1, rng.lognormal(6.0, 1.0, count)).astype(int)
    lines = [
        "; Version: 2.2",
        "; Installation: toy SP2",
        f"; MaxNodes: {NODES}",
        f"; MaxProcs: {NODES}",
    ]
    for i in range(count):
        fields = [i + 1, submit[i], 0, runtime[i], width[i], -1, -1, width[i]]
        fields += [2 * runtime[i], -1, 1, 1 + i % 3, -1, -1, 1, -1, -1, -1]
        lines.append(" ".join(str(int(f)) for f in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_tiny_study_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _toy_trace(tmp_path / "TOY-1.swf")
    out = tmp_path / "study"
    argv = ["report", "moldable", "--trace", str(trace), "--loads", "0.5,0.9", "--obf", "1,4"]
    argv += ["--ef", "0,1", "--others", "iterative,greedy,rigid-easy,rigid-cons"]
    argv += ["--workers", "1", "--out", str(out)]
    assert main(argv) == 0
    # 2 scenarios x 2 loads x (4 fair-share settings + 4 others).
    assert "32 runs (32 new, 0 reused, 0 failed), 8 figures" in capsys.readouterr().out
    report = (out / "report.md").read_text()
    assert report.startswith("# Moldable jobs: the study of seed 004 on batchd")
    assert "on 16 nodes. The header says `MaxNodes: 16`." in report
    for heading in (
        "## The seed's claims",
        "## Average turnaround (hours), A = system size",
        "## By job size",
    ):
        assert heading in report
    for name in ("fig2_fairshare_system.png", "fig10_iterative_sizes_random.png"):
        assert (out / name).read_bytes().startswith(PNG_MAGIC)

    # An entry's numbers are a replay's of its workload.
    results = json.loads((out / "results.json").read_text())
    entry = next(r for r in results if r["policy"] == "moldable-iterative" and r["a"] == "random")
    result = run_replay(
        ReplayOptions(
            trace=str(out / "workloads" / entry["workload"]),
            policy="moldable-iterative",
            nodes=NODES,
        )
    )
    assert entry["summary"]["moldable"] == json.loads(json.dumps(result.summary["moldable"]))
    assert entry["summary"]["jobs"] == 40

    # Again: nothing replayed; one more load: only its runs.
    assert main(argv) == 0
    assert "32 runs (0 new, 32 reused, 0 failed)" in capsys.readouterr().out
    argv[argv.index("0.5,0.9")] = "0.5,0.7,0.9"
    assert main(argv) == 0
    assert "48 runs (16 new, 32 reused, 0 failed)" in capsys.readouterr().out


def test_study_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = _toy_trace(tmp_path / "TOY-1.swf", count=10)
    argv = ["report", "moldable", "--trace", str(trace), "--out", str(tmp_path / "o")]
    for extra, message in (
        (["--jobs", "9-3"], "--jobs: job range '9-3': the first job number is above the last"),
        (["--loads", "0.5,3"], "--loads: each number must be in 0.05..2, got 3"),
        (["--ef", "0,x"], "--ef: expected numbers like 1,4, got 'x'"),
        (["--a", "system,all"], "--a: all not one of system, random"),
        (
            ["--others", "iterative,sjf"],
            "--others: sjf not one of iterative, greedy, rigid-easy, rigid-cons",
        ),
    ):
        assert main([*argv, *extra]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "o" / "results.json").exists()
    missing = [
        "report",
        "moldable",
        "--trace",
        str(tmp_path / "none.swf"),
        "--out",
        str(tmp_path / "o"),
    ]
    assert main(missing) == 2
    assert "none.swf: no such trace file" in capsys.readouterr().err


def test_greedy_runs_only_when_asked_for() -> None:
    import argparse

    from batchd_studies.moldable.options import add_arguments, options_from_args

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    plain = options_from_args(parser.parse_args(["--trace", "t.swf"]))
    assert plain.others == ["iterative", "rigid-easy", "rigid-cons"]
    asked = options_from_args(parser.parse_args(["--trace", "t.swf", "--others", "greedy"]))
    assert asked.others == ["greedy"] and "--others greedy" in asked.command
